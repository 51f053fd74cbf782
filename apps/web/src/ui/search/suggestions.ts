// What the search box offers for the text typed so far: operators, then operands for the operator
// being typed (streams, topics of the chosen stream, people, is:/has: values). Each suggestion is
// the whole new text; `complete` ones narrow at once, the others (an operator alone) keep typing.
import { api, type Schemas } from "../../api/client";
import { parseSearch } from "../../narrow";
import { streamsById, subscriptionsById, usersById } from "../../state/store";
import { narrowContext } from "../../state/route";

export interface Suggestion {
  /** The search text it makes. */
  text: string;
  /** What the list shows. */
  label: string;
  description: string;
  complete: boolean;
}

const MAX = 8;
export const IS_OPERANDS: Record<string, string> = {
  starred: "Starred messages",
  mentioned: "Messages that mention you",
  unread: "Unread messages",
  dm: "Direct messages",
  followed: "Topics you follow",
  resolved: "Resolved topics",
};
export const HAS_OPERANDS: Record<string, string> = {
  link: "Messages with links",
  image: "Messages with images",
  attachment: "Messages with attachments",
  reaction: "Messages with reactions",
};
const OPERATORS: Record<string, string> = {
  channel: "Messages in a channel",
  topic: "Messages in a topic",
  sender: "Messages sent by someone",
  dm: "Direct messages with someone",
  is: "Starred, mentioned, unread…",
  has: "Links, images, attachments…",
};

function quote(value: string): string {
  return /\s/.test(value) ? `"${value}"` : value;
}

function unquote(value: string): string {
  return value.replace(/^"/, "").replace(/"$/, "");
}

/** The word being typed (a quoted operand counts as one word) and the text before it. */
export function splitLast(text: string): { head: string; last: string } {
  const match = /(?:^|\s)((?:-?[\w-]+:)?"[^"]*"?|\S*)$/.exec(text);
  const last = match ? match[1] : "";
  return { head: text.slice(0, text.length - last.length), last };
}

function allStreams(): { id: number; name: string; description: string }[] {
  const byId = new Map<number, { id: number; name: string; description: string }>();
  for (const s of streamsById.value.values()) byId.set(s.stream_id, { id: s.stream_id, name: s.name, description: s.description });
  for (const s of subscriptionsById.value.values()) byId.set(s.stream_id, { id: s.stream_id, name: s.name, description: s.description });
  return [...byId.values()];
}

function matchingStreams(query: string) {
  const q = query.toLowerCase();
  return allStreams()
    .filter((s) => s.name.toLowerCase().includes(q))
    .sort((a, b) => Number(!a.name.toLowerCase().startsWith(q)) - Number(!b.name.toLowerCase().startsWith(q)) || a.name.localeCompare(b.name))
    .slice(0, MAX);
}

function matchingUsers(query: string) {
  const q = query.toLowerCase();
  const found: Schemas["User"][] = [];
  for (const u of usersById.value.values()) {
    if (!u.is_active) continue;
    if (u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().includes(q)) found.push(u);
    if (found.length >= 50) break;
  }
  return found.sort((a, b) => Number(!a.full_name.toLowerCase().startsWith(q)) - Number(!b.full_name.toLowerCase().startsWith(q)) || a.full_name.localeCompare(b.full_name)).slice(0, MAX);
}

const topicCache = new Map<number, Promise<Schemas["Topic"][]>>();
/** A stream's topics, fetched once per stream for the search box's suggestions. */
function topicsOf(streamId: number): Promise<Schemas["Topic"][]> {
  let topics = topicCache.get(streamId);
  if (!topics) {
    topics = api.get("/users/me/{stream_id}/topics", { stream_id: streamId }).then(
      (r) => r.topics,
      () => [],
    );
    topicCache.set(streamId, topics);
  }
  return topics;
}

