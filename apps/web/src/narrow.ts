// Narrows: which messages a view shows, as a list of Zulip search terms. One narrow has three
// spellings: the terms themselves, a location hash (#narrow/channel/12-general/topic/lunch), and
// search text ("channel:general topic:lunch"). This module converts between them and matches a
// message against a narrow locally (for live messages), without the server.
import type { Message } from "./state/store";

export interface Term {
  /** Canonical names: channel, topic, dm, sender, is, has, near, id, search, dm-including, streams. */
  operator: string;
  /** Stream, user and message ids as decimal strings; dm: comma-separated user ids. */
  operand: string;
  negated?: boolean;
}
export type Narrow = readonly Term[];

/** Old operator names mapped to today's (Zulip renamed stream→channel, pm-with→dm, subject→topic). */
const ALIASES: Record<string, string> = { stream: "channel", subject: "topic", "pm-with": "dm", pm_with: "dm", streams: "channels", "group-pm-with": "dm-including" };

export function canonicalOperator(operator: string): string {
  const lower = operator.toLowerCase();
  return ALIASES[lower] ?? lower;
}

/** Lookups the narrow helpers need (stream names, user emails), given by the caller so this module stays pure. */
export interface NarrowContext {
  streamIdByName(name: string): number | undefined;
  streamName(id: number): string | undefined;
  userIdByEmail(email: string): number | undefined;
  userEmail(id: number): string | undefined;
  userName(id: number): string | undefined;
  myUserId: number;
}

// ---------------------------------------------------------------------------------------------
// Hash encoding, as Zulip's: encodeURIComponent, then '.' itself as %2E, then every '%' as '.'.
// The result has no '%' (which some browsers decode in location.hash) and stays readable.

export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text).replace(/\./g, "%2E").replace(/%/g, ".");
}

export function decodeHashComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\./g, "%"));
  } catch {
    // A hand-typed or truncated hash: keep what was there rather than failing the route.
    return text;
  }
}

/** `12-general-chat`: the id decides; the name is only for people reading the URL. */
function streamSlug(id: number, name: string | undefined): string {
  return name === undefined ? String(id) : `${id}-${encodeHashComponent(name.replace(/ /g, "-"))}`;
}

function dmSlug(ids: number[], ctx: NarrowContext): string {
  const others = ids.filter((id) => id !== ctx.myUserId);
  const slug = others.length > 1 ? "group" : others.length === 1 ? (ctx.userName(others[0]) ?? "dm").replace(/[^\p{L}\p{N}]+/gu, "-") : "dm";
  return `${ids.join(",")}-${encodeHashComponent(slug)}`;
}

/** The leading id of "12-general" (or a legacy stream name when there is no id). */
function parseStreamSlug(slug: string, ctx: NarrowContext): string {
  const match = /^(\d+)(?:-|$)/.exec(slug);
  if (match) return match[1];
  const id = ctx.streamIdByName(slug);
  return id === undefined ? slug : String(id);
}

function parseDmSlug(slug: string, ctx: NarrowContext): string {
  const match = /^([\d,]+)(?:-|$)/.exec(slug);
  if (match) return match[1].split(",").filter(Boolean).map(Number).sort((a, b) => a - b).join(",");
  // Legacy: emails separated by commas.
  const ids = slug.split(",").map((email) => ctx.userIdByEmail(email.trim()));
  return ids.every((id) => id !== undefined) ? (ids as number[]).sort((a, b) => a - b).join(",") : slug;
}

export function narrowToHash(narrow: Narrow, ctx: NarrowContext): string {
  if (narrow.length === 0) return "#feed";
  const parts = ["#narrow"];
  for (const term of narrow) {
    const op = (term.negated ? "-" : "") + term.operator;
    let operand: string;
    if (term.operator === "channel" && /^\d+$/.test(term.operand)) operand = streamSlug(Number(term.operand), ctx.streamName(Number(term.operand)));
    else if (term.operator === "dm" && /^[\d,]+$/.test(term.operand)) operand = dmSlug(term.operand.split(",").map(Number), ctx);
    else if (term.operator === "sender" && /^\d+$/.test(term.operand)) operand = dmSlug([Number(term.operand)], { ...ctx, myUserId: -1 });
    else operand = encodeHashComponent(term.operand);
    parts.push(encodeHashComponent(op), operand);
  }
  return parts.join("/");
}

