import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";

/** The user's muted topics as the `muted_topics` event and /register carry them. */
export async function mutedTopicsOf(tx: Pick<Tx, "$queryRaw">, userId: number): Promise<Array<[string, string, number]>> {
  const rows = await tx.$queryRaw<{ stream_name: string; topic_name: string; date_muted: Date }[]>`
    SELECT s.name AS stream_name, m.topic_name, m.date_muted FROM muted_topic m JOIN stream s ON s.id = m.stream_id
    WHERE m.user_id = ${userId} AND NOT s.deactivated ORDER BY m.id`;
  return rows.map((r) => [r.stream_name, r.topic_name, Math.floor(r.date_muted.getTime() / 1000)]);
}

/** PATCH /users/me/subscriptions/muted_topics. */
export async function setTopicMuted(tx: Tx, events: EventRecorder, actor: Actor, streamId: number, recipientId: number, topic: string, op: "add" | "remove"): Promise<void> {
  const existing = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM muted_topic WHERE user_id = ${actor.id} AND stream_id = ${streamId} AND lower(topic_name) = lower(${topic})`;
  if (op === "add") {
    if (existing.length > 0) throw badRequest("Topic already muted");
    await tx.mutedTopic.create({ data: { user_id: actor.id, stream_id: streamId, recipient_id: recipientId, topic_name: topic } });
  } else {
    if (existing.length === 0) throw badRequest("Topic is not muted");
    await tx.mutedTopic.delete({ where: { id: existing[0].id } });
  }
  events.send({ type: "muted_topics", muted_topics: await mutedTopicsOf(tx, actor.id) }, [actor.id]);
}
