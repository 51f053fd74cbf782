// Sending a message: the hot path. Recipient resolution uses the query builder; the write is one
// raw statement (message plus every per-user row) because Prisma's builder limits write speed.
import { createHash } from "node:crypto";
import { Prisma, type StreamModel, type Tx } from "@chat/db";
import type { EventRecipient } from "@chat/bus";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError, StreamDoesNotExistError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { topicLinks, type Linkifier } from "../lib/linkifiers.ts";
import { fetchRenderContext, MARKDOWN_VERSION, mentionFlagUserIds, renderMarkdown } from "../lib/markdown.ts";
import { FLAG_BITS, flagsToNames } from "../lib/message-flags.ts";
import type { WireMessage } from "../lib/message-format.ts";
import { RECIPIENT_HUDDLE } from "../lib/recipients.ts";
import { isAdmin, ROLE_GUEST } from "../lib/roles.ts";
import { STREAM_POST_POLICY_ADMINS, STREAM_POST_POLICY_RESTRICT_NEW_MEMBERS } from "../lib/stream-format.ts";

export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;

export type StreamIndicator = string | number;
export type PrivateRecipients = number[] | string[];

export type MessageDestination =
  | { type: "stream"; stream: StreamIndicator; topic: string | undefined }
  | { type: "private"; to: PrivateRecipients };

export interface SendMessageRequest {
  destination: MessageDestination;
  content: string;
  client: string;
}

export function checkContent(content: string): string {
  if (content.trim() === "") throw badRequest("Message must not be empty");
  if (Buffer.byteLength(content, "utf8") > MAX_MESSAGE_LENGTH) {
    throw badRequest(`Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`);
  }
  return content;
}

export function checkTopic(raw: string | undefined, mandatoryTopics: boolean): string {
  if (raw === undefined) throw badRequest("Missing topic");
  const topic = raw.trim();
  if ([...topic].length > MAX_TOPIC_LENGTH) throw badRequest(`Topic too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  if (/[\u0000-\u001f]/.test(topic)) throw badRequest("Invalid character in topic");
  if (topic === "") {
    if (mandatoryTopics) throw badRequest("Topic can't be empty");
    return "(no topic)";
  }
  return topic;
}

async function accessStreamForSend(tx: Tx, sender: Actor, indicator: StreamIndicator): Promise<StreamModel> {
  // One round trip: the stream, and whether the sender (or, for a bot, its owner: bots act with
  // their owner's standing, as in Zulip) is subscribed.
  const senders = [sender.id, ...(sender.bot_owner_id ? [sender.bot_owner_id] : [])];
  const match = typeof indicator === "number" ? Prisma.sql`st.id = ${indicator}` : Prisma.sql`lower(st.name) = lower(${indicator.trim()})`;
  const rows = await tx.$queryRaw<Array<StreamModel & { sender_subscribed: boolean }>>`
    SELECT st.*, EXISTS (
      SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.active AND s.user_id = ANY(${senders}::int[])
    ) AS sender_subscribed
    FROM stream st WHERE st.realm_id = ${sender.realm_id} AND NOT st.deactivated AND ${match}`;
  if (rows.length === 0) {
    if (typeof indicator === "number") {
      throw new JsonableError(`Stream with ID '${indicator}' does not exist`, { code: "STREAM_DOES_NOT_EXIST", extra: { stream_id: indicator } });
    }
    throw new StreamDoesNotExistError(indicator);
  }
  const { sender_subscribed: subscribed, ...stream } = rows[0];

  if ((stream.invite_only || sender.role === ROLE_GUEST) && !subscribed) {
    throw badRequest(`Not authorized to send to stream '${stream.name}'`);
  }
  if (stream.stream_post_policy === STREAM_POST_POLICY_ADMINS && !isAdmin(sender)) {
    throw badRequest("Only organization administrators can send to this stream.");
  }
  if (stream.stream_post_policy === STREAM_POST_POLICY_RESTRICT_NEW_MEMBERS && !isAdmin(sender)) {
    const ageDays = (Date.now() - sender.date_joined.getTime()) / 86_400_000;
    if (sender.role === ROLE_GUEST || ageDays < sender.realm.waiting_period_threshold) {
      throw badRequest("New members cannot send to this stream.");
    }
  }
  return stream;
}

async function resolvePrivateRecipients(tx: Tx, sender: Actor, to: PrivateRecipients): Promise<UserProfile[]> {
  if (to.length === 0) throw badRequest("Message must have recipients");
  let users: UserProfile[];
  if (typeof to[0] === "number") {
    const ids = [...new Set(to as number[])];
    users = await tx.userProfile.findMany({ where: { id: { in: ids }, realm_id: sender.realm_id } });
    const found = new Set(users.map((u) => u.id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  } else {
    const emails = [...new Set((to as string[]).map((e) => e.trim().toLowerCase()))];
    users = await tx.$queryRaw<UserProfile[]>`
      SELECT * FROM user_profile WHERE realm_id = ${sender.realm_id} AND lower(delivery_email) = ANY(${emails}::text[])`;
    const found = new Set(users.map((u) => u.delivery_email.toLowerCase()));
    const missing = emails.find((e) => !found.has(e));
    if (missing !== undefined) throw badRequest(`Invalid email '${missing}'`);
  }
  const inactive = users.find((u) => !u.is_active);
  if (inactive) throw badRequest(`'${inactive.email}' is no longer using Zulip.`);
  return users;
}

/** The one recipient row for a private conversation: personal for one or two people, else a huddle. */
async function privateRecipientId(tx: Tx, sender: Actor, participants: UserProfile[]): Promise<number> {
  if (participants.length === 1) return sender.recipient_id!;
  if (participants.length === 2) return participants.find((u) => u.id !== sender.id)!.recipient_id!;
  const ids = participants.map((u) => u.id).sort((a, b) => a - b);
  const hash = createHash("sha1").update(ids.join(",")).digest("hex");
  const huddle = await tx.huddle.upsert({ where: { huddle_hash: hash }, create: { realm_id: sender.realm_id, huddle_hash: hash }, update: {} });
  if (huddle.recipient_id !== null) return huddle.recipient_id;
  const recipient = await tx.recipient.upsert({
    where: { type_type_id: { type: RECIPIENT_HUDDLE, type_id: huddle.id } },
    create: { type: RECIPIENT_HUDDLE, type_id: huddle.id },
    update: {},
  });
  await tx.huddle.update({ where: { id: huddle.id }, data: { recipient_id: recipient.id } });
  // As in Zulip, a group conversation's members are its recipient's subscribers.
  await tx.subscription.createMany({ data: ids.map((user_id) => ({ user_id, recipient_id: recipient.id })), skipDuplicates: true });
  return recipient.id;
}

interface InsertedMessage {
  id: number;
  date_sent: Date;
  rows: Array<{ user_id: number; flags: number }>;
}

/** Per-recipient flags a message's content sets. */
interface ContentFlags {
  /** Users whose `mentioned` flag is set (if they are recipients). */
  mentionedUserIds: number[];
  /** Whether every recipient gets `wildcard_mentioned`. */
  wildcard: boolean;
}

// Zulip's alert word boundaries: a word matches (case-insensitively) at the start or after one of
// these, and at the end or before one of those. Regular-expression characters in the word are escaped.
const ALERT_BEFORE = "(^|[\\s(\".,';\\[*`>])";
const ALERT_AFTER = "($|[\\s)\"?:.,';\\]!*`])";
const ALERT_META = "([.^$*+?()\\[\\]{}|\\\\])";
const ALERT_META_ESCAPED = "\\\\\\1";

