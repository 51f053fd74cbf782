// Realm policies as Zulip 9.0 (feature level 277) encoded them as integers (Realm.POLICY_*): 1
// members, 2 administrators, 3 full members (members past the realm's waiting period), 4
// moderators, 5 everyone (guests too), 6 nobody, 7 owners. Each policy takes only some of these
// (INTEGER_POLICY_VALUES below). Zulip 10.0 decides every one of them by a group setting
// (lib/group-permissions.ts): the integers are now only what older clients read and may still send,
// derived from the groups (legacyRealmPolicies) and mapped onto them (policyGroupName).
import type { Actor } from "../models.ts";
import { isAdmin, isGuest, isModeratorOrAbove, isOwner, type HasRole } from "./roles.ts";

export const POLICY_MEMBERS = 1;
export const POLICY_ADMINS = 2;
export const POLICY_FULL_MEMBERS = 3;
export const POLICY_MODERATORS = 4;
export const POLICY_EVERYONE = 5;
export const POLICY_NOBODY = 6;
export const POLICY_OWNERS = 7;

/** Zulip's COMMON_POLICY_TYPES. */
export const POLICIES = [POLICY_MEMBERS, POLICY_ADMINS, POLICY_FULL_MEMBERS, POLICY_MODERATORS];
/** Zulip's COMMON_MESSAGE_POLICY_TYPES (delete_own_message_policy). */
const MESSAGE_POLICIES = [...POLICIES, POLICY_EVERYONE];
/** Zulip's EDIT_TOPIC_POLICY_TYPES (feature levels 75 and 159). */
const EDIT_TOPIC_POLICIES = [...POLICIES, POLICY_EVERYONE, POLICY_NOBODY];
/** Zulip's MOVE_MESSAGES_BETWEEN_STREAMS_POLICY_TYPES (feature levels 56 and 159). */
const MOVE_BETWEEN_STREAMS_POLICIES = [...POLICIES, POLICY_NOBODY];

/** realm.wildcard_mention_policy (Zulip's WILDCARD_MENTION_POLICY_*); 4 is 3.x's, kept for 3.x clients. */
export const WILDCARD_MENTION_POLICY = { EVERYONE: 1, MEMBERS: 2, FULL_MEMBERS: 3, STREAM_ADMINS: 4, ADMINS: 5, NOBODY: 6, MODERATORS: 7 } as const;

/** The values PATCH /realm takes for each integer policy (Zulip's Realm.property_types). */
export const INTEGER_POLICY_VALUES: Record<string, number[]> = {
  // 3.x's single stream-creation policy (3.x's values): 9.0's creation settings are the groups it
  // sets (actions/realm-group-settings.ts).
  create_stream_policy: [POLICY_MEMBERS, POLICY_ADMINS, POLICY_FULL_MEMBERS],
  invite_to_stream_policy: POLICIES,
  user_group_edit_policy: POLICIES,
  add_custom_emoji_policy: POLICIES,
  delete_own_message_policy: MESSAGE_POLICIES,
  edit_topic_policy: EDIT_TOPIC_POLICIES,
  move_messages_between_streams_policy: MOVE_BETWEEN_STREAMS_POLICIES,
  wildcard_mention_policy: Object.values(WILDCARD_MENTION_POLICY),
  // Zulip's BOT_CREATION_POLICY_TYPES: 1 everyone, 2 limit generic bots, 3 administrators only.
  bot_creation_policy: [1, 2, 3],
};

/** A realm member past the waiting period; moderators and above always are (Zulip's is_provisional_member). */
export function isFullMember(actor: Actor): boolean {
  if (isGuest(actor)) return false;
  if (isModeratorOrAbove(actor)) return true;
  const days = (Date.now() - actor.date_joined.getTime()) / 86_400_000;
  return days >= actor.realm.waiting_period_threshold;
}

/** Zulip's UserProfile.has_permission for an integer policy's value. */
export function policyAllows(actor: Actor, policy: number): boolean {
  if (policy === POLICY_NOBODY) return false;
  if (policy === POLICY_EVERYONE) return true;
  if (isOwner(actor)) return true;
  if (policy === POLICY_OWNERS) return false;
  if (isAdmin(actor)) return true;
  if (policy === POLICY_ADMINS) return false;
  if (isModeratorOrAbove(actor)) return true;
  if (policy === POLICY_MODERATORS) return false;
  if (isGuest(actor)) return false;
  if (policy === POLICY_MEMBERS) return true;
  return isFullMember(actor);
}

