// The bounds of bot storage (GET/PUT/DELETE /bot_storage) and the checks every key and value
// passes before it reaches the database. Characters are counted as Zulip counts them (Python's
// len(): code points, so an emoji is one), which is also what Postgres's length() counts.
import { badRequest } from "../errors.ts";

/**
 * The most characters (keys plus values) one user may store. Zulip's USER_STATE_SIZE_LIMIT is
 * 10,000,000; a GET of everything then builds a JSON body of up to 60 MB (control characters
 * escape to six bytes) and holds the rows, their strings and the body at once, so a few concurrent
 * reads from one account could exhaust a Node process. A tenth of it keeps the largest answer near
 * the 5 MB a request body may carry; bots of the era store a counter or a short list.
 */
export const BOT_STORAGE_SIZE_LIMIT = 1_000_000;
/** The most keys one user may store: each row costs the database about 60 bytes whatever its size. */
export const BOT_STORAGE_KEY_LIMIT = 10_000;
/** The most keys one request may name or set. */
export const BOT_STORAGE_KEYS_PER_REQUEST = 1_000;
/** The longest key, in characters: four bytes each at most, so it always fits a btree entry (2,704 bytes). */
export const MAX_BOT_STORAGE_KEY_LENGTH = 500;

/** Characters as Python's len() counts them. Assumes no lone surrogates (checkText refuses them). */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) count--;
  }
  return count;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Postgres text cannot hold NUL, and a lone surrogate (valid JSON: "\ud800") is no character. */
function checkText(text: string, what: "Key" | "Value"): void {
  if (text.includes("\u0000")) throw badRequest(`${what} contains NULL (0x00) characters.`);
  if (LONE_SURROGATE.test(text)) throw badRequest(`${what} is not valid Unicode.`);
}

function checkKeyCount(count: number): void {
  if (count > BOT_STORAGE_KEYS_PER_REQUEST) throw badRequest(`Too many keys in one request (limit: ${BOT_STORAGE_KEYS_PER_REQUEST}).`);
}

/** Keys a request reads or removes: bounded in number, and text the database can compare. */
export function checkBotStorageKeys(keys: string[]): void {
  checkKeyCount(keys.length);
  for (const key of keys) checkText(key, "Key");
}

/** Entries a request stores: bounded in number, keys bounded in length, keys and values storable. */
export function checkBotStorageEntries(entries: Array<[string, string]>): void {
  checkKeyCount(entries.length);
  for (const [key, value] of entries) {
    checkText(key, "Key");
    if (characterCount(key) > MAX_BOT_STORAGE_KEY_LENGTH) throw badRequest(`Key is too long (limit: ${MAX_BOT_STORAGE_KEY_LENGTH} characters).`);
    checkText(value, "Value");
  }
}
