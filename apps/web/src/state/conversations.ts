// Conversations for the sidebar: each stream's topics (fetched when the stream is opened, then
// kept current by messages and moves) and the recent direct-message conversations (from
// /register, then messages). Also the starred messages' count.
import { signal } from "@preact/signals";
import { api } from "../api/client";
import { dmKey, dmUserIds } from "../narrow";
import { onEvent, onRegister } from "./events";
import { myUserId } from "./store";

export interface TopicEntry {
  name: string;
  maxId: number;
}

/** Stream id → its topics, newest first; absent until fetched. */
export const topicsByStream = signal<ReadonlyMap<number, readonly TopicEntry[]>>(new Map());
const fetching = new Set<number>();

function setTopics(streamId: number, topics: TopicEntry[]): void {
  const next = new Map(topicsByStream.value);
  next.set(streamId, topics.sort((a, b) => b.maxId - a.maxId));
  topicsByStream.value = next;
}

export async function loadTopics(streamId: number): Promise<void> {
  if (fetching.has(streamId) || topicsByStream.value.has(streamId)) return;
  fetching.add(streamId);
  try {
    const answer = await api.get("/users/me/{stream_id}/topics", { stream_id: streamId });
    setTopics(streamId, (answer.topics ?? []).map((topic) => ({ name: topic.name, maxId: topic.max_id })));
  } catch {
    // Shown without topics; opening the stream again retries.
  } finally {
    fetching.delete(streamId);
  }
}

function noteTopic(streamId: number, name: string, id: number): void {
  const topics = topicsByStream.value.get(streamId);
  if (!topics) return;
  const lower = name.toLowerCase();
  const rest = topics.filter((topic) => topic.name.toLowerCase() !== lower);
  const existing = topics.find((topic) => topic.name.toLowerCase() === lower);
  setTopics(streamId, [...rest, { name: existing?.name ?? name, maxId: Math.max(id, existing?.maxId ?? 0) }]);
}

export interface DmConversation {
  /** Other users' ids, comma-joined (my own id alone for notes to self). */
  key: string;
  userIds: number[];
  maxId: number;
}
export const recentDms = signal<readonly DmConversation[]>([]);

function noteDm(userIds: number[], id: number): void {
  const key = dmKey(userIds, myUserId.value);
  const rest = recentDms.value.filter((conversation) => conversation.key !== key);
  recentDms.value = [{ key, userIds: key.split(",").map(Number), maxId: id }, ...rest].sort((a, b) => b.maxId - a.maxId);
}

export const starredIds = signal<ReadonlySet<number>>(new Set());

onRegister((state, reconnect) => {
  recentDms.value = (state.recent_private_conversations ?? [])
    .map((conversation) => {
      const key = dmKey(conversation.user_ids, state.user_id ?? 0);
      return { key, userIds: key.split(",").map(Number), maxId: conversation.max_message_id };
    })
    .sort((a, b) => b.maxId - a.maxId);
  starredIds.value = new Set(state.starred_messages ?? []);
  // Topics may have changed while the queue was lost: fetch again when next shown.
  if (reconnect) topicsByStream.value = new Map();
});

onEvent("message", ({ message }) => {
  if (message.type === "stream") noteTopic(message.stream_id ?? 0, message.subject, message.id);
  else noteDm(dmUserIds(message), message.id);
});

onEvent("update_message", (event) => {
  if (event.subject === undefined && event.new_stream_id === undefined) return;
  // A move: refetch both streams' topics rather than guess which topics are left empty.
  const next = new Map(topicsByStream.value);
  if (event.stream_id !== undefined) next.delete(event.stream_id);
  if (event.new_stream_id !== undefined) next.delete(event.new_stream_id);
  topicsByStream.value = next;
});

onEvent("delete_message", (event) => {
  if (event.stream_id === undefined) return;
  const next = new Map(topicsByStream.value);
  next.delete(event.stream_id);
  topicsByStream.value = next;
});

onEvent("update_message_flags", (event) => {
  if (event.flag !== "starred") return;
  const next = new Set(starredIds.value);
  for (const id of event.messages) {
    if (event.op === "add") next.add(id);
    else next.delete(id);
  }
  if (event.op === "remove" && event.all) next.clear();
  starredIds.value = next;
});
