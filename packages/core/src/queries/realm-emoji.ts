import type { Tx } from "@chat/db";
import { customEmojiUrl } from "../lib/markdown/zulip-syntax.ts";

export interface RealmEmojiObject {
  id: string;
  name: string;
  source_url: string;
  deactivated: boolean;
  author: { id: number; email: string; full_name: string } | null;
  /** Who uploaded it (feature level 7's form of `author`, which 3.x clients read). */
  author_id: number | null;
  /** A still image of an animated emoji (feature level 97); this server keeps none. */
  still_url: null;
}

/** The realm's custom emoji, deactivated ones too, keyed by id (Zulip's get_realm_emoji_dicts). */
export async function getRealmEmojiDicts(db: Pick<Tx, "realmEmoji">, realmId: number): Promise<Record<string, RealmEmojiObject>> {
  const rows = await db.realmEmoji.findMany({
    where: { realm_id: realmId },
    select: { id: true, realm_id: true, name: true, file_name: true, deactivated: true, author: { select: { id: true, email: true, full_name: true } } },
    orderBy: { id: "asc" },
  });
  const result: Record<string, RealmEmojiObject> = {};
  for (const row of rows) {
    result[String(row.id)] = { id: String(row.id), name: row.name, source_url: customEmojiUrl(row), deactivated: row.deactivated, author: row.author, author_id: row.author?.id ?? null, still_url: null };
  }
  return result;
}