/** Administrators and moderators are not held to the realm's time limits for moving messages. */
export const exemptFromMoveTimeLimits = (actor: HasRole): boolean => isModeratorOrAbove(actor);

/** Streams with at most this many subscribers take wildcard mentions from anyone (Zulip's Realm.WILDCARD_MENTION_THRESHOLD). */
export const WILDCARD_MENTION_THRESHOLD = 15;

/** stream.stream_post_policy (Zulip's STREAM_POST_POLICY_*). */
export const STREAM_POST_POLICY = { EVERYONE: 1, ADMINS: 2, RESTRICT_NEW_MEMBERS: 3, MODERATORS: 4 } as const;
export const STREAM_POST_POLICIES: readonly number[] = Object.values(STREAM_POST_POLICY);

/**
 * Zulip's check_stream_access_based_on_stream_post_policy: the refusal's message, or null when
 * the sender may post to a stream of this policy.
 */
export function streamPostRefusal(sender: Actor, policy: number): string | null {
  if (isAdmin(sender)) return null;
  if (policy === STREAM_POST_POLICY.ADMINS) return "Only organization administrators can send to this channel.";
  if (policy === STREAM_POST_POLICY.MODERATORS && !isModeratorOrAbove(sender)) return "Only organization administrators and moderators can send to this channel.";
  if (policy !== STREAM_POST_POLICY.EVERYONE && isGuest(sender)) return "Guests cannot send to this channel.";
  if (policy === STREAM_POST_POLICY.RESTRICT_NEW_MEMBERS && !isFullMember(sender)) return "New members cannot send to this channel.";
  return null;
}

/** The system groups from the smallest to the largest: each is a subgroup of the next. */
const ROLE_CHAIN = ["role:nobody", "role:owners", "role:administrators", "role:moderators", "role:fullmembers", "role:members", "role:everyone"] as const;
type ChainGroup = (typeof ROLE_CHAIN)[number];

/** Realm.SYSTEM_GROUPS_ENUM_MAP: the group each common policy value names. */
const POLICY_GROUPS: Record<number, ChainGroup> = {
  [POLICY_MEMBERS]: "role:members",
  [POLICY_ADMINS]: "role:administrators",
  [POLICY_FULL_MEMBERS]: "role:fullmembers",
  [POLICY_MODERATORS]: "role:moderators",
  [POLICY_EVERYONE]: "role:everyone",
  [POLICY_NOBODY]: "role:nobody",
  [POLICY_OWNERS]: "role:owners",
};
/** wildcard_mention_policy's own values (3.x's 4, stream administrators, enforced as administrators). */
const WILDCARD_POLICY_GROUPS: Record<number, ChainGroup> = {
  [WILDCARD_MENTION_POLICY.EVERYONE]: "role:everyone",
  [WILDCARD_MENTION_POLICY.MEMBERS]: "role:members",
  [WILDCARD_MENTION_POLICY.FULL_MEMBERS]: "role:fullmembers",
  [WILDCARD_MENTION_POLICY.STREAM_ADMINS]: "role:administrators",
  [WILDCARD_MENTION_POLICY.ADMINS]: "role:administrators",
  [WILDCARD_MENTION_POLICY.NOBODY]: "role:nobody",
  [WILDCARD_MENTION_POLICY.MODERATORS]: "role:moderators",
};

/** The system group an integer policy's value names (the group PATCH /realm sets for a client that sends the integer). */
export function policyGroupName(property: string, value: number): ChainGroup | undefined {
  return property === "wildcard_mention_policy" ? WILDCARD_POLICY_GROUPS[value] : POLICY_GROUPS[value];
}

/**
 * Zulip's get_corresponding_policy_value_for_group_setting, as a superset: the value of the
 * smallest group the policy can name that holds everyone the setting's group does. A group that is
 * not a system group (a named or anonymous one) may hold anyone: the largest value the policy takes.
 */
function supersetPolicy(groupName: string | null, values: number[], groups: Record<number, ChainGroup>): number {
  const name = groupName === "role:internet" ? "role:everyone" : groupName;
  const index = name === null ? -1 : ROLE_CHAIN.indexOf(name as ChainGroup);
  const valueOf = (group: ChainGroup) => values.find((v) => groups[v] === group);
  if (index >= 0) {
    for (const group of ROLE_CHAIN.slice(index)) {
      const value = valueOf(group);
      if (value !== undefined) return value;
    }
  }
  for (const group of [...ROLE_CHAIN].reverse()) {
    const value = valueOf(group);
    if (value !== undefined) return value;
  }
  return values[0];
}

