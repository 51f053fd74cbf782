import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import { checkMemberOrAdmin } from "../lib/human-users.ts";
import type { Actor } from "../models.ts";
import { isModeratorOrAbove } from "../lib/roles.ts";
import { canEditUserGroups, POLICIES, POLICY_ADMINS, POLICY_MEMBERS } from "../lib/permissions.ts";
import { unprintablePosition } from "../lib/validation.ts";
import { activeUserIds } from "../queries/users.ts";
import { checkGroupForSetting, GROUP_PERMISSION_GROUP_SETTINGS } from "../lib/group-permissions.ts";
import { systemGroupIds } from "./system-groups.ts";

/** realm.user_group_edit_policy values: Zulip's COMMON_POLICY_TYPES (lib/permissions.ts). */
export const USER_GROUP_EDIT_POLICY_MEMBERS = POLICY_MEMBERS;
export const USER_GROUP_EDIT_POLICY_ADMINS = POLICY_ADMINS;
export const USER_GROUP_EDIT_POLICIES = POLICIES;

export const MAX_USER_GROUP_NAME_LENGTH = 100;

export interface UserGroupObject {
  id: number;
  name: string;
  description: string;
  members: number[];
  /** Only the system groups have subgroups here (each the next's); groups are deleted, not deactivated (Zulip's feature levels 93-290). */
  direct_subgroup_ids: number[];
  is_system_group: boolean;
  deactivated: false;
  /** Who may mention it: a group id (feature levels 191, 197). */
  can_mention_group: number;
}

type GroupRow = { id: number; name: string | null; description: string; is_system_group: boolean; can_mention_group_id: number | null };

/** A group as clients get it (Zulip's user_groups_in_realm_serialized entry). */
function formatUserGroup(group: GroupRow, members: number[], subgroups: number[] = []): UserGroupObject {
  return {
    id: group.id,
    name: group.name ?? "",
    description: group.description,
    members,
    direct_subgroup_ids: subgroups,
    is_system_group: group.is_system_group,
    deactivated: false,
    can_mention_group: group.can_mention_group_id ?? group.id,
  };
}

type Reader = Pick<PrismaClient, "userGroup" | "groupGroupMembership">;

/**
 * The realm's user groups (Zulip's user_groups_in_realm_serialized), the system groups (Zulip 9.0's
 * role:… groups) included, by id, members and subgroups sorted. Deactivated users stay members, as
 * in Zulip 9.0.
 */
export async function getUserGroups(db: Reader, realmId: number): Promise<UserGroupObject[]> {
  const [groups, nesting] = await Promise.all([
    db.userGroup.findMany({ where: { realm_id: realmId, name: { not: null } }, orderBy: { id: "asc" }, include: { members: { select: { user_id: true } } } }),
    db.groupGroupMembership.findMany({ where: { supergroup_id: { in: (await db.userGroup.findMany({ where: { realm_id: realmId, is_system_group: true }, select: { id: true } })).map((g) => g.id) } } }),
  ]);
  const subgroups = new Map<number, number[]>();
  for (const edge of nesting) subgroups.set(edge.supergroup_id, [...(subgroups.get(edge.supergroup_id) ?? []), edge.subgroup_id]);
  return groups.map((group) =>
    formatUserGroup(
      group,
      group.members.map((m) => m.user_id).sort((a, b) => a - b),
      (subgroups.get(group.id) ?? []).sort((a, b) => a - b),
    ),
  );
}

/** Zulip 9.0's require_user_group_edit_permission: guests and bots never; others as user_group_edit_policy says. */
export function checkUserGroupEditPermission(actor: Actor): void {
  checkMemberOrAdmin(actor);
  if (!canEditUserGroups(actor)) throw badRequest("Insufficient permission");
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
  const rows = await tx.$queryRaw<{ id: number; is_system_group: boolean }[]>`
    SELECT id, is_system_group FROM user_group WHERE id = ${groupId} AND realm_id = ${actor.realm_id} FOR UPDATE`;
  if (rows.length === 0) throw badRequest("Invalid user group");
  // Zulip's has_user_group_access: system groups follow roles, and nobody edits them.
  if (rows[0].is_system_group) throw badRequest("Insufficient permission");
  const group = await tx.userGroup.findUniqueOrThrow({ where: { id: groupId }, include: { members: { select: { user_id: true } } } });
  // Administrators and moderators edit any group; others only groups they are a member of.
  if (!isModeratorOrAbove(actor) && !group.members.some((m) => m.user_id === actor.id)) throw badRequest("Insufficient permission");
  return group;
}

