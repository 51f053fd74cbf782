// The /register `unread_msgs` section (Zulip's get_raw_unread_data, apply_unread_message_event and
// aggregate_unread_data). The section is fetched in a raw form keyed by message id, events that
// reach the new queue meanwhile are applied to that form, and finishState turns it into the
// aggregated buckets clients get; the raw form never leaves the server.
import type { PrismaClient } from "@chat/db";
import type { State } from "./initial-state.ts";
import { FLAG_BITS, WILDCARD_MENTION_BITS } from "../lib/message-flags.ts";
import { RECIPIENT_HUDDLE, RECIPIENT_PERSONAL, RECIPIENT_STREAM } from "../lib/recipients.ts";
import { VisibilityPolicy } from "../queries/user-topics.ts";
import { topicForClient } from "../lib/empty-topic.ts";

type Applier = (state: State, event: Record<string, unknown>, userId: number) => void;

/** Zulip's MAX_UNREAD_MESSAGES: only the newest unread messages are reported. */
export const MAX_UNREAD_MESSAGES = 50_000;

const RAW_UNREAD_KEY = "raw_unread_msgs";

interface UnreadStreamMessage {
  stream_id: number;
  topic: string;
  sender_id: number;
}

export interface RawUnreadMessages {
  /** The other party of each unread 1:1 message (Zulip's misnamed `sender_id`). */
  pm_dict: Map<number, { sender_id: number }>;
  stream_dict: Map<number, UnreadStreamMessage>;
  huddle_dict: Map<number, { user_ids_string: string }>;
  /**
   * Stream messages `count` counts (Zulip's is_row_muted, feature level 213): in an unmuted stream
   * unless the topic is muted; in a muted stream only if the topic is unmuted or followed.
   */
  unmuted_stream_msgs: Set<number>;
  /** Messages with the `mentioned` flag. */
  mentions: Set<number>;
  /**
   * Messages with `wildcard_mentioned`, a mention only while private or in an unmuted topic. Kept
   * apart (Zulip decides once) so a topic moved into or out of a muted one reads as a new fetch.
   */
  wildcard_mentions: Set<number>;
  /** The user's muting when the section was read, to classify messages arriving afterwards. */
  muted_stream_ids: Set<number>;
  /** The visibility policy of each topic that has one, by `${stream_id}:${lowercased topic}` (topics are case-insensitive). */
  topic_policies: Map<string, number>;
  /** Whether the user has more unread messages than MAX_UNREAD_MESSAGES, the older ones left out. */
  old_unreads_missing: boolean;
}

export interface UnreadMessages {
  /** `other_user_id` is feature level 119's name for 3.x's misnamed `sender_id`; both are sent. */
  pms: Array<{ other_user_id: number; sender_id: number; unread_message_ids: number[] }>;
  streams: Array<{ stream_id: number; topic: string; unread_message_ids: number[]; sender_ids: number[] }>;
  huddles: Array<{ user_ids_string: string; unread_message_ids: number[] }>;
  mentions: number[];
  count: number;
  old_unreads_missing: boolean;
}

interface UnreadRow {
  message_id: number;
  flags: number;
  sender_id: number;
  topic: string;
  recipient_type: number;
  type_id: number;
  user_ids_string: string | null;
}

function topicKey(streamId: number, topic: string): string {
  return `${streamId}:${topic.toLowerCase()}`;
}

function emptyRaw(): RawUnreadMessages {
  return {
    pm_dict: new Map(),
    stream_dict: new Map(),
    huddle_dict: new Map(),
    unmuted_stream_msgs: new Set(),
    mentions: new Set(),
    wildcard_mentions: new Set(),
    muted_stream_ids: new Set(),
    topic_policies: new Map(),
    old_unreads_missing: false,
  };
}

/** Zulip's is_row_muted: a topic's own policy overrides its stream's muting either way. */
function isRowMuted(raw: RawUnreadMessages, streamId: number, topic: string): boolean {
  const policy = raw.topic_policies.get(topicKey(streamId, topic)) ?? VisibilityPolicy.INHERIT;
  if (raw.muted_stream_ids.has(streamId)) return policy !== VisibilityPolicy.UNMUTED && policy !== VisibilityPolicy.FOLLOWED;
  return policy === VisibilityPolicy.MUTED;
}

