// Narrows as clients send them, in either of Zulip's encodings:
// [{"operator": "stream", "operand": "general", "negated": false}] or [["stream", "general"]].
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
] as const;
export type NarrowOperator = (typeof NARROW_OPERATORS)[number];

export interface NarrowTerm {
  operator: NarrowOperator;
  /** Strings, except user ids (pm-with, sender) and message ids, which clients may send as numbers. */
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

const IS_OPERANDS = ["private", "starred", "mentioned", "alerted", "unread", "read"];
const HAS_OPERANDS = ["link", "attachment", "image"];

function badShape(): never {
  throw new JsonableError("Invalid narrow: each element must be [operator, operand] or {operator, operand, negated}", { code: "BAD_REQUEST" });
}

/**
 * Zulip's NarrowBuilder finds an operator's method with '-' read as '_', so `pm_with` and
 * `pm-with` are one operator; `subject` is the old name of `topic`.
 */
function canonicalOperator(operator: string): string {
  const dashed = operator.replace(/_/g, "-");
  return dashed === "subject" ? "topic" : dashed;
}

/** Parses and checks a narrow; throws BAD_NARROW for an unknown operator or operand. */
export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (!Array.isArray(raw)) badShape();
  if (raw.length > MAX_NARROW_TERMS) throw new JsonableError(`narrow has too many terms (limit: ${MAX_NARROW_TERMS})`, { code: "BAD_REQUEST" });
  return raw.map((element: unknown) => {
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
      typeof operand === "string" ||
      (typeof operand === "number" && Number.isSafeInteger(operand) && ["id", "near", "sender", "pm-with", "stream"].includes(op)) ||
      (Array.isArray(operand) && op === "pm-with" && operand.every((id) => Number.isSafeInteger(id)));
    if (!validOperand) throw new BadNarrowError(`invalid operand for ${op}`);
    if (op === "is" && !IS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'is' operand ${String(operand)}`);
    if (op === "has" && !HAS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'has' operand ${String(operand)}`);
    if (op === "streams" && operand !== "public") throw new BadNarrowError(`unknown 'streams' operand ${String(operand)}`);
    if ((op === "id" || op === "near") && (!/^\d+$/.test(String(operand)) || !fitsPostgresInteger(String(operand)))) throw new BadNarrowError(`invalid message ID ${String(operand)}`);
    return { operator: op, operand: operand as NarrowTerm["operand"], negated };
  });
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
