// Narrows as clients send them, in either of Zulip's encodings:
// [{"operator": "stream", "operand": "general", "negated": false}] or [["stream", "general"]].
import { emptyTopicFromDisplayName } from "./empty-topic.ts";
import { fitsPostgresInteger } from "./validation.ts";
import { JsonableError } from "../errors.ts";

export const NARROW_OPERATORS = [
  "stream",
  "topic",
  "subject",
  "is",
  "pm-with",
  "group-pm-with",
  "sender",
  "id",
  "near",
  "search",
  "has",
  "streams",
  "dm-including",
  "with",
] as const;
export type NarrowOperator = (typeof NARROW_OPERATORS)[number];

export interface NarrowTerm {
  /** The canonical name: channel is read as stream, channels as streams, dm as pm-with (canonicalOperator). */
  operator: NarrowOperator;
  /** Strings, except user ids (pm-with, sender, dm-including), stream and message ids, which clients may send as numbers. */
  operand: string | number | number[];
  negated: boolean;
}

export class BadNarrowError extends JsonableError {
  constructor(detail: string) {
    super(`Invalid narrow operator: ${detail}`, { code: "BAD_NARROW" });
  }
}

/** Real narrows have a few terms; each term can cost a query (10,000 `sender` terms took 6 s). */
export const MAX_NARROW_TERMS = 100;

/** How Zulip marks a resolved topic: its name starts with this. */
export const RESOLVED_TOPIC_PREFIX = "✔ ";

/**
 * `dm` is the name of `private` since feature level 177; `resolved`: topics starting with "✔ ";
 * `followed`: topics the user follows (feature level 265); `muted`: muted topics, and muted streams'
 * topics not unmuted or followed (feature level 366).
 */
const IS_OPERANDS = ["private", "dm", "starred", "mentioned", "alerted", "unread", "read", "resolved", "followed", "muted"];
const HAS_OPERANDS = ["link", "attachment", "image", "reaction"];
const STREAMS_OPERANDS = ["public", "web-public"];
/** Operators whose operand may be a number (Zulip's NarrowParameter); a list of ids for pm-with. */
const ID_OPERATORS = ["id", "near", "sender", "pm-with", "stream", "group-pm-with", "dm-including", "with"];
/** Longest operand string: a topic, an email list, a search (bounded also by the request's size). */
const MAX_OPERAND_LENGTH = 10_000;

function badShape(): never {
  throw new JsonableError("Invalid narrow: each element must be [operator, operand] or {operator, operand, negated}", { code: "BAD_REQUEST" });
}

/** Today's names (feature levels 177 and 250) for the operators this code knows by their old ones. */
const OPERATOR_ALIASES: Record<string, string> = { subject: "topic", channel: "stream", channels: "streams", dm: "pm-with" };

/**
 * Zulip's NarrowBuilder finds an operator's method with '-' read as '_', so `pm_with` and
 * `pm-with` are one operator; `subject` is the old name of `topic`.
 */
function canonicalOperator(operator: string): string {
  const dashed = operator.replace(/_/g, "-");
  return OPERATOR_ALIASES[dashed] ?? dashed;
}

/** Parses and checks a narrow; throws BAD_NARROW for an unknown operator or operand. */
export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (!Array.isArray(raw)) badShape();
  if (raw.length > MAX_NARROW_TERMS) throw new JsonableError(`narrow has too many terms (limit: ${MAX_NARROW_TERMS})`, { code: "BAD_REQUEST" });
  const terms = raw.map((element: unknown): NarrowTerm => {
    let operator: unknown;
    let operand: unknown;
    let negated: unknown = false;
    if (Array.isArray(element)) {
      if (element.length !== 2) badShape();
      [operator, operand] = element;
    } else if (element && typeof element === "object") {
      ({ operator, operand } = element as Record<string, unknown>);
      negated = (element as Record<string, unknown>).negated ?? false;
    } else {
      badShape();
    }
    if (typeof operator !== "string" || typeof negated !== "boolean") badShape();
    const op = canonicalOperator(operator) as NarrowOperator;
    if (!(NARROW_OPERATORS as readonly string[]).includes(op)) throw new BadNarrowError(`unknown operator ${operator}`);
    const validOperand =
      (typeof operand === "string" && operand.length <= MAX_OPERAND_LENGTH) ||
      (typeof operand === "number" && Number.isSafeInteger(operand) && ID_OPERATORS.includes(op)) ||
      (Array.isArray(operand) && op === "pm-with" && operand.length <= MAX_NARROW_TERMS && operand.every((id) => Number.isSafeInteger(id)));
    if (!validOperand) throw new BadNarrowError(`invalid operand for ${op}`);
    if (op === "is" && !IS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'is' operand ${String(operand)}`);
    if (op === "has" && !HAS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'has' operand ${String(operand)}`);
    if (op === "streams" && !STREAMS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'streams' operand ${String(operand)}`);
    if ((op === "id" || op === "near" || op === "with") && (!/^\d+$/.test(String(operand)) || !fitsPostgresInteger(String(operand)))) throw new BadNarrowError(`invalid message ID ${String(operand)}`);
    // A conversation cannot be excluded by one of its messages (Zulip has no negated `with`).
    if (op === "with" && negated) throw new BadNarrowError("'with' cannot be negated");
    // The empty topic's display name names it (feature level 334), as a client without it shows it.
    if (op === "topic") operand = emptyTopicFromDisplayName(operand as string);
    return { operator: op, operand: operand as NarrowTerm["operand"], negated };
  });
  if (terms.filter((term) => term.operator === "with").length > 1) throw new BadNarrowError("duplicate 'with' operators");
  return terms;
}

/** The operators an event queue's narrow may use (Zulip's check_supported_events_narrow_filter). */
const EVENTS_NARROW_OPERATORS = ["stream", "topic", "sender", "is"];
const EVENTS_IS_OPERANDS = ["private", "starred", "unread", "mentioned", "alerted"];

/**
 * Checks a /register `narrow` ([operator, operand] pairs) and returns it with operators in their
 * canonical spelling. An operator the event system cannot filter by is an error, not a match-all.
 */
export function parseEventsNarrow(narrow: Array<[string, string]>): Array<[string, string]> {
  return narrow.map(([operator, operand]) => {
    const op = canonicalOperator(operator);
    if (!EVENTS_NARROW_OPERATORS.includes(op)) throw new JsonableError(`Operator ${operator} not supported.`);
    if (op === "is" && !EVENTS_IS_OPERANDS.includes(operand)) throw new BadNarrowError(`unknown 'is' operand ${operand}`);
    return [op, operand];
  });
}