/** Names Zulip keeps for its own mentions and system groups (NamedUserGroup.INVALID_NAME_PREFIXES). */
const INVALID_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

function checkGroupName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("User group name cannot be empty.");
  for (const prefix of INVALID_NAME_PREFIXES) if (name.startsWith(prefix)) throw badRequest(`User group name cannot start with '${prefix}'.`);
  if (name.length > MAX_USER_GROUP_NAME_LENGTH) throw badRequest(`name is too long (limit: ${MAX_USER_GROUP_NAME_LENGTH} characters)`);
  const position = unprintablePosition(name);
  if (position !== null) throw badRequest(`Invalid character in user group name, at position ${position}.`);
  return name;
}

async function checkNameAvailable(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const existing = await tx.userGroup.findFirst({ where: { realm_id: realmId, name, ...(exceptId ? { NOT: { id: exceptId } } : {}) } });
  if (existing) throw badRequest(`User group '${name}' already exists.`);
}

/** The group a can_mention_group value names (checked as Zulip's access_user_group_for_setting), or the default. */
async function canMentionGroupId(tx: Tx, realmId: number, value: number | undefined): Promise<number> {
  const config = GROUP_PERMISSION_GROUP_SETTINGS.can_mention_group;
  if (value !== undefined) return (await checkGroupForSetting(tx, realmId, value, "can_mention_group", config)).id;
  const fallback = (await systemGroupIds(tx, realmId)).get(config.default_group_name);
  if (fallback === undefined) throw badRequest("Invalid user group");
  return fallback;
}

/** POST /user_groups/create (Zulip's check_add_user_group). */
export async function createUserGroup(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  options: { name: string; description: string; members: number[]; can_mention_group?: number },
): Promise<UserGroupObject> {
  checkUserGroupEditPermission(actor);
  const members = await checkUserIds(tx, actor.realm_id, options.members);
  const name = checkGroupName(options.name);
  await checkNameAvailable(tx, actor.realm_id, name);
  const canMention = await canMentionGroupId(tx, actor.realm_id, options.can_mention_group);
  const group = await tx.userGroup.create({ data: { realm_id: actor.realm_id, name, description: options.description, can_mention_group_id: canMention } });
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
  changes: { name?: string; description?: string; can_mention_group?: number },
): Promise<void> {
  checkUserGroupEditPermission(actor);
  if (!changes.name && !changes.description && changes.can_mention_group === undefined) throw badRequest("No new data supplied");
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
  if (changes.can_mention_group !== undefined) {
    const canMention = await canMentionGroupId(tx, actor.realm_id, changes.can_mention_group);
    if (canMention !== group.can_mention_group_id) {
      await tx.userGroup.update({ where: { id: group.id }, data: { can_mention_group_id: canMention } });
      events.send({ type: "user_group", op: "update", group_id: group.id, data: { can_mention_group: canMention } }, everyone);
    }
  }
}

/** DELETE /user_groups/{id} (Zulip's check_delete_user_group). */
export async function deleteUserGroup(tx: Tx, events: EventRecorder, actor: Actor, groupId: number): Promise<void> {
  checkUserGroupEditPermission(actor);
  const group = await accessUserGroup(tx, actor, groupId);
  // Another group's can_mention_group may name it (a foreign key keeps the reference).
  const users = await tx.userGroup.findFirst({ where: { can_mention_group_id: group.id, NOT: { id: group.id } }, select: { name: true } });
  if (users) throw badRequest(`Cannot delete this user group: it is the can_mention_group of '${users.name}'.`);
  await tx.userGroup.update({ where: { id: group.id }, data: { can_mention_group_id: null } });
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
