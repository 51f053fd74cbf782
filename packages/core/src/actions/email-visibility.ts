// What a change of the organization's email_address_visibility does besides the setting itself
// (Zulip's do_set_realm_property for it): every person's shown `email` is rewritten to what the
// new value shows (lib/email-visibility.ts), and connected clients learn it through `realm_user`
// updates, as they learn any other change of a user.
import { Prisma, type Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import type { UserProfile } from "../models.ts";
import { avatarChangePerson } from "../lib/avatars.ts";
import { seesDeliveryEmails, shownEmail } from "../lib/email-visibility.ts";
import { botDomain, isSystemBot } from "./system-bots.ts";

/**
 * The realm's email_address_visibility as committed, its row locked (as the triggers on
 * user_profile lock it anyway) for the rest of the transaction: a concurrent change of the
 * setting rewrites every address, the one this transaction writes included, before or after it.
 */
export async function lockEmailAddressVisibility(tx: Tx, realmId: number): Promise<number> {
  const [row] = await tx.$queryRaw<{ email_address_visibility: number }[]>`
    SELECT email_address_visibility FROM realm WHERE id = ${realmId} FOR NO KEY UPDATE`;
  return row.email_address_visibility;
}

/**
 * Called in the transaction that changed the setting from `before` to `after`, with the realm row
 * locked. Each user whose shown address changed is announced to everyone as Zulip does, one event
 * per user and change (clients apply one field of an update): `new_email`, and for a gravatar,
 * made from the shown address so that a hidden address's hash reaches nobody, the new avatar.
 * Those who may now see addresses get each user's `delivery_email`. Those who no longer may hold
 * addresses no event of Zulip 3.x takes back (it sent nothing; `delivery_email: null` came at
 * feature level 163), so their queues end and their clients register again.
 */
export async function applyEmailAddressVisibility(tx: Tx, events: EventRecorder, ctx: ServerContext, realmId: number, before: number, after: number): Promise<void> {
  const domain = botDomain(ctx);
  const users = await tx.$queryRaw<UserProfile[]>`SELECT * FROM user_profile WHERE realm_id = ${realmId} ORDER BY id`;
  const people = users.filter((user) => !isSystemBot(user));
  const changed = people.flatMap((user) => {
    const email = shownEmail(user, after, domain);
    return email === user.email ? [] : [{ ...user, email }];
  });
  if (changed.length > 0) {
    await tx.$executeRaw(Prisma.sql`
      UPDATE user_profile u SET email = v.email FROM unnest(${changed.map((u) => u.id)}::int[], ${changed.map((u) => u.email)}::text[]) AS v(id, email) WHERE u.id = v.id`);
  }

  const active = users.filter((user) => user.is_active);
  const everyone = active.map((user) => user.id);
  for (const user of changed) {
    events.send({ type: "realm_user", op: "update", person: { user_id: user.id, new_email: user.email } }, everyone);
    if (user.avatar_source === "G") events.send({ type: "realm_user", op: "update", person: avatarChangePerson(user) }, everyone);
  }
  const gaining = active.filter((u) => seesDeliveryEmails(u.role, after) && !seesDeliveryEmails(u.role, before)).map((u) => u.id);
  for (const user of people) events.send({ type: "realm_user", op: "update", person: { user_id: user.id, delivery_email: user.delivery_email } }, gaining);
  events.endQueues(active.filter((u) => !seesDeliveryEmails(u.role, after) && seesDeliveryEmails(u.role, before)).map((u) => u.id));
}
