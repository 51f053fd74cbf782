import { leanSql, Prisma, type Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Actor, Realm, UserProfile } from "../models.ts";
import { seesDeliveryEmails } from "../lib/email-visibility.ts";
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

/** The realm's active users, split by whether its email_address_visibility lets them see delivery_email. */
export async function deliveryEmailAudience(db: Reader, realmId: number): Promise<{ allowed: number[]; others: number[] }> {
  const rows = await db.$queryRaw<{ id: number; role: number; visibility: number }[]>`
    SELECT u.id, u.role, r.email_address_visibility AS visibility FROM user_profile u JOIN realm r ON r.id = u.realm_id
    WHERE u.realm_id = ${realmId} AND u.is_active`;
  const allowed: number[] = [];
  const others: number[] = [];
  for (const row of rows) (seesDeliveryEmails(row.role, row.visibility) ? allowed : others).push(row.id);
  return { allowed, others };
}

/**
 * The users of the viewer's realm that addresses name, by the address lowercased, in one query. An
 * address names a user by the `email` clients are shown (`user<id>@…` while addresses are hidden),
 * or by the real one where the viewer may see it: their own, or anyone's for those the realm's
 * email_address_visibility lets see them. A real address the viewer may not see names nobody, so
 * trying addresses tells them nothing.
 */
export async function usersByEmail(db: Pick<Tx, "$queryRaw">, viewer: Actor, emails: string[]): Promise<Map<string, UserProfile>> {
  const keys = [...new Set(emails.map((email) => email.trim().toLowerCase()))];
  const found = new Map<string, UserProfile>();
  if (keys.length === 0) return found;
  const anyone = seesDeliveryEmails(viewer.role, viewer.realm.email_address_visibility);
  const rows = await leanSql(db).query<UserProfile>(Prisma.sql`
    SELECT * FROM user_profile WHERE realm_id = ${viewer.realm_id}
      AND (lower(email) = ANY(${keys}::text[]) OR (lower(delivery_email) = ANY(${keys}::text[]) AND (${anyone} OR id = ${viewer.id})))`);
  for (const user of rows) {
    if (anyone || user.id === viewer.id) found.set(user.delivery_email.toLowerCase(), user);
  }
  // The shown address wins: it is what the client was given.
  for (const user of rows) found.set(user.email.toLowerCase(), user);
  return found;
}
