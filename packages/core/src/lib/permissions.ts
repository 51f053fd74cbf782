// Realm policies that decide who may do what, in Zulip's terms: 1 members, 2 administrators,
// 3 full members (members past the realm's waiting period). Guests never qualify.
import type { Actor } from "../models.ts";
import { isAdmin, isGuest } from "./roles.ts";

export const POLICY_MEMBERS = 1;
export const POLICY_ADMINS = 2;
export const POLICY_FULL_MEMBERS = 3;
export const POLICIES = [POLICY_MEMBERS, POLICY_ADMINS, POLICY_FULL_MEMBERS] as const;

export function isFullMember(actor: Actor): boolean {
  const days = (Date.now() - actor.date_joined.getTime()) / 86_400_000;
  return !isGuest(actor) && days >= actor.realm.waiting_period_threshold;
}

function allowedBy(actor: Actor, policy: number): boolean {
  if (isAdmin(actor)) return true;
  if (isGuest(actor)) return false;
  if (policy === POLICY_ADMINS) return false;
  if (policy === POLICY_FULL_MEMBERS) return isFullMember(actor);
  return true;
}

export const canCreateStreams = (actor: Actor): boolean => allowedBy(actor, actor.realm.create_stream_policy);
export const canSubscribeOthers = (actor: Actor): boolean => allowedBy(actor, actor.realm.invite_to_stream_policy);

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

/** realm.wildcard_mention_policy (Zulip's WILDCARD_MENTION_POLICY_*). */
export const WILDCARD_MENTION_POLICY = { EVERYONE: 1, MEMBERS: 2, FULL_MEMBERS: 3, STREAM_ADMINS: 4, ADMINS: 5, NOBODY: 6 } as const;

/** Streams with at most this many subscribers take wildcard mentions from anyone (Zulip's Realm.WILDCARD_MENTION_THRESHOLD). */
export const WILDCARD_MENTION_THRESHOLD = 15;

/**
 * Whether the realm's wildcard_mention_policy lets this sender mention everyone in a stream past
 * the threshold (Zulip's wildcard_mention_allowed, without the subscriber count). This server has
 * no stream administrators: that policy means organization administrators.
 */
export function wildcardMentionPolicyAllows(sender: Actor): boolean {
  switch (sender.realm.wildcard_mention_policy) {
    case WILDCARD_MENTION_POLICY.EVERYONE:
      return true;
    case WILDCARD_MENTION_POLICY.MEMBERS:
      return !isGuest(sender);
    case WILDCARD_MENTION_POLICY.FULL_MEMBERS:
      return isAdmin(sender) || isFullMember(sender);
    case WILDCARD_MENTION_POLICY.STREAM_ADMINS:
    case WILDCARD_MENTION_POLICY.ADMINS:
      return isAdmin(sender);
    default: // NOBODY (and nothing else can be stored: PATCH /realm checks the values)
      return false;
  }
}
