// Deleting a message (Zulip's zerver/actions/message_delete.py and validate_can_delete_message).
// The message row goes, and with it (FK cascades) its per-user rows, reactions, edits and
// submessages; everyone who had a row for it gets `delete_message`.
import { notifyAttachmentsChanged } from "./attachments.ts";
import { attachmentsOfMessages } from "../queries/attachments.ts";
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin } from "../lib/roles.ts";
import { accessMessage, messageRecipientUserIds, type AccessedMessage } from "../queries/messages.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";

/** Administrators delete anything; a sender their own, if the realm allows it and within its limit. */
export function checkCanDeleteMessage(actor: Actor, message: AccessedMessage, now = new Date()): void {
  if (isAdmin(actor)) return;
  if (message.sender_id !== actor.id || !actor.realm.allow_message_deleting) {
    throw badRequest("You don't have permission to delete this message");
  }
  const limit = actor.realm.message_content_delete_limit_seconds;
  if (limit !== null && limit > 0 && now.getTime() - message.date_sent.getTime() > limit * 1000) {
    throw badRequest("The time limit for deleting this message has passed");
  }
}

/** DELETE /messages/{message_id}. */
export async function deleteMessage(tx: Tx, events: EventRecorder, actor: Actor, messageId: number): Promise<void> {
  const message = await accessMessage(tx, actor, messageId, { lock: true });
  checkCanDeleteMessage(actor, message);
  // Read before deleting: the rows go with the message.
  const recipients = await messageRecipientUserIds(tx, message.id);
  const attachments = await attachmentsOfMessages(tx, [message.id]);
  await tx.$executeRaw`DELETE FROM message WHERE id = ${message.id}`;
  // The uploads it linked lose it from their messages (the files stay until their uploader removes them).
  await notifyAttachmentsChanged(tx, events, message.realm_id, attachments.map((a) => a.id));

  const stream = message.stream;
  if (stream && stream.first_message_id === message.id) {
    await tx.$executeRaw`
      UPDATE stream SET first_message_id = (SELECT min(id) FROM message WHERE recipient_id = ${message.recipient_id})
      WHERE id = ${stream.id}`;
  }

  // A private message's recipient_id and sender_id went in feature level 77: 3.x clients only.
  const event = stream
    ? { type: "delete_message", message_ids: [message.id], message_type: "stream", stream_id: stream.id, topic: message.subject }
    : withLegacyShape({ type: "delete_message", message_ids: [message.id], message_type: "private" }, { recipient_id: message.recipient_id, sender_id: message.sender_id });
  events.send(event, recipients);
}
