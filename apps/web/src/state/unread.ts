// Unread messages: unread_msgs of /register (by stream and topic, by DM conversation, mentions),
// then message, flag, delete and move events. The sets are plain mutable maps (tens of thousands of
// ids are common); `unreadVersion` is the signal that tells readers they changed.
import { computed, effect, signal } from "@preact/signals";
import { dmKey, dmUserIds } from "../narrow";
import { onEvent, onRegister } from "./events";
import { myUserId, realmName, type Message } from "./store";
import { isTopicMuted, mutingVersion } from "./user-topics";

type Where = { kind: "stream"; streamId: number; topic: string } | { kind: "dm"; key: string };

const byMessage = new Map<number, Where>();
/** stream id → lower-cased topic → { name as first seen, unread ids }. */
const streams = new Map<number, Map<string, { name: string; ids: Set<number> }>>();
/** DM conversation key (the other users' ids, sorted, comma-joined) → unread ids. */
const dms = new Map<string, Set<number>>();
const mentions = new Set<number>();

/** Bumped on every change of the sets above. */
export const unreadVersion = signal(0);
function changed(): void {
  unreadVersion.value++;
}

function addStream(id: number, streamId: number, topic: string): void {
  byMessage.set(id, { kind: "stream", streamId, topic });
  let topics = streams.get(streamId);
  if (!topics) streams.set(streamId, (topics = new Map()));
  const lower = topic.toLowerCase();
  let entry = topics.get(lower);
  if (!entry) topics.set(lower, (entry = { name: topic, ids: new Set() }));
  entry.ids.add(id);
}

function addDm(id: number, key: string): void {
  byMessage.set(id, { kind: "dm", key });
  let set = dms.get(key);
  if (!set) dms.set(key, (set = new Set()));
  set.add(id);
}

function remove(id: number): void {
  const where = byMessage.get(id);
  mentions.delete(id);
  if (!where) return;
  byMessage.delete(id);
  if (where.kind === "stream") {
    const topics = streams.get(where.streamId);
    const lower = where.topic.toLowerCase();
    const entry = topics?.get(lower);
    entry?.ids.delete(id);
    if (entry && entry.ids.size === 0) topics!.delete(lower);
    if (topics && topics.size === 0) streams.delete(where.streamId);
  } else {
    const set = dms.get(where.key);
    set?.delete(id);
    if (set && set.size === 0) dms.delete(where.key);
  }
}

function clear(): void {
  byMessage.clear();
  streams.clear();
  dms.clear();
  mentions.clear();
}

const MENTION_FLAGS = ["mentioned", "wildcard_mentioned", "topic_wildcard_mentioned"];

/** Records a message as unread if its flags say so (messages of GET /messages and of events). */
export function noteMessage(message: Message, flags: readonly string[] = message.flags ?? []): void {
  if (flags.includes("read") || byMessage.has(message.id)) return;
  if (message.type === "stream") addStream(message.id, message.stream_id ?? 0, message.subject);
  else addDm(message.id, dmKey(dmUserIds(message), myUserId.value));
  if (flags.some((flag) => MENTION_FLAGS.includes(flag))) mentions.add(message.id);
  changed();
}

onRegister((state) => {
  clear();
  const unread = state.unread_msgs;
  if (unread) {
    for (const entry of unread.streams) for (const id of entry.unread_message_ids) addStream(id, entry.stream_id, entry.topic);
    for (const entry of unread.pms) for (const id of entry.unread_message_ids) addDm(id, String(entry.other_user_id));
    for (const entry of unread.huddles) {
      const key = dmKey(entry.user_ids_string.split(",").map(Number), state.user_id ?? 0);
      for (const id of entry.unread_message_ids) addDm(id, key);
    }
    for (const id of unread.mentions) if (byMessage.has(id)) mentions.add(id);
  }
  changed();
});

onEvent("message", (event) => noteMessage(event.message, event.flags));

onEvent("update_message_flags", (event) => {
  if (event.flag !== "read") return;
  if (event.op === "add") {
    if (event.all) clear();
    else for (const id of event.messages) remove(id);
  } else {
    // Marked unread again: where each message is comes with the event.
    for (const id of event.messages) {
      const details = event.message_details?.[String(id)];
      if (!details || byMessage.has(id)) continue;
      if (details.type === "stream" && details.stream_id !== undefined) addStream(id, details.stream_id, details.topic ?? "");
      else if (details.type === "private") addDm(id, dmKey(details.user_ids ?? [], myUserId.value));
      if (details.mentioned) mentions.add(id);
    }
  }
  changed();
});

onEvent("delete_message", (event) => {
  const ids = event.message_ids ?? (event.message_id !== undefined ? [event.message_id] : []);
  for (const id of ids) remove(id);
  changed();
});

