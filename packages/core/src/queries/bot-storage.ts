import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import { checkBotStorageKeys } from "../lib/bot-storage.ts";

type Reader = Pick<Tx, "botStorageData">;

/**
 * GET /bot_storage (Zulip's get_storage): the user's values for these keys, in the order asked, or
 * every key when none (or an empty list) is named. A key the user has not stored fails the request.
 */
export async function getBotStorage(db: Reader, userId: number, keys: string[] | undefined): Promise<Record<string, string>> {
  if (keys === undefined || keys.length === 0) {
    const rows = await db.botStorageData.findMany({ where: { user_id: userId }, orderBy: { key: "asc" }, select: { key: true, value: true } });
    // fromEntries defines each key as its own property, "__proto__" included.
    return Object.fromEntries(rows.map((row) => [row.key, row.value]));
  }
  checkBotStorageKeys(keys);
  const rows = await db.botStorageData.findMany({ where: { user_id: userId, key: { in: [...new Set(keys)] } }, select: { key: true, value: true } });
  const stored = new Map(rows.map((row) => [row.key, row.value]));
  return Object.fromEntries(
    keys.map((key) => {
      const value = stored.get(key);
      if (value === undefined) throw badRequest("Key does not exist.");
      return [key, value];
    }),
  );
}