/** Adds or rewrites a stream message, deciding from the kept muting whether `count` counts it. */
function putStreamMessage(raw: RawUnreadMessages, id: number, row: UnreadStreamMessage): void {
  raw.stream_dict.set(id, row);
  if (isRowMuted(raw, row.stream_id, row.topic)) raw.unmuted_stream_msgs.delete(id);
  else raw.unmuted_stream_msgs.add(id);
}

function putMentions(raw: RawUnreadMessages, id: number, mentioned: boolean, wildcard: boolean): void {
  if (mentioned) raw.mentions.add(id);
  if (wildcard) raw.wildcard_mentions.add(id);
}

/** Everything keyed by message id (the muting is not). */
function byMessage(raw: RawUnreadMessages): Array<Map<number, unknown> | Set<number>> {
  return [raw.pm_dict, raw.stream_dict, raw.huddle_dict, raw.unmuted_stream_msgs, raw.mentions, raw.wildcard_mentions];
}

function removeMessage(raw: RawUnreadMessages, id: number): void {
  for (const collection of byMessage(raw)) collection.delete(id);
}

/**
 * The user's unread messages, newest MAX_UNREAD_MESSAGES, leaving out streams the user has left
 * (Zulip's get_inactive_recipient_ids), with each group conversation's members. The LIMIT walks
 * user_message_unread_idx backwards; members are aggregated once per conversation, not per row.
 */
async function unreadRows(prisma: PrismaClient, userId: number): Promise<UnreadRow[]> {
  return prisma.$queryRaw<UnreadRow[]>`
    WITH unread AS (
      SELECT um.message_id, um.flags, m.sender_id, m.subject AS topic, m.recipient_id, r.type AS recipient_type, r.type_id
      FROM user_message um
      JOIN message m ON m.id = um.message_id
      JOIN recipient r ON r.id = m.recipient_id
      WHERE um.user_id = ${userId} AND (um.flags & 1) = 0
        AND m.recipient_id NOT IN (
          SELECT s.recipient_id FROM subscription s JOIN recipient sr ON sr.id = s.recipient_id
          WHERE s.user_id = ${userId} AND NOT s.active AND sr.type = ${RECIPIENT_STREAM})
      ORDER BY um.message_id DESC
      LIMIT ${MAX_UNREAD_MESSAGES}
    ), huddles AS (
      SELECT s.recipient_id, string_agg(s.user_id::text, ',' ORDER BY s.user_id) AS user_ids_string
      FROM subscription s
      WHERE s.recipient_id IN (SELECT recipient_id FROM unread WHERE recipient_type = ${RECIPIENT_HUDDLE})
      GROUP BY s.recipient_id
    )
    SELECT u.message_id, u.flags, u.sender_id, u.topic, u.recipient_type, u.type_id, h.user_ids_string
    FROM unread u LEFT JOIN huddles h ON h.recipient_id = u.recipient_id
    ORDER BY u.message_id`;
}

/**
 * Streams the user muted (active subscriptions only, as Zulip's get_muted_stream_ids), policy
 * null, and the user's topic policies (Zulip's build_get_topic_visibility_policy).
 */
async function mutedOf(prisma: PrismaClient, userId: number): Promise<Array<{ stream_id: number; topic: string | null; policy: number | null }>> {
  return prisma.$queryRaw`
    SELECT r.type_id AS stream_id, NULL::text AS topic, NULL::int AS policy
    FROM subscription s JOIN recipient r ON r.id = s.recipient_id
    WHERE s.user_id = ${userId} AND s.active AND s.is_muted AND r.type = ${RECIPIENT_STREAM}
    UNION ALL
    SELECT stream_id, topic_name, visibility_policy FROM user_topic WHERE user_id = ${userId}`;
}

