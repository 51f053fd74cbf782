// Realm settings whose encoding Zulip changed after 3.x without a capability of its own. Clients of
// today's API (RegisterOptions.modernClient) get today's encoding, in /register and in `realm`
// events; 3.x clients keep the stored value, which is what they were written for.

/** 3.x's wildcard_mention_policy 4 ("stream administrators"), removed at feature level 133. */
const WILDCARD_MENTION_POLICY_STREAM_ADMINS = 4;
/** Administrators: what 4 is enforced as here (lib/permissions.ts), and what Zulip turned it into. */
const WILDCARD_MENTION_POLICY_ADMINS = 5;

/**
 * Zulip 9.0's integer policies that 3.x did not have (feature levels 56, 75, 85, 101): kept in
 * step with the groups that replaced them in Zulip 10.0, announced for the clients of 4.0 to 9.0
 * that read them; neither 3.x clients nor Zulip 10.0's get them (REMOVED_REALM_PROPERTIES).
 */
export const MODERN_REALM_POLICIES = ["edit_topic_policy", "move_messages_between_streams_policy", "delete_own_message_policy", "add_custom_emoji_policy"] as const;

/** Zulip 9.0's time limits for moving messages (feature level 162), sent only to clients of today's API. */
export const MODERN_REALM_LIMITS = ["move_messages_within_stream_limit_seconds", "move_messages_between_streams_limit_seconds"] as const;

/**
 * The integer policies Zulip 10.0 took out of PATCH /realm and `realm` events (feature levels 280
 * to 352), each replaced by a group setting: clients of today's API get no event for them; 3.x
 * clients still do for those they read.
 */
export const REMOVED_REALM_PROPERTIES: ReadonlySet<string> = new Set([
  "create_web_public_stream_policy",
  "delete_own_message_policy",
  "user_group_edit_policy",
  "add_custom_emoji_policy",
  "move_messages_between_streams_policy",
  "edit_topic_policy",
  "invite_to_realm_policy",
  "invite_to_stream_policy",
  "bot_creation_policy",
  "wildcard_mention_policy",
]);

/**
 * Of those, the ones Zulip 10.0's /register no longer has; the rest (user_group_edit_policy,
 * wildcard_mention_policy, and the stream-creation policies) it still sends, deprecated, as the
 * superset that best approximates the group (permissions.ts's legacyRealmPolicies).
 */
export const REMOVED_REGISTER_POLICIES = [
  "delete_own_message_policy",
  "add_custom_emoji_policy",
  "move_messages_between_streams_policy",
  "edit_topic_policy",
  "invite_to_realm_policy",
  "invite_to_stream_policy",
  "bot_creation_policy",
] as const;

/** A stored realm setting as today's Zulip encodes it. */
export function modernRealmValue(property: string, value: unknown): unknown {
  switch (property) {
    // 0 meant "no limit" in 3.x; null does since feature levels 100 (delete) and 138 (edit).
    case "message_content_edit_limit_seconds":
    case "message_content_delete_limit_seconds":
      return value === 0 ? null : value;
    case "wildcard_mention_policy":
      return value === WILDCARD_MENTION_POLICY_STREAM_ADMINS ? WILDCARD_MENTION_POLICY_ADMINS : value;
    // Unlimited retention is -1 since feature level 22 (null, the 3.x encoding, now means "the server's default").
    case "message_retention_days":
      return value === null ? -1 : value;
    default:
      return value;
  }
}

/** Settings Zulip renamed at feature level 241: today's clients know them by the new names only. */
export const RENAMED_REALM_SETTINGS: Record<string, string> = {
  notifications_stream_id: "new_stream_announcements_stream_id",
  signup_notifications_stream_id: "signup_announcements_stream_id",
};

/**
 * A `realm` update or update_dict event with its values in today's encoding, or null when it only
 * carries properties Zulip 10.0 removed.
 */
export function modernRealmEvent<E extends Record<string, unknown>>(event: E): E | null {
  if (event.op === "update" && typeof event.property === "string") {
    if (REMOVED_REALM_PROPERTIES.has(event.property)) return null;
    const value = modernRealmValue(event.property, event.value);
    const property = RENAMED_REALM_SETTINGS[event.property] ?? event.property;
    return value === event.value && property === event.property ? event : { ...event, property, value };
  }
  if (event.op === "update_dict" && typeof event.data === "object" && event.data !== null) {
    const entries = Object.entries(event.data as Record<string, unknown>).filter(([key]) => !REMOVED_REALM_PROPERTIES.has(key));
    if (entries.length === 0) return null;
    const data = Object.fromEntries(entries.map(([key, value]) => [key, modernRealmValue(key, value)]));
    return { ...event, data };
  }
  return event;
}
