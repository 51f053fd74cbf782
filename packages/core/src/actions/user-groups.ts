import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest } from "../errors.ts";
import { checkMemberOrAdmin } from "../lib/human-users.ts";
import type { Actor } from "../models.ts";
import { isAdmin } from "../lib/roles.ts";
import { unprintablePosition } from "../lib/validation.ts";
import { activeUserIds } from "../queries/users.ts";

/** realm.user_group_edit_policy values (Zulip's USER_GROUP_EDIT_POLICY_*). */
export const USER_GROUP_EDIT_POLICY_MEMBERS = 1;
export const USER_GROUP_EDIT_POLICY_ADMINS = 2;
export const USER_GROUP_EDIT_POLICIES = [USER_GROUP_EDIT_POLICY_MEMBERS, USER_GROUP_EDIT_POLICY_ADMINS];

export const MAX_USER_GROUP_NAME_LENGTH = 100;

export interface UserGroupObject {
  id: number;
  name: string;
  description: string;
  members: number[];
  /** Groups here have no subgroups, are never system groups and are deleted, not deactivated (Zulip's feature levels 93-290). */
  direct_subgroup_ids: number[];
  is_system_group: false;
  deactivated: false;
}

/** A group as clients get it (Zulip's user_groups_in_realm_serialized entry). */
function formatUserGroup(group: { id: number; name: string; description: string }, members: number[]): UserGroupObject {
  return { id: group.id, name: group.name, description: group.description, members, direct_subgroup_ids: [], is_system_group: false, deactivated: false };
}

type Reader = Pick<PrismaClient, "userGroup">;

/** The realm's user groups (Zulip's user_groups_in_realm_serialized), by id, members sorted. */
export async function getUserGroups(db: Reader, realmId: number): Promise<UserGroupObject[]> {
  const groups = await db.userGroup.findMany({
    where: { realm_id: realmId, is_system_group: false },
    orderBy: { id: "asc" },
    include: { members: { select: { user_id: true } } },
  });
  return groups.map((group) => formatUserGroup(group, group.members.map((m) => m.user_id).sort((a, b) => a - b)));
}

/** Zulip's require_user_group_edit_permission: guests and bots never; members unless the policy says admins. */
export function checkUserGroupEditPermission(actor: Actor): void {
  checkMemberOrAdmin(actor);
  if (actor.realm.user_group_edit_policy !== USER_GROUP_EDIT_POLICY_MEMBERS && !isAdmin(actor)) throw new AdministratorRequiredError();
}

/** Zulip's user_ids_to_users: every id an active user of the realm, or `Invalid user ID: <id>`. */
async function checkUserIds(tx: Tx, realmId: number, userIds: number[]): Promise<number[]> {
  const unique = [...new Set(userIds)];
  const found = await tx.userProfile.findMany({ where: { id: { in: unique }, realm_id: realmId, is_active: true }, select: { id: true } });
  const ok = new Set(found.map((u) => u.id));
  for (const id of userIds) if (!ok.has(id)) throw badRequest(`Invalid user ID: ${id}`);
  return unique;
}

