import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Realm, UserProfile } from "../models.ts";
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
