// Alert words (Zulip's do_add_alert_words / do_remove_alert_words): words that highlight a message
// for one user. Words are compared without case; each change sends the whole list to the user.
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { EventRecorder } from "../events.ts";
import type { Actor } from "../models.ts";
import { getAlertWords } from "../queries/alert-words.ts";

export const MAX_ALERT_WORD_LENGTH = 100;
/**
 * Every send matches each of the realm's alert words against the message (one regular expression
 * a word), so one user's list slows everyone's sends: 20,000 words made them 50 times slower.
 */
export const MAX_ALERT_WORDS = 100;

/** Trimmed, without empty words (Zulip's clean_alert_words). */
function cleanAlertWords(words: string[]): string[] {
  return words.map((w) => w.trim()).filter((w) => w !== "");
}

async function lockUser(tx: Tx, userId: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${userId} FOR UPDATE`;
}

/** POST /users/me/alert_words: adds the words not already there (in any case); returns the full list. */
export async function addAlertWords(tx: Tx, events: EventRecorder, actor: Actor, words: string[]): Promise<string[]> {
  await lockUser(tx, actor.id);
  const existing = new Set((await getAlertWords(tx, actor.id)).map((w) => w.toLowerCase()));
  const added = new Map<string, string>();
  for (const word of cleanAlertWords(words)) {
    const key = word.toLowerCase();
    if (!existing.has(key)) added.set(key, word);
  }
  if (existing.size + added.size > MAX_ALERT_WORDS) throw badRequest(`Too many alert words (limit: ${MAX_ALERT_WORDS})`);
  if (added.size > 0) {
    await tx.alertWord.createMany({ data: [...added.values()].map((word) => ({ realm_id: actor.realm_id, user_id: actor.id, word })) });
  }
  return sendAlertWords(tx, events, actor);
}

/** DELETE /users/me/alert_words: removes the words (in any case); returns the full list. */
export async function removeAlertWords(tx: Tx, events: EventRecorder, actor: Actor, words: string[]): Promise<string[]> {
  await lockUser(tx, actor.id);
  const lowered = words.map((w) => w.toLowerCase());
  if (lowered.length > 0) {
    await tx.$executeRaw`DELETE FROM alert_word WHERE user_id = ${actor.id} AND lower(word) = ANY(${lowered}::text[])`;
  }
  return sendAlertWords(tx, events, actor);
}

async function sendAlertWords(tx: Tx, events: EventRecorder, actor: Actor): Promise<string[]> {
  const list = await getAlertWords(tx, actor.id);
  events.send({ type: "alert_words", alert_words: list }, [actor.id]);
  return list;
}
