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