onEvent("update_message", (event) => {
  let touched = false;
  // A content edit can add or remove a mention.
  if (event.content !== undefined && byMessage.has(event.message_id)) {
    if (event.flags.some((flag) => MENTION_FLAGS.includes(flag))) mentions.add(event.message_id);
    else mentions.delete(event.message_id);
    touched = true;
  }
  if (event.new_stream_id !== undefined || event.subject !== undefined) {
    for (const id of event.message_ids) {
      const where = byMessage.get(id);
      if (!where || where.kind !== "stream") continue;
      const mentioned = mentions.has(id);
      remove(id);
      addStream(id, event.new_stream_id ?? where.streamId, event.subject ?? where.topic);
      if (mentioned) mentions.add(id);
      touched = true;
    }
  }
  if (touched) changed();
});

/** Drops ids at once when the client marks them read (the server's event confirms it later). */
export function markReadLocally(ids: Iterable<number>): void {
  let touched = false;
  for (const id of ids) {
    if (!byMessage.has(id)) continue;
    remove(id);
    touched = true;
  }
  if (touched) changed();
}

// ---------------------------------------------------------------------------------------------
// Reading.

export function isUnread(messageId: number): boolean {
  return byMessage.has(messageId);
}

/** Unread ids in a topic, in a stream, or of a DM conversation (for "mark as read" of a whole view). */
export function unreadIdsOf(where: { streamId: number; topic?: string } | { dmKey: string }): number[] {
  if ("dmKey" in where) return [...(dms.get(where.dmKey) ?? [])];
  const topics = streams.get(where.streamId);
  if (!topics) return [];
  if (where.topic !== undefined) return [...(topics.get(where.topic.toLowerCase())?.ids ?? [])];
  return [...topics.values()].flatMap((entry) => [...entry.ids]);
}

export interface UnreadCounts {
  /** Stream id → unread in its unmuted topics (what the sidebar shows). */
  streams: Map<number, number>;
  /** Stream id → unread in its muted topics (shown greyed when the stream has nothing else). */
  mutedStreams: Map<number, number>;
  /** `${streamId}\0${lower topic}` → { topic name, count, whether it mentions me }. */
  topics: Map<string, { streamId: number; topic: string; count: number; mentions: number }>;
  /** DM conversation key → count. */
  dms: Map<string, number>;
  /** What the combined feed counts: unmuted stream messages and every DM. */
  home: number;
  dmTotal: number;
  mentions: number;
}

export const unreadCounts = computed<UnreadCounts>(() => {
  void unreadVersion.value;
  void mutingVersion.value;
  const result: UnreadCounts = { streams: new Map(), mutedStreams: new Map(), topics: new Map(), dms: new Map(), home: 0, dmTotal: 0, mentions: 0 };
  for (const [streamId, topics] of streams) {
    let count = 0;
    let muted = 0;
    for (const [lower, entry] of topics) {
      let topicMentions = 0;
      for (const id of entry.ids) if (mentions.has(id)) topicMentions++;
      result.topics.set(`${streamId}\u0000${lower}`, { streamId, topic: entry.name, count: entry.ids.size, mentions: topicMentions });
      if (isTopicMuted(streamId, entry.name)) muted += entry.ids.size;
      else count += entry.ids.size;
    }
    result.streams.set(streamId, count);
    result.mutedStreams.set(streamId, muted);
    result.home += count;
  }
  for (const [key, set] of dms) {
    result.dms.set(key, set.size);
    result.dmTotal += set.size;
  }
  result.home += result.dmTotal;
  // Mentions count even in muted topics, as Zulip's.
  result.mentions = mentions.size;
  return result;
});

export function topicUnreadCount(streamId: number, topic: string): number {
  return unreadCounts.value.topics.get(`${streamId}\u0000${topic.toLowerCase()}`)?.count ?? 0;
}

/**
 * The unread topics in sidebar order (stream by name, then topic by its oldest unread), for `n`.
 * Muted topics are skipped.
 */
export function unreadTopicsInOrder(streamOrder: readonly number[]): Array<{ streamId: number; topic: string }> {
  void unreadVersion.value;
  const list: Array<{ streamId: number; topic: string }> = [];
  for (const streamId of streamOrder) {
    const topics = streams.get(streamId);
    if (!topics) continue;
    const entries = [...topics.values()].filter((entry) => !isTopicMuted(streamId, entry.name));
    entries.sort((a, b) => Math.min(...a.ids) - Math.min(...b.ids));
    for (const entry of entries) list.push({ streamId, topic: entry.name });
  }
  return list;
}

// The tab title: "(N) Realm name" with N unread in the combined feed.
if (typeof document !== "undefined") {
  effect(() => {
    const count = unreadCounts.value.home;
    document.title = count > 0 ? `(${count}) ${realmName.value}` : realmName.value;
  });
}
