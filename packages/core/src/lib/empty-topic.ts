// The empty topic (Zulip feature levels 334 and 370): a channel message may have the topic "",
// which clients show as the organization's display name for it. Clients that say nothing of it
// (no `empty_topic_name` capability, no `allow_empty_topic_name`) get that name instead of "",
// and a client may name the empty topic by it, or by the "(no topic)" of older clients.

/**
 * What clients show for the empty topic (Zulip's Message.EMPTY_TOPIC_FALLBACK_NAME, untranslated:
 * this server has one language); /register's `realm_empty_topic_display_name`.
 */
export const EMPTY_TOPIC_DISPLAY_NAME = "general chat";

/** The name clients before the empty topic sent for a message without one. */
export const LEGACY_NO_TOPIC = "(no topic)";

/** The two names a request may use for the empty topic (Zulip's maybe_rename_general_chat_to_empty_topic, and feature level 370's "(no topic)"). */
export function emptyTopicFromClient(topic: string): string {
  return topic === EMPTY_TOPIC_DISPLAY_NAME || topic === LEGACY_NO_TOPIC ? "" : topic;
}

/** A stored topic as a client sees it: "" only if the client allows it (Zulip's maybe_rename_empty_topic_to_general_chat). */
export function topicForClient(topic: string, allowEmpty: boolean): string {
  return topic === "" && !allowEmpty ? EMPTY_TOPIC_DISPLAY_NAME : topic;
}

/** A topic a request names a conversation by (a narrow, a topic to mute, read or delete): the display name is the empty topic (Zulip's maybe_rename_general_chat_to_empty_topic). */
export function emptyTopicFromDisplayName(topic: string): string {
  return topic === EMPTY_TOPIC_DISPLAY_NAME ? "" : topic;
}

/** Whether a topic is the empty one or a name for it (Zulip's `topic_name in ("(no topic)", "")`, for mandatory_topics). */
export function isEmptyTopic(topic: string): boolean {
  return emptyTopicFromClient(topic) === "";
}

type Event = { type: string } & Record<string, unknown>;

const shown = (topic: unknown): unknown => (topic === "" ? EMPTY_TOPIC_DISPLAY_NAME : topic);

/**
 * An event as a client without the empty_topic_name capability gets it (feature level 334): the
 * empty topic of a channel message named by its display name. The event itself when nothing
 * changes, so queues of one shape keep sharing it.
 */
export function eventWithEmptyTopicShown(event: Event): Event {
  switch (event.type) {
    case "message": {
      const message = event.message as { type?: string; subject?: unknown };
      return message.type === "stream" && message.subject === "" ? { ...event, message: { ...message, subject: EMPTY_TOPIC_DISPLAY_NAME } } : event;
    }
    case "delete_message":
      return event.message_type === "stream" && event.topic === "" ? { ...event, topic: EMPTY_TOPIC_DISPLAY_NAME } : event;
    case "typing":
      return event.message_type === "stream" && event.topic === "" ? { ...event, topic: EMPTY_TOPIC_DISPLAY_NAME } : event;
    case "update_message":
      // Only a channel message's edit carries stream_id (a direct message's has no topic to show).
      if (event.stream_id === undefined || (event.subject !== "" && event.orig_subject !== "")) return event;
      return {
        ...event,
        ...("subject" in event ? { subject: shown(event.subject) } : {}),
        ...("orig_subject" in event ? { orig_subject: shown(event.orig_subject) } : {}),
      };
    case "user_topic":
      return event.topic_name === "" ? { ...event, topic_name: EMPTY_TOPIC_DISPLAY_NAME } : event;
    case "muted_topics": {
      const muted = event.muted_topics as Array<[string, string, number]>;
      return muted.some((item) => item[1] === "") ? { ...event, muted_topics: muted.map(([stream, topic, at]) => [stream, shown(topic), at]) } : event;
    }
    case "update_message_flags": {
      const details = event.message_details as Record<string, { type: string; topic?: string }> | undefined;
      if (details === undefined || !Object.values(details).some((detail) => detail.type === "stream" && detail.topic === "")) return event;
      const renamed = Object.fromEntries(Object.entries(details).map(([id, detail]) => [id, detail.type === "stream" && detail.topic === "" ? { ...detail, topic: EMPTY_TOPIC_DISPLAY_NAME } : detail]));
      return { ...event, message_details: renamed };
    }
    default:
      return event;
  }
}
