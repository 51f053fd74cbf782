// The realm's system groups (Zulip 9.0's role:… groups): made with the realm, and their direct
// memberships kept in step with users' roles and, for role:fullmembers, the realm's waiting period
// (Zulip's create_system_user_groups_for_realm, do_change_user_role and
// promote_new_full_members). Each change is a `user_group add_members/remove_members` event.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import type { Realm, UserProfile } from "../models.ts";
import { GROUP_PERMISSION_GROUP_SETTINGS, REALM_GROUP_SETTING_NAMES, REALM_PERMISSION_GROUP_SETTINGS, roleGroupName, SYSTEM_GROUP_LIST, SYSTEM_GROUPS, type SystemGroupName } from "../lib/group-permissions.ts";
import { activeUserIds } from "../queries/users.ts";
import { isSystemBot } from "./system-bots.ts";

const ROLE_MEMBER = 400;
const DAY_MS = 86_400_000;

/** The realm's system groups' ids by name. */
export async function systemGroupIds(tx: Pick<Tx, "userGroup">, realmId: number): Promise<Map<SystemGroupName, number>> {
  const groups = await tx.userGroup.findMany({ where: { realm_id: realmId, is_system_group: true }, select: { id: true, name: true } });
  return new Map(groups.map((g) => [g.name as SystemGroupName, g.id]));
}

/**
 * Makes a new realm's system groups, nested, and sets the realm's group settings to their
 * defaults. No events: nobody is registered in a realm being created.
 */
export async function createSystemGroups(tx: Tx, realm: Realm): Promise<Realm> {
  const ids = new Map<SystemGroupName, number>();
  for (const { name, description } of SYSTEM_GROUP_LIST) {
    const group = await tx.userGroup.create({ data: { realm_id: realm.id, name, description, is_system_group: true } });
    ids.set(name, group.id);
  }
  const chain = SYSTEM_GROUP_LIST.slice(1).map((g) => ids.get(g.name)!);
  await tx.groupGroupMembership.createMany({ data: chain.slice(1).map((supergroup_id, i) => ({ supergroup_id, subgroup_id: chain[i] })) });
  const groupSettings = Object.fromEntries(
    Object.entries(GROUP_PERMISSION_GROUP_SETTINGS).map(([name, config]) => [`${name}_id`, ids.get(config.default_for_system_groups!)!]),
  );
  await tx.userGroup.updateMany({ where: { realm_id: realm.id, is_system_group: true }, data: groupSettings });
  const settings = Object.fromEntries(REALM_GROUP_SETTING_NAMES.map((name) => [`${name}_id`, ids.get(REALM_PERMISSION_GROUP_SETTINGS[name].default_group_name)!]));
  return tx.realm.update({ where: { id: realm.id }, data: settings });
}

/** Whether a member of this role, joined then, is a full member now (Zulip's is_provisional_member, reversed). */
function isFullMemberNow(user: Pick<UserProfile, "role" | "date_joined">, waitingPeriodDays: number, now = Date.now()): boolean {
  return user.role === ROLE_MEMBER && user.date_joined.getTime() + waitingPeriodDays * DAY_MS <= now;
}

/** The system groups a user is a direct member of, by their role and the realm's waiting period. */
function directSystemGroups(user: Pick<UserProfile, "role" | "date_joined">, waitingPeriodDays: number): SystemGroupName[] {
  const own = roleGroupName(user.role);
  const names: SystemGroupName[] = own ? [own] : [];
  if (isFullMemberNow(user, waitingPeriodDays)) names.push(SYSTEM_GROUPS.FULL_MEMBERS);
  return names;
}

function sendMembers(events: EventRecorder, op: "add_members" | "remove_members", groupId: number, userIds: number[], recipients: number[]): void {
  if (userIds.length === 0) return;
  events.send({ type: "user_group", op, group_id: groupId, user_ids: [...userIds].sort((a, b) => a - b) }, recipients);
}

/**
 * Makes the user's direct system-group memberships what their role says (at creation, at a role
 * change, at reactivation), with an event for each group that changed. A system bot is in none.
 */
export async function syncSystemGroupMemberships(tx: Tx, events: EventRecorder, user: UserProfile): Promise<void> {
  if (isSystemBot(user)) return;
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: user.realm_id }, select: { waiting_period_threshold: true } });
  const ids = await systemGroupIds(tx, user.realm_id);
  if (ids.size === 0) return;
  const wanted = new Set(directSystemGroups(user, realm.waiting_period_threshold).map((name) => ids.get(name)!).filter((id) => id !== undefined));
  const systemIds = [...ids.values()];
  const current = new Set(
    (await tx.userGroupMembership.findMany({ where: { user_id: user.id, user_group_id: { in: systemIds } }, select: { user_group_id: true } })).map((m) => m.user_group_id),
  );
  const remove = [...current].filter((id) => !wanted.has(id));
  const add = [...wanted].filter((id) => !current.has(id));
  if (remove.length === 0 && add.length === 0) return;
  const recipients = await activeUserIds(tx, user.realm_id);
  if (remove.length > 0) await tx.userGroupMembership.deleteMany({ where: { user_id: user.id, user_group_id: { in: remove } } });
  for (const id of remove.sort((a, b) => a - b)) sendMembers(events, "remove_members", id, [user.id], recipients);
  if (add.length > 0) await tx.userGroupMembership.createMany({ data: add.map((user_group_id) => ({ user_group_id, user_id: user.id })), skipDuplicates: true });
  for (const id of add.sort((a, b) => a - b)) sendMembers(events, "add_members", id, [user.id], recipients);
}

