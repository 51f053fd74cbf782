// One emoji as a reaction or status shows it: a Unicode character from its code points, a custom
// emoji's image, or its name in colons when neither is known.
import { realmEmoji } from "../../state/store";

export function emojiChar(code: string): string | null {
  try {
    return String.fromCodePoint(...code.split("-").map((part) => parseInt(part, 16)));
  } catch {
    return null;
  }
}

export function Emoji({ type, code, name }: { type: string; code: string; name: string }) {
  if (type === "unicode_emoji") {
    const glyph = emojiChar(code);
    if (glyph) return <span class="emoji" role="img" aria-label={name}>{glyph}</span>;
  }
  if (type === "realm_emoji") {
    const custom = realmEmoji.value[code];
    if (custom) return <img class="emoji emoji-image" src={custom.still_url ?? custom.source_url} alt={`:${name}:`} />;
  }
  return <span class="emoji emoji-text">:{name}:</span>;
}
