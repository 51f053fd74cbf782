// Who sees users' real email addresses: the organization's email_address_visibility, as Zulip 3.x
// has it (one setting for the whole realm). While addresses are hidden, a person's stored `email`,
// which every other surface shows (user lists, sender_email, display_recipient, presence, typing,
// reactions, webhook payloads) and by which clients name them, is `user<id>@<domain>`; the real
// address stays in `delivery_email`, sent only to those the setting allows, and is what they log in
// with. Bots' addresses are always shown (Zulip's email_address_is_realm_public).
import { isAdmin, ROLE_GUEST } from "./roles.ts";

export const EMAIL_ADDRESS_VISIBILITY_EVERYONE = 1;
export const EMAIL_ADDRESS_VISIBILITY_MEMBERS = 2;
export const EMAIL_ADDRESS_VISIBILITY_ADMINS = 3;
export const EMAIL_ADDRESS_VISIBILITY_NOBODY = 4;

/**
 * Whether a user of this role is sent other users' `delivery_email` (Zulip 3.x's format_user_row
 * gave it to administrators under "admins only"). "Members only" is all but guests; under
 * "everyone" administrators get the field as before, though it is then `email` itself.
 */
export function seesDeliveryEmails(role: number, visibility: number): boolean {
  if (visibility === EMAIL_ADDRESS_VISIBILITY_NOBODY) return false;
  if (visibility === EMAIL_ADDRESS_VISIBILITY_MEMBERS) return role !== ROLE_GUEST;
  return isAdmin({ role });
}

/** The address shown for a user while addresses are hidden (Zulip's get_display_email_address). */
export function dummyEmail(userId: number, domain: string): string {
  return `user${userId}@${domain}`;
}

/** The `email` a user has under this visibility: the real address, or the dummy one. */
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
