// An empty raw unread state (what /register keeps while events apply), for tests of the appliers.
import type { RawUnreadMessages } from "../../packages/core/src/state/unread-state.ts";

export function emptyRawUnread(options: { mutedStreamIds?: number[]; topicPolicies?: Array<[string, number]> } = {}): RawUnreadMessages {
  return {
    pm_dict: new Map(),
    stream_dict: new Map(),
    huddle_dict: new Map(),
    unmuted_stream_msgs: new Set(),
    mentions: new Set(),
    wildcard_mentions: new Set(),
    muted_stream_ids: new Set(options.mutedStreamIds ?? []),
    topic_policies: new Map(options.topicPolicies ?? []),
    old_unreads_missing: false,
  };
}
