// Deleting a message (Zulip's zerver/actions/message_delete.py and validate_can_delete_message).
// The message row goes, and with it (FK cascades) its per-user rows, reactions, edits and
// submessages; everyone who had a row for it gets `delete_message`.
import { notifyAttachmentsChanged } from "./attachments.ts";
import { attachmentsOfMessages } from "../queries/attachments.ts";
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { canDeleteAnyMessage, canDeleteOwnMessage } from "../lib/group-permissions.ts";
import { accessMessage, messageRecipientUserIds, type AccessedMessage } from "../queries/messages.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { usersWhoCanSeeStream } from "./subscriptions.ts";
import type { StreamModel } from "@chat/db";

/**
 * Zulip 10.0's validate_user_can_delete_message: the realm's can_delete_any_message_group (feature
 * level 281) deletes anything, whenever sent; others their own messages and their bots', when in
 * can_delete_own_message_group (291), within the realm's limit (null or 3.x's 0: none).
 * `senderBotOwnerId` is the sender's owner when the sender is a bot.
 */
export async function checkCanDeleteMessage(tx: Tx, actor: Actor, message: AccessedMessage, senderBotOwnerId: number | null = null, now = new Date()): Promise<void> {
  if (await canDeleteAnyMessage(tx, actor)) return;
  if (message.sender_id !== actor.id && senderBotOwnerId !== actor.id) throw badRequest("You don't have permission to delete this message");
  if (!(await canDeleteOwnMessage(tx, actor))) throw badRequest("You don't have permission to delete this message");
  const limit = actor.realm.message_content_delete_limit_seconds;
  if (limit !== null && limit > 0 && now.getTime() - message.date_sent.getTime() > limit * 1000) {
    throw badRequest("The time limit for deleting this message has passed");
  }
}

/**
 * DELETE /messages/{message_id}. `byServer`: the server deletes it on the actor's behalf (a
 * resolve notice undone, message-edit.ts), whatever the deletion policies say.
 */
export async function deleteMessage(tx: Tx, events: EventRecorder, actor: Actor, messageId: number, options: { byServer?: boolean } = {}): Promise<void> {
  const message = await accessMessage(tx, actor, messageId, { lock: true });
  if (!options.byServer) {
    const owner = message.sender_id === actor.id ? null : await tx.userProfile.findUnique({ where: { id: message.sender_id }, select: { bot_owner_id: true } });
    await checkCanDeleteMessage(tx, actor, message, owner?.bot_owner_id ?? null);
  }
  // Read before deleting: the rows go with the message.
  const recipients = await messageRecipientUserIds(tx, message.id);
  const attachments = await attachmentsOfMessages(tx, [message.id]);
  await tx.$executeRaw`DELETE FROM message WHERE id = ${message.id}`;
  // The uploads it linked lose it from their messages (the files stay until their uploader removes them).
  await notifyAttachmentsChanged(tx, events, message.realm_id, attachments.map((a) => a.id));

  const stream = message.stream;
  if (stream && stream.first_message_id === message.id) await refreshFirstMessageId(tx, events, stream.id);

  // A private message's recipient_id and sender_id went in feature level 77: 3.x clients only.
  const event = stream
    ? { type: "delete_message", message_ids: [message.id], message_type: "stream", stream_id: stream.id, topic: message.subject }
    : withLegacyShape({ type: "delete_message", message_ids: [message.id], message_type: "private" }, { recipient_id: message.recipient_id, sender_id: message.sender_id });
  // The deleter too, even without a copy of the message (an administrator in a stream they left: feature level 274).
  events.send(event, recipients.includes(actor.id) ? recipients : [...recipients, actor.id]);
}

/**
 * After a stream's first message was deleted: its new first_message_id, announced as a `stream`
 * update to those who can see the stream (feature level 256). The stream copies nodes keep are
 * read again (the generation trigger leaves out first_message_id, which sending sets).
 */
export async function refreshFirstMessageId(tx: Tx, events: EventRecorder, streamId: number): Promise<void> {
  const [stream] = await tx.$queryRaw<StreamModel[]>`
    UPDATE stream SET first_message_id = (SELECT min(m.id) FROM message m WHERE m.recipient_id = stream.recipient_id)
    WHERE id = ${streamId} RETURNING *`;
  if (!stream) return;
  await tx.$executeRaw`UPDATE realm SET stream_generation = stream_generation + 1 WHERE id = ${stream.realm_id}`;
  const event = { type: "stream", op: "update", property: "first_message_id", value: stream.first_message_id, stream_id: stream.id, name: stream.name };
  events.send(event, await usersWhoCanSeeStream(tx, stream));
}
