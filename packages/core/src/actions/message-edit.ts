// Editing a message (Zulip's update_message_backend + do_update_message): content, topic with a
// propagate mode, or a move to another stream. Each changed message gets a message_edit row (its
// state before the edit) and one update_message event reaches everyone who has any of them.
import { relinkAttachments } from "./attachments.ts";
import type { AttachmentDict } from "../queries/attachments.ts";
import { Prisma, type MessageModel, type Tx } from "@chat/db";
import type { EventRecipient } from "@chat/bus";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError } from "../errors.ts";
import type { ServerContext } from "../context.ts";
import { sendNotification } from "./notification-bot.ts";
import { updateMessageFlags } from "./message-flags.ts";
import { deleteMessage } from "./message-delete.ts";
import { isSystemBot } from "./system-bots.ts";
import type { Actor } from "../models.ts";
import { topicLinks } from "../lib/linkifiers.ts";
import { EMPTY_TOPIC_DISPLAY_NAME, emptyTopicFromClient } from "../lib/empty-topic.ts";
import { encodeHashComponent, streamNarrowUrl } from "../lib/markdown/zulip-syntax.ts";
import { fetchRenderContext, MARKDOWN_VERSION, mentionFlagUserIds, renderMarkdown } from "../lib/markdown.ts";
import { FLAG_BITS, flagsToNames } from "../lib/message-flags.ts";
import { isGuest } from "../lib/roles.ts";
import { exemptFromMoveTimeLimits } from "../lib/permissions.ts";
import { checkCanSendMessageGroup, hasContentAccessViaGroups } from "../queries/streams.ts";
import { accessMessage } from "../queries/messages.ts";
import { checkTopicWildcardMentionAllowed, checkWildcardMentionAllowed, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from "./messages.ts";
import { realmLinkifiers } from "../queries/linkifiers.ts";
import { alertWordMatches } from "./message-write.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { policiesForTopic, VisibilityPolicy, type VisibilityPolicyValue } from "../queries/user-topics.ts";
import { setTopicPolicyFor } from "./user-topics.ts";
import { canMoveMessagesBetweenChannels, canMoveMessagesBetweenTopics, canResolveTopics, checkGroupMentionsAllowed } from "../lib/group-permissions.ts";

export const PROPAGATE_MODES = ["change_one", "change_later", "change_all"] as const;

export interface UpdateMessageResult {
  /**
   * The sender's uploads the new content no longer links and no other message does: reachable
   * only through the edit history now (feature level 285), as GET /attachments shows them.
   */
  detachedUploads: AttachmentDict[];
}
export type PropagateMode = (typeof PROPAGATE_MODES)[number];

export interface UpdateMessageRequest {
  content?: string;
  topic?: string;
  propagateMode: PropagateMode;
  streamId?: number;
  /** The realm's host, so that absolute links to its uploads get image previews too. */
  realmHost?: string;
  /** Feature levels 9 and 152: the Notification Bot's notes in the topic left (default no) and the one moved to (default yes). */
  sendNotificationToOldThread?: boolean;
  sendNotificationToNewThread?: boolean;
  /** For the Notification Bot's messages; without it none are sent. */
  ctx?: ServerContext;
  /** The realm's URL, for the breadcrumb's link to a moved message. */
  realmUrl?: string;
}

/** Zulip's RESOLVED_TOPIC_PREFIX. */
const RESOLVED_TOPIC_PREFIX = "✔ ";

/** Zulip allows 20 s beyond the limit for network delays and the client's countdown. */
const EDIT_LIMIT_BUFFER_SECONDS = 20;
const NO_TOPIC = "(no topic)";

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

/** A new topic, trimmed; "" for the empty topic, which "(no topic)" and the display name also mean (feature level 334). */
function checkEditTopic(raw: string): string {
  const topic = emptyTopicFromClient(raw.trim());
  if ([...topic].length > MAX_TOPIC_LENGTH) throw badRequest(`Topic too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  if (/[\u0000-\u001f]/.test(topic)) throw badRequest("Invalid character in topic");
  return topic;
}

/**
 * Zulip 10's validate_message_edit_payload for a changed topic: none empty under mandatory_topics,
 * and the empty topic cannot be resolved.
 */
function checkNewTopicAllowed(actor: Actor, topic: string): void {
  if (topic === "" && actor.realm.mandatory_topics) throw badRequest("Topics are required in this organization.");
  if (topic === RESOLVED_TOPIC_PREFIX.trim() || topic === `${RESOLVED_TOPIC_PREFIX}${EMPTY_TOPIC_DISPLAY_NAME}`) throw badRequest("General chat cannot be marked as resolved");
}

/**
 * Zulip 9.0's validate_user_can_edit_message: only the sender edits content, while the realm
 * allows editing and within its limit (0: none).
 */
export function checkContentEditPermission(actor: Actor, message: Pick<MessageModel, "sender_id" | "date_sent">, bufferSeconds = EDIT_LIMIT_BUFFER_SECONDS): void {
  const realm = actor.realm;
  if (!realm.allow_message_editing) throw badRequest("Your organization has turned off message editing");
  if (message.sender_id !== actor.id) throw badRequest(NO_PERMISSION);
  const limit = realm.message_content_edit_limit_seconds;
  if (limit > 0 && secondsSince(message.date_sent) > limit + bufferSeconds) {
    throw badRequest("The time limit for editing this message has passed");
  }
}

/**
 * Zulip 10.0's topic checks of check_update_message: marking a topic resolved or unresolved (the
 * same topic with the check mark added or taken away) takes the realm's can_resolve_topics_group
 * (feature level 367); any other new topic takes can_move_messages_between_topics_group (316),
 * except on a "(no topic)" message (or one in the empty topic that replaced it), which anyone may
 * retitle. Either way all but administrators and moderators within
 * move_messages_within_stream_limit_seconds.
 */
async function checkTopicEditPermission(tx: Tx, actor: Actor, message: MessageModel, newTopic: string): Promise<void> {
  const resolving = withoutResolvedPrefix(newTopic) === withoutResolvedPrefix(message.subject) && newTopic.startsWith(RESOLVED_TOPIC_PREFIX) !== message.subject.startsWith(RESOLVED_TOPIC_PREFIX);
  if (resolving) {
    if (!(await canResolveTopics(tx, actor))) throw badRequest("You don't have permission to resolve topics.");
  } else if (message.subject !== NO_TOPIC && message.subject !== "" && !(await canMoveMessagesBetweenTopics(tx, actor))) {
    throw badRequest(NO_PERMISSION);
  }
  const limit = actor.realm.move_messages_within_stream_limit_seconds;
  if (limit !== null && !exemptFromMoveTimeLimits(actor) && secondsSince(message.date_sent) > limit + EDIT_LIMIT_BUFFER_SECONDS) {
    throw badRequest("The time limit for editing this message's topic has passed.");
  }
}

interface StreamRef {
  id: number;
  name: string;
  recipient_id: number;
  invite_only: boolean;
  history_public_to_subscribers: boolean;
}

/**
 * The stream a move targets, as Zulip 10.0's check_update_message checks it: the realm's
 * can_move_messages_between_channels_group (feature level 310), to a stream they can access (access_stream_by_id:
 * a private stream, or any for a guest, only when subscribed; the old one they can read, as
 * accessMessage checked) and may post to, and all but administrators and moderators within
 * move_messages_between_streams_limit_seconds.
 */
async function checkStreamMove(tx: Tx, actor: Actor, request: UpdateMessageRequest, oldStream: StreamRef, message: MessageModel): Promise<StreamRef | null> {
  if (request.streamId === undefined || request.streamId === oldStream.id) return null;
  if (request.content !== undefined) throw badRequest("Cannot change message content while changing channel");
  if (!(await canMoveMessagesBetweenChannels(tx, actor))) throw badRequest("You don't have permission to move this message");
  const target = await tx.stream.findFirst({ where: { id: request.streamId, realm_id: actor.realm_id, deactivated: false } });
  if (!target) throw badRequest("Invalid stream id");
  if (target.invite_only || isGuest(actor)) {
    const subscribed = await tx.subscription.count({ where: { user_id: actor.id, recipient_id: target.recipient_id!, active: true } });
    // As for a stream that does not exist: a private stream's existence is not revealed. Its
    // can_add_subscribers_group and can_subscribe_group read it too (feature level 354).
    if (subscribed === 0 && !(await hasContentAccessViaGroups(tx, actor, target.id))) throw badRequest("Invalid stream id");
  }
  // Zulip 10.0's can_send_message_group (feature level 333).
  await checkCanSendMessageGroup(tx, actor, target);
  const limit = actor.realm.move_messages_between_streams_limit_seconds;
  if (limit !== null && !exemptFromMoveTimeLimits(actor) && secondsSince(message.date_sent) > limit + EDIT_LIMIT_BUFFER_SECONDS) {
    throw badRequest("The time limit for editing this message's channel has passed");
  }
  return { id: target.id, name: target.name, recipient_id: target.recipient_id!, invite_only: target.invite_only, history_public_to_subscribers: target.history_public_to_subscribers };
}

/**
 * Zulip 9.0's check_time_limit_for_change_all_propagate_mode (feature level 172): moving a whole
 * topic, someone held to the move time limits (the stricter of the topic's and the stream's when
 * both change) may move it only if none of its messages (those they can read, without access to
 * the stream's history) is past the limit; else MOVE_MESSAGES_TIME_LIMIT_EXCEEDED says which
 * most recent ones they may move.
 */
async function checkChangeAllTimeLimit(tx: Tx, actor: Actor, message: MessageModel, historyPublic: boolean, topicChanged: boolean, streamChanged: boolean): Promise<void> {
  if (exemptFromMoveTimeLimits(actor)) return;
  const realm = actor.realm;
  const limits: number[] = [];
  if (topicChanged && realm.move_messages_within_stream_limit_seconds !== null) limits.push(realm.move_messages_within_stream_limit_seconds);
  if (streamChanged && realm.move_messages_between_streams_limit_seconds !== null) limits.push(realm.move_messages_between_streams_limit_seconds);
  if (limits.length === 0) return;
  const oldest = new Date(Date.now() - (Math.min(...limits) + EDIT_LIMIT_BUFFER_SECONDS) * 1000);
  // Zulip's can_access_stream_history: a guest, or a stream without shared history, counts only
  // the messages the actor has, so the answer reveals nothing of the rest.
  const wholeHistory = historyPublic && !isGuest(actor);
  const rows = await tx.$queryRaw<Array<{ id: number; allowed: boolean }>>`
    SELECT m.id, m.date_sent > ${oldest} AS allowed FROM message m
    WHERE m.recipient_id = ${message.recipient_id} AND upper(m.subject) = upper(${message.subject})
      AND (${wholeHistory}::boolean OR EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${actor.id}))
    ORDER BY m.id`;
  const allowed = rows.filter((row) => row.allowed);
  if (allowed.length === rows.length) return;
  const extra = {
    first_message_id_allowed_to_move: allowed.length > 0 ? allowed[0].id : null,
    total_messages_in_topic: rows.length,
    total_messages_allowed_to_move: allowed.length,
  };
  throw new JsonableError(`You only have permission to move the ${allowed.length}/${rows.length} most recent messages in this topic.`, { code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", extra });
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
export async function updateMessage(tx: Tx, events: EventRecorder, actor: Actor, messageId: number, request: UpdateMessageRequest): Promise<UpdateMessageResult> {
  if (request.propagateMode !== "change_one" && request.topic === undefined && request.streamId === undefined) {
    throw badRequest("Invalid propagate_mode without topic edit");
  }
  // The row stays locked, so concurrent edits apply one after the other, each seeing the other's result.
  const accessed = await accessMessage(tx, actor, messageId, { lock: true });
  const message = await tx.message.findUniqueOrThrow({ where: { id: accessed.id } });

  if (request.content !== undefined) checkContentEditPermission(actor, message);
  if (request.topic === undefined && request.content === undefined && request.streamId === undefined) {
    throw badRequest("Nothing to change");
  }

  const oldStream: StreamRef | null = accessed.stream && {
    id: accessed.stream.id,
    name: accessed.stream.name,
    invite_only: accessed.stream.invite_only,
    history_public_to_subscribers: accessed.stream.history_public_to_subscribers,
    recipient_id: message.recipient_id,
  };
  if (!oldStream) {
    if (request.topic !== undefined) throw badRequest("Private messages cannot have topics.");
    if (request.streamId !== undefined) throw badRequest("Private messages cannot be moved to streams.");
  }

  let newTopic = request.topic === undefined ? undefined : checkEditTopic(request.topic);
  if (newTopic === message.subject) newTopic = undefined;
  if (newTopic !== undefined) checkNewTopicAllowed(actor, newTopic);
  if (newTopic !== undefined) await checkTopicEditPermission(tx, actor, message, newTopic);
  const newStream = oldStream ? await checkStreamMove(tx, actor, request, oldStream, message) : null;
  if (request.propagateMode === "change_all" && (newTopic !== undefined || newStream !== null)) {
    await checkChangeAllTimeLimit(tx, actor, message, accessed.stream!.history_public_to_subscribers, newTopic !== undefined, newStream !== null);
  }
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
  // last_edit_time says when the content changed, last_moved_time when it moved (feature level 365).
  const update: Record<string, unknown> = {};
  // A 3.x client's update_message also carried prev_rendered_content_version (gone at feature level 284).
  const legacy: Record<string, unknown> = {};
  if (newContent !== undefined) {
    update.last_edit_time = now;
    legacy.prev_rendered_content_version = message.rendered_content_version;
    // The same renderer and context as sending (mentions, stream links, emoji, linkifiers).
    const context = await fetchRenderContext(tx, actor.realm_id, newContent, { linkifiers, imagePreviews: actor.realm.inline_image_preview, realmHost: request.realmHost, author: { id: actor.id, isGuest: isGuest(actor) } });
    const rendered = renderMarkdown(newContent, context);
    // As Zulip since 5.0 (3.x checked sends only): otherwise an edit adds what a send may not.
    // Only the sender edits content, and a content edit never moves the message.
    if (oldStream && rendered.mentionsWildcard) await checkWildcardMentionAllowed(tx, actor, message.recipient_id);
    if (oldStream && rendered.mentionsTopicWildcard) await checkTopicWildcardMentionAllowed(tx, actor, message.recipient_id, newTopic ?? message.subject);
    await checkGroupMentionsAllowed(tx, actor, rendered.mentionedGroupIds);
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
  // Resolving or unresolving a topic is no move (Zulip's last_moved_timestamp).
  if (newStream || (newTopic !== undefined && withoutResolvedPrefix(newTopic) !== withoutResolvedPrefix(message.subject))) sharedUpdate.last_moved_time = now;
  if (!topicOrMove) legacy.propagate_mode = request.propagateMode;
  const modern = topicOrMove ? { ...event, propagate_mode: request.propagateMode } : event;
  const recorded = Object.keys(legacy).length > 0 ? withLegacyShape(modern, legacy) : modern;

  // Who has the messages now, with their flags on the edited one (read before any move deletes rows).
  const holders = await tx.$queryRaw<Array<{ user_id: number; flags: number | null }>>`
    SELECT um.user_id, max(CASE WHEN um.message_id = ${message.id} THEN um.flags END) AS flags
    FROM user_message um WHERE um.message_id = ANY(${changedIds}::int[])
    GROUP BY um.user_id ORDER BY um.user_id`;

  // Read before the messages move: whether the topic moves whole, and whether its target had messages.
  const movedAll = topicOrMove && (request.propagateMode === "change_all" || !(await visibleMessagesRemain(tx, actor, oldStream!, message.subject, changedIds)));
  const policyMove = topicOrMove && movedAll ? await planPolicyMove(tx, oldStream!, newStream, message, newTopic) : null;

  let access: { losing: Set<number>; gaining: number[] } = { losing: new Set(), gaining: [] };
  if (newStream) access = await moveUserMessages(tx, events, oldStream!, newStream, changedIds, message.subject);
  const losingAccess = access.losing;

  await tx.message.update({ where: { id: message.id }, data: { ...update, ...sharedUpdate } });
  let detachedUploads: AttachmentDict[] = [];
  if (newContent !== undefined && (newContent.includes("/user_uploads/") || message.has_attachment)) {
    const stream = newStream ?? oldStream;
    detachedUploads = (await relinkAttachments(tx, events, actor, { id: message.id, content: newContent, realmPublic: stream !== null && !stream.invite_only })).detached;
  }
  await tx.messageEdit.create({ data: { message_id: message.id, user_id: actor.id, timestamp: now, ...edit, ...shared } });
  if (others.length > 0) {
    await tx.message.updateMany({ where: { id: { in: others } }, data: sharedUpdate });
    await tx.messageEdit.createMany({ data: others.map((id) => ({ message_id: id, user_id: actor.id, timestamp: now, ...shared })) });
  }

  const users: Array<EventRecipient & { id: number }> = holders
    .filter((h) => !losingAccess.has(h.user_id))
    .map((h) => ({ id: h.user_id, flags: h.flags === null ? [] : flagsToNames(h.flags) }));
  const told = new Set(users.map((u) => u.id));
  for (const id of access.gaining) if (!told.has(id)) users.push({ id, flags: ["read"] });
  if (policyMove) await moveTopicPolicies(tx, events, policyMove);
  if (newStream && newStream.invite_only !== oldStream!.invite_only) await refreshAttachmentsPublic(tx, changedIds);
  events.send(recorded, users);

  if (topicOrMove && request.ctx) {
    await sendMoveNotifications(tx, events, request.ctx, actor, {
      from: oldStream!,
      fromTopic: message.subject,
      to: newStream ?? oldStream!,
      toTopic: newTopic ?? message.subject,
      messageId: message.id,
      changedIds,
      movedAll,
      contentEdited: newContent !== undefined,
      toOld: request.sendNotificationToOldThread ?? false,
      toNew: request.sendNotificationToNewThread ?? true,
      realmUrl: request.realmUrl ?? "",
    });
  }
  return { detachedUploads };
}

/** Zulip's silent_mention_syntax_for_user. */
function silentMention(user: Actor): string {
  return `@_**${user.full_name}|${user.id}**`;
}

/** A stream-and-topic link as Zulip 9.0's breadcrumbs write it. */
function topicLink(stream: StreamRef, topic: string): string {
  return `#**${stream.name}>${topic}**`;
}

/** Zulip's near-message link (stream_message_url): `#narrow/stream/{id}-{slug}/topic/{topic}/near/{id}`. */
function nearMessageUrl(realmUri: string, stream: StreamRef, topic: string, messageId: number): string {
  return `${realmUri}${streamNarrowUrl(stream)}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
}

interface MoveNotice {
  from: StreamRef;
  fromTopic: string;
  to: StreamRef;
  toTopic: string;
  messageId: number;
  changedIds: number[];
  movedAll: boolean;
  contentEdited: boolean;
  toOld: boolean;
  toNew: boolean;
  realmUrl: string;
}

/** Zulip's `str.lstrip(RESOLVED_TOPIC_PREFIX)`: the topic without any leading check marks and spaces. */
function withoutResolvedPrefix(topic: string): string {
  return topic.replace(/^[✔ ]+/u, "");
}

/**
 * A Notification Bot message in a topic, read already for the user whose action it reports
 * (Zulip's mark_as_read_for_acting_user): a flag event follows the message event. Returns its id.
 */
async function postNotice(tx: Tx, events: EventRecorder, ctx: ServerContext, actor: Actor, stream: StreamRef, topic: string, text: string): Promise<number> {
  const id = await sendNotification(tx, events, ctx, actor.realm, { type: "stream", stream: stream.id, topic }, text);
  await updateMessageFlags(tx, events, actor, "add", "read", [id]);
  return id;
}

/**
 * The Notification Bot's messages after a move or a retitle, as Zulip 9.0's do_update_message
 * sends them: in the topic, whether it was just marked (un)resolved
 * (maybe_send_resolve_topic_notifications, topic edits alone); then the breadcrumbs
 * (send_message_moved_breadcrumbs) in the topic left, when asked, and in the new one unless the
 * only change was resolving or unresolving. "This topic was moved" when nothing the actor can see
 * stayed behind (and, for the new topic, nothing they can see was there before), else how many
 * messages moved.
 */
async function sendMoveNotifications(tx: Tx, events: EventRecorder, ctx: ServerContext, actor: Actor, notice: MoveNotice): Promise<void> {
  const user = silentMention(actor);
  const streamChanged = notice.to.id !== notice.from.id;
  const topicChanged = notice.toTopic !== notice.fromTopic;
  const count = notice.changedIds.length;
  const skipIds = [...notice.changedIds];
  if (topicChanged && !streamChanged && !notice.contentEdited) {
    const resolved = notice.toTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !notice.fromTopic.startsWith(RESOLVED_TOPIC_PREFIX);
    const unresolved = notice.fromTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !notice.toTopic.startsWith(RESOLVED_TOPIC_PREFIX);
    if ((resolved || unresolved) && (await undidRecentResolve(tx, events, actor, notice.to, notice.toTopic))) {
      // A quick undo: the previous notice goes instead of a new one (Zulip's maybe_delete_previous_resolve_topic_notification).
    } else if (resolved || unresolved) {
      const text = resolved ? `${user} has marked this topic as resolved.` : `${user} has marked this topic as unresolved.`;
      skipIds.push(await postNotice(tx, events, ctx, actor, notice.to, notice.toTopic, text));
    }
  }
  const newEligible = streamChanged || withoutResolvedPrefix(notice.fromTopic) !== withoutResolvedPrefix(notice.toTopic);
  if (notice.toNew && newEligible) {
    let text: string;
    const oldLocation = topicLink(notice.from, notice.fromTopic);
    if (notice.movedAll && !(await visibleMessagesRemain(tx, actor, notice.to, notice.toTopic, skipIds))) {
      text = `This topic was moved here from ${oldLocation} by ${user}.`;
    } else if (count === 1) {
      const link = nearMessageUrl(notice.realmUrl, notice.to, notice.toTopic, notice.messageId);
      text = `[A message](${link}) was moved here from ${oldLocation} by ${user}.`;
    } else {
      text = `${count} messages were moved here from ${oldLocation} by ${user}.`;
    }
    await postNotice(tx, events, ctx, actor, notice.to, notice.toTopic, text);
  }
  if (notice.toOld) {
    const newLocation = topicLink(notice.to, notice.toTopic);
    let text: string;
    if (notice.movedAll) text = `This topic was moved to ${newLocation} by ${user}.`;
    else if (count === 1) text = `A message was moved from this topic to ${newLocation} by ${user}.`;
    else text = `${count} messages were moved from this topic to ${newLocation} by ${user}.`;
    await postNotice(tx, events, ctx, actor, notice.from, notice.fromTopic, text);
  }
}

/** Zulip's RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS. */
const RESOLVE_UNDO_GRACE_SECONDS = 60;
const RESOLVE_NOTICE = /^@_\*\*[^\n]*\|\d+\*\* has marked this topic as (un)?resolved\.$/;

/**
 * When the topic's last message is a resolve notice of the last minute, deletes it and says so:
 * resolving by mistake and undoing it at once leaves no notices behind.
 */
async function undidRecentResolve(tx: Tx, events: EventRecorder, actor: Actor, stream: StreamRef, topic: string): Promise<boolean> {
  const [last] = await tx.$queryRaw<Array<{ id: number; content: string; date_sent: Date; sender_id: number }>>`
    SELECT id, content, date_sent, sender_id FROM message
    WHERE recipient_id = ${stream.recipient_id} AND upper(subject) = upper(${topic})
    ORDER BY id DESC LIMIT 1`;
  if (!last || !RESOLVE_NOTICE.test(last.content) || secondsSince(last.date_sent) > RESOLVE_UNDO_GRACE_SECONDS) return false;
  const sender = await tx.userProfile.findUnique({ where: { id: last.sender_id }, select: { is_bot: true, bot_owner_id: true, delivery_email: true } });
  if (!sender || !isSystemBot(sender)) return false;
  await deleteMessage(tx, events, actor, last.id, { byServer: true });
  return true;
}

/** After a move between a public and a private stream, whether each linked upload is readable realm-wide. */
async function refreshAttachmentsPublic(tx: Tx, messageIds: number[]): Promise<void> {
  await tx.$executeRaw`
    UPDATE attachment a SET is_realm_public = EXISTS (
      SELECT 1 FROM attachment_message am JOIN message m ON m.id = am.message_id
      JOIN recipient r ON r.id = m.recipient_id AND r.type = 2
      JOIN stream s ON s.id = r.type_id AND NOT s.invite_only
      WHERE am.attachment_id = a.id)
    WHERE a.id IN (SELECT attachment_id FROM attachment_message WHERE message_id = ANY(${messageIds}::int[]))`;
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
 * Moving to another stream, as Zulip 9.0's do_update_message: whoever was ever subscribed to the
 * old stream and is not subscribed to the new one loses their rows (public stream history still
 * shows members the messages); guests among them, or all of them when the new stream is private,
 * can no longer see the messages and get a delete_message event instead of update_message. Into
 * a stream without shared history, its subscribers get read rows (being subscribed when the
 * messages arrive is what gives them access there). Returns who lost access, and who gained rows.
 */
async function moveUserMessages(tx: Tx, events: EventRecorder, oldStream: StreamRef, newStream: StreamRef, messageIds: number[], topic: string): Promise<{ losing: Set<number>; gaining: number[] }> {
  const losing = await tx.$queryRaw<Array<{ user_id: number; role: number }>>`
    SELECT DISTINCT s.user_id, u.role FROM subscription s JOIN user_profile u ON u.id = s.user_id
    WHERE s.recipient_id = ${oldStream.recipient_id}
      AND NOT EXISTS (SELECT 1 FROM subscription n WHERE n.recipient_id = ${newStream.recipient_id} AND n.active AND n.user_id = s.user_id)`;
  let gaining: number[] = [];
  if (!newStream.history_public_to_subscribers) {
    const rows = await tx.$queryRaw<Array<{ user_id: number }>>`
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT s.user_id, m.id, ${FLAG_BITS.read}::int FROM subscription s CROSS JOIN unnest(${messageIds}::int[]) AS m(id)
      WHERE s.recipient_id = ${newStream.recipient_id} AND s.active
      ON CONFLICT DO NOTHING
      RETURNING user_id`;
    gaining = [...new Set(rows.map((row) => row.user_id))].sort((a, b) => a - b);
  }
  if (losing.length === 0) return { losing: new Set(), gaining };
  const ids = losing.map((l) => l.user_id);
  await tx.$executeRaw`DELETE FROM user_message WHERE user_id = ANY(${ids}::int[]) AND message_id = ANY(${messageIds}::int[])`;
  const lost = newStream.invite_only ? ids : losing.filter((l) => isGuest(l)).map((l) => l.user_id);
  events.send({ type: "delete_message", message_ids: messageIds, message_type: "stream", stream_id: oldStream.id, topic }, lost);
  return { losing: new Set(lost), gaining };
}

interface PolicyMove {
  from: StreamRef;
  fromTopic: string;
  to: StreamRef;
  toTopic: string;
  targetHadMessages: boolean;
}

/**
 * Whether any message of the topic the actor can read stays out of `movedIds` (Zulip's
 * moved_all_visible_messages, and the new topic's preexisting messages for the breadcrumb):
 * counting only readable ones reveals nothing of hidden history.
 */
async function visibleMessagesRemain(tx: Tx, actor: Actor, stream: StreamRef, topic: string, movedIds: number[]): Promise<boolean> {
  const historyPublic = stream.history_public_to_subscribers && !isGuest(actor);
  const [{ remains }] = await tx.$queryRaw<Array<{ remains: boolean }>>`
    SELECT EXISTS (
      SELECT 1 FROM message m
      WHERE m.recipient_id = ${stream.recipient_id} AND upper(m.subject) = upper(${topic}) AND NOT (m.id = ANY(${movedIds}::int[]))
        AND (${historyPublic}::boolean OR EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${actor.id}))
    ) AS remains`;
  return remains;
}

/**
 * When the move carries the topic's visibility policies (Zulip 9: always with change_all,
 * otherwise when none of the topic's messages the actor can read stays behind): from where to
 * where, and whether the target had messages.
 */
async function planPolicyMove(tx: Tx, from: StreamRef, newStream: StreamRef | null, message: MessageModel, newTopic: string | undefined): Promise<PolicyMove | null> {
  const to = newStream ?? from;
  const toTopic = newTopic ?? message.subject;
  // A rename that changes only case keeps the rows: they match topics without case.
  if (to.id === from.id && toTopic.toLowerCase() === message.subject.toLowerCase()) return null;
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
