import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "alertWord">;

/** A user's alert words in the order they were added (Zulip's user_alert_words). */
export async function getAlertWords(db: Reader, userId: number): Promise<string[]> {
  const rows = await db.alertWord.findMany({ where: { user_id: userId }, orderBy: { id: "asc" }, select: { word: true } });
  return rows.map((row) => row.word);
}