/** Zulip's CREATE_WEB_PUBLIC_STREAM_POLICY_TYPES: administrators, moderators, nobody, owners. */
const CREATE_WEB_PUBLIC_STREAM_POLICIES = [POLICY_ADMINS, POLICY_MODERATORS, POLICY_NOBODY, POLICY_OWNERS];
/** 3.x's create_stream_policy values. */
const CREATE_STREAM_POLICIES = [POLICY_MEMBERS, POLICY_ADMINS, POLICY_FULL_MEMBERS];
/** Zulip 4.0's invite_to_realm_policy values: 1, 2, 3, 4 and 6 (nobody). */
const INVITE_TO_REALM_POLICIES = [...POLICIES, POLICY_NOBODY];

/** The realm's group settings by name, each as the name of the system group it holds (null: another group). */
export type RealmGroupNames = Record<string, string | null>;

/**
 * The integer policies and 3.x booleans older clients read, derived from the realm's groups (each
 * the superset that best approximates its group): 3.x's (create_stream_policy,
 * invite_to_stream_policy, user_group_edit_policy, private_message_policy, wildcard_mention_policy,
 * bot_creation_policy, allow_community_topic_editing, allow_message_deleting,
 * add_emoji_by_admins_only), and 4.0 to 9.0's that Zulip 10.0 replaced by groups.
 */
export function legacyRealmPolicies(groups: RealmGroupNames): Record<string, number | boolean> {
  const common = (setting: string) => supersetPolicy(groups[setting] ?? null, POLICIES, POLICY_GROUPS);
  const among = (setting: string, values: number[]) => supersetPolicy(groups[setting] ?? null, values, POLICY_GROUPS);
  const atLeastMembers = (setting: string) => {
    const name = groups[setting] ?? null;
    return name === null || ROLE_CHAIN.indexOf(name as ChainGroup) >= ROLE_CHAIN.indexOf("role:members") || name === "role:internet";
  };
  const wider = (a: number, b: number) => {
    const rank = (v: number) => ROLE_CHAIN.indexOf(POLICY_GROUPS[v]);
    return rank(a) >= rank(b) ? a : b;
  };
  const editTopic = among("can_move_messages_between_topics_group", EDIT_TOPIC_POLICIES);
  const deleteOwn = among("can_delete_own_message_group", MESSAGE_POLICIES);
  const addEmoji = common("can_add_custom_emoji_group");
  const createPublic = common("can_create_public_channel_group");
  const createPrivate = common("can_create_private_channel_group");
  return {
    // 3.x's one stream-creation policy (1, 2, 3): the wider of the two kinds; moderators read as full members.
    create_stream_policy: wider(among("can_create_public_channel_group", CREATE_STREAM_POLICIES), among("can_create_private_channel_group", CREATE_STREAM_POLICIES)),
    create_public_stream_policy: createPublic,
    create_private_stream_policy: createPrivate,
    create_web_public_stream_policy: among("can_create_web_public_channel_group", CREATE_WEB_PUBLIC_STREAM_POLICIES),
    invite_to_stream_policy: common("can_add_subscribers_group"),
    invite_to_realm_policy: among("can_invite_users_group", INVITE_TO_REALM_POLICIES),
    // Creating and editing groups were one policy: the wider of the two settings.
    user_group_edit_policy: wider(common("can_create_groups"), common("can_manage_all_groups")),
    private_message_policy: groups.direct_message_permission_group === "role:nobody" ? 2 : 1,
    wildcard_mention_policy: supersetPolicy(groups.can_mention_many_users_group ?? null, [1, 2, 3, 5, 6, 7], WILDCARD_POLICY_GROUPS),
    // 1 anyone any bot, 2 generic bots by administrators only, 3 administrators only.
    bot_creation_policy: atLeastMembers("can_create_bots_group") ? 1 : atLeastMembers("can_create_write_only_bots_group") ? 2 : 3,
    edit_topic_policy: editTopic,
    move_messages_between_streams_policy: among("can_move_messages_between_channels_group", MOVE_BETWEEN_STREAMS_POLICIES),
    delete_own_message_policy: deleteOwn,
    add_custom_emoji_policy: addEmoji,
    allow_community_topic_editing: editTopic === POLICY_EVERYONE,
    allow_message_deleting: deleteOwn !== POLICY_ADMINS,
    add_emoji_by_admins_only: addEmoji === POLICY_ADMINS || addEmoji === POLICY_MODERATORS,
  };
}
