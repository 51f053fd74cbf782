// /register's `user_topics` kept current by `user_topic` events (Zulip's apply_event for them).
import { VisibilityPolicy, type UserTopicItem } from "../queries/user-topics.ts";

/**
 * Puts the event's policy in the list: INHERIT removes the topic's item, another policy replaces it
 * in place or is appended, as a fresh read orders rows by when they were made. Topics match
 * without case, as their rows do (Zulip appends a second item on a change; a fresh read has one).
 */
export function applyUserTopicEvent(list: UserTopicItem[], event: Record<string, unknown>): void {
  const streamId = event.stream_id as number;
  const topic = (event.topic_name as string).toLowerCase();
  const index = list.findIndex((item) => item.stream_id === streamId && item.topic_name.toLowerCase() === topic);
  const policy = event.visibility_policy as number;
  if (policy === VisibilityPolicy.INHERIT) {
    if (index !== -1) list.splice(index, 1);
    return;
  }
  const item: UserTopicItem = { stream_id: streamId, topic_name: event.topic_name as string, last_updated: event.last_updated as number, visibility_policy: policy };
  if (index === -1) list.push(item);
  else list[index] = item;
}
