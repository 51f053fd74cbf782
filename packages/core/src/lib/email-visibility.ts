// Who sees a user's real email address: the user's own email_address_visibility, a personal
// setting since Zulip feature level 163 (the organization's setting, as Zulip 3.x had it, is now
// the value new users start with, and what 3.x clients are told and may set for everyone). While
// a user's address is hidden (any value but "everyone"), their stored `email`, which every other
// surface shows (user lists, sender_email, display_recipient, presence, typing, reactions, webhook
// payloads) and by which clients name them, is `user<id>@<domain>`; the real address stays in
// `delivery_email`, sent only to those the user's setting allows, and is what they log in with.
// Bots' addresses are always shown (Zulip's email_address_is_realm_public).
//
// Whether a viewer may see a user's delivery_email depends only on the viewer's role and the
// user's setting (the viewer's own entry in realm_users included: their own address is /register's
// top-level delivery_email and GET /users/me's), so realm_users stays cacheable per viewer role.
import { isAdmin, isModeratorOrAbove, ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR } from "./roles.ts";

export const EMAIL_ADDRESS_VISIBILITY_EVERYONE = 1;
export const EMAIL_ADDRESS_VISIBILITY_MEMBERS = 2;
export const EMAIL_ADDRESS_VISIBILITY_ADMINS = 3;
export const EMAIL_ADDRESS_VISIBILITY_NOBODY = 4;
export const EMAIL_ADDRESS_VISIBILITY_MODERATORS = 5;
/** Zulip 9.0's values of the personal setting. */
export const EMAIL_ADDRESS_VISIBILITY_VALUES: readonly number[] = [1, 2, 3, 4, 5];

/** What decides whether a user's delivery_email may be shown: their setting, and whether they are a bot. */
export interface DeliveryEmailTarget {
  is_bot: boolean;
  email_address_visibility: number;
}

/**
 * Zulip 9.0's can_access_delivery_email, by the viewer's role and the user's setting: everyone
 * for "everyone", all but guests for "members", moderators and administrators for "moderators",
 * administrators for "admins", nobody for "nobody". Bots' addresses are public.
 */
export function canAccessDeliveryEmail(viewerRole: number, target: DeliveryEmailTarget): boolean {
  if (target.is_bot) return true;
  switch (target.email_address_visibility) {
    case EMAIL_ADDRESS_VISIBILITY_EVERYONE:
      return true;
    case EMAIL_ADDRESS_VISIBILITY_MEMBERS:
      return viewerRole !== ROLE_GUEST;
    case EMAIL_ADDRESS_VISIBILITY_MODERATORS:
      return isModeratorOrAbove({ role: viewerRole });
    case EMAIL_ADDRESS_VISIBILITY_ADMINS:
      return isAdmin({ role: viewerRole });
    default:
      return false;
  }
}

/**
 * Whether a Zulip 3.x client is sent the user's `delivery_email` (3.x's format_user_row left the
 * field out for those who may not see it, and under "everyone" gave it to administrators only,
 * for whom it is then `email` itself). Never more than canAccessDeliveryEmail allows.
 */
export function seesDeliveryEmails(viewerRole: number, visibility: number): boolean {
  if (visibility === EMAIL_ADDRESS_VISIBILITY_EVERYONE) return isAdmin({ role: viewerRole });
  return canAccessDeliveryEmail(viewerRole, { is_bot: false, email_address_visibility: visibility });
}

/** How a viewer is shown delivery_email: by role, and whether the client is of today's API (a null where hidden) or 3.x's (left out). */
export interface DeliveryEmailView {
  role: number;
  modern: boolean;
}

/** A user's `delivery_email` for a view: the address, null (today's clients), or undefined (left out). */
export function deliveryEmailFor(view: DeliveryEmailView, target: DeliveryEmailTarget & { delivery_email: string }): string | null | undefined {
  if (view.modern) return canAccessDeliveryEmail(view.role, target) ? target.delivery_email : null;
  return seesDeliveryEmails(view.role, target.email_address_visibility) ? target.delivery_email : undefined;
}

/** The roles whose views of delivery_email differ (administrators and owners see alike). */
export const DELIVERY_EMAIL_ROLE_CLASSES = [ROLE_ADMINISTRATOR, ROLE_MODERATOR, ROLE_MEMBER, ROLE_GUEST] as const;

/** The class a role sees delivery_email as (an owner as an administrator). */
export function deliveryEmailRoleClass(role: number): number {
  if (isAdmin({ role })) return ROLE_ADMINISTRATOR;
  return role;
}

/** The address shown for a user while theirs is hidden (Zulip's get_display_email_address). */
export function dummyEmail(userId: number, domain: string): string {
  return `user${userId}@${domain}`;
}

/** The `email` a user has under their setting: the real address ("everyone", and bots), or the dummy one. */
export function shownEmail(user: { id: number; is_bot: boolean; delivery_email: string }, visibility: number, domain: string): string {
  return visibility === EMAIL_ADDRESS_VISIBILITY_EVERYONE || user.is_bot ? user.delivery_email : dummyEmail(user.id, domain);
}

/**
 * Whether an address has the dummy form on this domain. No real address may: an address a client
 * sends must name one user, and a switch of the setting must never give two users one `email`.
 */
export function isDummyEmailForm(email: string, domain: string): boolean {
  const at = email.lastIndexOf("@");
  return /^user\d+$/i.test(email.slice(0, at)) && email.slice(at + 1).toLowerCase() === domain.toLowerCase();
}
