// Users a restricted guest comes to know of, or stops knowing of, as subscriptions change (Zulip
// 9.0's send_user_creation_events_on_adding_subscriptions and
// send_user_remove_events_on_removing_subscriptions, feature level 228). While the realm's
// can_access_all_users_group is role:members, a guest sees only those sharing a stream subscription
// or a conversation with them: one who gains access gets `realm_user add` with the real user (as
// /register's realm_users would show them), one who loses it `realm_user remove` naming the user
// "Unknown user" (clients then show a placeholder, or, with user_list_incomplete, drop the user).
// Nothing is done, and nothing read, while the setting is role:everyone (the default).
import type { StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import type { Realm } from "../models.ts";
import { canAccessAllUsers, realmGroupId } from "../lib/group-permissions.ts";
import { ROLE_GUEST } from "../lib/roles.ts";
import { accessibleUserIds } from "../queries/user-access.ts";
import { getProfileData } from "../queries/users.ts";
import { INACCESSIBLE_USER_NAME } from "../state/restricted-users.ts";
import { notifyCreatedUser } from "./users.ts";

type RealmAccess = Pick<Realm, "id"> & Partial<Pick<Realm, "can_access_all_users_group_id">>;

/** What each affected guest could access before a change: null when guests are not restricted. */
export type GuestAccessSnapshot = Map<number, Set<number>> | null;

/** Whether guests of the realm see only some users (can_access_all_users_group is not role:everyone). */
async function guestsRestricted(tx: Tx, realm: RealmAccess): Promise<boolean> {
  let groupId = realm.can_access_all_users_group_id;
  if (groupId === undefined) {
    const rows = await tx.$queryRaw<{ id: number | null }[]>`SELECT can_access_all_users_group_id AS id FROM realm WHERE id = ${realm.id}`;
    groupId = rows[0]?.id ?? null;
  }
  // A guest's membership of the (system) group, known from the role alone once the group is.
  const guest = { id: 0, realm_id: realm.id, role: ROLE_GUEST, realm: { can_access_all_users_group_id: groupId } as unknown as Realm };
  return realmGroupId(guest.realm, "can_access_all_users_group") !== null && !(await canAccessAllUsers(tx, guest));
}

/**
 * Before subscriptions to these streams change for these users: the users each guest concerned (one
 * of them, or a subscriber of one of the streams) may access.
 */
export async function snapshotGuestAccess(tx: Tx, realm: RealmAccess, streams: StreamModel[], userIds: number[]): Promise<GuestAccessSnapshot> {
  if (streams.length === 0 || userIds.length === 0 || !(await guestsRestricted(tx, realm))) return null;
  const recipientIds = streams.map((s) => s.recipient_id!);
  const guests = await tx.$queryRaw<{ id: number; recipient_id: number | null }[]>`
    SELECT u.id, u.recipient_id FROM user_profile u
    WHERE u.realm_id = ${realm.id} AND u.is_active AND u.role = ${ROLE_GUEST} AND (
      u.id = ANY(${userIds}::int[])
      OR EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = u.id AND s.active AND s.recipient_id = ANY(${recipientIds}::int[])))`;
  const snapshot = new Map<number, Set<number>>();
  for (const guest of guests) snapshot.set(guest.id, await accessibleUserIds(tx, { id: guest.id, realm_id: realm.id, recipient_id: guest.recipient_id }));
  return snapshot;
}

/**
 * After the change: `realm_user add` (the real user) to each guest for each active user they now
 * may access, and `realm_user remove` for each they no longer may.
 */
export async function sendGuestAccessChanges(tx: Tx, events: EventRecorder, realm: RealmAccess, before: GuestAccessSnapshot): Promise<void> {
  if (before === null || before.size === 0) return;
  const gainedBy = new Map<number, number[]>();
  const lostBy = new Map<number, number[]>();
  const guestIds = [...before.keys()];
  const guests = await tx.$queryRaw<{ id: number; recipient_id: number | null }[]>`SELECT id, recipient_id FROM user_profile WHERE id = ANY(${guestIds}::int[])`;
  for (const guest of guests) {
    const had = before.get(guest.id)!;
    const has = await accessibleUserIds(tx, { id: guest.id, realm_id: realm.id, recipient_id: guest.recipient_id });
    for (const id of has) if (!had.has(id)) gainedBy.set(id, [...(gainedBy.get(id) ?? []), guest.id]);
    for (const id of had) if (!has.has(id)) lostBy.set(id, [...(lostBy.get(id) ?? []), guest.id]);
  }
  const changed = [...gainedBy.keys(), ...lostBy.keys()];
  if (changed.length === 0) return;
  const users = await tx.userProfile.findMany({ where: { id: { in: changed }, is_active: true }, orderBy: { id: "asc" } });
  const profileData = await getProfileData(tx, users.filter((u) => gainedBy.has(u.id) && !u.is_bot).map((u) => u.id));
  for (const user of users) {
    const gained = gainedBy.get(user.id);
    if (gained) await notifyCreatedUser(tx, events, user, profileData.get(user.id) ?? {}, { notifyUserIds: gained });
    const lost = lostBy.get(user.id);
    if (lost) events.send({ type: "realm_user", op: "remove", person: { user_id: user.id, full_name: INACCESSIBLE_USER_NAME } }, lost);
  }
}
