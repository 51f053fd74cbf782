// Typing notifications (Zulip's check_send_typing_notification): nothing is stored; the event goes
// through the outbox like any other so every event node delivers it.
import { leanSql, Prisma, type Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { usersByEmail } from "../queries/users.ts";
import { accessStreamForPosting, checkTopic, type PrivateRecipients } from "./messages.ts";
import { checkContentEditPermission } from "./message-edit.ts";
import { accessMessage } from "../queries/messages.ts";
import { RECIPIENT_PERSONAL, RECIPIENT_STREAM } from "../lib/recipients.ts";

export const TYPING_OPS = ["start", "stop"] as const;

/** Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS: bigger streams get no typing events. */
export const MAX_STREAM_SIZE_FOR_TYPING = 100;

function checkOp(op: string): void {
  if (!(TYPING_OPS as readonly string[]).includes(op)) throw badRequest("Invalid 'op' value (should be start or stop)");
}

/** The conversation's participants as the client named them, the sender last if not named. */
async function typingRecipients(tx: Tx, sender: Actor, to: PrivateRecipients): Promise<UserProfile[]> {
  if (typeof to[0] === "number") {
    const ids = [...new Set(to as number[])];
    if (!ids.includes(sender.id)) ids.push(sender.id);
    const users = await tx.userProfile.findMany({ where: { id: { in: ids }, realm_id: sender.realm_id } });
    const byId = new Map(users.map((u) => [u.id, u]));
    const missing = ids.find((id) => !byId.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    return ids.map((id) => byId.get(id)!);
  }
  // Old clients (before Zulip 2.0) name recipients by email.
  const emails = [...new Set((to as string[]).map((e) => e.trim().toLowerCase()))];
  // By the address the sender was shown (lib/email-visibility.ts), or a real one they may see.
  const byEmail = await usersByEmail(tx, sender, emails);
  const missing = emails.find((e) => !byEmail.has(e));
  if (missing !== undefined) throw badRequest(`Invalid email '${missing}'`);
  const list = [...new Set(emails.map((e) => byEmail.get(e)!))];
  return list.some((u) => u.id === sender.id) ? list : [...list, sender];
}

/**
 * POST /typing to a conversation: `typing` start or stop to every active participant who takes
 * typing notifications, the sender included. Recorded with today's `message_type: "direct"`
 * (feature level 215); the event tier gives 3.x clients their shape (fanout.ts shapeEvent).
 */
export async function sendTypingNotification(tx: Tx, events: EventRecorder, sender: Actor, to: PrivateRecipients, op: string): Promise<void> {
  if (to.length === 0) throw badRequest("Missing parameter: 'to' (recipient)");
  checkOp(op);
  if (!sender.send_private_typing_notifications) throw badRequest("User has disabled typing notifications for direct messages");
  const recipients = await typingRecipients(tx, sender, to);
  events.send(
    {
      type: "typing",
      op,
      message_type: "direct",
      sender: { user_id: sender.id, email: sender.email },
      recipients: recipients.map((u) => ({ user_id: u.id, email: u.email })),
    },
    recipients.filter((u) => u.is_active && u.receives_typing_notifications).map((u) => u.id),
  );
}

/**
 * POST /typing to a stream's topic (feature levels 58 and 215): to the stream's active subscribers
 * who take typing notifications (the sender among them, as Zulip does), unless the stream is big;
 * only queues that declared stream_typing_notifications get it (fanout.ts shapeEvent).
 */
export async function sendStreamTypingNotification(tx: Tx, events: EventRecorder, sender: Actor, streamId: number, rawTopic: string | undefined, op: string): Promise<void> {
  checkOp(op);
  if (rawTopic === undefined) throw badRequest("Missing topic");
  if (!sender.send_stream_typing_notifications) throw badRequest("User has disabled typing notifications for channel messages");
  const stream = await accessStreamForPosting(tx, sender, streamId);
  const topic = checkTopic(rawTopic, false);
  const subscribers = await leanSql(tx).query<{ user_id: number; receives: boolean }>(Prisma.sql`
    SELECT s.user_id, u.receives_typing_notifications AS receives FROM subscription s JOIN user_profile u ON u.id = s.user_id
    WHERE s.recipient_id = ${stream.recipient_id} AND s.active AND s.is_user_active
    LIMIT ${MAX_STREAM_SIZE_FOR_TYPING + 1}`);
  if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING) return;
  events.send(
    { type: "typing", op, message_type: "stream", sender: { user_id: sender.id, email: sender.email }, stream_id: stream.id, topic },
    subscribers.filter((s) => s.receives).map((s) => s.user_id),
  );
}

/**
 * POST /messages/{message_id}/typing (feature levels 351 and 361): the user started or stopped
 * editing a message they may edit now (Zulip's validate_user_can_edit_message, without the grace
 * period), told as `typing_edit_message` to a stream message's active subscribers who take typing
 * notifications (none in a big stream), or to a direct message's participants who do.
 */
export async function sendMessageEditTypingNotification(tx: Tx, events: EventRecorder, sender: Actor, messageId: number, op: string): Promise<void> {
  checkOp(op);
  const message = await accessMessage(tx, sender, messageId);
  checkContentEditPermission(sender, message, 0);
  const base = { type: "typing_edit_message", op, sender_id: sender.id, message_id: message.id };
  if (message.recipient_type === RECIPIENT_STREAM) {
    if (!sender.send_stream_typing_notifications) throw badRequest("User has disabled typing notifications for channel messages");
    const subscribers = await leanSql(tx).query<{ user_id: number; receives: boolean }>(Prisma.sql`
      SELECT s.user_id, u.receives_typing_notifications AS receives FROM subscription s JOIN user_profile u ON u.id = s.user_id
      WHERE s.recipient_id = ${message.recipient_id} AND s.active AND s.is_user_active
      LIMIT ${MAX_STREAM_SIZE_FOR_TYPING + 1}`);
    if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING) return;
    events.send(
      { ...base, recipient: { type: "channel", channel_id: message.stream!.id, topic: message.subject } },
      subscribers.filter((s) => s.receives).map((s) => s.user_id),
    );
    return;
  }
  if (!sender.send_private_typing_notifications) throw badRequest("User has disabled typing notifications for direct messages");
  // One-to-one: the sender and the personal recipient's user; a group: its members.
  const participants = await leanSql(tx).query<{ id: number }>(
    message.recipient_type === RECIPIENT_PERSONAL
      ? Prisma.sql`
          SELECT u.id FROM user_profile u
          WHERE u.id IN (${sender.id}, (SELECT type_id FROM recipient WHERE id = ${message.recipient_id}))
            AND u.is_active AND u.receives_typing_notifications ORDER BY u.id`
      : Prisma.sql`
          SELECT u.id FROM subscription s JOIN user_profile u ON u.id = s.user_id
          WHERE s.recipient_id = ${message.recipient_id} AND u.is_active AND u.receives_typing_notifications ORDER BY u.id`,
  );
  const userIds = participants.map((row) => row.id);
  events.send({ ...base, recipient: { type: "direct", user_ids: userIds } }, userIds);
}
