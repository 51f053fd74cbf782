import type { Tx } from "@chat/db";

/** A user's alert words in the order they were added (Zulip's user_alert_words). */
export async function getAlertWords(db: Pick<Tx, "$queryRaw">, userId: number): Promise<string[]> {
  const rows = await db.$queryRaw<{ word: string }[]>`SELECT word FROM alert_word WHERE user_id = ${userId} ORDER BY id`;
  return rows.map((row) => row.word);
}
