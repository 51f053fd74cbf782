// POST /streams/{stream_id}/delete_topic (Zulip 9.0's delete_in_topic): an administrator deletes
// every message of a topic they can read, newest first, in batches that each commit on their own,
// so a topic too large for one request is deleted by repeating it. A request stops starting
// batches past a time limit and answers `complete: false` (feature level 211).
import type { StreamModel, Tx } from "@chat/db";
import type { ActionRunner, ChangeOrigin, EventRecorder } from "../events.ts";
import type { Actor } from "../models.ts";
import { AdministratorRequiredError } from "../errors.ts";
import { isAdmin } from "../lib/roles.ts";
import { accessStreamByIdAsMember } from "../queries/streams.ts";
import { attachmentsOfMessages } from "../queries/attachments.ts";
import { notifyAttachmentsChanged } from "./attachments.ts";
import { refreshFirstMessageId } from "./message-delete.ts";

/** Zulip's RETENTION_STREAM_MESSAGE_BATCH_SIZE and its time budget for one request (50 s); tests lower them. */
export const TOPIC_DELETION = { batchSize: 100, timeLimitMs: 50_000 };

/** Zulip's require_realm_admin: checked before anything else. */
export function checkCanDeleteTopic(actor: Actor): void {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
}

/**
 * One batch: the topic's newest messages the actor can read (all of them with shared history, else
 * those they received), deleted, with `delete_message` to those who had them. Returns how many.
 */
export async function deleteTopicBatch(tx: Tx, events: EventRecorder, actor: Actor, streamId: number, topicName: string, batchSize = TOPIC_DELETION.batchSize): Promise<number> {
  checkCanDeleteTopic(actor);
  const stream: StreamModel = await accessStreamByIdAsMember(tx, actor, streamId);
  const ownOnly = stream.invite_only && !stream.history_public_to_subscribers;
  const batch = await tx.$queryRaw<Array<{ id: number; subject: string }>>`
    SELECT m.id, m.subject FROM message m
    WHERE m.realm_id = ${actor.realm_id} AND m.recipient_id = ${stream.recipient_id} AND lower(m.subject) = lower(${topicName})
      AND (NOT ${ownOnly} OR EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${actor.id}))
    ORDER BY m.id DESC LIMIT ${batchSize} FOR UPDATE OF m`;
  if (batch.length === 0) return 0;
  const ids = batch.map((row) => row.id);
  const recipients = await tx.$queryRaw<Array<{ user_id: number }>>`SELECT DISTINCT user_id FROM user_message WHERE message_id = ANY(${ids}::int[]) ORDER BY user_id`;
  const attachments = await attachmentsOfMessages(tx, ids);
  await tx.$executeRaw`DELETE FROM message WHERE id = ANY(${ids}::int[])`;
  await notifyAttachmentsChanged(tx, events, actor.realm_id, attachments.map((a) => a.id));
  // Zulip's do_delete_messages: one event for the batch, naming the topic as the messages had it.
  events.send({ type: "delete_message", message_ids: [...ids].sort((a, b) => a - b), message_type: "stream", stream_id: stream.id, topic: batch[0].subject }, recipients.map((row) => row.user_id));
  if (stream.first_message_id !== null && ids.includes(stream.first_message_id)) await refreshFirstMessageId(tx, events, stream.id);
  return ids.length;
}

/** The whole request: batches until none is left (true) or the time limit passes (false). */
export async function deleteTopic(actions: ActionRunner, origin: ChangeOrigin, actor: Actor, streamId: number, topicName: string): Promise<boolean> {
  checkCanDeleteTopic(actor);
  const start = Date.now();
  for (;;) {
    if (Date.now() >= start + TOPIC_DELETION.timeLimitMs) return false;
    const deleted = await actions.run(origin, (tx, events) => deleteTopicBatch(tx, events, actor, streamId, topicName));
    if (deleted === 0) return true;
  }
}