/**
 * One statement: the message, then a user_message row for every recipient user with its flags
 * (`mentioned`, `wildcard_mentioned`, and `has_alert_word` from the recipient's alert words).
 */
async function insertMessage(
  tx: Tx,
  values: { realmId: number; senderId: number; recipientId: number; topic: string; content: string; rendered: ReturnType<typeof renderMarkdown>; client: string },
  recipients: { subscribersOf: number } | { userIds: number[] },
  baseFlags: number,
  contentFlags: ContentFlags,
): Promise<InsertedMessage> {
  const { rendered } = values;
  const userIds = "userIds" in recipients ? recipients.userIds : null;
  const subscribersOf = "subscribersOf" in recipients ? recipients.subscribersOf : null;
  const rows = await tx.$queryRaw<Array<{ id: number; date_sent: Date; user_id: number; flags: number }>>`
    WITH m AS (
      INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version,
                           sending_client, has_link, has_image, is_me_message)
      VALUES (${values.realmId}, ${values.senderId}, ${values.recipientId}, ${values.topic}, ${values.content}, ${rendered.html},
              ${MARKDOWN_VERSION}, ${values.client}, ${rendered.hasLink}, ${rendered.hasImage}, ${rendered.isMeMessage})
      RETURNING id, date_sent
    ), recipients AS (
      SELECT user_id FROM subscription
      WHERE ${subscribersOf}::int IS NOT NULL AND recipient_id = ${subscribersOf}::int AND active AND is_user_active
      UNION
      SELECT unnest(${userIds ?? []}::int[])
      UNION
      SELECT ${values.senderId}::int
    ), um AS (
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT r.user_id, m.id, ${baseFlags}::int
        | CASE WHEN r.user_id = ${values.senderId}::int THEN ${FLAG_BITS.read}::int ELSE 0 END
        | CASE WHEN r.user_id = ANY(${contentFlags.mentionedUserIds}::int[]) THEN ${FLAG_BITS.mentioned}::int ELSE 0 END
        | CASE WHEN ${contentFlags.wildcard}::boolean THEN ${FLAG_BITS.wildcard_mentioned}::int ELSE 0 END
        | CASE WHEN EXISTS (
            SELECT 1 FROM alert_word aw
            WHERE aw.user_id = r.user_id
              AND lower(${values.content}::text) ~ (${ALERT_BEFORE}::text || regexp_replace(lower(aw.word), ${ALERT_META}::text, ${ALERT_META_ESCAPED}::text, 'g') || ${ALERT_AFTER}::text)
          ) THEN ${FLAG_BITS.has_alert_word}::int ELSE 0 END
      FROM recipients r CROSS JOIN m
      RETURNING user_id, flags
    )
    SELECT m.id, m.date_sent, um.user_id, um.flags FROM um CROSS JOIN m`;
  return { id: rows[0].id, date_sent: rows[0].date_sent, rows: rows.map((r) => ({ user_id: r.user_id, flags: r.flags })) };
}

