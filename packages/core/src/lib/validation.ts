import { badRequest } from "../errors.ts";

// Deliberately simple: one @, no spaces, a dot in the domain, as browsers' type=email accepts.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email);
}

export const MAX_NAME_LENGTH = 100;

/** Postgres `integer`, the type of every id and setting: a number past it is a client's mistake. */
export const MIN_INT = -2_147_483_648;
export const MAX_INT = 2_147_483_647;

/** Whether a number (or a string of decimal digits) fits Postgres' `integer`; a larger one must not reach a query. */
export function fitsPostgresInteger(value: number | string): boolean {
  const number = typeof value === "number" ? value : Number(value);
  return Number.isSafeInteger(number) && number >= MIN_INT && number <= MAX_INT;
}

// Control, format (zero-width spaces and joiners, bidirectional overrides), surrogate and
// unassigned characters: a name holding them looks like another name, or like nothing.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Cn}]/u;

/** The 1-based position of a name's first unprintable character (as Zulip counts), or null. */
export function unprintablePosition(name: string): number | null {
  const match = UNPRINTABLE.exec(name);
  return match ? [...name.slice(0, match.index)].length + 1 : null;
}

/** Zulip's check_full_name. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name.length > MAX_NAME_LENGTH) throw badRequest("Name too long!");
  if (name.length < 1) throw badRequest("Name too short!");
  // Zulip's NAME_INVALID_CHARS (they would break mention syntax), plus control characters.
  if (/[*`\\>"@]/.test(name) || unprintablePosition(name) !== null) throw badRequest("Invalid characters in name!");
  return name;
}

/** Zulip's message when an organization with require_unique_names already has the name (feature level 246). */
export const NAME_IN_USE_MESSAGE = "Unique names required in this organization.";

/** Zulip's check_color: `#rgb` or `#rrggbb`. */
export function isHexColor(value: unknown): value is string {
  return typeof value === "string" && /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(value);
}

/** A stored color as clients of today's API parse it (zulip-flutter: `#rrggbb`, lowercase); others are left as they are. */
export function normalizedColor(color: string): string {
  const short = /^#([0-9a-fA-F])([0-9a-fA-F])([0-9a-fA-F])$/.exec(color);
  return (short ? `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}` : color).toLowerCase();
}
