// What the word before the caret asks for: `@` a user or group, `#` a stream (and `#**stream>` its
// topics), `:` an emoji; and the options with the Markdown each inserts.
import { loadEmojiData, searchEmoji, unicodeEmoji } from "../emoji/emojiData";
import { activeUsers, mentionSyntax, rank, sameOriginImage, streamIdByName, topicSuggestions, userGroups, visibleStreams, MAX_SUGGESTIONS } from "./matching";
import type { TypeaheadOption } from "./Typeahead";

export interface Token {
  kind: "mention" | "stream" | "topic" | "emoji";
  /** The text typed after the trigger. */
  query: string;
  /** Where the token starts (its trigger character) and ends (the caret). */
  start: number;
  end: number;
  silent?: boolean;
  /** For topics: the stream named in `#**stream>`. */
  stream?: string;
}

export interface Suggestion extends TypeaheadOption {
  /** What replaces the token. */
  insert: string;
}

// A trigger counts only at the start of the text or after a space or an opening bracket, so that
// "a@b.c", "10:30" and "C#" stay plain text.
const BEFORE = String.raw`(?:^|[\s(\[{"'])`;
// `#**stream>`, also typed as `>` right after a picked `#**stream** `.
const TOPIC = new RegExp(`${BEFORE}(#\\*\\*([^*>\\n]+?)(?:\\*\\* ?)?>([^*\\n]{0,60}))$`);
const STREAM = new RegExp(`${BEFORE}(#(?:\\*\\*)?([^\\s*#>][^*#>\\n]{0,39})?)$`);
const MENTION = new RegExp(`${BEFORE}(@(_?)(?:\\*{1,2})?([^\\s*@][^*@\\n]{0,39})?)$`);
const EMOJI = new RegExp(`${BEFORE}(:([a-zA-Z0-9_+\\-]{1,40})?)$`);

export function findToken(text: string, caret: number): Token | null {
  // Nothing a typeahead completes is longer than this.
  const before = text.slice(Math.max(0, caret - 120), caret);
  const make = (match: RegExpExecArray, kind: Token["kind"], query: string, extra: Partial<Token> = {}): Token => ({
    kind,
    query,
    start: caret - match[1].length,
    end: caret,
    ...extra,
  });
  let m = TOPIC.exec(before);
  // "#**general** > a quote" is prose, not a topic link.
  if (m && !(m[1].includes("** >") && /^\s/.test(m[3]))) return make(m, "topic", m[3], { stream: m[2] });
  m = STREAM.exec(before);
  if (m) return make(m, "stream", m[2] ?? "");
  m = MENTION.exec(before);
  if (m) return make(m, "mention", m[3] ?? "", { silent: m[2] === "_" });
  m = EMOJI.exec(before);
  if (m) return make(m, "emoji", m[2] ?? "");
  return null;
}

const WILDCARDS: { name: string; description: string; streamOnly?: boolean }[] = [
  { name: "all", description: "Notify everyone" },
  { name: "everyone", description: "Notify everyone" },
  { name: "channel", description: "Notify channel", streamOnly: true },
  { name: "topic", description: "Notify topic", streamOnly: true },
];

/** The options for a token; `inStream` is false for a DM (no @**channel** or @**topic** there). */
export function suggestionsFor(token: Token, inStream: boolean): Suggestion[] {
  switch (token.kind) {
    case "mention": {
      const users = rank(activeUsers(), token.query, (u) => [u.full_name, u.delivery_email ?? u.email]);
      const prefix = token.silent ? "@_" : "@";
      const options: Suggestion[] = users.map((u) => ({
        key: `user:${u.user_id}`,
        primary: u.full_name,
        secondary: u.delivery_email ?? u.email,
        imageUrl: sameOriginImage(u.avatar_url),
        insert: `${mentionSyntax(u, token.silent === true)} `,
      }));
      for (const group of rank(userGroups(), token.query, (g) => [g.name, g.description], 3)) {
        options.push({ key: `group:${group.id}`, primary: group.name, secondary: group.description || "User group", insert: `${prefix}*${group.name}* ` });
      }
      if (!token.silent) {
        for (const w of rank(WILDCARDS.filter((w) => inStream || !w.streamOnly), token.query, (w) => [w.name], 2)) {
          options.push({ key: `wildcard:${w.name}`, primary: w.name, secondary: w.description, insert: `@**${w.name}** ` });
        }
      }
      // Word-prefix user matches beat any group, but a long list keeps its best.
      return options.slice(0, MAX_SUGGESTIONS);
    }
    case "stream":
      return rank(visibleStreams(), token.query, (s) => [s.name]).map((s) => ({
        key: `stream:${s.stream_id}`,
        primary: `#${s.name}`,
        insert: `#**${s.name}** `,
      }));
    case "topic": {
      const name = token.stream ?? "";
      const streamId = streamIdByName(name);
      if (streamId === undefined) return [];
      const topics = topicSuggestions(streamId, token.query);
      const options = topics.map((topic) => ({ key: `topic:${topic}`, primary: topic, secondary: `#${name}`, insert: `#**${name}>${topic}** ` }));
      // A topic not yet in the list: link it as typed.
      if (token.query.trim() && !topics.some((t) => t.toLowerCase() === token.query.trim().toLowerCase())) {
        options.unshift({ key: "topic:new", primary: token.query.trim(), secondary: "New topic", insert: `#**${name}>${token.query.trim()}** ` });
      }
      return options.slice(0, MAX_SUGGESTIONS);
    }
    case "emoji": {
      // The standard set is fetched on the first ':'.
      if (!unicodeEmoji.value) loadEmojiData().catch(() => undefined);
      // Two letters at least, so that ":D" or ":p" and Enter still send the smiley as typed.
      if (token.query.length < 2) return [];
      return searchEmoji(token.query, MAX_SUGGESTIONS).map((e) => ({
        key: `emoji:${e.reaction_type}:${e.emoji_code}:${e.emoji_name}`,
        primary: `:${e.emoji_name}:`,
        glyph: e.char,
        imageUrl: e.imageUrl,
        insert: `:${e.emoji_name}: `,
      }));
    }
  }
}
