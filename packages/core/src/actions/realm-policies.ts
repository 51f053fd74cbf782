// PATCH /realm's integer permission policies and 3.x booleans (lib/permissions.ts): their values
// checked here. Since Zulip 10.0 each is only a shorthand for the group setting that replaced it;
// actions/realm-group-settings.ts applies it, and keeps every policy and boolean in step with the
// groups, announced to the clients that read it.
import { badRequest } from "../errors.ts";
import { INTEGER_POLICY_VALUES } from "../lib/permissions.ts";

export interface RealmPolicyChanges {
  create_stream_policy?: number;
  invite_to_stream_policy?: number;
  user_group_edit_policy?: number;
  wildcard_mention_policy?: number;
  bot_creation_policy?: number;
  edit_topic_policy?: number;
  move_messages_between_streams_policy?: number;
  delete_own_message_policy?: number;
  add_custom_emoji_policy?: number;
  allow_community_topic_editing?: boolean;
  allow_message_deleting?: boolean;
  add_emoji_by_admins_only?: boolean;
  /** Seconds, or null for no limit ("unlimited"). */
  move_messages_within_stream_limit_seconds?: number | null;
  move_messages_between_streams_limit_seconds?: number | null;
}

/** Refuses a value a policy does not take, or a time limit that is not a positive number of seconds. */
export function checkPolicyChanges(changes: RealmPolicyChanges): void {
  for (const [property, values] of Object.entries(INTEGER_POLICY_VALUES)) {
    const value = (changes as Record<string, unknown>)[property];
    if (value !== undefined && !values.includes(value as number)) throw badRequest(`Invalid ${property}`);
  }
  for (const property of ["move_messages_within_stream_limit_seconds", "move_messages_between_streams_limit_seconds"] as const) {
    const value = changes[property];
    if (typeof value === "number" && value <= 0) throw badRequest(`Bad value for '${property}': ${value}`);
  }
}

/**
 * A time-limit parameter as Zulip's parse_message_time_limit_setting reads it: seconds, or
 * "unlimited" for none (null). The route's parser; its value is checked by checkPolicyChanges.
 */
export function parseTimeLimit(raw: string, name: string): number | null {
  const value = raw.trim().replace(/^"(.*)"$/, "$1");
  if (value === "unlimited") return null;
  if (!/^-?\d{1,10}$/.test(value) || Math.abs(Number(value)) > 2_147_483_647) throw badRequest(`Bad value for '${name}': ${raw}`);
  return Number(value);
}
