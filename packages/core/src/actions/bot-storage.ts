// Bot storage (Zulip's set_bot_storage / remove_bot_storage): string values by string key, per
// user, for bots' state (zulip_bots' StateHandler). No events: nobody else sees it, and Zulip sends none.
// Every failure throws inside the caller's transaction, so a failed request changes nothing.
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { BOT_STORAGE_KEY_LIMIT, BOT_STORAGE_SIZE_LIMIT, characterCount, checkBotStorageEntries, checkBotStorageKeys } from "../lib/bot-storage.ts";

interface StoredUsage {
  stored_size: number;
  stored_keys: number;
  replaced_size: number;
  replaced_keys: number;
}

/**
 * PUT /bot_storage: sets these keys to these values, as long as the user's storage stays within
 * the limits. Takes the user's row lock (FOR NO KEY UPDATE: it serialises the user's writers
 * without blocking rows that merely reference the user), so two concurrent requests cannot both
 * pass the quota against the same old total.
 */
export async function putBotStorage(tx: Tx, actor: Actor, storage: Record<string, string>): Promise<void> {
  const entries = Object.entries(storage);
  checkBotStorageEntries(entries);
  if (entries.length === 0) return;
  const keys = entries.map(([key]) => key);
  const values = entries.map(([, value]) => value);
  const requestSize = entries.reduce((sum, [key, value]) => sum + characterCount(key) + characterCount(value), 0);

  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${actor.id} FOR NO KEY UPDATE`;
  // Sizes are length(key) + length(value) in characters, as Zulip's get_bot_storage_size.
  const [usage] = await tx.$queryRaw<StoredUsage[]>`
    SELECT coalesce(sum(length(key) + length(value)), 0)::int AS stored_size,
           count(*)::int AS stored_keys,
           coalesce(sum(length(key) + length(value)) FILTER (WHERE key = ANY(${keys}::text[])), 0)::int AS replaced_size,
           (count(*) FILTER (WHERE key = ANY(${keys}::text[])))::int AS replaced_keys
    FROM bot_storage_data WHERE user_id = ${actor.id}`;
  const newSize = usage.stored_size - usage.replaced_size + requestSize;
  if (newSize > BOT_STORAGE_SIZE_LIMIT) {
    throw badRequest(`Request exceeds storage limit by ${newSize - BOT_STORAGE_SIZE_LIMIT} characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`);
  }
  const newKeys = usage.stored_keys - usage.replaced_keys + entries.length;
  if (newKeys > BOT_STORAGE_KEY_LIMIT) {
    throw badRequest(`Request exceeds storage limit by ${newKeys - BOT_STORAGE_KEY_LIMIT} keys. The limit is ${BOT_STORAGE_KEY_LIMIT} keys.`);
  }
  // A JSON object's keys are distinct, so no row is touched twice by the upsert.
  await tx.$executeRaw`
    INSERT INTO bot_storage_data (user_id, key, value)
    SELECT ${actor.id}, entry.key, entry.value FROM unnest(${keys}::text[], ${values}::text[]) AS entry(key, value)
    ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value`;
}

/**
 * DELETE /bot_storage: removes these keys, or every key when none (or an empty list) is named. If
 * any of them is not stored, the request fails and removes nothing (the transaction rolls back).
 * A key named twice is removed once (Zulip refused it, having counted the names).
 */
export async function removeBotStorage(tx: Tx, actor: Actor, keys: string[] | undefined): Promise<void> {
  if (keys === undefined || keys.length === 0) {
    await tx.botStorageData.deleteMany({ where: { user_id: actor.id } });
    return;
  }
  checkBotStorageKeys(keys);
  const distinct = [...new Set(keys)];
  const { count } = await tx.botStorageData.deleteMany({ where: { user_id: actor.id, key: { in: distinct } } });
  if (count < distinct.length) throw badRequest("Key does not exist.");
}
