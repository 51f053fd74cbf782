// Which users a user may know of, when the realm's can_access_all_users_group leaves them out
// (Zulip 9.0's get_accessible_user_ids, feature level 228): themselves, those sharing a stream
// subscription or a group conversation with them, those in a one-to-one conversation with them,
// and every bot. Anyone else is, to them, "Unknown user" (or, with the user_list_incomplete
// capability, absent).
import type { Tx } from "@chat/db";
import type { Actor } from "../models.ts";
import { canAccessAllUsers, type GroupMembershipCache } from "../lib/group-permissions.ts";

type Reader = Pick<Tx, "$queryRaw">;

/** Zulip's get_accessible_user_ids (bots counted as accessible, as Zulip's get_user_dicts_in_realm). */
export async function accessibleUserIds(db: Reader, user: Pick<Actor, "id" | "realm_id" | "recipient_id">): Promise<Set<number>> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT s2.user_id AS id
    FROM subscription s1
    JOIN recipient r ON r.id = s1.recipient_id AND r.type IN (2, 3)
    JOIN subscription s2 ON s2.recipient_id = s1.recipient_id AND s2.active
    WHERE s1.user_id = ${user.id} AND s1.active
    UNION
    SELECT m.sender_id FROM message m WHERE m.recipient_id = ${user.recipient_id ?? -1}
    UNION
    SELECT r.type_id FROM message m JOIN recipient r ON r.id = m.recipient_id AND r.type = 1 WHERE m.sender_id = ${user.id}
    UNION
    SELECT id FROM user_profile WHERE realm_id = ${user.realm_id} AND is_bot
    UNION
    SELECT ${user.id}::int`;
  return new Set(rows.map((row) => row.id));
}

/**
 * The users the actor may not know of, among these: none when they may access everyone (Zulip's
 * user_access_restricted_in_realm), else those not accessible.
 */
export async function inaccessibleAmong(db: Reader | GroupMembershipCache, plain: Reader, actor: Actor, userIds: number[]): Promise<Set<number>> {
  if (userIds.length === 0 || (await canAccessAllUsers(db, actor))) return new Set();
  const accessible = await accessibleUserIds(plain, actor);
  return new Set(userIds.filter((id) => !accessible.has(id)));
}

/** Null when the actor sees every user; else the set they may see. */
export async function accessibleUserIdsIfRestricted(db: Reader, actor: Actor): Promise<Set<number> | null> {
  if (await canAccessAllUsers(db, actor)) return null;
  return accessibleUserIds(db, actor);
}

/** Whether the actor may know of this user (Zulip's check_can_access_user). */
export async function mayAccessUser(db: Reader, actor: Actor, userId: number): Promise<boolean> {
  const accessible = await accessibleUserIdsIfRestricted(db, actor);
  return accessible === null || accessible.has(userId);
}

/**
 * The active users who may know of this user, to send events about them to (Zulip's
 * get_user_ids_who_can_access_user): everyone while the realm's can_access_all_users_group is
 * role:everyone (and for a bot); else everyone but the guests who may not access the user, the
 * converse of accessibleUserIds. One query either way, read from the realm's row as it is now, and
 * in the default case no dearer than the list of active users it replaces.
 */
export async function userIdsWhoCanAccess(db: Reader, realmId: number, targetUserId: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT u.id FROM user_profile u
    WHERE u.realm_id = ${realmId} AND u.is_active AND (
      u.role <> 600 OR u.id = ${targetUserId}
      OR EXISTS (
        SELECT 1 FROM realm r JOIN user_group g ON g.id = r.can_access_all_users_group_id
        WHERE r.id = ${realmId} AND g.name IN ('role:everyone', 'role:internet'))
      OR EXISTS (SELECT 1 FROM user_profile t WHERE t.id = ${targetUserId} AND t.is_bot)
      OR EXISTS (
        SELECT 1 FROM subscription s1
        JOIN recipient r ON r.id = s1.recipient_id AND r.type IN (2, 3)
        JOIN subscription s2 ON s2.recipient_id = s1.recipient_id AND s2.active
        WHERE s1.user_id = u.id AND s1.active AND s2.user_id = ${targetUserId})
      OR EXISTS (SELECT 1 FROM message m WHERE m.sender_id = ${targetUserId} AND m.recipient_id = u.recipient_id)
      OR EXISTS (
        SELECT 1 FROM message m JOIN user_profile t ON t.id = ${targetUserId}
        WHERE m.sender_id = u.id AND m.recipient_id = t.recipient_id))`;
  return rows.map((row) => row.id);
}
