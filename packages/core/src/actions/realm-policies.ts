// PATCH /realm's integer permission policies (lib/permissions.ts): their values checked, and Zulip
// 3.x's booleans kept in step with the policies that replaced them, whichever a client sets. A
// 3.x client's boolean sets the policy that does what the boolean did; a policy sets the boolean
// 3.x clients read, as closely as a boolean can say it. Each change is announced in its own
// `realm update` event (3.x clients ignore the policies' properties, and today's clients the
// booleans' they do not read).
import { badRequest } from "../errors.ts";
import type { Realm } from "../models.ts";
import { MODERN_REALM_POLICIES } from "../lib/modern-realm-settings.ts";
import { POLICY_ADMINS, POLICY_EVERYONE, POLICY_MEMBERS, POLICY_MODERATORS, INTEGER_POLICY_VALUES } from "../lib/permissions.ts";

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

/** The policies announced as one `realm update` each (the 3.x booleans go as they always did). */
export const POLICY_PROPERTIES = MODERN_REALM_POLICIES;

interface LegacyPair {
  policy: "edit_topic_policy" | "delete_own_message_policy" | "add_custom_emoji_policy";
  legacy: "allow_community_topic_editing" | "allow_message_deleting" | "add_emoji_by_admins_only";
  /** The policy that does what the 3.x boolean did. */
  fromLegacy: (value: boolean) => number;
  /** The 3.x boolean a policy reads as. */
  toLegacy: (policy: number) => boolean;
}

const LEGACY_PAIRS: LegacyPair[] = [
  // 3.x: anyone (guests too) retitled others' messages, else administrators only (Zulip's migration for feature level 75).
  { policy: "edit_topic_policy", legacy: "allow_community_topic_editing", fromLegacy: (v) => (v ? POLICY_EVERYONE : POLICY_ADMINS), toLegacy: (p) => p === POLICY_EVERYONE },
  // 3.x: any sender deleted their own messages, else administrators only.
  { policy: "delete_own_message_policy", legacy: "allow_message_deleting", fromLegacy: (v) => (v ? POLICY_EVERYONE : POLICY_ADMINS), toLegacy: (p) => p !== POLICY_ADMINS },
  // 3.x: members added emoji, else administrators only; moderators-only reads as "not members".
  { policy: "add_custom_emoji_policy", legacy: "add_emoji_by_admins_only", fromLegacy: (v) => (v ? POLICY_ADMINS : POLICY_MEMBERS), toLegacy: (p) => p === POLICY_ADMINS || p === POLICY_MODERATORS },
];

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
 * The changes with each 3.x boolean and its policy in step: a policy given sets its boolean; a
 * boolean given (without its policy) sets the policy only when it says something else than the
 * stored policy already does, so a 3.x client saving its form keeps a finer policy set since.
 */
export function withLegacyPairs<C extends RealmPolicyChanges>(realm: Realm, changes: C): C {
  const synced: C = { ...changes };
  for (const pair of LEGACY_PAIRS) {
    const policy = changes[pair.policy];
    const legacy = changes[pair.legacy];
    if (policy !== undefined) {
      synced[pair.legacy] = pair.toLegacy(policy);
    } else if (legacy !== undefined && legacy !== pair.toLegacy(realm[pair.policy])) {
      synced[pair.policy] = pair.fromLegacy(legacy);
    }
  }
  return synced;
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