/** Suggestions for `text`; `topics` are the known topics of the stream the text names, if any. */
export function suggest(text: string, topics: readonly Schemas["Topic"][] = []): Suggestion[] {
  const { head, last } = splitLast(text);
  const out: Suggestion[] = [];
  const op = /^(-?)([\w-]+):(.*)$/s.exec(last);
  if (op) {
    const [, neg, rawOperator, rawOperand] = op;
    const operator = rawOperator.toLowerCase() === "stream" ? "channel" : rawOperator.toLowerCase() === "pm-with" ? "dm" : rawOperator.toLowerCase();
    const operand = unquote(rawOperand);
    const make = (value: string, label: string, description: string) =>
      out.push({ text: `${head}${neg}${operator}:${quote(value)} `, label, description, complete: true });
    switch (operator) {
      case "channel":
        for (const s of matchingStreams(operand)) make(s.name, `${neg}channel:${s.name}`, s.description || `Messages in #${s.name}`);
        break;
      case "topic": {
        const q = operand.toLowerCase();
        for (const t of topics.filter((t) => t.name.toLowerCase().includes(q)).slice(0, MAX)) make(t.name, `${neg}topic:${t.name}`, "Topic");
        break;
      }
      case "sender":
      case "dm":
      case "dm-including": {
        // dm: takes a comma-separated list: complete its last part.
        const parts = operand.split(",");
        const before = parts.slice(0, -1);
        for (const u of matchingUsers(parts[parts.length - 1].trim())) {
          make([...before, u.email].join(","), `${neg}${operator}:${u.email}`, u.full_name);
        }
        break;
      }
      case "is":
        for (const [value, description] of Object.entries(IS_OPERANDS)) if (value.startsWith(operand.toLowerCase())) make(value, `${neg}is:${value}`, description);
        break;
      case "has":
        for (const [value, description] of Object.entries(HAS_OPERANDS)) if (value.startsWith(operand.toLowerCase())) make(value, `${neg}has:${value}`, description);
        break;
    }
    return out;
  }
  if (last === "") {
    for (const [operator, description] of Object.entries(OPERATORS)) out.push({ text: `${head}${operator}:`, label: `${operator}:`, description, complete: false });
    for (const value of ["starred", "mentioned", "unread", "dm"]) out.push({ text: `${head}is:${value} `, label: `is:${value}`, description: IS_OPERANDS[value], complete: true });
    for (const value of ["link", "image", "attachment"]) out.push({ text: `${head}has:${value} `, label: `has:${value}`, description: HAS_OPERANDS[value], complete: true });
    return out;
  }
  const q = last.toLowerCase();
  out.push({ text, label: text, description: "Search for these words", complete: true });
  for (const [operator, description] of Object.entries(OPERATORS)) {
    if (operator.startsWith(q)) out.push({ text: `${head}${operator}:`, label: `${operator}:`, description, complete: false });
  }
  for (const [value, description] of Object.entries(IS_OPERANDS)) if (value.startsWith(q)) out.push({ text: `${head}is:${value} `, label: `is:${value}`, description, complete: true });
  for (const [value, description] of Object.entries(HAS_OPERANDS)) if (value.startsWith(q)) out.push({ text: `${head}has:${value} `, label: `has:${value}`, description, complete: true });
  for (const s of matchingStreams(last).slice(0, 4)) out.push({ text: `${head}channel:${quote(s.name)} `, label: `channel:${s.name}`, description: `Messages in #${s.name}`, complete: true });
  for (const u of matchingUsers(last).slice(0, 4)) out.push({ text: `${head}sender:${u.email} `, label: `sender:${u.email}`, description: `Sent by ${u.full_name}`, complete: true });
  return out.slice(0, 12);
}

/** The stream the text names with channel:, for topic suggestions. */
export function streamOfText(text: string): number | undefined {
  const terms = parseSearch(text, narrowContext.value);
  const operand = terms.find((t) => t.operator === "channel" && !t.negated)?.operand;
  return operand !== undefined && /^\d+$/.test(operand) ? Number(operand) : undefined;
}

export { topicsOf };
