// Per-user message flags changed by the user (Zulip's zerver/actions/message_flags.py). Each
// change is one UPDATE on user_message with the bitmask, returning the rows it changed, and one
// `update_message_flags` event to the user.
import { emptyTopicFromDisplayName } from "../lib/empty-topic.ts";
import { fitsPostgresInteger } from "../lib/validation.ts";
import type { Tx } from "@chat/db";
import type { ActionRunner, ChangeOrigin, EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { FLAG_BITS, type FlagName } from "../lib/message-flags.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { isGuest } from "../lib/roles.ts";
import { invalidMessageError } from "../queries/messages.ts";
import { accessStreamById, contentAccessViaGroupsSql } from "../queries/streams.ts";
import { unreadMessageDetails } from "../queries/unread-message-details.ts";

/** Flags a client may name (is_private and the push bookkeeping bit are internal). */
const API_FLAGS: string[] = ["read", "starred", "collapsed", "mentioned", "wildcard_mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "has_alert_word", "historical"];
/** Flags the server sets from message content or history; users cannot change them. */
const NON_EDITABLE_FLAGS: string[] = ["mentioned", "wildcard_mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "has_alert_word", "historical"];
/** The flags a message read without a user_message row behaves as having (Zulip's DEFAULT_HISTORICAL_FLAGS). */
const DEFAULT_HISTORICAL_FLAGS = FLAG_BITS.historical | FLAG_BITS.read;

export type FlagOperation = "add" | "remove";

function flagsEvent(operation: FlagOperation, flag: string, messages: number[], all: boolean) {
  return { type: "update_message_flags", op: operation, operation, flag, messages, all };
}

export function checkEditableFlag(flag: string): FlagName {
  if (!(API_FLAGS as string[]).includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if ((NON_EDITABLE_FLAGS as string[]).includes(flag)) throw badRequest(`Flag not editable: '${flag}'`);
  return flag as FlagName;
}

interface RowlessMessage {
  id: number;
  /** A stream message in a stream the user is not subscribed to. */
  unsubscribed_stream: boolean;
  /** Readable without a row (Zulip's has_message_access): stream history the user may see. */
  readable: boolean;
}

/** How the user stands to each of `messageIds` (messages they have no row for) that exists in their realm. */
async function classifyRowlessMessages(tx: Tx, actor: Actor, messageIds: number[]): Promise<Map<number, RowlessMessage>> {
  if (messageIds.length === 0) return new Map();
  const rows = await tx.$queryRaw<RowlessMessage[]>`
    SELECT m.id,
           (r.type = ${RECIPIENT_STREAM} AND NOT subscribed) AS unsubscribed_stream,
           (r.type = ${RECIPIENT_STREAM} AND s.history_public_to_subscribers
             AND ((NOT s.invite_only AND NOT ${isGuest(actor)}) OR subscribed OR ${contentAccessViaGroupsSql(actor, "s")})) AS readable
    FROM message m
    JOIN recipient r ON r.id = m.recipient_id
    LEFT JOIN stream s ON r.type = ${RECIPIENT_STREAM} AND s.id = r.type_id
    CROSS JOIN LATERAL (SELECT EXISTS (
      SELECT 1 FROM subscription sub WHERE sub.user_id = ${actor.id} AND sub.recipient_id = m.recipient_id AND sub.active) AS subscribed) sub
    WHERE m.id = ANY(${messageIds}::int[]) AND m.realm_id = ${actor.realm_id}`;
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * POST /messages/flags. Returns the ids whose flag actually changed, in request order. Messages the
 * user has no row for get a "historical" row when the change makes one necessary (starring a
 * message of a public stream they never received). If any id is one they cannot read, nothing
 * changes and the answer is "Invalid message(s)".
 */
export async function updateMessageFlags(tx: Tx, events: EventRecorder, actor: Actor, operation: string, flag: string, messageIds: number[]): Promise<number[]> {
  return (await changeMessageFlags(tx, events, actor, operation, flag, messageIds)).messages;
}

export interface FlagChange {
  /** The ids whose flag changed, in request order. */
  messages: number[];
  /**
   * Marking unread: the streams, by id, whose messages stayed read because the user is not
   * subscribed to them (feature level 355); empty for any other change.
   */
  ignoredBecauseNotSubscribedChannels: number[];
}

/** updateMessageFlags, saying also which streams' messages marking unread skipped. */
export async function changeMessageFlags(tx: Tx, events: EventRecorder, actor: Actor, operation: string, flag: string, messageIds: number[]): Promise<FlagChange> {
  const name = checkEditableFlag(flag);
  if (operation !== "add" && operation !== "remove") throw badRequest(`Invalid message flag operation: '${operation}'`);
  const bit = FLAG_BITS[name];
  const adding = operation === "add";
  // An id no message can have is as invalid as one the user cannot read.
  if (messageIds.some((id) => id <= 0 || !fitsPostgresInteger(id))) throw invalidMessageError();
  const ids = [...new Set(messageIds)];
  // Messages marked unread must be in streams the user is subscribed to (Zulip's invariant).
  const subscribedOnly = name === "read" && !adding;

  const withoutRow = ids.length === 0 ? [] : (
    await tx.$queryRaw<{ id: number }[]>`
      SELECT id FROM unnest(${ids}::int[]) AS id
      WHERE NOT EXISTS (SELECT 1 FROM user_message um WHERE um.user_id = ${actor.id} AND um.message_id = id)`
  ).map((row) => row.id);

  // Every message must be one the user may read (Zulip's access_message), with a row or without.
  const classified = await classifyRowlessMessages(tx, actor, withoutRow);
  if (withoutRow.some((id) => !classified.get(id)?.readable)) throw invalidMessageError();
  // A message without a row reads as read + historical; only a change away from that needs a row.
  // Marking unread skips messages of unsubscribed streams.
  let historical: number[] = [];
  if (((DEFAULT_HISTORICAL_FLAGS & bit) !== 0) !== adding) {
    historical = subscribedOnly ? withoutRow.filter((id) => !classified.get(id)!.unsubscribed_stream) : withoutRow;
  }

  const updated = adding
    ? await tx.$queryRaw<{ message_id: number }[]>`
        UPDATE user_message SET flags = flags | ${bit}::int
        WHERE user_id = ${actor.id} AND message_id = ANY(${ids}::int[]) AND (flags & ${bit}::int) = 0
        RETURNING message_id`
    : await tx.$queryRaw<{ message_id: number }[]>`
        UPDATE user_message um SET flags = um.flags & ~${bit}::int
        WHERE um.user_id = ${actor.id} AND um.message_id = ANY(${ids}::int[]) AND (um.flags & ${bit}::int) <> 0
          AND (NOT ${subscribedOnly} OR EXISTS (
            SELECT 1 FROM message m JOIN recipient r ON r.id = m.recipient_id
            WHERE m.id = um.message_id AND (r.type <> ${RECIPIENT_STREAM} OR EXISTS (
              SELECT 1 FROM subscription sub WHERE sub.user_id = ${actor.id} AND sub.recipient_id = m.recipient_id AND sub.active))))
        RETURNING um.message_id`;
  const changed = new Set(updated.map((row) => row.message_id));

  if (historical.length > 0) {
    const historicalFlags = adding ? DEFAULT_HISTORICAL_FLAGS | bit : DEFAULT_HISTORICAL_FLAGS & ~bit;
    const inserted = await tx.$queryRaw<{ message_id: number }[]>`
      INSERT INTO user_message (user_id, message_id, flags)
      SELECT ${actor.id}, m.id, ${historicalFlags}::int FROM message m WHERE m.id = ANY(${historical}::int[])
      -- As a foreign key would: a message deleted meanwhile gets no row (migration 0009).
      FOR KEY SHARE OF m
      ON CONFLICT (user_id, message_id) DO NOTHING
      RETURNING message_id`;
    for (const row of inserted) changed.add(row.message_id);
  }

  const messages = ids.filter((id) => changed.has(id));
  const event = flagsEvent(operation, name, messages, false);
  // Marked unread: what the client needs to count them (feature level 121; additive, so for all).
  if (subscribedOnly) Object.assign(event, { message_details: await unreadMessageDetails(tx, actor.id, messages) });
  events.send(event, [actor.id]);
  const ignored = subscribedOnly && ids.length > 0 ? await unsubscribedStreamsOf(tx, actor, ids) : [];
  return { messages, ignoredBecauseNotSubscribedChannels: ignored };
}

/** The streams, by id, of these messages that the user is not subscribed to. */
async function unsubscribedStreamsOf(tx: Tx, actor: Actor, messageIds: number[]): Promise<number[]> {
  const rows = await tx.$queryRaw<{ stream_id: number }[]>`
    SELECT DISTINCT r.type_id AS stream_id FROM message m JOIN recipient r ON r.id = m.recipient_id
    WHERE m.id = ANY(${messageIds}::int[]) AND m.realm_id = ${actor.realm_id} AND r.type = ${RECIPIENT_STREAM}
      AND NOT EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_id = ${actor.id} AND sub.recipient_id = m.recipient_id AND sub.active)
    ORDER BY stream_id`;
  return rows.map((row) => row.stream_id);
}

/** POST /mark_all_as_read: one UPDATE over the user's unread rows (uses the partial unread index). */
export async function markAllAsRead(tx: Tx, events: EventRecorder, actor: Actor, batchSize?: number): Promise<number> {
  const count =
    batchSize === undefined
      ? await tx.$executeRaw`UPDATE user_message SET flags = flags | 1 WHERE user_id = ${actor.id} AND (flags & 1) = 0`
      : await tx.$executeRaw`
          UPDATE user_message SET flags = flags | 1 WHERE user_id = ${actor.id} AND message_id IN (
            SELECT message_id FROM user_message WHERE user_id = ${actor.id} AND (flags & 1) = 0 ORDER BY message_id LIMIT ${batchSize} FOR UPDATE)`;
  // As Zulip: no ids (a client reloads its unread state), `all` says everything is read.
  events.send(flagsEvent("add", "read", [], true), [actor.id]);
  return count;
}

/** Zulip 9.0's batch size and time budget for POST /mark_all_as_read (feature level 153); tests lower them. */
export const MARK_ALL_AS_READ = { batchSize: 2000, timeLimitMs: 50_000 };

/**
 * POST /mark_all_as_read as Zulip 9.0 (do_mark_all_as_read with a timeout): batches that each
 * commit, so a long unread history is read by repeating the request; false when time ran out.
 */
export async function markAllAsReadInBatches(actions: ActionRunner, origin: ChangeOrigin, actor: Actor): Promise<boolean> {
  const start = Date.now();
  for (;;) {
    if (Date.now() >= start + MARK_ALL_AS_READ.timeLimitMs) return false;
    const batchSize = MARK_ALL_AS_READ.batchSize;
    const updated = await actions.run(origin, (tx, events) => markAllAsRead(tx, events, actor, batchSize));
    if (updated < batchSize) return true;
  }
}

/** POST /mark_stream_as_read and /mark_topic_as_read: the user's unread rows in one stream (topic). */
async function markStreamMessagesAsRead(tx: Tx, events: EventRecorder, actor: Actor, recipientId: number, topic: string | null): Promise<number[]> {
  const rows = await tx.$queryRaw<{ message_id: number }[]>`
    UPDATE user_message um SET flags = um.flags | 1
    FROM message m
    WHERE um.user_id = ${actor.id} AND (um.flags & 1) = 0 AND m.id = um.message_id AND m.recipient_id = ${recipientId}
      AND (${topic}::text IS NULL OR lower(m.subject) = lower(${topic}::text))
    RETURNING um.message_id`;
  const ids = rows.map((row) => row.message_id).sort((a, b) => a - b);
  if (ids.length > 0) events.send(flagsEvent("add", "read", ids, false), [actor.id]);
  return ids;
}

export async function markStreamAsRead(tx: Tx, events: EventRecorder, actor: Actor, streamId: number): Promise<number[]> {
  const stream = await accessStreamById(tx, actor, streamId);
  return markStreamMessagesAsRead(tx, events, actor, stream.recipient_id!, null);
}

export async function markTopicAsRead(tx: Tx, events: EventRecorder, actor: Actor, streamId: number, requestedTopic: string): Promise<number[]> {
  const stream = await accessStreamById(tx, actor, streamId);
  // "": the whole stream, as in Zulip; the display name: the empty topic (feature level 334).
  if (requestedTopic === "") return markStreamMessagesAsRead(tx, events, actor, stream.recipient_id!, null);
  const topicName = emptyTopicFromDisplayName(requestedTopic);
  const [exists] = await tx.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM user_message um JOIN message m ON m.id = um.message_id
      WHERE um.user_id = ${actor.id} AND m.recipient_id = ${stream.recipient_id!} AND lower(m.subject) = lower(${topicName})
    ) AS found`;
  if (!exists.found) throw badRequest(`No such topic '${requestedTopic}'`);
  return markStreamMessagesAsRead(tx, events, actor, stream.recipient_id!, topicName);
}
