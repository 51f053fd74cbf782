// Whether a new password is acceptable, with Zulip's bounds: at least PASSWORD_MIN_LENGTH
// characters, at most its forms' 100, and not guessable in fewer than PASSWORD_MIN_GUESSES tries.
// Zulip estimates the guesses with zxcvbn; this is a small stand-in for the patterns that make a
// password cheap to guess (a common password, a repeat, a sequence, a keyboard row, each with a
// few digits or symbols around it), and plain brute force over the characters used otherwise.

/** Zulip's PASSWORD_MIN_LENGTH. */
export const PASSWORD_MIN_LENGTH = 6;
/** Zulip's password forms' MAX_PASSWORD_LENGTH (registration, reset). */
export const PASSWORD_MAX_LENGTH = 100;
/** Zulip's PASSWORD_MIN_GUESSES. */
export const PASSWORD_MIN_GUESSES = 10_000;

export type PasswordWeakness = "too_short" | "too_long" | "too_guessable";

/** Why a new password is refused, or null if it is acceptable. */
export function passwordWeakness(password: string): PasswordWeakness | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return "too_short";
  if (length > PASSWORD_MAX_LENGTH) return "too_long";
  return estimateGuesses(password) < PASSWORD_MIN_GUESSES ? "too_guessable" : null;
}

/** The message a refusal gives a person choosing a password (the reset page, the CLI). */
export function passwordWeaknessMessage(weakness: PasswordWeakness): string {
  switch (weakness) {
    case "too_short":
      return `The password is too short: use at least ${PASSWORD_MIN_LENGTH} characters.`;
    case "too_long":
      return `The password is too long: use at most ${PASSWORD_MAX_LENGTH} characters.`;
    case "too_guessable":
      return "The password is too weak: it is a common password or a simple pattern.";
  }
}

// Some of the most used passwords and the words they are made of (lowercase, letters only: digits
// and symbols around them are stripped before the lookup).
const COMMON = new Set([
  "password", "passw", "passwd", "pass", "qwerty", "qwertz", "azerty", "letmein", "welcome", "admin", "administrator", "login",
  "iloveyou", "monkey", "dragon", "master", "sunshine", "princess", "football", "baseball", "soccer", "hockey", "shadow",
  "superman", "batman", "trustno", "starwars", "whatever", "freedom", "secret", "changeme", "default", "guest", "root",
  "test", "tester", "testing", "hello", "hunter", "ninja", "mustang", "michael", "jennifer", "jordan", "charlie", "killer",
  "pokemon", "computer", "internet", "cheese", "summer", "winter", "spring", "autumn", "flower", "lovely", "abc", "abcd",
  "zulip", "chat", "teamchat", "user", "owner", "member", "example", "access", "ashley", "bailey", "qazwsx", "zaq",
]);

// Keyboard rows and alphabets a sequence may follow, forwards or backwards.
const SEQUENCES = ["abcdefghijklmnopqrstuvwxyz", "01234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm", "qwertzuiop", "yxcvbnm", "azertyuiop", "qsdfghjklm", "wxcvbn", "1qaz2wsx3edc4rfv5tgb", "qazwsxedcrfvtgbyhnujm"];

/** Roughly how many guesses find `password`: the cheapest pattern that explains all of it. */
export function estimateGuesses(password: string): number {
  const lower = password.toLowerCase();
  return Math.min(bruteForceGuesses(password), patternGuesses(lower));
}

function bruteForceGuesses(password: string): number {
  let alphabet = 0;
  if (/[a-z]/.test(password)) alphabet += 26;
  if (/[A-Z]/.test(password)) alphabet += 26;
  if (/[0-9]/.test(password)) alphabet += 10;
  if (/[ -/:-@[-`{-~]/.test(password)) alphabet += 33;
  if (/[^\x20-\x7e]/.test(password)) alphabet += 100;
  return alphabet ** [...password].length;
}

/**
 * The password as a pattern, or as one with up to four digits or symbols before and after it
 * (`password1`, `!qwerty2024`), those costing ten guesses each unless a pattern themselves (`123`).
 */
function patternGuesses(lower: string): number {
  let best = coreGuesses(unLeet(lower));
  const match = /^([^a-z]{0,4}?)(.+?)([^a-z]{0,4})$/.exec(lower);
  if (match && match[2] !== lower) best = Math.min(best, coreGuesses(unLeet(match[2])) * affixGuesses(match[1]) * affixGuesses(match[3]));
  return best;
}

function affixGuesses(affix: string): number {
  return affix === "" ? 1 : Math.min(10 ** affix.length, coreGuesses(affix));
}

const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s", "!": "i" };

function unLeet(text: string): string {
  return /[a-z]/.test(text) ? text.replace(/[0134578@$!]/g, (c) => LEET[c] ?? c) : text;
}

function coreGuesses(core: string): number {
  if (COMMON.has(core)) return 100;
  const repeat = repeatedUnit(core);
  if (repeat !== null) return Math.min(bruteForceGuesses(repeat.unit), coreGuesses(repeat.unit)) * repeat.times;
  if (isSequence(core)) return 4 * core.length;
  return Infinity;
}

/** `abcabc` is `abc` three times; null if the text is no repeat. */
function repeatedUnit(text: string): { unit: string; times: number } | null {
  for (let size = 1; size <= text.length / 2; size++) {
    if (text.length % size !== 0) continue;
    const unit = text.slice(0, size);
    if (unit.repeat(text.length / size) === text) return { unit, times: text.length / size };
  }
  return null;
}

function isSequence(text: string): boolean {
  if (text.length < 3) return false;
  return SEQUENCES.some((row) => row.includes(text) || [...row].reverse().join("").includes(text));
}
