// Sending a message: the hot path. Recipient resolution uses the query builder; the write is one
// raw statement (message plus every per-user row) because Prisma's builder limits write speed.
import { createHash } from "node:crypto";
import { leanSql, Prisma, type PrismaClient, type StreamModel, type Tx } from "@chat/db";
import type { RoutedEvent } from "@chat/bus";
import type { AtomicChange, EventRecorder } from "../events.ts";
import { badRequest, JsonableError, StreamDoesNotExistError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { topicLinks, type Linkifier } from "../lib/linkifiers.ts";
import { fetchRenderContext, MARKDOWN_VERSION, mentionFlagUserIds, renderMarkdown } from "../lib/markdown.ts";
import { CLIENT_FLAGS, FLAG_BITS } from "../lib/message-flags.ts";
import type { WireMessage } from "../lib/message-format.ts";
import { RECIPIENT_HUDDLE } from "../lib/recipients.ts";
import { isAdmin, ROLE_GUEST } from "../lib/roles.ts";
import { findStreamWithSubscription } from "../queries/streams.ts";
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

async function accessStreamForSend(db: Pick<Tx, "$queryRaw">, sender: Actor, indicator: StreamIndicator): Promise<StreamModel> {
  // Bots act with their owner's standing, as in Zulip.
  const senders = [sender.id, ...(sender.bot_owner_id ? [sender.bot_owner_id] : [])];
  const found = await findStreamWithSubscription(db, sender.realm_id, indicator, senders);
  if (!found) {
    if (typeof indicator === "number") {
      throw new JsonableError(`Stream with ID '${indicator}' does not exist`, { code: "STREAM_DOES_NOT_EXIST", extra: { stream_id: indicator } });
    }
    throw new StreamDoesNotExistError(indicator);
  }
  const { stream, subscribed } = found;

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
    users = await leanSql(tx).query<UserProfile>(Prisma.sql`SELECT * FROM user_profile WHERE realm_id = ${sender.realm_id} AND id = ANY(${ids}::int[])`);
    const found = new Set(users.map((u) => u.id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  } else {
    const emails = [...new Set((to as string[]).map((e) => e.trim().toLowerCase()))];
    users = await leanSql(tx).query<UserProfile>(Prisma.sql`
      SELECT * FROM user_profile WHERE realm_id = ${sender.realm_id} AND lower(delivery_email) = ANY(${emails}::text[])`);
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
  // Each step is idempotent, and the huddle points at its recipient only once the members are
  // subscribed, so this is safe outside a transaction and under concurrent first messages.
  const recipient = await tx.recipient.upsert({
    where: { type_type_id: { type: RECIPIENT_HUDDLE, type_id: huddle.id } },
    create: { type: RECIPIENT_HUDDLE, type_id: huddle.id },
    update: {},
  });
  // As in Zulip, a group conversation's members are its recipient's subscribers.
  await tx.subscription.createMany({ data: ids.map((user_id) => ({ user_id, recipient_id: recipient.id })), skipDuplicates: true });
  await tx.huddle.update({ where: { id: huddle.id }, data: { recipient_id: recipient.id } });
  return recipient.id;
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


// A user_message row's flag names, in flagsToNames's order, as plain expressions: this runs once
// per recipient (1,000 times for a big stream). Built from constants, not client input.
const FLAG_NAMES_SQL = Prisma.sql`to_jsonb(array_remove(ARRAY[${Prisma.join(
  CLIENT_FLAGS.map((name) => Prisma.raw(`CASE WHEN um.flags & ${FLAG_BITS[name]} <> 0 THEN '${name}' END`)),
)}]::text[], NULL))`;

/** A message to write: the row's values, who receives it, and its event without id and timestamp. */
interface MessageWrite {
  realmId: number;
  senderId: number;
  recipientId: number;
  topic: string;
  content: string;
  rendered: ReturnType<typeof renderMarkdown>;
  client: string;
  recipients: { subscribersOf: number } | { userIds: number[] };
  /** The stream whose first_message_id the message may set. */
  streamId: number | null;
  baseFlags: number;
  contentFlags: ContentFlags;
  /** The `message` event's message, but for `id` and `timestamp` (known once inserted). */
  event: Omit<WireMessage, "id" | "timestamp">;
  allPublicStreams: boolean;
}

interface WrittenMessage {
  id: number;
  /** The event batch's outbox row, when the statement wrote one. */
  outboxId: string | null;
  events: RoutedEvent[];
}

/**
 * One statement: the message, a user_message row for every recipient user with its flags
 * (`mentioned`, `wildcard_mentioned`, and `has_alert_word` from the recipient's alert words), the
 * stream's first_message_id, and the `message` event with each recipient's flag names, built by
 * Postgres from the rows it just wrote. With `outbox`, the event batch's outbox row too: then the
 * statement is the whole change, atomic without a transaction.
 */
async function writeMessage(db: Tx, write: MessageWrite, options: { outbox: boolean }): Promise<WrittenMessage> {
  const { rendered, contentFlags } = write;
  const userIds = "userIds" in write.recipients ? write.recipients.userIds : null;
  const subscribersOf = "subscribersOf" in write.recipients ? write.recipients.subscribersOf : null;
  const [row] = await leanSql(db).query<{ id: number; outbox_id: string | null; events: string }>(Prisma.sql`
    WITH m AS (
      INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version,
                           sending_client, has_link, has_image, is_me_message)
      VALUES (${write.realmId}, ${write.senderId}, ${write.recipientId}, ${write.topic}, ${write.content}, ${rendered.html},
              ${MARKDOWN_VERSION}, ${write.client}, ${rendered.hasLink}, ${rendered.hasImage}, ${rendered.isMeMessage})
      RETURNING id, date_sent
    ), recipients AS (
      SELECT user_id FROM subscription
      WHERE ${subscribersOf}::int IS NOT NULL AND recipient_id = ${subscribersOf}::int AND active AND is_user_active
      UNION
      SELECT unnest(${userIds ?? []}::int[])
      UNION
      SELECT ${write.senderId}::int
    ), alerted AS (
      -- The realm's alert words are few: match each once, not once per recipient.
      SELECT DISTINCT aw.user_id FROM alert_word aw
      WHERE aw.realm_id = ${write.realmId}
        AND lower(${write.content}::text) ~ (${ALERT_BEFORE}::text || regexp_replace(lower(aw.word), ${ALERT_META}::text, ${ALERT_META_ESCAPED}::text, 'g') || ${ALERT_AFTER}::text)
    ), um AS (
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT r.user_id, m.id, ${write.baseFlags}::int
        | CASE WHEN r.user_id = ${write.senderId}::int THEN ${FLAG_BITS.read}::int ELSE 0 END
        | CASE WHEN r.user_id = ANY(${contentFlags.mentionedUserIds}::int[]) THEN ${FLAG_BITS.mentioned}::int ELSE 0 END
        | CASE WHEN ${contentFlags.wildcard}::boolean THEN ${FLAG_BITS.wildcard_mentioned}::int ELSE 0 END
        | CASE WHEN r.user_id IN (SELECT user_id FROM alerted) THEN ${FLAG_BITS.has_alert_word}::int ELSE 0 END
      FROM recipients r CROSS JOIN m
      RETURNING user_id, flags
    ), first_message AS (
      UPDATE stream SET first_message_id = m.id FROM m
      WHERE stream.id = ${write.streamId}::int AND stream.first_message_id IS NULL
      RETURNING stream.id
    ), batch AS (
      SELECT jsonb_build_array(jsonb_build_object(
        'event', jsonb_build_object('type', 'message', 'message',
          ${JSON.stringify(write.event)}::jsonb || jsonb_build_object('id', m.id, 'timestamp', floor(extract(epoch FROM m.date_sent))::bigint)),
        'users', (
          SELECT jsonb_agg(jsonb_build_object('id', um.user_id, 'flags', ${FLAG_NAMES_SQL}) ORDER BY um.user_id)
          FROM um),
        'allPublicStreams', ${write.allPublicStreams}::boolean)) AS events
      FROM m
    ), outbox AS (
      INSERT INTO event_outbox (realm_id, events) SELECT ${write.realmId}, events FROM batch WHERE ${options.outbox}::boolean
      RETURNING id
    )
    SELECT m.id, (SELECT id::text FROM outbox) AS outbox_id, batch.events::text AS events FROM m, batch`);
  return { id: row.id, outboxId: row.outbox_id, events: JSON.parse(row.events) as RoutedEvent[] };
}

/** Validates a message, renders it, and resolves where it goes (Zulip's check_message). */
async function prepareMessage(db: Tx, sender: Actor, request: SendMessageRequest): Promise<MessageWrite> {
  const content = checkContent(request.content);
  const { destination } = request;
  const topic = destination.type === "stream" ? checkTopic(destination.topic, sender.realm.mandatory_topics) : "";
  // The render context and the stream do not depend on each other: look them up side by side.
  const [context, stream] = await Promise.all([
    fetchRenderContext(db, sender.realm_id, content),
    destination.type === "stream" ? accessStreamForSend(db, sender, destination.stream) : null,
  ]);
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
  const fields = { realmId: sender.realm_id, senderId: sender.id, content, rendered, client: request.client };

  if (stream) {
    return {
      ...fields,
      recipientId: stream.recipient_id!,
      topic,
      recipients: { subscribersOf: stream.recipient_id! },
      streamId: stream.id,
      baseFlags: 0,
      contentFlags: { mentionedUserIds, wildcard: rendered.mentionsWildcard },
      event: {
        ...base,
        recipient_id: stream.recipient_id!,
        type: "stream",
        stream_id: stream.id,
        display_recipient: stream.name,
        subject: topic,
        topic_links: topicLinks(topic, context.linkifiers ?? []),
      },
      allPublicStreams: !stream.invite_only,
    };
  }
  const recipients = await resolvePrivateRecipients(db, sender, (destination as { to: PrivateRecipients }).to);
  const participants = [sender as UserProfile, ...recipients.filter((u) => u.id !== sender.id)].sort((a, b) => a.id - b.id);
  const recipientId = await privateRecipientId(db, sender, participants);
  return {
    ...fields,
    recipientId,
    topic: "",
    recipients: { userIds: participants.map((u) => u.id) },
    streamId: null,
    baseFlags: FLAG_BITS.is_private,
    contentFlags: { mentionedUserIds, wildcard: false },
    event: {
      ...base,
      recipient_id: recipientId,
      type: "private",
      display_recipient: participants.map((u) => ({ id: u.id, email: u.email, full_name: u.full_name, short_name: u.short_name, is_mirror_dummy: u.is_mirror_dummy })),
      subject: "",
    },
    allPublicStreams: false,
  };
}

/** Sends inside an action's transaction (notification bot messages): the event joins its batch. */
export async function sendMessage(tx: Tx, events: EventRecorder, sender: Actor, request: SendMessageRequest): Promise<{ id: number }> {
  const written = await writeMessage(tx, await prepareMessage(tx, sender, request), { outbox: false });
  events.record(written.events);
  return { id: written.id };
}

/**
 * POST /messages (Zulip's check_send_message), the hot path: no transaction; the reads run side by
 * side and one statement writes the message, its rows and its outbox row.
 */
export async function sendMessageAtomic(db: PrismaClient, sender: Actor, request: SendMessageRequest): Promise<AtomicChange<{ id: number }>> {
  const written = await writeMessage(db, await prepareMessage(db, sender, request), { outbox: true });
  return { result: { id: written.id }, batch: { id: written.outboxId!, realmId: sender.realm_id, events: written.events } };
}
