// Editing a message (Zulip's update_message_backend + do_update_message): content, topic with a
// propagate mode, or a move to another stream. Each changed message gets a message_edit row (its
// state before the edit) and one update_message event reaches everyone who has any of them.
import { relinkAttachments } from "./attachments.ts";
import { Prisma, type MessageModel, type Tx } from "@chat/db";
import type { EventRecipient } from "@chat/bus";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { topicLinks } from "../lib/linkifiers.ts";
import { fetchRenderContext, MARKDOWN_VERSION, mentionFlagUserIds, renderMarkdown } from "../lib/markdown.ts";
import { FLAG_BITS, flagsToNames } from "../lib/message-flags.ts";
import { isAdmin, isGuest } from "../lib/roles.ts";
import { accessMessage } from "../queries/messages.ts";
import { checkWildcardMentionAllowed, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "./messages.ts";
import { realmLinkifiers } from "../queries/linkifiers.ts";
import { alertWordMatches } from "./message-write.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { policiesForTopic, VisibilityPolicy, type VisibilityPolicyValue } from "../queries/user-topics.ts";
import { setTopicPolicyFor } from "./user-topics.ts";

export const PROPAGATE_MODES = ["change_one", "change_later", "change_all"] as const;
export type PropagateMode = (typeof PROPAGATE_MODES)[number];

export interface UpdateMessageRequest {
  content?: string;
  topic?: string;
  propagateMode: PropagateMode;
  streamId?: number;
  /** The realm's host, so that absolute links to its uploads get image previews too. */
  realmHost?: string;
}

/** Zulip allows 20 s beyond the limit for network delays and the client's countdown. */
const EDIT_LIMIT_BUFFER_SECONDS = 20;
/** Zulip 3.0's Realm.DEFAULT_COMMUNITY_TOPIC_EDITING_LIMIT_SECONDS. */
const COMMUNITY_TOPIC_EDITING_LIMIT_SECONDS = 86_400;
const NO_TOPIC = "(no topic)";

const TIME_LIMIT_PASSED = "The time limit for editing this message has past";
const NO_PERMISSION = "You don't have permission to edit this message";

function secondsSince(date: Date): number {
  return (Date.now() - date.getTime()) / 1000;
}

function checkEditContent(raw: string): string {
  const content = raw.trimEnd();
  if (Buffer.byteLength(content, "utf8") > MAX_MESSAGE_LENGTH) {
    throw badRequest(`Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`);
  }
  // Zulip keeps an emptied message as "(deleted)" rather than refusing the edit.
  return content === "" ? "(deleted)" : content;
}

function checkEditTopic(raw: string): string {
  const topic = raw.trim();
  if (topic === "") throw badRequest("Topic can't be empty");
  if ([...topic].length > MAX_TOPIC_LENGTH) throw badRequest(`Topic too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  if (/[\u0000-\u001f]/.test(topic)) throw badRequest("Invalid character in topic");
  return topic;
}

/** Who may make this edit, in Zulip 3.0's rules; throws the contract's error when not allowed. */
function checkEditPermission(actor: Actor, message: MessageModel, request: UpdateMessageRequest): void {
  const realm = actor.realm;
  const isSender = message.sender_id === actor.id;
  const isNoTopic = message.subject === NO_TOPIC;
  // A non-sender may only retitle: a "(no topic)" message, as an admin, or when the realm allows it.
  if (!isSender && !(request.content === undefined && (isNoTopic || isAdmin(actor) || realm.allow_community_topic_editing))) {
    throw badRequest(NO_PERMISSION);
  }
  const limit = realm.message_content_edit_limit_seconds;
  if (request.content !== undefined && limit > 0 && secondsSince(message.date_sent) > limit + EDIT_LIMIT_BUFFER_SECONDS) {
    throw badRequest(TIME_LIMIT_PASSED);
  }
  if (
    request.content === undefined &&
    !isSender &&
    !isAdmin(actor) &&
    !isNoTopic &&
    secondsSince(message.date_sent) > COMMUNITY_TOPIC_EDITING_LIMIT_SECONDS + EDIT_LIMIT_BUFFER_SECONDS
  ) {
    throw badRequest(TIME_LIMIT_PASSED);
  }
}

interface StreamRef {
  id: number;
  name: string;
  recipient_id: number;
  invite_only: boolean;
}

/** The stream a move targets; Zulip 3.0 moves only between public streams, and only for admins. */
async function checkStreamMove(tx: Tx, actor: Actor, request: UpdateMessageRequest, oldStream: StreamRef): Promise<StreamRef | null> {
  if (request.streamId === undefined || request.streamId === oldStream.id) return null;
  if (!isAdmin(actor)) throw badRequest("You don't have permission to move this message");
  if (request.content !== undefined) throw badRequest("Cannot change message content while changing stream");
  const target = await tx.stream.findFirst({ where: { id: request.streamId, realm_id: actor.realm_id, deactivated: false } });
  if (!target) throw badRequest("Invalid stream id");
  if (oldStream.invite_only || target.invite_only) throw badRequest("Streams must be public");
  return { id: target.id, name: target.name, recipient_id: target.recipient_id!, invite_only: target.invite_only };
}

/** The other messages a topic edit or move carries along (Zulip's update_messages_for_topic_edit). */
async function propagatedMessageIds(tx: Tx, message: MessageModel, mode: PropagateMode): Promise<number[]> {
  if (mode === "change_one") return [];
  const after = mode === "change_later" ? message.id : 0;
  const rows = await tx.$queryRaw<Array<{ id: number }>>`
    SELECT id FROM message
    WHERE recipient_id = ${message.recipient_id} AND upper(subject) = upper(${message.subject})
      AND id <> ${message.id} AND id > ${after}
    ORDER BY id
    FOR UPDATE`;
  return rows.map((r) => r.id);
}

/** PATCH /messages/{message_id}. */
export async function updateMessage(tx: Tx, events: EventRecorder, actor: Actor, messageId: number, request: UpdateMessageRequest): Promise<void> {
  if (!actor.realm.allow_message_editing) throw badRequest("Your organization has turned off message editing");
  if (request.propagateMode !== "change_one" && request.topic === undefined && request.streamId === undefined) {
    throw badRequest("Invalid propagate_mode without topic edit");
  }
  // The row stays locked, so concurrent edits apply one after the other, each seeing the other's result.
  const accessed = await accessMessage(tx, actor, messageId, { lock: true });
  const message = await tx.message.findUniqueOrThrow({ where: { id: accessed.id } });

  checkEditPermission(actor, message, request);
  if (request.topic === undefined && request.content === undefined && request.streamId === undefined) {
    throw badRequest("Nothing to change");
  }

  const oldStream: StreamRef | null = accessed.stream && { ...accessed.stream, recipient_id: message.recipient_id };
  if (!oldStream) {
    if (request.topic !== undefined) throw badRequest("Private messages cannot have topics.");
    if (request.streamId !== undefined) throw badRequest("Private messages cannot be moved to streams.");
  }

  let newTopic = request.topic === undefined ? undefined : checkEditTopic(request.topic);
  if (newTopic === message.subject) newTopic = undefined;
  const newStream = oldStream ? await checkStreamMove(tx, actor, request, oldStream) : null;
  const newContent = request.content === undefined ? undefined : checkEditContent(request.content);
  // A widget's state lives in its submessages, which new content could not carry over (as Zulip).
  if (newContent !== undefined && (await tx.submessage.count({ where: { message_id: message.id } })) > 0) throw badRequest("Widgets cannot be edited.");
  if (newTopic === undefined && newContent === undefined && newStream === null) throw badRequest("Nothing to change");

  const now = new Date();
  const editTimestamp = Math.floor(now.getTime() / 1000);
  const linkifiers = await realmLinkifiers(tx, actor.realm_id);

  // rendering_only (feature level 114): an edit by a user; this server re-renders nothing later.
  const event: { type: "update_message" } & Record<string, unknown> = {
    type: "update_message",
    user_id: actor.id,
    edit_timestamp: editTimestamp,
    message_id: message.id,
    rendering_only: false,
  };
  if (oldStream) {
    event.stream_name = oldStream.name;
    event.stream_id = oldStream.id;
  }

  // The edited message itself: its snapshot, then the new values.
  const edit: { prev_content?: string; prev_rendered_content?: string | null; prev_rendered_content_version?: number | null; prev_topic?: string; prev_stream_id?: number } = {};
  const update: Record<string, unknown> = { last_edit_time: now };
  if (newContent !== undefined) {
    // The same renderer and context as sending (mentions, stream links, emoji, linkifiers).
    const context = await fetchRenderContext(tx, actor.realm_id, newContent, { linkifiers, imagePreviews: actor.realm.inline_image_preview, realmHost: request.realmHost });
    const rendered = renderMarkdown(newContent, context);
    // As Zulip since 5.0 (3.x checked sends only): otherwise an edit adds what a send may not.
    // Only the sender edits content, and a content edit never moves the message.
    if (oldStream && rendered.mentionsWildcard) await checkWildcardMentionAllowed(tx, actor, message.recipient_id);
    await updateContentFlags(tx, message, newContent, mentionFlagUserIds(rendered, context), rendered.mentionsWildcard, rendered.mentionsTopicWildcard);
    Object.assign(edit, {
      prev_content: message.content,
      prev_rendered_content: message.rendered_content,
      prev_rendered_content_version: message.rendered_content_version,
    });
    Object.assign(update, {
      content: newContent,
      rendered_content: rendered.html,
      rendered_content_version: MARKDOWN_VERSION,
      has_link: rendered.hasLink,
      has_image: rendered.hasImage,
      is_me_message: rendered.isMeMessage,
    });
    Object.assign(event, {
      orig_content: message.content,
      orig_rendered_content: message.rendered_content,
      prev_rendered_content_version: message.rendered_content_version,
      content: newContent,
      rendered_content: rendered.html,
      is_me_message: rendered.isMeMessage,
    });
  }
  const topicOrMove = newTopic !== undefined || newStream !== null;
  const others = topicOrMove ? await propagatedMessageIds(tx, message, request.propagateMode) : [];
  const changedIds = [message.id, ...others].sort((a, b) => a - b);
  const shared: { prev_topic?: string; prev_stream_id?: number } = {};
  const sharedUpdate: Record<string, unknown> = {};
  if (newTopic !== undefined) {
    shared.prev_topic = message.subject;
    sharedUpdate.subject = newTopic;
    Object.assign(event, { orig_subject: message.subject, subject: newTopic, topic_links: topicLinks(newTopic, linkifiers) });
  }
  if (newStream) {
    shared.prev_stream_id = oldStream!.id;
    sharedUpdate.recipient_id = newStream.recipient_id;
    event.orig_subject = message.subject;
    event.new_stream_id = newStream.id;
  }
  event.message_ids = changedIds;
  // As today's Zulip, propagate_mode only with a real move (zulip-flutter refuses it otherwise);
  // 3.x clients got it with every edit.
  const recorded = topicOrMove ? { ...event, propagate_mode: request.propagateMode } : withLegacyShape(event, { propagate_mode: request.propagateMode });

  // Who has the messages now, with their flags on the edited one (read before any move deletes rows).
  const holders = await tx.$queryRaw<Array<{ user_id: number; flags: number | null }>>`
    SELECT um.user_id, max(CASE WHEN um.message_id = ${message.id} THEN um.flags END) AS flags
    FROM user_message um WHERE um.message_id = ANY(${changedIds}::int[])
    GROUP BY um.user_id ORDER BY um.user_id`;

  // Read before the messages move: whether the topic moves whole, and whether its target had messages.
  const policyMove = topicOrMove
    ? await planPolicyMove(tx, actor, oldStream!, accessed.stream!.history_public_to_subscribers, newStream, message, newTopic, request.propagateMode, changedIds)
    : null;

  let losingAccess = new Set<number>();
  if (newStream) losingAccess = await moveUserMessages(tx, events, oldStream!, newStream, changedIds, message.subject);

  await tx.message.update({ where: { id: message.id }, data: { ...update, ...sharedUpdate } });
  if (newContent !== undefined && (newContent.includes("/user_uploads/") || message.has_attachment)) {
    const stream = newStream ?? oldStream;
    await relinkAttachments(tx, events, actor, { id: message.id, content: newContent, realmPublic: stream !== null && !stream.invite_only });
  }
  await tx.messageEdit.create({ data: { message_id: message.id, user_id: actor.id, timestamp: now, ...edit, ...shared } });
  if (others.length > 0) {
    await tx.message.updateMany({ where: { id: { in: others } }, data: { ...sharedUpdate, last_edit_time: now } });
    await tx.messageEdit.createMany({ data: others.map((id) => ({ message_id: id, user_id: actor.id, timestamp: now, ...shared })) });
  }

  const users: EventRecipient[] = holders
    .filter((h) => !losingAccess.has(h.user_id))
    .map((h) => ({ id: h.user_id, flags: h.flags === null ? [] : flagsToNames(h.flags) }));
  if (policyMove) await moveTopicPolicies(tx, events, policyMove);
  events.send(recorded, users);
}

const CONTENT_FLAGS = FLAG_BITS.mentioned | FLAG_BITS.wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.has_alert_word;

/**
 * New content sets and clears the flags content decides, for everyone who has the message, as
 * Zulip's update_user_message_flags: `mentioned` (users and members of groups mentioned now),
 * `wildcard_mentioned`, `topic_wildcard_mentioned` (the topic's senders and reactors, for
 * @**topic**), and `has_alert_word` (from each holder's alert words).
 */
async function updateContentFlags(tx: Tx, message: MessageModel, content: string, mentionedUserIds: number[], wildcard: boolean, topicWildcard: boolean): Promise<void> {
  await tx.$executeRaw`
    UPDATE user_message um SET flags = (um.flags & ${~CONTENT_FLAGS}::int)
      | CASE WHEN um.user_id = ANY(${mentionedUserIds}::int[]) THEN ${FLAG_BITS.mentioned}::int ELSE 0 END
      | CASE WHEN ${wildcard}::boolean THEN ${FLAG_BITS.wildcard_mentioned}::int ELSE 0 END
      | CASE WHEN ${topicWildcard}::boolean AND um.user_id IN (
          SELECT tm.sender_id FROM message tm WHERE tm.recipient_id = ${message.recipient_id} AND upper(tm.subject) = upper(${message.subject})
          UNION
          SELECT re.user_id FROM reaction re JOIN message tm ON tm.id = re.message_id
          WHERE tm.recipient_id = ${message.recipient_id} AND upper(tm.subject) = upper(${message.subject})
        ) THEN ${FLAG_BITS.topic_wildcard_mentioned}::int ELSE 0 END
      | CASE WHEN um.user_id IN (
          SELECT aw.user_id FROM alert_word aw WHERE aw.realm_id = ${message.realm_id} AND ${alertWordMatches(Prisma.sql`${content}::text`)}
        ) THEN ${FLAG_BITS.has_alert_word}::int ELSE 0 END
    WHERE um.message_id = ${message.id}`;
}

/**
 * Moving to another public stream, as Zulip 3.0 does: subscribers of the old stream who are not
 * subscribed to the new one lose their rows (the messages stay readable to members as public
 * stream history); guests among them can no longer see the messages and get a delete_message
 * event instead of update_message. Subscribers of the new stream get no rows, as in Zulip: they
 * read the messages as stream history. Returns the guests who lost access.
 */
async function moveUserMessages(tx: Tx, events: EventRecorder, oldStream: StreamRef, newStream: StreamRef, messageIds: number[], topic: string): Promise<Set<number>> {
  const losing = await tx.$queryRaw<Array<{ user_id: number; role: number }>>`
    SELECT s.user_id, u.role FROM subscription s JOIN user_profile u ON u.id = s.user_id
    WHERE s.recipient_id = ${oldStream.recipient_id} AND s.active
      AND NOT EXISTS (SELECT 1 FROM subscription n WHERE n.recipient_id = ${newStream.recipient_id} AND n.active AND n.user_id = s.user_id)`;
  if (losing.length === 0) return new Set();
  const ids = losing.map((l) => l.user_id);
  await tx.$executeRaw`DELETE FROM user_message WHERE user_id = ANY(${ids}::int[]) AND message_id = ANY(${messageIds}::int[])`;
  const guests = losing.filter((l) => isGuest(l)).map((l) => l.user_id);
  events.send({ type: "delete_message", message_ids: messageIds, message_type: "stream", stream_id: oldStream.id, topic }, guests);
  return new Set(guests);
}

interface PolicyMove {
  from: StreamRef;
  fromTopic: string;
  to: StreamRef;
  toTopic: string;
  targetHadMessages: boolean;
}

/**
 * Whether the move carries the topic's visibility policies, as Zulip 9 decides it: always with
 * change_all, otherwise when none of the topic's messages the actor can read stays behind (Zulip's
 * moved_all_visible_messages; counting only readable ones reveals nothing of hidden history).
 */
async function planPolicyMove(
  tx: Tx,
  actor: Actor,
  from: StreamRef,
  historyPublic: boolean,
  newStream: StreamRef | null,
  message: MessageModel,
  newTopic: string | undefined,
  mode: PropagateMode,
  changedIds: number[],
): Promise<PolicyMove | null> {
  const to = newStream ?? from;
  const toTopic = newTopic ?? message.subject;
  // A rename that changes only case keeps the rows: they match topics without case.
  if (to.id === from.id && toTopic.toLowerCase() === message.subject.toLowerCase()) return null;
  if (mode !== "change_all") {
    const [{ remains }] = await tx.$queryRaw<Array<{ remains: boolean }>>`
      SELECT EXISTS (
        SELECT 1 FROM message m
        WHERE m.recipient_id = ${from.recipient_id} AND upper(m.subject) = upper(${message.subject}) AND NOT (m.id = ANY(${changedIds}::int[]))
          AND (${historyPublic}::boolean OR EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${actor.id}))
      ) AS remains`;
    if (remains) return null;
  }
  const [{ found }] = await tx.$queryRaw<Array<{ found: boolean }>>`
    SELECT EXISTS (SELECT 1 FROM message WHERE recipient_id = ${to.recipient_id} AND upper(subject) = upper(${toTopic})) AS found`;
  return { from, fromTopic: message.subject, to, toTopic, targetHadMessages: found };
}

/** Zulip 9's get_visibility_policy_after_merge: a policy both topics share stays; else UNMUTED wins, else none. */
function mergedPolicy(moved: VisibilityPolicyValue, target: VisibilityPolicyValue): VisibilityPolicyValue {
  if (moved === target) return moved;
  return moved === VisibilityPolicy.UNMUTED || target === VisibilityPolicy.UNMUTED ? VisibilityPolicy.UNMUTED : VisibilityPolicy.INHERIT;
}

/**
 * Moves users' policies from the old topic to the new one, each change with the events POST
 * /user_topics sends. Users who cannot read the destination stream just lose theirs (no row in a
 * stream they cannot read). Into a topic that had messages, the two policies merge; otherwise the
 * moved policy replaces the target's, which can only be a leftover of deleted messages.
 */
async function moveTopicPolicies(tx: Tx, events: EventRecorder, move: PolicyMove): Promise<void> {
  const moved = await policiesForTopic(tx, move.from.id, move.fromTopic);
  const target = await policiesForTopic(tx, move.to.id, move.toTopic);
  const cannotRead = move.to.id === move.from.id ? new Set<number>() : await usersWhoCannotRead(tx, move.to, [...moved.keys()]);
  const userIds = [...new Set([...moved.keys(), ...target.keys()])].sort((a, b) => a - b);
  for (const userId of userIds) {
    const had = (moved.get(userId) ?? VisibilityPolicy.INHERIT) as VisibilityPolicyValue;
    const targetPolicy = (target.get(userId) ?? VisibilityPolicy.INHERIT) as VisibilityPolicyValue;
    if (had !== VisibilityPolicy.INHERIT) await setTopicPolicyFor(tx, events, userId, move.from, move.fromTopic, VisibilityPolicy.INHERIT);
    const carried = cannotRead.has(userId) ? VisibilityPolicy.INHERIT : had;
    const after = move.targetHadMessages ? mergedPolicy(carried, targetPolicy) : carried;
    if (after !== targetPolicy) await setTopicPolicyFor(tx, events, userId, move.to, move.toTopic, after);
  }
}

/** Of these users, who cannot read the stream: not subscribed, and it is private or they are guests. */
async function usersWhoCannotRead(tx: Tx, stream: StreamRef, userIds: number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const rows = await tx.$queryRaw<Array<{ id: number; role: number }>>`
    SELECT u.id, u.role FROM user_profile u
    WHERE u.id = ANY(${userIds}::int[])
      AND NOT EXISTS (SELECT 1 FROM subscription s WHERE s.recipient_id = ${stream.recipient_id} AND s.active AND s.user_id = u.id)`;
  return new Set(rows.filter((row) => stream.invite_only || isGuest(row)).map((row) => row.id));
}
