// Realm policies that decide who may do what, as Zulip 9.0 (feature level 277) encodes the
// integer ones (Realm.POLICY_*): 1 members, 2 administrators, 3 full members (members past the
// realm's waiting period), 4 moderators, 5 everyone (guests too), 6 nobody, 7 owners. Each policy
// takes only some of these (INTEGER_POLICY_VALUES below); the group-valued settings that replaced
// others by 9.0 are lib/group-permissions.ts's.
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

export const canCreateStreams = (actor: Actor): boolean => policyAllows(actor, actor.realm.create_stream_policy);
export const canSubscribeOthers = (actor: Actor): boolean => policyAllows(actor, actor.realm.invite_to_stream_policy);
/** Zulip's can_invite_users_by_email (invite_to_realm_policy: 1, 2, 3, 4 or 6; the invitations' setting). */
export const canInviteOthersToRealm = (actor: Actor): boolean => policyAllows(actor, actor.realm.invite_to_realm_policy);
export const canEditUserGroups = (actor: Actor): boolean => policyAllows(actor, actor.realm.user_group_edit_policy);
export const canAddCustomEmoji = (actor: Actor): boolean => policyAllows(actor, actor.realm.add_custom_emoji_policy);
export const canDeleteOwnMessage = (actor: Actor): boolean => policyAllows(actor, actor.realm.delete_own_message_policy);
/** Zulip's can_edit_topic_of_any_message (retitling others' messages; "(no topic)" ones anyone may). */
export const canEditTopicOfAnyMessage = (actor: Actor): boolean => policyAllows(actor, actor.realm.edit_topic_policy);
export const canMoveMessagesBetweenStreams = (actor: Actor): boolean => policyAllows(actor, actor.realm.move_messages_between_streams_policy);

/** Administrators and moderators are not held to the realm's time limits for moving messages. */
export const exemptFromMoveTimeLimits = (actor: HasRole): boolean => isModeratorOrAbove(actor);

/** realm.private_message_policy (Zulip's PRIVATE_MESSAGE_POLICY_*): 1 unlimited, 2 disabled. */
export const PRIVATE_MESSAGE_POLICY_DISABLED = 2;

/**
 * Zulip's check_private_message_policy: with private messages disabled, a bot's messages (the
 * Notification Bot's too) and a message to one bot still go through, so bots keep working.
 * `recipients` are the users the message is addressed to, as the client named them.
 */
export function privateMessageAllowed(sender: Actor, recipients: ReadonlyArray<{ is_bot: boolean }>): boolean {
  if (sender.realm.private_message_policy !== PRIVATE_MESSAGE_POLICY_DISABLED) return true;
  return sender.is_bot || (recipients.length === 1 && recipients[0].is_bot);
}

/** Streams with at most this many subscribers take wildcard mentions from anyone (Zulip's Realm.WILDCARD_MENTION_THRESHOLD). */
export const WILDCARD_MENTION_THRESHOLD = 15;

/**
 * Whether the realm's wildcard_mention_policy lets this sender mention everyone in a stream past
 * the threshold (Zulip's wildcard_mention_policy_authorizes_user). This server has no stream
 * administrators: 3.x's policy 4 means organization administrators, as Zulip made it.
 */
export function wildcardMentionPolicyAllows(sender: Actor): boolean {
  switch (sender.realm.wildcard_mention_policy) {
    case WILDCARD_MENTION_POLICY.EVERYONE:
      return true;
    case WILDCARD_MENTION_POLICY.MEMBERS:
      return !isGuest(sender);
    case WILDCARD_MENTION_POLICY.FULL_MEMBERS:
      return isAdmin(sender) || isFullMember(sender);
    case WILDCARD_MENTION_POLICY.MODERATORS:
      return isModeratorOrAbove(sender);
    case WILDCARD_MENTION_POLICY.STREAM_ADMINS:
    case WILDCARD_MENTION_POLICY.ADMINS:
      return isAdmin(sender);
    default: // NOBODY (and nothing else can be stored: PATCH /realm checks the values)
      return false;
  }
}

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