async function accessUserGroup(tx: Tx, actor: Actor, groupId: number) {
  // Locks the row so concurrent membership changes of one group serialise.
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM user_group WHERE id = ${groupId} AND realm_id = ${actor.realm_id} AND NOT is_system_group FOR UPDATE`;
  if (rows.length === 0) throw badRequest("Invalid user group");
  return tx.userGroup.findUniqueOrThrow({ where: { id: groupId }, include: { members: { select: { user_id: true } } } });
}

function checkGroupName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("User group name cannot be empty.");
  if (name.length > MAX_USER_GROUP_NAME_LENGTH) throw badRequest(`name is too long (limit: ${MAX_USER_GROUP_NAME_LENGTH} characters)`);
  const position = unprintablePosition(name);
  if (position !== null) throw badRequest(`Invalid character in user group name, at position ${position}.`);
  return name;
}

async function checkNameAvailable(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const existing = await tx.userGroup.findFirst({ where: { realm_id: realmId, name, ...(exceptId ? { NOT: { id: exceptId } } : {}) } });
  if (existing) throw badRequest(`User group '${name}' already exists.`);
}

/** POST /user_groups/create (Zulip's check_add_user_group). */
export async function createUserGroup(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  options: { name: string; description: string; members: number[] },
): Promise<UserGroupObject> {
  checkUserGroupEditPermission(actor);
  const members = await checkUserIds(tx, actor.realm_id, options.members);
  const name = checkGroupName(options.name);
  await checkNameAvailable(tx, actor.realm_id, name);
  const group = await tx.userGroup.create({ data: { realm_id: actor.realm_id, name, description: options.description } });
  if (members.length > 0) await tx.userGroupMembership.createMany({ data: members.map((user_id) => ({ user_group_id: group.id, user_id })) });
  const formatted = formatUserGroup(group, members.sort((a, b) => a - b));
  events.send({ type: "user_group", op: "add", group: formatted }, await activeUserIds(tx, actor.realm_id));
  return formatted;
}

/** PATCH /user_groups/{id}: a new name and/or description; `user_group update` with what changed. */
export async function updateUserGroup(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  groupId: number,
  changes: { name?: string; description?: string },
): Promise<void> {
  checkUserGroupEditPermission(actor);
  if (!changes.name && !changes.description) throw badRequest("No new data supplied");
  const group = await accessUserGroup(tx, actor, groupId);
  const everyone = await activeUserIds(tx, actor.realm_id);
  if (changes.name) {
    const name = checkGroupName(changes.name);
    if (name !== group.name) {
      await checkNameAvailable(tx, actor.realm_id, name, group.id);
      await tx.userGroup.update({ where: { id: group.id }, data: { name } });
      events.send({ type: "user_group", op: "update", group_id: group.id, data: { name } }, everyone);
    }
  }
  if (changes.description && changes.description !== group.description) {
    await tx.userGroup.update({ where: { id: group.id }, data: { description: changes.description } });
    events.send({ type: "user_group", op: "update", group_id: group.id, data: { description: changes.description } }, everyone);
  }
}

/** DELETE /user_groups/{id} (Zulip's check_delete_user_group). */
export async function deleteUserGroup(tx: Tx, events: EventRecorder, actor: Actor, groupId: number): Promise<void> {
  checkUserGroupEditPermission(actor);
  const group = await accessUserGroup(tx, actor, groupId);
  await tx.userGroup.delete({ where: { id: group.id } });
  events.send({ type: "user_group", op: "remove", group_id: group.id }, await activeUserIds(tx, actor.realm_id));
}

/**
 * POST /user_groups/{id}/members: adds then removes members, all or nothing (Zulip composes the
 * two views in one transaction).
 */
export async function updateUserGroupMembers(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  groupId: number,
  changes: { add: number[]; delete: number[] },
): Promise<void> {
  checkUserGroupEditPermission(actor);
  if (changes.add.length === 0 && changes.delete.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  const everyone = await activeUserIds(tx, actor.realm_id);
  if (changes.add.length > 0) {
    const group = await accessUserGroup(tx, actor, groupId);
    const current = new Set(group.members.map((m) => m.user_id));
    const add = await checkUserIds(tx, actor.realm_id, changes.add);
    for (const id of add) if (current.has(id)) throw badRequest(`User ${id} is already a member of this group`);
    await tx.userGroupMembership.createMany({ data: add.map((user_id) => ({ user_group_id: group.id, user_id })) });
    events.send({ type: "user_group", op: "add_members", group_id: group.id, user_ids: add.sort((a, b) => a - b) }, everyone);
  }
  if (changes.delete.length > 0) {
    const remove = await checkUserIds(tx, actor.realm_id, changes.delete);
    const group = await accessUserGroup(tx, actor, groupId);
    const current = new Set(group.members.map((m) => m.user_id));
    for (const id of changes.delete) if (!current.has(id)) throw badRequest(`There is no member '${id}' in this user group`);
    await tx.userGroupMembership.deleteMany({ where: { user_group_id: group.id, user_id: { in: remove } } });
    events.send({ type: "user_group", op: "remove_members", group_id: group.id, user_ids: remove.sort((a, b) => a - b) }, everyone);
  }
}