/**
 * Zulip's get_raw_unread_data. A client without the empty_topic_name capability has the empty
 * topic by its display name here, as in the events its queue gets (fanout.ts), which apply to it.
 */
export async function fetchRawUnreadMessages(prisma: PrismaClient, userId: number, allowEmptyTopicName = true): Promise<RawUnreadMessages> {
  const [rows, muted] = await Promise.all([unreadRows(prisma, userId), mutedOf(prisma, userId)]);
  const raw = emptyRaw();
  for (const { stream_id, topic, policy } of muted) {
    if (topic === null) raw.muted_stream_ids.add(stream_id);
    else raw.topic_policies.set(topicKey(stream_id, topicForClient(topic, allowEmptyTopicName)), policy ?? VisibilityPolicy.INHERIT);
  }
  for (const row of rows) {
    const id = row.message_id;
    if (row.recipient_type === RECIPIENT_STREAM) {
      putStreamMessage(raw, id, { stream_id: row.type_id, topic: topicForClient(row.topic, allowEmptyTopicName), sender_id: row.sender_id });
    } else if (row.recipient_type === RECIPIENT_PERSONAL) {
      raw.pm_dict.set(id, { sender_id: row.sender_id === userId ? row.type_id : row.sender_id });
    } else {
      raw.huddle_dict.set(id, { user_ids_string: row.user_ids_string ?? "" });
    }
    putMentions(raw, id, (row.flags & FLAG_BITS.mentioned) !== 0, (row.flags & WILDCARD_MENTION_BITS) !== 0);
  }
  // As Zulip: at the limit, some may be missing (the newest were read, so any missing are older).
  raw.old_unreads_missing = rows.length >= MAX_UNREAD_MESSAGES;
  return raw;
}

interface EventMessage {
  id: number;
  type: "stream" | "private";
  sender_id: number;
  stream_id?: number;
  subject: string;
  display_recipient: string | Array<{ id: number }>;
}

/** Zulip's apply_unread_message_event: a new message the user has not read. */
function applyMessage(raw: RawUnreadMessages, event: Record<string, unknown>, userId: number): void {
  const flags = (event.flags as string[] | undefined) ?? [];
  if (flags.includes("read")) return;
  const message = event.message as EventMessage;
  const id = message.id;
  if (message.type === "stream") {
    putStreamMessage(raw, id, { stream_id: message.stream_id!, topic: message.subject, sender_id: message.sender_id });
  } else {
    const members = (message.display_recipient as Array<{ id: number }>).map((r) => r.id);
    const others = members.filter((member) => member !== userId);
    if (others.length <= 1) raw.pm_dict.set(id, { sender_id: others[0] ?? userId });
    else raw.huddle_dict.set(id, { user_ids_string: members.sort((a, b) => a - b).join(",") });
  }
  putMentions(raw, id, flags.includes("mentioned"), flags.includes("wildcard_mentioned"));
}

function rawOf(state: State): RawUnreadMessages | undefined {
  return state[RAW_UNREAD_KEY] as RawUnreadMessages | undefined;
}

/** The `message` event's share; apply-events.ts calls it next to the max_message_id update. */
export const applyUnreadMessageEvent: Applier = (state, event, userId) => {
  const raw = rawOf(state);
  if (raw) applyMessage(raw, event, userId);
};