/** A route from location.hash: a narrow, settings, or the organization screens. */
export type Route =
  | { kind: "narrow"; narrow: Narrow }
  | { kind: "settings"; section: string }
  | { kind: "organization"; section: string }
  /** The channel browser (#channels/subscribed, #channels/all, #channels/new). */
  | { kind: "channels"; section: string };

export function parseHash(hash: string, ctx: NarrowContext): Route {
  const path = hash.replace(/^#/, "");
  const [head, ...rest] = path.split("/");
  if (head === "settings") return { kind: "settings", section: rest[0] || "profile" };
  if (head === "organization") return { kind: "organization", section: rest[0] || "organization-profile" };
  if (head === "channels" || head === "streams") return { kind: "channels", section: rest[0] || "subscribed" };
  if (head !== "narrow") return { kind: "narrow", narrow: [] };
  const terms: Term[] = [];
  for (let i = 0; i + 1 < rest.length; i += 2) {
    let operator = decodeHashComponent(rest[i]);
    const negated = operator.startsWith("-");
    if (negated) operator = operator.slice(1);
    operator = canonicalOperator(operator);
    const raw = rest[i + 1];
    let operand: string;
    if (operator === "channel") operand = parseStreamSlug(decodeHashComponent(raw), ctx);
    else if (operator === "dm" || operator === "dm-including") operand = parseDmSlug(decodeHashComponent(raw), ctx);
    else if (operator === "sender") {
      const decoded = decodeHashComponent(raw);
      const match = /^(\d+)(?:-|$)/.exec(decoded);
      operand = match ? match[1] : String(ctx.userIdByEmail(decoded) ?? decoded);
    } else operand = decodeHashComponent(raw);
    terms.push(negated ? { operator, operand, negated } : { operator, operand });
  }
  return { kind: "narrow", narrow: terms };
}

// ---------------------------------------------------------------------------------------------
// Search text: "channel:general topic:lunch sender:x@y has:image some words".

const KNOWN_OPERATORS = new Set(["channel", "topic", "dm", "sender", "is", "has", "near", "id", "search", "dm-including", "channels"]);

/** Splits on spaces, keeping "quoted words" together. */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const pattern = /(-?[\w-]+:)?"([^"]*)"|\S+/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    tokens.push(match[2] !== undefined ? `${match[1] ?? ""}\u0000${match[2]}` : match[0]);
  }
  return tokens;
}

export function parseSearch(text: string, ctx: NarrowContext): Term[] {
  const terms: Term[] = [];
  const words: string[] = [];
  for (const token of tokenize(text.trim())) {
    const quoted = token.includes("\u0000");
    const colon = quoted ? token.indexOf(":\u0000") : token.indexOf(":");
    if (colon <= 0) {
      words.push(token.replace("\u0000", ""));
      continue;
    }
    let operator = token.slice(0, colon);
    const negated = operator.startsWith("-");
    if (negated) operator = operator.slice(1);
    operator = canonicalOperator(operator);
    const value = token.slice(colon + 1).replace("\u0000", "");
    if (!KNOWN_OPERATORS.has(operator) || value === "") {
      words.push(token.replace("\u0000", ""));
      continue;
    }
    let operand = value;
    if (operator === "channel") operand = String(ctx.streamIdByName(value) ?? value);
    else if (operator === "sender") operand = value === "me" ? String(ctx.myUserId) : String(ctx.userIdByEmail(value) ?? value);
    else if (operator === "dm" || operator === "dm-including") {
      const ids = value.split(",").map((email) => (/^\d+$/.test(email) ? Number(email) : ctx.userIdByEmail(email)));
      operand = ids.every((id) => id !== undefined) ? (ids as number[]).sort((a, b) => a - b).join(",") : value;
    } else if (operator === "is" && value === "private") operand = "dm";
    if (operator === "search") words.push(value);
    else terms.push(negated ? { operator, operand, negated } : { operator, operand });
  }
  if (words.length > 0) terms.push({ operator: "search", operand: words.join(" ") });
  return terms;
}

function quoteIfNeeded(value: string): string {
  return /\s/.test(value) ? `"${value}"` : value;
}

export function narrowToSearch(narrow: Narrow, ctx: NarrowContext): string {
  return narrow
    .map((term) => {
      const prefix = term.negated ? "-" : "";
      if (term.operator === "search") return term.operand;
      let value = term.operand;
      if (term.operator === "channel" && /^\d+$/.test(value)) value = ctx.streamName(Number(value)) ?? value;
      else if (term.operator === "sender" && /^\d+$/.test(value)) value = ctx.userEmail(Number(value)) ?? value;
      else if ((term.operator === "dm" || term.operator === "dm-including") && /^[\d,]+$/.test(value))
        value = value.split(",").map((id) => ctx.userEmail(Number(id)) ?? id).join(",");
      return `${prefix}${term.operator}:${quoteIfNeeded(value)}`;
    })
    .join(" ");
}

