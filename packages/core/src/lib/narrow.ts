// Narrows as clients send them, in either of Zulip's encodings:
// [{"operator": "stream", "operand": "general", "negated": false}] or [["stream", "general"]].
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

const IS_OPERANDS = ["private", "starred", "mentioned", "alerted", "unread", "read"];
const HAS_OPERANDS = ["link", "attachment", "image"];

function badShape(): never {
  throw new JsonableError("Invalid narrow: each element must be [operator, operand] or {operator, operand, negated}", { code: "BAD_REQUEST" });
}

/** Parses and checks a narrow; throws BAD_NARROW for an unknown operator or operand. */
export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (!Array.isArray(raw)) badShape();
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
    const op = (operator === "subject" ? "topic" : operator) as NarrowOperator;
    if (!(NARROW_OPERATORS as readonly string[]).includes(op)) throw new BadNarrowError(`unknown operator ${operator}`);
    const validOperand =
      typeof operand === "string" ||
      (typeof operand === "number" && Number.isSafeInteger(operand) && ["id", "near", "sender", "pm-with", "stream"].includes(op)) ||
      (Array.isArray(operand) && op === "pm-with" && operand.every((id) => Number.isSafeInteger(id)));
    if (!validOperand) throw new BadNarrowError(`invalid operand for ${op}`);
    if (op === "is" && !IS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'is' operand ${String(operand)}`);
    if (op === "has" && !HAS_OPERANDS.includes(operand as string)) throw new BadNarrowError(`unknown 'has' operand ${String(operand)}`);
    if (op === "streams" && operand !== "public") throw new BadNarrowError(`unknown 'streams' operand ${String(operand)}`);
    if ((op === "id" || op === "near") && !/^\d+$/.test(String(operand))) throw new BadNarrowError(`invalid message ID ${String(operand)}`);
    return { operator: op, operand: operand as NarrowTerm["operand"], negated };
  });
}