/**
 * Makes role:fullmembers's direct members the realm's members past its waiting period (Zulip's
 * promote_new_full_members, daily, and at a new waiting_period_threshold): members who have
 * waited long enough join, and with a longer period some leave.
 */
export async function syncFullMembers(tx: Tx, events: EventRecorder, realmId: number): Promise<{ added: number[]; removed: number[] }> {
  const ids = await systemGroupIds(tx, realmId);
  const groupId = ids.get(SYSTEM_GROUPS.FULL_MEMBERS);
  if (groupId === undefined) return { added: [], removed: [] };
  // One job at a time per realm: the group's row is the lock.
  await tx.$queryRaw`SELECT id FROM user_group WHERE id = ${groupId} FOR UPDATE`;
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId }, select: { waiting_period_threshold: true } });
  // Deactivated users are in no group (feature level 303): their memberships wait, untouched, for a reactivation.
  const users = await tx.userProfile.findMany({ where: { realm_id: realmId, is_active: true }, select: { id: true, role: true, date_joined: true, is_bot: true, bot_owner_id: true, delivery_email: true } });
  const should = new Set(users.filter((u) => !isSystemBot(u) && isFullMemberNow(u, realm.waiting_period_threshold)).map((u) => u.id));
  const current = new Set(
    (await tx.userGroupMembership.findMany({ where: { user_group_id: groupId, user: { is_active: true } }, select: { user_id: true } })).map((m) => m.user_id),
  );
  const added = [...should].filter((id) => !current.has(id)).sort((a, b) => a - b);
  const removed = [...current].filter((id) => !should.has(id)).sort((a, b) => a - b);
  if (added.length === 0 && removed.length === 0) return { added, removed };
  const recipients = await activeUserIds(tx, realmId);
  if (removed.length > 0) {
    await tx.userGroupMembership.deleteMany({ where: { user_group_id: groupId, user_id: { in: removed } } });
    sendMembers(events, "remove_members", groupId, removed, recipients);
  }
  if (added.length > 0) {
    await tx.userGroupMembership.createMany({ data: added.map((user_id) => ({ user_group_id: groupId, user_id })), skipDuplicates: true });
    sendMembers(events, "add_members", groupId, added, recipients);
  }
  return { added, removed };
}

/**
 * The daily job (Zulip's promote_new_full_members): every realm's role:fullmembers brought in line
 * with its waiting period, one transaction per realm that has a change to make. Returns how many
 * users joined or left the group.
 */
export async function promoteNewFullMembers(prisma: Pick<Tx, "$queryRaw">, actions: { run<T>(realmId: number, work: (tx: Tx, events: EventRecorder) => Promise<T>): Promise<T> }): Promise<number> {
  // Realms where someone is in the group who should not be, or the other way round (cheap to find).
  const realms = await prisma.$queryRaw<{ realm_id: number }[]>`
    SELECT r.id AS realm_id FROM realm r
    JOIN user_group g ON g.realm_id = r.id AND g.is_system_group AND g.name = ${SYSTEM_GROUPS.FULL_MEMBERS}
    WHERE NOT r.deactivated AND (
      EXISTS (SELECT 1 FROM user_profile u WHERE u.realm_id = r.id AND u.is_active AND u.role = ${ROLE_MEMBER}
                AND u.date_joined + make_interval(days => r.waiting_period_threshold) <= now()
                AND NOT (u.is_bot AND u.bot_owner_id IS NULL)
                AND NOT EXISTS (SELECT 1 FROM user_group_membership m WHERE m.user_group_id = g.id AND m.user_id = u.id))
      OR EXISTS (SELECT 1 FROM user_group_membership m JOIN user_profile u ON u.id = m.user_id
                WHERE m.user_group_id = g.id AND u.is_active AND (u.role <> ${ROLE_MEMBER} OR u.date_joined + make_interval(days => r.waiting_period_threshold) > now())))`;
  let changed = 0;
  for (const { realm_id } of realms) {
    const result = await actions.run(realm_id, (tx, events) => syncFullMembers(tx, events, realm_id));
    changed += result.added.length + result.removed.length;
  }
  return changed;
}
