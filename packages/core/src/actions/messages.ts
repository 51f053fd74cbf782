// Sending a message: the hot path. Validation, rendering and recipient resolution here; the write
// (message-write.ts) is one raw statement shared by concurrent sends.
import { createHash } from "node:crypto";
import { leanSql, Prisma, type PrismaClient, type StreamModel, type Tx } from "@chat/db";
import type { ServiceTrigger } from "@chat/bus";
import type { ActionRunner, EventRecorder } from "../events.ts";
import { referencedPathIds } from "../lib/uploads.ts";
import { claimAttachments } from "./attachments.ts";
import { addWidgetSubmessage } from "./submessages.ts";
import { widgetFromContent } from "../lib/widgets.ts";
import { MESSAGE_WRITES, writeMessage, type MessageWrite } from "./message-write.ts";
import { badRequest, JsonableError, StreamDoesNotExistError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { topicLinks } from "../lib/linkifiers.ts";
import { fetchRenderContext, mentionedServiceBotIds, mentionFlagUserIds, renderMarkdown } from "../lib/markdown.ts";
import { isServiceBotType } from "../lib/bots.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "../lib/message-limits.ts";
import { emptyTopicFromClient } from "../lib/empty-topic.ts";
import { RECIPIENT_HUDDLE } from "../lib/recipients.ts";
import { isAdmin, ROLE_GUEST } from "../lib/roles.ts";
import { WILDCARD_MENTION_THRESHOLD } from "../lib/permissions.ts";
import { checkCanSendMessageGroup, findStreamForHotPath, findStreamWithSubscription, hasContentAccessViaGroups, hasMoreSubscribersThan } from "../queries/streams.ts";
import { usersByEmail } from "../queries/users.ts";
import { logger } from "@chat/logger";
import { applyPoliciesOnSend, mayChangePoliciesOnSend, planPoliciesOnSend, type SentStreamMessage } from "./automatic-topic-policies.ts";
import { canMentionManyUsers, checkCanSendDirectMessage, checkGroupMentionsAllowed } from "../lib/group-permissions.ts";
import { inaccessibleAmong } from "../queries/user-access.ts";
import { isSystemBot } from "./system-bots.ts";

export { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "../lib/message-limits.ts";

export type StreamIndicator = string | number;
export type PrivateRecipients = number[] | string[];

export type MessageDestination =
  | { type: "stream"; stream: StreamIndicator; topic: string | undefined }
  | { type: "private"; to: PrivateRecipients };

export interface SendMessageRequest {
  destination: MessageDestination;
  content: string;
  client: string;
  /** Whether the sender's own row starts read (default true). */
  readBySender?: boolean;
  /** The sender's queue and their client's id for the message: that queue's event says `local_message_id`. */
  localEcho?: { queueId: string; localId: string };
  /** The realm's host, so that absolute links to its uploads get image previews too. */
  realmHost?: string;
}

export function checkContent(content: string): string {
  if (content.trim() === "") throw badRequest("Message must not be empty");
  if (Buffer.byteLength(content, "utf8") > MAX_MESSAGE_LENGTH) {
    throw badRequest(`Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`);
  }
  return content;
}

/**
 * A channel message's topic as sent (POST /messages, /scheduled_messages, /typing): trimmed, and
 * "" for the empty topic, which "(no topic)" and the display name also mean (feature levels 334,
 * 370, 372). The organization's mandatory_topics refuses it (Zulip's check_message).
 */
export function checkTopic(raw: string | undefined, mandatoryTopics: boolean): string {
  if (raw === undefined) throw badRequest("Missing topic");
  const topic = emptyTopicFromClient(raw.trim());
  if ([...topic].length > MAX_TOPIC_LENGTH) throw badRequest(`Topic too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  if (/[\u0000-\u001f]/.test(topic)) throw badRequest("Invalid character in topic");
  if (topic === "" && mandatoryTopics) throw badRequest("Topics are required in this organization");
  return topic;
}

/**
 * How a send finds its stream and whether any of `userIds` is subscribed: inside a transaction,
 * from the database; on the hot path, from this node's copy first (findStreamForHotPath), where
 * `subscribed` is null when no rule depends on it.
 */
type StreamLookup = (sender: Actor, indicator: StreamIndicator, userIds: number[]) => Promise<{ stream: StreamModel; subscribed: boolean | null } | null>;

async function accessStreamForSend(db: Pick<Tx, "$queryRaw">, findStream: StreamLookup, sender: Actor, indicator: StreamIndicator): Promise<StreamModel> {
  // Bots act with their owner's standing, as in Zulip.
  const senders = [sender.id, ...(sender.bot_owner_id ? [sender.bot_owner_id] : [])];
  const found = await findStream(sender, indicator, senders);
  if (!found) {
    if (typeof indicator === "number") {
      throw new JsonableError(`Stream with ID '${indicator}' does not exist`, { code: "STREAM_DOES_NOT_EXIST", extra: { stream_id: indicator } });
    }
    throw new StreamDoesNotExistError(indicator);
  }
  const { stream, subscribed } = found;
  // Nobody posts to an archived stream (feature level 315; Zulip's access_stream_for_send_message).
  if (stream.deactivated) throw badRequest(`Not authorized to send to channel '${stream.name}'`);
  // The server's own bots post wherever the server needs them to (Zulip's internal_send_stream_message).
  if (isSystemBot(sender)) return stream;

  // Zulip 10.0's can_send_message_group (feature level 333), before whether the stream is theirs.
  await checkCanSendMessageGroup(db, sender, stream);
  if ((stream.invite_only || sender.role === ROLE_GUEST) && !subscribed) {
    // A private stream with shared history is also theirs to post in whom its
    // can_add_subscribers_group or can_subscribe_group lets read it (feature level 354).
    const viaGroups = stream.invite_only && stream.history_public_to_subscribers && (await hasContentAccessViaGroups(db, sender, stream.id));
    if (!viaGroups) throw badRequest(`Not authorized to send to stream '${stream.name}'`);
  }
  return stream;
}

/** A stream the sender may post to (POST /typing to a stream checks what a send would). */
export async function accessStreamForPosting(tx: Tx, sender: Actor, streamId: number): Promise<StreamModel> {
  return accessStreamForSend(tx, (actor, indicator, userIds) => findStreamWithSubscription(tx, actor.realm_id, indicator, userIds, { includeArchived: true }), sender, streamId);
}

/**
 * Zulip's stream_wildcard_mention_allowed, for a stream message (sent or edited) that mentions
 * everyone: in a stream of more than 15 subscribers only the realm's can_mention_many_users_group
 * (feature level 352) may. The
 * count is read only when the policy refuses the sender.
 */
export async function checkWildcardMentionAllowed(db: Tx, sender: Actor, streamRecipientId: number): Promise<void> {
  if (await canMentionManyUsers(db, sender)) return;
  if (!(await hasMoreSubscribersThan(db, streamRecipientId, WILDCARD_MENTION_THRESHOLD))) return;
  throw new JsonableError("You do not have permission to use channel wildcard mentions in this channel.", { code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });
}

/**
 * Zulip's topic_wildcard_mention_allowed (feature level 229): @**topic** in a topic of more than
 * 15 participants (its senders and those who reacted in it) only from those the realm's policy
 * names. The participants are counted only when the policy refuses the sender.
 */
export async function checkTopicWildcardMentionAllowed(db: Tx, sender: Actor, streamRecipientId: number, topic: string): Promise<void> {
  if (await canMentionManyUsers(db, sender)) return;
  const [{ many }] = await leanSql(db).query<{ many: boolean }>(Prisma.sql`
    SELECT (SELECT count(*) FROM (
      SELECT m.sender_id AS user_id FROM message m WHERE m.recipient_id = ${streamRecipientId} AND upper(m.subject) = upper(${topic})
      UNION
      SELECT r.user_id FROM reaction r JOIN message m ON m.id = r.message_id WHERE m.recipient_id = ${streamRecipientId} AND upper(m.subject) = upper(${topic})
    ) p) > ${WILDCARD_MENTION_THRESHOLD} AS many`);
  if (!many) return;
  throw new JsonableError("You do not have permission to use topic wildcard mentions in this topic.", { code: "TOPIC_WILDCARD_MENTION_NOT_ALLOWED" });
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
    // By the address the sender was shown (lib/email-visibility.ts), or a real one they may see.
    const found = await usersByEmail(tx, sender, emails);
    const missing = emails.find((e) => !found.has(e));
    if (missing !== undefined) throw badRequest(`Invalid email '${missing}'`);
    users = [...new Set(emails.map((e) => found.get(e)!))];
  }
  // Zulip 9.0: a guest who may not know of every user writes only to those they may
  // (check_sender_can_access_recipients), then direct_message_permission_group and
  // direct_message_initiator_group (lib/group-permissions.ts), before the recipients' own checks.
  if ((await inaccessibleAmong(tx, tx, sender, users.map((u) => u.id))).size > 0) throw badRequest("You do not have permission to access some of the recipients.");
  await checkCanSendDirectMessage(tx, sender, users);
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

/**
 * The service bots a stream message mentions that may read it: any of the realm's for a public
 * stream, subscribers only for a private one (Zulip would call an unsubscribed bot with a private
 * stream's message; here nothing reaches a bot that could not read it through the API).
 */
async function streamServiceTriggers(db: Tx, stream: StreamModel, botIds: number[]): Promise<ServiceTrigger[]> {
  if (botIds.length === 0) return [];
  let allowed = botIds;
  if (stream.invite_only) {
    const rows = await leanSql(db).query<{ user_id: number }>(Prisma.sql`
      SELECT user_id FROM subscription WHERE recipient_id = ${stream.recipient_id} AND user_id = ANY(${botIds}::int[]) AND active`);
    const subscribed = new Set(rows.map((row) => row.user_id));
    allowed = botIds.filter((id) => subscribed.has(id));
  }
  return allowed.map((botId) => ({ botId, trigger: "mention" }));
}

/** Validates a message, renders it, and resolves where it goes (Zulip's check_message). */
async function prepareMessage(db: Tx, sender: Actor, request: SendMessageRequest, findStream: StreamLookup): Promise<MessageWrite> {
  const content = checkContent(request.content);
  const { destination } = request;
  const topic = destination.type === "stream" ? checkTopic(destination.topic, sender.realm.mandatory_topics) : "";
  // The render context and the stream do not depend on each other: look them up side by side.
  const [context, stream] = await Promise.all([
    fetchRenderContext(db, sender.realm_id, content, { linkifiers: sender.realmLinkifiers, imagePreviews: sender.realm.inline_image_preview, realmHost: request.realmHost, author: { id: sender.id, isGuest: sender.role === ROLE_GUEST } }),
    destination.type === "stream" ? accessStreamForSend(db, findStream, sender, destination.stream) : null,
  ]);
  const rendered = renderMarkdown(content, context);
  if (stream && rendered.mentionsWildcard) await checkWildcardMentionAllowed(db, sender, stream.recipient_id!);
  if (stream && rendered.mentionsTopicWildcard) await checkTopicWildcardMentionAllowed(db, sender, stream.recipient_id!, topic);
  await checkGroupMentionsAllowed(db, sender, rendered.mentionedGroupIds, isSystemBot(sender));
  const mentionedUserIds = mentionFlagUserIds(rendered, context);
  // Bots never trigger service bots: two bots answering each other would never stop (as in Zulip).
  const mentionedBots = sender.is_bot ? [] : mentionedServiceBotIds(rendered, context);
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
    ...(request.localEcho === undefined ? {} : { sender_queue_id: request.localEcho.queueId, local_id: request.localEcho.localId }),
  };
  const fields = { realmId: sender.realm_id, senderId: sender.id, content, rendered, client: request.client, readBySender: request.readBySender ?? true };

  if (stream) {
    return {
      ...fields,
      recipientId: stream.recipient_id!,
      topic,
      recipients: { subscribersOf: stream.recipient_id! },
      streamId: stream.id,
      baseFlags: 0,
      mentionedUserIds,
      wildcard: rendered.mentionsWildcard,
      topicWildcard: rendered.mentionsTopicWildcard,
      services: await streamServiceTriggers(db, stream, mentionedBots),
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
    mentionedUserIds,
    wildcard: false,
    topicWildcard: false,
    // Every service bot in the conversation, by id; a mention there is no separate trigger.
    services: sender.is_bot
      ? []
      : participants.filter((u) => u.id !== sender.id && isServiceBotType(u.bot_type)).map((u) => ({ botId: u.id, trigger: "direct_message" as const })),
    event: {
      ...base,
      recipient_id: recipientId,
      type: "private",
      display_recipient: participants.map((u) => ({ id: u.id, email: u.email, full_name: u.full_name, short_name: u.short_name, is_mirror_dummy: u.is_mirror_dummy })),
      subject: "",
      // One-to-one: what the receiver's copy says instead (feature level 327).
      ...(participants.length === 2 && sender.recipient_id !== null ? { sender_recipient_id: sender.recipient_id } : {}),
    },
    allPublicStreams: false,
  };
}

/**
 * Zulip's check_message without the send (scheduled messages): the send path's validation and
 * permission checks, inside the transaction; what a send now would write, or the refusal it would get.
 */
export async function checkMessage(tx: Tx, sender: Actor, request: SendMessageRequest): Promise<{ streamId: number | null; topic: string; renderedContent: string; participantIds: number[] }> {
  const write = await prepareMessage(tx, sender, request, (actor, indicator, userIds) => findStreamWithSubscription(tx, actor.realm_id, indicator, userIds, { includeArchived: true }));
  const participantIds = "userIds" in write.recipients ? (write.recipients.userIds as number[]) : [];
  return { streamId: write.streamId, topic: write.topic, renderedContent: write.rendered.html, participantIds };
}

/** A message sent: its id, and the topic policy sending gave its sender (feature level 218), if any. */
export interface SentMessage {
  id: number;
  automaticNewVisibilityPolicy?: number;
}

function sentToTopic(write: MessageWrite, id: number): SentStreamMessage {
  return { id, streamId: write.streamId, recipientId: write.recipientId, topic: write.topic, mentionedUserIds: write.mentionedUserIds };
}

function sentMessage(id: number, policy: number | null): SentMessage {
  return policy === null ? { id } : { id, automaticNewVisibilityPolicy: policy };
}

/** Sends inside an action's transaction (notification bot messages): the event joins its batch. */
export async function sendMessage(tx: Tx, events: EventRecorder, sender: Actor, request: SendMessageRequest): Promise<SentMessage> {
  const inTransaction: StreamLookup = (actor, indicator, userIds) => findStreamWithSubscription(tx, actor.realm_id, indicator, userIds, { includeArchived: true });
  const write = await prepareMessage(tx, sender, request, inTransaction);
  const written = await writeMessage(tx, write);
  // `/poll` and `/todo` start a widget, written with the message and shown in its event.
  const widget = widgetFromContent(write.content);
  if (widget !== null) {
    const submessage = await addWidgetSubmessage(tx, written.id, sender.id, widget);
    written.event.event.message = { ...(written.event.event.message as object), submessages: [submessage] };
  }
  events.record([written.event]);
  // Links to uploads attach them (nothing to do, and no query, when the content has none).
  await claimAttachments(tx, events, sender, { id: written.id, content: write.content, realmPublic: write.streamId !== null && write.allPublicStreams });
  // Topics followed or unmuted by sending or by a mention (after the message event, in the same batch).
  const message = sentToTopic(write, written.id);
  const policy = mayChangePoliciesOnSend(sender, message) ? await applyPoliciesOnSend(tx, events, sender, message) : null;
  return sentMessage(written.id, policy);
}

/**
 * POST /messages (Zulip's check_send_message), the hot path: no transaction. The reads run side
 * by side, then the message joins the next statement writing concurrent sends (group commit).
 */
export async function sendMessageAtomic(actions: ActionRunner, sender: Actor, request: SendMessageRequest, requestId?: string): Promise<SentMessage> {
  // A message that links uploads, or starts a widget, is written with its links or its widget's
  // submessage in one transaction (rare, so not grouped).
  if (referencedPathIds(request.content).length > 0 || widgetFromContent(request.content) !== null) {
    return actions.run({ realmId: sender.realm_id, requestId }, (tx, events) => sendMessage(tx, events, sender, request));
  }
  let prepared: { write: MessageWrite; db: PrismaClient } | undefined;
  const written = await actions.runGrouped(MESSAGE_WRITES, async (db) => {
    const write = await prepareMessage(db, sender, request, (actor, indicator, userIds) => findStreamForHotPath(db, actor, indicator, userIds, { includeArchived: true }));
    prepared = { write, db };
    return requestId === undefined ? write : { ...write, requestId };
  });
  const message = sentToTopic(prepared!.write, written.id);
  if (!mayChangePoliciesOnSend(sender, message)) return { id: written.id };
  // The topic policies the send changes: one read, and only when it finds a change a transaction
  // of their own, once the message is written. The message is sent whatever happens here: a
  // failure must not make the caller send it again (the hot route answers a throw by running the
  // request afresh), so it is logged.
  try {
    const planned = await planPoliciesOnSend(prepared!.db, sender, message);
    if (planned.sender === null && planned.mentioned.length === 0) return { id: written.id };
    const policy = await actions.run({ realmId: sender.realm_id, requestId }, (tx, events) => applyPoliciesOnSend(tx, events, sender, message));
    return sentMessage(written.id, policy);
  } catch (error) {
    logger.error("could not apply the topic policies a send changes", { messageId: written.id, error: String(error) });
    return { id: written.id };
  }
}
