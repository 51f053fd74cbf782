// What a change of a user's email_address_visibility does besides the setting itself (Zulip's
// do_change_user_setting for it, feature level 163): the user's shown `email` becomes what the new
// value shows (lib/email-visibility.ts), and connected clients learn it through `realm_user`
// updates: everyone the new `email` (and a gravatar made from it), those who gain access the
// `delivery_email`, those who lose it `delivery_email: null`. Zulip 3.x's organization-wide
// setting (PATCH /realm) sets every user's value, as 3.x clients expect of it.
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import type { UserProfile } from "../models.ts";
import { avatarChangePerson } from "../lib/avatars.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { userIdsWhoCanAccess } from "../queries/user-access.ts";
import { canAccessDeliveryEmail, seesDeliveryEmails, shownEmail } from "../lib/email-visibility.ts";
import { botDomain, isSystemBot } from "./system-bots.ts";

/**
 * The realm's email_address_visibility as committed (the value new users start with), its row
 * locked for the rest of the transaction: a concurrent change of the organization's setting
 * rewrites every user's, the one this transaction creates included, before or after it.
 */
export async function lockEmailAddressVisibility(tx: Tx, realmId: number): Promise<number> {
  const [row] = await tx.$queryRaw<{ email_address_visibility: number }[]>`
    SELECT email_address_visibility FROM realm WHERE id = ${realmId} FOR NO KEY UPDATE`;
  return row.email_address_visibility;
}

/** A user's row, locked: their email_address_visibility and addresses as committed, compared in turn. */
export async function lockUserForEmailVisibility(tx: Tx, userId: number): Promise<UserProfile> {
  const [row] = await tx.$queryRaw<UserProfile[]>`SELECT * FROM user_profile WHERE id = ${userId} FOR UPDATE`;
  return row;
}

interface Audience {
  id: number;
  role: number;
}

async function activeAudience(tx: Tx, realmId: number): Promise<Audience[]> {
  return tx.$queryRaw<Audience[]>`SELECT id, role FROM user_profile WHERE realm_id = ${realmId} AND is_active ORDER BY id`;
}

/**
 * Writes `after` as the user's setting (the row locked by the caller) and announces what changed
 * to `audience`, the realm's active users.
 */
async function applyUserEmailAddressVisibility(tx: Tx, events: EventRecorder, domain: string, user: UserProfile, after: number, realmAudience: Audience[]): Promise<void> {
  const before = user.email_address_visibility;
  if (before === after) return;
  const email = shownEmail(user, after, domain);
  await tx.$executeRaw`UPDATE user_profile SET email_address_visibility = ${after}, email = ${email} WHERE id = ${user.id}`;
  // Guests whom can_access_all_users_group keeps from knowing of the user hear nothing of it (no
  // query unless the realm has guests).
  const mayAccess = realmAudience.some((u) => u.role === 600) ? new Set(await userIdsWhoCanAccess(tx, user.realm_id, user.id)) : null;
  const audience = mayAccess === null ? realmAudience : realmAudience.filter((u) => mayAccess.has(u.id));
  const everyone = audience.map((u) => u.id);
  if (email !== user.email) {
    events.send({ type: "realm_user", op: "update", person: { user_id: user.id, new_email: email } }, everyone);
    if (user.avatar_source === "G") events.send({ type: "realm_user", op: "update", person: avatarChangePerson({ ...user, email }) }, everyone);
  }
  // One's own address is one's own (Zulip's can_access_delivery_email): no event about it to oneself.
  const others = audience.filter((u) => u.id !== user.id);
  const could = (role: number, value: number) => canAccessDeliveryEmail(role, { is_bot: user.is_bot, email_address_visibility: value });
  const losing = others.filter((u) => could(u.role, before) && !could(u.role, after)).map((u) => u.id);
  // 3.x clients are sent delivery_email where 3.x sent it (seesDeliveryEmails, never more than
  // may be seen): those who gain it there get it too. Those who gain it only in today's terms (under
  // "everyone", where 3.x gave it to administrators only) get instead the user's shown email again,
  // which is then that address: an update that changes nothing for them.
  const legacyGains = (role: number) => seesDeliveryEmails(role, after) && !seesDeliveryEmails(role, before);
  const modernOnly = others.filter((u) => !could(u.role, before) && could(u.role, after) && !legacyGains(u.role)).map((u) => u.id);
  const gained = { type: "realm_user", op: "update", person: { user_id: user.id, delivery_email: user.delivery_email } };
  // (A 3.x client's own entry shows it as others' would be shown to it, so it gets this one too.)
  events.send(gained, audience.filter((u) => legacyGains(u.role)).map((u) => u.id));
  events.send(withLegacyShape(gained, { person: { user_id: user.id, new_email: email } }), modernOnly);
  events.send({ type: "realm_user", op: "update", person: { user_id: user.id, delivery_email: null } }, losing);
}

/**
 * PATCH /settings email_address_visibility (the user's own; the caller checked the value): the
 * setting's `user_settings` event to the user, then the changes of what others see.
 */
export async function changeUserEmailAddressVisibility(tx: Tx, events: EventRecorder, ctx: ServerContext, userId: number, after: number): Promise<void> {
  const user = await lockUserForEmailVisibility(tx, userId);
  if (user.email_address_visibility === after) return;
  events.send({ type: "user_settings", op: "update", property: "email_address_visibility", value: after }, [user.id]);
  await applyUserEmailAddressVisibility(tx, events, botDomain(ctx), user, after, await activeAudience(tx, user.realm_id));
}

/**
 * Zulip 3.x's organization-wide email_address_visibility changed to `after` (in the transaction
 * that changed it, the realm row locked): every user's setting becomes `after`, each announced as
 * above. A 3.x client held addresses that no event of 3.x takes back (`delivery_email: null` came
 * at feature level 163): the queues of those who no longer may see some end, and their clients
 * register again, as before.
 */
export async function applyEmailAddressVisibility(tx: Tx, events: EventRecorder, ctx: ServerContext, realmId: number, _before: number, after: number): Promise<void> {
  const domain = botDomain(ctx);
  const users = await tx.$queryRaw<UserProfile[]>`SELECT * FROM user_profile WHERE realm_id = ${realmId} ORDER BY id FOR UPDATE`;
  const audience = users.filter((u) => u.is_active).map((u) => ({ id: u.id, role: u.role }));
  const losers = new Set<number>();
  for (const user of users) {
    if (isSystemBot(user) || user.email_address_visibility === after) continue;
    events.send({ type: "user_settings", op: "update", property: "email_address_visibility", value: after }, user.is_active ? [user.id] : []);
    await applyUserEmailAddressVisibility(tx, events, domain, user, after, audience);
    for (const u of audience) {
      if (seesDeliveryEmails(u.role, user.email_address_visibility) && !seesDeliveryEmails(u.role, after)) losers.add(u.id);
    }
  }
  events.endQueues([...losers]);
}
