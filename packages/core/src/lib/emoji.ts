// Emoji names and codes, as Zulip knows them. Unicode emoji come from the name table
// (emoji-name-table.ts: npm emoji packages, by rules), built once (at server start, or on first use elsewhere); custom emoji are
// the realm_emoji rows.
//
// A Unicode emoji's code is Zulip's form: its code points in lowercase hex joined by '-', without
// the U+FE0F variation selector ("1f600", "1f1fa-1f1f8", "2764" for :heart:). Every name the table
// holds is accepted; each emoji has one canonical name, the one codes map back to.
import type { Tx } from "@chat/db";
import { buildEmojiNameTable, zulipEmojiCode, type EmojiNameTable } from "./emoji-name-table.ts";

export { zulipEmojiCode };

export interface UnicodeEmoji {
  name: string;
  code: string;
}

export interface RealmEmojiRef {
  id: number;
  name: string;
  deactivated: boolean;
}

/** Zulip's extra emoji: not Unicode, not per realm. */
export const ZULIP_EXTRA_EMOJI = ["zulip"] as const;

export const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];

let table: EmojiNameTable | null = null;

function loadTable(): EmojiNameTable {
  table ??= buildEmojiNameTable();
  return table;
}

/** Builds the table now (about 100 ms), so that no request pays for it: the server calls it at start. */
export function preloadEmojiNames(): void {
  loadTable();
}

/** The Unicode emoji a name (any of its names) stands for, with its canonical name. */
export function unicodeEmojiByName(name: string): UnicodeEmoji | null {
  const { nameToCode, codeToName } = loadTable();
  const code = nameToCode.get(name);
  return code === undefined ? null : { name: codeToName.get(code)!, code };
}

/** The Unicode emoji with this code (Zulip's form; upper case and U+FE0F are tolerated). */
export function unicodeEmojiByCode(code: string): UnicodeEmoji | null {
  const normalized = zulipEmojiCode(code);
  const name = loadTable().codeToName.get(normalized);
  return name === undefined ? null : { name, code: normalized };
}

/** Whether `name` is one of the names of the Unicode emoji `code` (Zulip's name_to_codepoint check). */
export function unicodeEmojiNameMatchesCode(name: string, code: string): boolean {
  return loadTable().nameToCode.get(name) === code;
}

/**
 * Every Unicode emoji's names by code, the canonical name first (Zulip's `code_to_names`, which
 * clients fetch from `server_emoji_data_url` to offer emoji by name).
 */
export function unicodeEmojiNamesByCode(): Record<string, string[]> {
  const { nameToCode, codeToName } = loadTable();
  const names: Record<string, string[]> = {};
  for (const [code, name] of codeToName) names[code] = [name];
  for (const [name, code] of nameToCode) if (names[code] !== undefined && codeToName.get(code) !== name) names[code].push(name);
  return names;
}

type EmojiReader = Pick<Tx, "realmEmoji">;

/** An active custom emoji of the realm by name, or null. */
export async function realmEmojiByName(tx: EmojiReader, realmId: number, name: string): Promise<RealmEmojiRef | null> {
  return tx.realmEmoji.findFirst({
    where: { realm_id: realmId, name, deactivated: false },
    select: { id: true, name: true, deactivated: true },
    orderBy: { id: "desc" },
  });
}

/**
 * A custom emoji of the realm by id (the emoji_code of a realm_emoji reaction), or null. Unlike the
 * lookup by name this also finds deactivated emoji, with `deactivated` set, so callers can tell
 * "no such emoji" from "deactivated" as Zulip does; pass `activeOnly` to get only active ones.
 */
export async function realmEmojiById(tx: EmojiReader, realmId: number, id: number | string, options: { activeOnly?: boolean } = {}): Promise<RealmEmojiRef | null> {
  const numeric = typeof id === "number" ? id : /^[0-9]{1,9}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(numeric)) return null;
  return tx.realmEmoji.findFirst({
    where: { id: numeric, realm_id: realmId, ...(options.activeOnly ? { deactivated: false } : {}) },
    select: { id: true, name: true, deactivated: true },
  });
}
