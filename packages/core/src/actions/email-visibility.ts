// What a change of the organization's email_address_visibility does besides the setting itself
// (Zulip's do_set_realm_property for it): every person's shown `email` is rewritten to what the
// new value shows (lib/email-visibility.ts), and connected clients learn it through `realm_user`
// updates, as they learn any other change of a user.
import { Prisma, type Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import type { UserProfile } from "../models.ts";
import { avatarUrl } from "../lib/avatars.ts";
import { seesDeliveryEmails, shownEmail } from "../lib/email-visibility.ts";
import { botDomain, isSystemBot } from "./system-bots.ts";

/**
 * Called in the transaction that changed the setting from `before` to `after`, with the realm row
 * locked. Everyone gets, for each user whose shown address changed, `new_email` (as Zulip, one
 * event per user) and, for a gravatar, the new `avatar_url`: a gravatar is made from the shown
 * address, so a hidden address's hash reaches nobody. Those who may now see addresses get each
 * user's `delivery_email` in the same event; those who no longer may get `delivery_email: null`,
 * which takes it out of their copy (as Zulip from feature level 163; 3.x sent nothing).
 */
export async function applyEmailAddressVisibility(tx: Tx, events: EventRecorder, ctx: ServerContext, realmId: number, before: number, after: number): Promise<void> {
  const domain = botDomain(ctx);
  const users = await tx.$queryRaw<UserProfile[]>`SELECT * FROM user_profile WHERE realm_id = ${realmId} ORDER BY id`;
  const people = users.filter((user) => !isSystemBot(user));
  const shown = new Map(people.map((user) => [user.id, shownEmail(user, after, domain)]));
  const changed = people.filter((user) => shown.get(user.id) !== user.email);
  if (changed.length > 0) {
    const ids = changed.map((user) => user.id);
    const emails = changed.map((user) => shown.get(user.id)!);
    await tx.$executeRaw(Prisma.sql`
      UPDATE user_profile u SET email = v.email FROM unnest(${ids}::int[], ${emails}::text[]) AS v(id, email) WHERE u.id = v.id`);
  }

  const active = users.filter((user) => user.is_active);
  const gaining = active.filter((u) => seesDeliveryEmails(u.role, after) && !seesDeliveryEmails(u.role, before)).map((u) => u.id);
  const losing = active.filter((u) => !seesDeliveryEmails(u.role, after) && seesDeliveryEmails(u.role, before)).map((u) => u.id);
  const moved = new Set([...gaining, ...losing]);
  const unmoved = active.filter((u) => !moved.has(u.id)).map((u) => u.id);
  for (const user of people) {
    const email = shown.get(user.id)!;
    const person: Record<string, unknown> = { user_id: user.id };
    if (email !== user.email) {
      person.new_email = email;
      if (user.avatar_source === "G") {
        const now = { ...user, email };
        Object.assign(person, { avatar_url: avatarUrl(now, false), avatar_url_medium: avatarUrl(now, false, true) });
      }
      events.send({ type: "realm_user", op: "update", person }, unmoved);
    }
    events.send({ type: "realm_user", op: "update", person: { ...person, delivery_email: user.delivery_email } }, gaining);
    events.send({ type: "realm_user", op: "update", person: { ...person, delivery_email: null } }, losing);
  }
}
