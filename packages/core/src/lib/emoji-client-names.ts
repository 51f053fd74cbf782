// Emoji names Zulip clients send that no rule over the emoji packages finds: names Zulip made up
// (`working_on_it`, `like`), and a few popular reactions whose name the packages give to another
// emoji than clients show (for the packages `:smile:` is 😄, for Zulip clients 🙂). Each entry is a
// name we accept because clients send it, with the emoji they show for it; everything else comes
// from the packages (emoji-name-table.ts). Keep it short: tens of names at most, each one clients
// are known to send.

export interface ClientEmojiName {
  name: string;
  /** Zulip's form of the code: lowercase hex code points joined by '-', without U+FE0F. */
  code: string;
  /** The emoji's own name in clients, which a reaction added by name alone carries. */
  canonical?: true;
}

export const CLIENT_EMOJI_NAMES: readonly ClientEmojiName[] = [
  // Not in any package.
  { name: "working_on_it", code: "1f6e0", canonical: true }, // 🛠 one of the reactions Zulip offers first
  { name: "like", code: "1f44d" }, // 👍
  { name: "big_smile", code: "1f604", canonical: true }, // 😄, whose `smile` clients give to 🙂
  { name: "check", code: "2705", canonical: true }, // ✅
  { name: "confetti", code: "1f38a" }, // 🎊
  { name: "high_five", code: "1f590" }, // 🖐
  { name: "peace_sign", code: "270c" }, // ✌
  { name: "frown", code: "1f641" }, // 🙁
  { name: "fear", code: "1f628" }, // 😨
  { name: "mind_blown", code: "1f92f" }, // 🤯
  { name: "thank_you", code: "1f64f" }, // 🙏
  { name: "hello", code: "1f44b" }, // 👋
  // The packages give these names to another emoji than clients do.
  { name: "smile", code: "1f642" }, // 🙂, not 😄
  { name: "ok", code: "1f44c", canonical: true }, // 👌, not 🆗
  { name: "point_up", code: "1f446" }, // 👆, not ☝
  { name: "happy", code: "1f600" }, // 😀, not 😄
  { name: "love", code: "2764" }, // ❤, not 🥰
];