export const UNREAD_APPLIERS: Record<string, Applier> = {
  // Only reading applies, as in Zulip 3.0: the event says too little to file a message marked unread.
  update_message_flags(state, event) {
    const raw = rawOf(state);
    if (!raw || event.flag !== "read" || event.operation !== "add") return;
    if (event.all === true) {
      for (const collection of byMessage(raw)) collection.clear();
    } else {
      for (const id of event.messages as number[]) removeMessage(raw, id);
    }
  },

  delete_message(state, event) {
    const raw = rawOf(state);
    if (!raw) return;
    const ids = Array.isArray(event.message_ids) ? (event.message_ids as number[]) : [event.message_id as number];
    for (const id of ids) removeMessage(raw, id);
  },

  // A topic's new policy reclassifies its unread messages (Zulip leaves them as they were read).
  user_topic(state, event) {
    const raw = rawOf(state);
    if (!raw) return;
    const streamId = event.stream_id as number;
    const key = topicKey(streamId, event.topic_name as string);
    const policy = event.visibility_policy as number;
    if (policy === VisibilityPolicy.INHERIT) raw.topic_policies.delete(key);
    else raw.topic_policies.set(key, policy);
    for (const [id, row] of raw.stream_dict) {
      if (row.stream_id === streamId && topicKey(row.stream_id, row.topic) === key) putStreamMessage(raw, id, row);
    }
  },

  update_message(state, event) {
    const raw = rawOf(state);
    const topic = typeof event.subject === "string" ? event.subject : undefined;
    const streamId = typeof event.new_stream_id === "number" ? event.new_stream_id : undefined;
    if (!raw || (topic === undefined && streamId === undefined)) return;
    for (const id of event.message_ids as number[]) {
      const row = raw.stream_dict.get(id);
      if (row) putStreamMessage(raw, id, { ...row, topic: topic ?? row.topic, stream_id: streamId ?? row.stream_id });
    }
  },
};

/** Python's str order (by code point); `<` compares UTF-16 units, which differs above U+FFFF. */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i].codePointAt(0)! - y[i].codePointAt(0)!;
  }
  return x.length - y.length;
}

const byNumber = (a: number, b: number) => a - b;

/** Message ids grouped by `keyOf` of their rows, each group with its first row (Zulip's aggregate_message_dict). */
function groupRows<Row>(dict: Map<number, Row>, keyOf: (row: Row) => string): Array<{ row: Row; ids: number[]; rows: Row[] }> {
  const groups = new Map<string, { row: Row; ids: number[]; rows: Row[] }>();
  for (const [id, row] of dict) {
    const key = keyOf(row);
    const group = groups.get(key);
    if (group) {
      group.ids.push(id);
      group.rows.push(row);
    } else groups.set(key, { row, ids: [id], rows: [row] });
  }
  for (const group of groups.values()) group.ids.sort(byNumber);
  return [...groups.values()];
}

/** Zulip's aggregate_unread_data. */
export function aggregateUnreadMessages(raw: RawUnreadMessages): UnreadMessages {
  const pms = groupRows(raw.pm_dict, (row) => String(row.sender_id))
    .map(({ row, ids }) => ({ other_user_id: row.sender_id, sender_id: row.sender_id, unread_message_ids: ids }))
    .sort((a, b) => a.sender_id - b.sender_id);
  const streams = groupRows(raw.stream_dict, (row) => `${row.stream_id}:${row.topic}`)
    .map(({ row, ids, rows }) => ({
      stream_id: row.stream_id,
      topic: row.topic,
      unread_message_ids: ids,
      sender_ids: [...new Set(rows.map((r) => r.sender_id))].sort(byNumber),
    }))
    .sort((a, b) => a.stream_id - b.stream_id || compareCodePoints(a.topic, b.topic));
  const huddles = groupRows(raw.huddle_dict, (row) => row.user_ids_string)
    .map(({ row, ids }) => ({ user_ids_string: row.user_ids_string, unread_message_ids: ids }))
    .sort((a, b) => compareCodePoints(a.user_ids_string, b.user_ids_string));
  const isMention = (id: number) => raw.mentions.has(id) || (raw.wildcard_mentions.has(id) && (!raw.stream_dict.has(id) || raw.unmuted_stream_msgs.has(id)));
  const mentions = [...new Set([...raw.mentions, ...raw.wildcard_mentions])].filter(isMention).sort(byNumber);
  return { pms, streams, huddles, mentions, count: raw.pm_dict.size + raw.unmuted_stream_msgs.size + raw.huddle_dict.size, old_unreads_missing: raw.old_unreads_missing };
}

/** Replaces the raw form with what clients get (the unread share of Zulip's post_process_state). */
export function finishUnreadState(state: State): void {
  const raw = rawOf(state);
  if (!raw) return;
  delete state[RAW_UNREAD_KEY];
  state.unread_msgs = aggregateUnreadMessages(raw);
}
