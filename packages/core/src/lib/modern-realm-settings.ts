// Realm settings whose encoding Zulip changed after 3.x without a capability of its own. Clients of
// today's API (RegisterOptions.modernClient) get today's encoding, in /register and in `realm`
// events; 3.x clients keep the stored value, which is what they were written for.

/** 3.x's wildcard_mention_policy 4 ("stream administrators"), removed at feature level 133. */
const WILDCARD_MENTION_POLICY_STREAM_ADMINS = 4;
/** Administrators: what 4 is enforced as here (lib/permissions.ts), and what Zulip turned it into. */
const WILDCARD_MENTION_POLICY_ADMINS = 5;

/** delete_own_message_policy (feature level 101): 5 everyone, guests too; 2 administrators only. */
const DELETE_OWN_MESSAGE_POLICY_EVERYONE = 5;
const DELETE_OWN_MESSAGE_POLICY_ADMINS = 2;

/**
 * 3.x's allow_message_deleting as the policy that replaced it, saying what message-delete.ts
 * enforces: when allowed any sender (guests too) deletes their own messages, else only
 * administrators, who delete anything anyway.
 */
export function deleteOwnMessagePolicy(allowMessageDeleting: boolean): number {
  return allowMessageDeleting ? DELETE_OWN_MESSAGE_POLICY_EVERYONE : DELETE_OWN_MESSAGE_POLICY_ADMINS;
}

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

/** A `realm` update or update_dict event with its values in today's encoding. */
export function modernRealmEvent<E extends Record<string, unknown>>(event: E): E {
  // The policy is what clients of today's API read; the event says it changed along with 3.x's setting.
  if (event.op === "update" && event.property === "allow_message_deleting" && typeof event.value === "boolean") {
    const { value: _value, ...rest } = event;
    const data = { allow_message_deleting: event.value, delete_own_message_policy: deleteOwnMessagePolicy(event.value) };
    return { ...rest, op: "update_dict", property: "default", data } as unknown as E;
  }
  if (event.op === "update" && typeof event.property === "string") {
    const value = modernRealmValue(event.property, event.value);
    return value === event.value ? event : { ...event, value };
  }
  if (event.op === "update_dict" && typeof event.data === "object" && event.data !== null) {
    const data = Object.fromEntries(Object.entries(event.data as Record<string, unknown>).map(([key, value]) => [key, modernRealmValue(key, value)]));
    return { ...event, data };
  }
  return event;
}
