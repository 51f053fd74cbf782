// Submessages (Zulip's zerver/actions/submessage.py): the widget a message starts (a poll, a to-do
// list) and what its readers attach to it (votes, options, tasks). Every submessage changes what a
// fetch shows of its message, so each bumps the message's cache_version (queries/message-cache.ts).
import { leanSql, Prisma, type Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import type { Submessage } from "../lib/message-format.ts";
import { checkPollData, checkTodoData, widgetTypeOf, type WidgetContent } from "../lib/widgets.ts";
import { accessMessage, messageRecipientUserIds } from "../queries/messages.ts";
import { applyPolicyOnParticipation } from "./automatic-topic-policies.ts";

/** msg_type is a short name ("widget"); Zulip's column holds 100 characters. */
export const MAX_SUBMESSAGE_TYPE_LENGTH = 100;
/** A submessage is one vote, option or task: far below a message's own limit. */
export const MAX_SUBMESSAGE_CONTENT_LENGTH = 10_000;
/** Submessages one message may hold: every fetch of it carries them all. */
export const MAX_SUBMESSAGES_PER_MESSAGE = 10_000;

interface SubmessageRow {
  id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

async function insertSubmessage(tx: Tx, messageId: number, senderId: number, msgType: string, content: string): Promise<Submessage> {
  const [row] = await leanSql(tx).query<SubmessageRow>(Prisma.sql`
    INSERT INTO submessage (message_id, sender_id, msg_type, content)
    VALUES (${messageId}, ${senderId}, ${msgType}, ${content})
    RETURNING id, sender_id, msg_type, content`);
  return { msg_type: row.msg_type, content: row.content, message_id: messageId, sender_id: row.sender_id, id: row.id };
}

/**
 * The widget submessage of a message just written in `tx` (Zulip's do_widget_post_save_actions):
 * the message's row is new in this transaction, so no node has cached it without the widget.
 */
export async function addWidgetSubmessage(tx: Tx, messageId: number, senderId: number, widget: WidgetContent): Promise<Submessage> {
  return insertSubmessage(tx, messageId, senderId, "widget", JSON.stringify(widget));
}

export interface SubmessageRequest {
  messageId: number;
  msgType: string;
  /** JSON text, stored and sent as it came. */
  content: string;
}

/** The type of the message's widget (its first "widget" submessage), or null. */
async function widgetTypeOfMessage(tx: Tx, messageId: number): Promise<string | null> {
  const [widget] = await leanSql(tx).query<{ content: string }>(Prisma.sql`
    SELECT content FROM submessage WHERE message_id = ${messageId} AND msg_type = 'widget' ORDER BY id LIMIT 1`);
  return widget === undefined ? null : widgetTypeOf(widget.content);
}

/**
 * POST /submessage (Zulip's process_submessage and do_add_submessage). The message row stays
 * locked to the end of the transaction, so submessages of one message are added one at a time.
 */
export async function addSubmessage(tx: Tx, events: EventRecorder, actor: Actor, request: SubmessageRequest): Promise<void> {
  if (request.msgType.length > MAX_SUBMESSAGE_TYPE_LENGTH) throw badRequest(`msg_type is too long (limit: ${MAX_SUBMESSAGE_TYPE_LENGTH} characters)`);
  if (request.content.length > MAX_SUBMESSAGE_CONTENT_LENGTH) throw badRequest(`content is too long (limit: ${MAX_SUBMESSAGE_CONTENT_LENGTH} characters)`);
  const message = await accessMessage(tx, actor, request.messageId, { lock: true });

  // Readers collaborate on a widget, but only its message's sender may start one: the first
  // submessage of a message is theirs.
  const [counts] = await leanSql(tx).query<{ total: number; from_sender: number }>(Prisma.sql`
    SELECT count(*)::int AS total, count(*) FILTER (WHERE sender_id = ${message.sender_id})::int AS from_sender
    FROM submessage WHERE message_id = ${message.id}`);
  if (actor.id !== message.sender_id && counts.from_sender === 0) throw badRequest("You cannot attach a submessage to this message.");
  if (counts.total >= MAX_SUBMESSAGES_PER_MESSAGE) throw badRequest("This message has too many submessages.");

  let data: unknown;
  try {
    data = JSON.parse(request.content);
  } catch {
    throw badRequest("Invalid json for submessage");
  }
  const isWidgetAuthor = actor.id === message.sender_id;
  const widgetType = await widgetTypeOfMessage(tx, message.id);
  if (widgetType === "poll") checkPollData(data, isWidgetAuthor);
  else if (widgetType === "todo") checkTodoData(data, isWidgetAuthor);

  const submessage = await insertSubmessage(tx, message.id, actor.id, request.msgType, request.content);
  // No trigger watches submessages: the message's cached copies (message-cache.ts) go stale here.
  await tx.$executeRaw`UPDATE message SET cache_version = cache_version + 1 WHERE id = ${message.id}`;
  // A vote or a to-do edit is participation: it may follow (or unmute) the topic for its sender.
  await applyPolicyOnParticipation(tx, events, actor, message);
  // Zulip's recipients: those with a row for the message (a reader of stream history has none).
  const recipients = await messageRecipientUserIds(tx, message.id);
  events.send(
    {
      type: "submessage",
      msg_type: submessage.msg_type,
      content: submessage.content,
      message_id: message.id,
      sender_id: actor.id,
      submessage_id: submessage.id,
    },
    recipients,
  );
}
