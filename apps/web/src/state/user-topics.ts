// Per-topic visibility policies (muted, unmuted in a muted stream, followed): user_topics of
// /register, then user_topic events.
import { computed, signal } from "@preact/signals";
import { onEvent, onRegister } from "./events";
import { subscriptionsById } from "./store";

export const TopicPolicy = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;
export type TopicPolicyValue = (typeof TopicPolicy)[keyof typeof TopicPolicy];

function key(streamId: number, topic: string): string {
  // Topic names compare case-insensitively, as the server's.
  return `${streamId}\u0000${topic.toLowerCase()}`;
}

/** Policy by stream id and lower-cased topic. */
export const userTopics = signal<ReadonlyMap<string, TopicPolicyValue>>(new Map());

export function topicPolicy(streamId: number, topic: string): TopicPolicyValue {
  return userTopics.value.get(key(streamId, topic)) ?? TopicPolicy.inherit;
}

export function isStreamMuted(streamId: number): boolean {
  return subscriptionsById.value.get(streamId)?.is_muted ?? false;
}

/** Whether the topic's messages are hidden from the combined feed and its unread counts (Zulip's rule). */
export function isTopicMuted(streamId: number, topic: string): boolean {
  const policy = topicPolicy(streamId, topic);
  if (policy === TopicPolicy.muted) return true;
  if (policy === TopicPolicy.unmuted || policy === TopicPolicy.followed) return false;
  return isStreamMuted(streamId);
}

export function isTopicFollowed(streamId: number, topic: string): boolean {
  return topicPolicy(streamId, topic) === TopicPolicy.followed;
}

/** Recomputed whenever the policies or stream mutes change: for computed counts that depend on them. */
export const mutingVersion = computed(() => [userTopics.value, subscriptionsById.value] as const);

onRegister((state) => {
  const map = new Map<string, TopicPolicyValue>();
  for (const entry of state.user_topics ?? []) map.set(key(entry.stream_id, entry.topic_name), entry.visibility_policy);
  userTopics.value = map;
});

onEvent("user_topic", (event) => {
  const next = new Map(userTopics.value);
  if (event.visibility_policy === TopicPolicy.inherit) next.delete(key(event.stream_id, event.topic_name));
  else next.set(key(event.stream_id, event.topic_name), event.visibility_policy);
  userTopics.value = next;
});