/** POST /messages (Zulip's check_send_message): validates, stores, and records the `message` event. */
export async function sendMessage(tx: Tx, events: EventRecorder, sender: Actor, request: SendMessageRequest): Promise<{ id: number }> {
  const content = checkContent(request.content);
  const context = await fetchRenderContext(tx, sender.realm_id, content);
  const linkifiers = context.linkifiers ?? [];
  const rendered = renderMarkdown(content, context);
  const mentionedUserIds = mentionFlagUserIds(rendered, context);
  const base = {
    sender_id: sender.id,
    sender_full_name: sender.full_name,
    sender_short_name: sender.short_name,
    sender_email: sender.email,
    sender_realm_str: sender.realm.string_id,
    sender_avatar_source: sender.avatar_source,
    sender_avatar_version: sender.avatar_version,
    realm_id: sender.realm_id,
    raw_content: content,
    rendered_content: rendered.html,
    client: request.client,
    is_me_message: rendered.isMeMessage,
    topic_links: [],
    reactions: [],
    submessages: [],
  };

  let inserted: InsertedMessage;
  let message: WireMessage;
  let allPublicStreams = false;
  const { destination } = request;
  if (destination.type === "stream") {
    const topic = checkTopic(destination.topic, sender.realm.mandatory_topics);
    const stream = await accessStreamForSend(tx, sender, destination.stream);
    inserted = await insertMessage(
      tx,
      { realmId: sender.realm_id, senderId: sender.id, recipientId: stream.recipient_id!, topic, content, rendered, client: request.client },
      { subscribersOf: stream.recipient_id! },
      0,
      { mentionedUserIds, wildcard: rendered.mentionsWildcard },
    );
    if (stream.first_message_id === null) {
      await tx.stream.update({ where: { id: stream.id }, data: { first_message_id: inserted.id } });
    }
    allPublicStreams = !stream.invite_only;
    message = {
      ...base,
      id: inserted.id,
      recipient_id: stream.recipient_id!,
      type: "stream",
      stream_id: stream.id,
      display_recipient: stream.name,
      subject: topic,
      topic_links: topicLinks(topic, linkifiers),
      timestamp: Math.floor(inserted.date_sent.getTime() / 1000),
    };
  } else {
    const recipients = await resolvePrivateRecipients(tx, sender, destination.to);
    const participants = [sender as UserProfile, ...recipients.filter((u) => u.id !== sender.id)].sort((a, b) => a.id - b.id);
    const recipientId = await privateRecipientId(tx, sender, participants);
    inserted = await insertMessage(
      tx,
      { realmId: sender.realm_id, senderId: sender.id, recipientId, topic: "", content, rendered, client: request.client },
      { userIds: participants.map((u) => u.id) },
      FLAG_BITS.is_private,
      { mentionedUserIds, wildcard: false },
    );
    message = {
      ...base,
      id: inserted.id,
      recipient_id: recipientId,
      type: "private",
      display_recipient: participants.map((u) => ({ id: u.id, email: u.email, full_name: u.full_name, short_name: u.short_name, is_mirror_dummy: u.is_mirror_dummy })),
      subject: "",
      timestamp: Math.floor(inserted.date_sent.getTime() / 1000),
    };
  }

  const users: EventRecipient[] = inserted.rows.map((row) => ({ id: row.user_id, flags: flagsToNames(row.flags) }));
  events.send({ type: "message", message }, users, { allPublicStreams });
  return { id: inserted.id };
}
