import { leanSql, Prisma, type Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Actor, Realm, UserProfile } from "../models.ts";
import { canAccessDeliveryEmail, deliveryEmailRoleClass, seesDeliveryEmails } from "../lib/email-visibility.ts";
import type { ProfileData } from "../lib/user-format.ts";

type Reader = Pick<Tx, "userProfile" | "customProfileFieldValue" | "$queryRaw">;

export async function getUserByDeliveryEmail(db: Reader, realmId: number, email: string): Promise<UserProfile | null> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT id FROM user_profile WHERE realm_id = ${realmId} AND lower(delivery_email) = lower(${email})`;
  if (rows.length === 0) return null;
  return db.userProfile.findUnique({ where: { id: rows[0].id } });
}

/** A user of the realm by id, or `No such user` (Zulip's access_user_by_id). */
export async function getUserInRealm(db: Reader, realm: Realm, userId: number, options: { allowDeactivated?: boolean; allowBots?: boolean } = {}): Promise<UserProfile> {
  const user = await db.userProfile.findFirst({ where: { id: userId, realm_id: realm.id } });
  if (!user || (!options.allowDeactivated && !user.is_active) || (user.is_bot && options.allowBots === false)) {
    throw badRequest("No such user");
  }
  return user;
}

/**
 * A user of the realm whom others may read about (Zulip's access_user_by_id, not for an
 * administrator's change): a bot is `No such user`, a deactivated user `User is deactivated`.
 */
export async function getReadableUserInRealm(db: Reader, realm: Realm, userId: number): Promise<UserProfile> {
  const user = await getUserInRealm(db, realm, userId, { allowDeactivated: true, allowBots: false });
  if (!user.is_active) throw badRequest("User is deactivated");
  return user;
}

/** profile_data for users, keyed by user id. */
export async function getProfileData(db: Reader, userIds: number[]): Promise<Map<number, ProfileData>> {
  const values = await db.customProfileFieldValue.findMany({ where: { user_id: { in: userIds } } });
  const byUser = new Map<number, ProfileData>(userIds.map((id) => [id, {}]));
  for (const value of values) {
    byUser.get(value.user_id)![String(value.field_id)] = { value: value.value, rendered_value: value.rendered_value };
  }
  return byUser;
}

export async function activeUserIds(db: Reader, realmId: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: number }[]>`SELECT id FROM user_profile WHERE realm_id = ${realmId} AND is_active`;
  return rows.map((row) => row.id);
}

export async function activeAdminIds(db: Reader, realmId: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT id FROM user_profile WHERE realm_id = ${realmId} AND is_active AND role <= 200 AND NOT is_bot`;
  return rows.map((row) => row.id);
}

/** The realm's active users by the class of role they see delivery_email as (lib/email-visibility.ts). */
export async function deliveryEmailAudience(db: Reader, realmId: number): Promise<Array<{ role: number; ids: number[] }>> {
  const rows = await db.$queryRaw<{ id: number; role: number }[]>`SELECT id, role FROM user_profile WHERE realm_id = ${realmId} AND is_active ORDER BY id`;
  const byRole = new Map<number, number[]>();
  for (const row of rows) {
    const role = deliveryEmailRoleClass(row.role);
    byRole.set(role, [...(byRole.get(role) ?? []), row.id]);
  }
  return [...byRole].map(([role, ids]) => ({ role, ids }));
}

/**
 * The realm's active users who may see this user's delivery_email (Zulip's
 * get_users_with_access_to_real_email): those 3.x clients are shown it too (seesDeliveryEmails),
 * and those who may see it only in today's terms.
 */
export async function deliveryEmailViewers(db: Reader, user: { realm_id: number; is_bot: boolean; email_address_visibility: number }): Promise<{ legacy: number[]; modernOnly: number[] }> {
  const rows = await db.$queryRaw<{ id: number; role: number }[]>`SELECT id, role FROM user_profile WHERE realm_id = ${user.realm_id} AND is_active ORDER BY id`;
  const legacy: number[] = [];
  const modernOnly: number[] = [];
  for (const row of rows) {
    if (seesDeliveryEmails(row.role, user.email_address_visibility)) legacy.push(row.id);
    else if (canAccessDeliveryEmail(row.role, user)) modernOnly.push(row.id);
  }
  return { legacy, modernOnly };
}

/**
 * The users of the viewer's realm that addresses name, by the address lowercased, in one query. An
 * address names a user by the `email` clients are shown (`user<id>@…` while addresses are hidden),
 * or by the real one where the viewer may see it: their own, or anyone's whose own
 * email_address_visibility lets the viewer see it. A real address the viewer may not see names nobody, so
 * trying addresses tells them nothing.
 */
export async function usersByEmail(db: Pick<Tx, "$queryRaw">, viewer: Actor, emails: string[]): Promise<Map<string, UserProfile>> {
  const keys = [...new Set(emails.map((email) => email.trim().toLowerCase()))];
  const found = new Map<string, UserProfile>();
  if (keys.length === 0) return found;
  const rows = await leanSql(db).query<UserProfile>(Prisma.sql`
    SELECT * FROM user_profile WHERE realm_id = ${viewer.realm_id}
      AND (lower(email) = ANY(${keys}::text[]) OR lower(delivery_email) = ANY(${keys}::text[]))`);
  // A real address names its user only for whom that user's email_address_visibility lets see it.
  for (const user of rows) {
    if (user.id === viewer.id || canAccessDeliveryEmail(viewer.role, user)) found.set(user.delivery_email.toLowerCase(), user);
  }
  // The shown address wins: it is what the client was given.
  for (const user of rows) found.set(user.email.toLowerCase(), user);
  return found;
}