// ---------------------------------------------------------------------------------------------
// For the server and for local matching.

/** The narrow as GET /messages takes it: ids as numbers, the DM list as an array of ids. */
export function narrowToApi(narrow: Narrow): string {
  return JSON.stringify(
    narrow.map((term) => {
      let operand: string | number | number[] = term.operand;
      if ((term.operator === "channel" || term.operator === "sender" || term.operator === "near" || term.operator === "id") && /^\d+$/.test(term.operand)) operand = Number(term.operand);
      else if ((term.operator === "dm" || term.operator === "dm-including") && /^[\d,]+$/.test(term.operand)) {
        const ids = term.operand.split(",").map(Number);
        operand = term.operator === "dm" ? ids : ids[0];
      }
      return { operator: term.operator, operand, negated: term.negated ?? false };
    }),
  );
}

export function narrowKey(narrow: Narrow): string {
  return JSON.stringify(narrow.map((t) => [t.negated ? `-${t.operator}` : t.operator, t.operand]));
}

export function termOf(narrow: Narrow, operator: string): string | undefined {
  return narrow.find((term) => term.operator === operator && !term.negated)?.operand;
}

/** The stream of a channel narrow, if any. */
export function narrowStreamId(narrow: Narrow): number | undefined {
  const operand = termOf(narrow, "channel");
  return operand !== undefined && /^\d+$/.test(operand) ? Number(operand) : undefined;
}

/** The DM conversation's user ids (sorted, me included when the server includes me). */
export function narrowDmIds(narrow: Narrow): number[] | undefined {
  const operand = termOf(narrow, "dm");
  return operand !== undefined && /^[\d,]+$/.test(operand) ? operand.split(",").map(Number) : undefined;
}

/** Narrows the server must filter: a local match would be a guess. */
export function isSearchNarrow(narrow: Narrow): boolean {
  return narrow.some((term) => term.operator === "search" || term.operator === "has");
}

/** The user ids of a DM message, me included, sorted. */
export function dmUserIds(message: Message): number[] {
  if (typeof message.display_recipient === "string") return [];
  return message.display_recipient.map((user) => user.id).sort((a, b) => a - b);
}

/** The key of a DM conversation: the other users' ids (just mine for a DM to myself), as Zulip's unread uses. */
export function dmKey(userIds: number[], myId: number): string {
  const others = userIds.filter((id) => id !== myId);
  return (others.length ? others : [myId]).sort((a, b) => a - b).join(",");
}

/** Whether the message belongs in the narrow, judged locally; undefined when only the server can say (search, has:). */
export function matchesNarrow(narrow: Narrow, message: Message, myId: number): boolean | undefined {
  for (const term of narrow) {
    let result: boolean | undefined;
    const flags = message.flags ?? [];
    switch (term.operator) {
      case "channel":
        result = message.type === "stream" && String(message.stream_id) === term.operand;
        break;
      case "topic":
        result = message.type === "stream" && message.subject.toLowerCase() === term.operand.toLowerCase();
        break;
      case "dm": {
        const wanted = term.operand.split(",").map(Number);
        result = message.type === "private" && dmKey(dmUserIds(message), myId) === dmKey(wanted, myId);
        break;
      }
      case "dm-including":
        result = message.type === "private" && dmUserIds(message).includes(Number(term.operand));
        break;
      case "sender":
        result = String(message.sender_id) === term.operand;
        break;
      case "is":
        if (term.operand === "dm" || term.operand === "private") result = message.type === "private";
        else if (term.operand === "starred") result = flags.includes("starred");
        else if (term.operand === "mentioned") result = flags.some((f) => f === "mentioned" || f === "wildcard_mentioned" || f === "topic_wildcard_mentioned");
        else if (term.operand === "alerted") result = flags.includes("has_alert_word");
        else if (term.operand === "unread") result = !flags.includes("read");
        else if (term.operand === "resolved") result = message.type === "stream" && message.subject.startsWith("✔ ");
        else result = undefined;
        break;
      case "id":
        result = String(message.id) === term.operand;
        break;
      case "near":
      case "with":
        result = true;
        break;
      default:
        result = undefined;
    }
    if (result === undefined) return undefined;
    if (term.negated ? result : !result) return false;
  }
  return true;
}
