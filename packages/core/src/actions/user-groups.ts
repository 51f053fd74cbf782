// User groups as Zulip 10.0 has them (zerver/actions/user_groups.py, zerver/lib/user_groups.py):
// named groups with a creator and a date, nested through subgroups, deactivated rather than
// deleted (feature levels 290-298), each governed by its own group settings (can_manage_group,
// can_add_members_group, can_join_group, can_leave_group, can_remove_members_group,
// can_mention_group; feature levels 283-324) whose values are group-setting values. Anonymous
// groups (rows with no name) are settings' values only: never listed, named by id, or changed here.
import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError } from "../errors.ts";
import { checkMemberOrAdmin } from "../lib/human-users.ts";
import type { Actor } from "../models.ts";
import { POLICIES, POLICY_ADMINS, POLICY_MEMBERS } from "../lib/permissions.ts";
import { unprintablePosition } from "../lib/validation.ts";
import { activeUserIds } from "../queries/users.ts";
import {
  GROUP_PERMISSION_GROUP_SETTINGS,
  hasGroupSettingPermission,
  hasRealmGroupPermission,
  REALM_PERMISSION_GROUP_SETTINGS,
  STREAM_PERMISSION_GROUP_SETTINGS,
  SYSTEM_GROUPS,
} from "../lib/group-permissions.ts";
import {
  applyGroupSettingChange,
  createCreatorGroup,
  type GroupSettingChange,
  type GroupSettingValue,
  groupSettingValues,
  resolveGroupSettingValue,
} from "../lib/group-setting-values.ts";
import { systemGroupIds } from "./system-groups.ts";

/** realm.user_group_edit_policy values: Zulip's COMMON_POLICY_TYPES (lib/permissions.ts). */
export const USER_GROUP_EDIT_POLICY_MEMBERS = POLICY_MEMBERS;
export const USER_GROUP_EDIT_POLICY_ADMINS = POLICY_ADMINS;
export const USER_GROUP_EDIT_POLICIES = POLICIES;

export const MAX_USER_GROUP_NAME_LENGTH = 100;
/** Bound on the ids one request may name (members, subgroups). */
export const MAX_USER_GROUP_REQUEST_IDS = 1000;

/** A user group's settings, in Zulip's order (NamedUserGroup.GROUP_PERMISSION_SETTINGS). */
export const USER_GROUP_SETTING_NAMES = [
  "can_add_members_group",
  "can_join_group",
  "can_leave_group",
  "can_manage_group",
  "can_mention_group",
  "can_remove_members_group",
] as const satisfies ReadonlyArray<keyof typeof GROUP_PERMISSION_GROUP_SETTINGS>;
export type UserGroupSettingName = (typeof USER_GROUP_SETTING_NAMES)[number];

/**
 * An event about a deactivated group: clients without the include_deactivated_groups capability
 * get none (apps/events/src/fanout.ts drops it; the key never reaches a client).
 */
export const DEACTIVATED_GROUP_EVENT_KEY = "__deactivated_group";

export interface UserGroupObject {
  id: number;
  name: string;
  description: string;
  /** Direct members that are active users (feature level 303). */
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group: boolean;
  deactivated: boolean;
  creator_id: number | null;
  /** Seconds since the epoch; null for groups older than the field (feature level 292). */
  date_created: number | null;
  can_add_members_group: GroupSettingValue;
  can_join_group: GroupSettingValue;
  can_leave_group: GroupSettingValue;
  can_manage_group: GroupSettingValue;
  can_mention_group: GroupSettingValue;
  can_remove_members_group: GroupSettingValue;
}

type GroupRow = {
  id: number;
  realm_id: number;
  name: string | null;
  description: string;
  is_system_group: boolean;
  deactivated: boolean;
  creator_id: number | null;
  date_created: Date | null;
  can_add_members_group_id: number | null;
  can_join_group_id: number | null;
  can_leave_group_id: number | null;
  can_manage_group_id: number | null;
  can_mention_group_id: number | null;
  can_remove_members_group_id: number | null;
};

function settingId(group: GroupRow, name: UserGroupSettingName): number | null {
  return group[`${name}_id`];
}

type Reader = Pick<PrismaClient, "$queryRaw">;

/**
 * Named groups as clients get them (Zulip's user_groups_in_realm_serialized), by id: the realm's,
 * or only those ids. Deactivated ones unless `includeDeactivated` is false. Five queries whatever
 * the number of groups.
 */
async function readUserGroups(db: Reader, realmId: number, options: { ids?: number[]; includeDeactivated?: boolean } = {}): Promise<UserGroupObject[]> {
  const ids = options.ids ?? null;
  const includeDeactivated = options.includeDeactivated !== false;
  const groups = await db.$queryRaw<GroupRow[]>`
    SELECT id, realm_id, name, description, is_system_group, deactivated, creator_id, date_created,
           can_add_members_group_id, can_join_group_id, can_leave_group_id, can_manage_group_id,
           can_mention_group_id, can_remove_members_group_id
    FROM user_group
    WHERE realm_id = ${realmId} AND name IS NOT NULL AND (${includeDeactivated} OR NOT deactivated)
      AND (${ids === null} OR id = ANY(${ids ?? []}::int[]))
    ORDER BY id`;
  if (groups.length === 0) return [];
  const groupIds = groups.map((g) => g.id);
  const [members, edges, nobody] = await Promise.all([
    db.$queryRaw<{ group_id: number; user_id: number }[]>`
      SELECT m.user_group_id AS group_id, m.user_id FROM user_group_membership m JOIN user_profile u ON u.id = m.user_id
      WHERE m.user_group_id = ANY(${groupIds}::int[]) AND u.is_active ORDER BY m.user_id`,
    db.$queryRaw<{ supergroup_id: number; subgroup_id: number }[]>`
      SELECT supergroup_id, subgroup_id FROM group_group_membership WHERE supergroup_id = ANY(${groupIds}::int[]) ORDER BY subgroup_id`,
    db.$queryRaw<{ id: number }[]>`SELECT id FROM user_group WHERE realm_id = ${realmId} AND is_system_group AND name = ${SYSTEM_GROUPS.NOBODY}`,
  ]);
  const values = await groupSettingValues(db, groups.flatMap((g) => USER_GROUP_SETTING_NAMES.map((name) => settingId(g, name))));
  const membersOf = new Map<number, number[]>();
  for (const row of members) membersOf.set(row.group_id, [...(membersOf.get(row.group_id) ?? []), row.user_id]);
  const subgroupsOf = new Map<number, number[]>();
  for (const edge of edges) subgroupsOf.set(edge.supergroup_id, [...(subgroupsOf.get(edge.supergroup_id) ?? []), edge.subgroup_id]);
  // A setting never set (none after migration 0041) shows as role:nobody, which grants nothing.
  const nobodyId = nobody[0]?.id ?? 0;
  return groups.map((group) => {
    const settings = Object.fromEntries(
      USER_GROUP_SETTING_NAMES.map((name) => {
        const id = settingId(group, name);
        return [name, id === null ? nobodyId : values.get(id)!];
      }),
    ) as Record<UserGroupSettingName, GroupSettingValue>;
    return {
      id: group.id,
      name: group.name!,
      description: group.description,
      members: membersOf.get(group.id) ?? [],
      direct_subgroup_ids: subgroupsOf.get(group.id) ?? [],
      is_system_group: group.is_system_group,
      deactivated: group.deactivated,
      creator_id: group.creator_id,
      date_created: group.date_created === null ? null : Math.floor(group.date_created.getTime() / 1000),
      ...settings,
    };
  });
}

/**
 * The realm's named user groups (Zulip's user_groups_in_realm_serialized), the system groups
 * included, by id, members and subgroups sorted; deactivated groups unless told otherwise.
 */
export function getUserGroups(db: Reader, realmId: number, options: { includeDeactivated?: boolean } = {}): Promise<UserGroupObject[]> {
  return readUserGroups(db, realmId, options);
}

async function getUserGroup(db: Reader, realmId: number, groupId: number): Promise<UserGroupObject> {
  return (await readUserGroups(db, realmId, { ids: [groupId] }))[0];
}

/** Zulip's can_manage_all_groups (feature level 305: for every group, whatever the user's role). */
function canManageAllGroups(tx: Tx, actor: Actor): Promise<boolean> {
  return hasRealmGroupPermission(tx, actor, "can_manage_all_groups");
}

/** Zulip's user_ids_to_users: every id an active user of the realm, or `Invalid user ID: <id>`. */
async function checkUserIds(tx: Tx, realmId: number, userIds: number[]): Promise<number[]> {
  const unique = [...new Set(userIds)];
  const found = await tx.userProfile.findMany({ where: { id: { in: unique }, realm_id: realmId, is_active: true }, select: { id: true } });
  const ok = new Set(found.map((u) => u.id));
  for (const id of userIds) if (!ok.has(id)) throw badRequest(`Invalid user ID: ${id}`);
  return unique;
}

/**
 * Zulip's access_user_groups_as_potential_subgroups: named groups of the realm, none deactivated,
 * locked in id order (a membership change of their supergroups waits).
 */
async function checkPotentialSubgroups(tx: Tx, realmId: number, groupIds: number[]): Promise<number[]> {
  const unique = [...new Set(groupIds)].sort((a, b) => a - b);
  if (unique.length === 0) return [];
  const rows = await tx.$queryRaw<{ id: number; deactivated: boolean }[]>`
    SELECT id, deactivated FROM user_group WHERE id = ANY(${unique}::int[]) AND realm_id = ${realmId} AND name IS NOT NULL ORDER BY id FOR SHARE`;
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const id of groupIds) if (!byId.has(id)) throw badRequest(`Invalid user group ID: ${id}`);
  if (rows.some((row) => row.deactivated)) throw badRequest("User group is deactivated.");
  return unique;
}

interface AccessOptions {
  /** The group setting that, besides can_manage_group, grants this change. */
  permission: UserGroupSettingName;
  allowDeactivated?: boolean;
}

/**
 * Zulip 10.0's access_user_group_for_update: a named group of the realm, locked; never a system
 * group; whoever may manage all groups or is in its can_manage_group may do anything, others what
 * the named setting grants (joining, leaving, adding or removing members).
 */
async function accessUserGroupForUpdate(tx: Tx, actor: Actor, groupId: number, options: AccessOptions): Promise<GroupRow> {
  const rows = await tx.$queryRaw<GroupRow[]>`
    SELECT id, realm_id, name, description, is_system_group, deactivated, creator_id, date_created,
           can_add_members_group_id, can_join_group_id, can_leave_group_id, can_manage_group_id,
           can_mention_group_id, can_remove_members_group_id
    FROM user_group WHERE id = ${groupId} AND realm_id = ${actor.realm_id} AND name IS NOT NULL FOR UPDATE`;
  const group = rows[0];
  if (!group) throw badRequest("Invalid user group");
  if (!options.allowDeactivated && group.deactivated) throw badRequest("User group is deactivated.");
  if (group.is_system_group) throw badRequest("Insufficient permission");
  if (!(await hasUserGroupAccessForUpdate(tx, actor, group, options.permission))) throw badRequest("Insufficient permission");
  return group;
}

async function hasUserGroupAccessForUpdate(tx: Tx, actor: Actor, group: GroupRow, permission: UserGroupSettingName): Promise<boolean> {
  if (await canManageAllGroups(tx, actor)) return true;
  if (await hasGroupSettingPermission(tx, actor, group.can_manage_group_id, GROUP_PERMISSION_GROUP_SETTINGS.can_manage_group)) return true;
  if (permission === "can_manage_group") return false;
  return hasGroupSettingPermission(tx, actor, settingId(group, permission), GROUP_PERMISSION_GROUP_SETTINGS[permission]);
}

/** Names Zulip keeps for its own mentions and system groups (NamedUserGroup.INVALID_NAME_PREFIXES). */
const INVALID_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

function checkGroupName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("User group name can't be empty!");
  for (const prefix of INVALID_NAME_PREFIXES) if (name.startsWith(prefix)) throw badRequest(`User group name cannot start with '${prefix}'.`);
  if (name.length > MAX_USER_GROUP_NAME_LENGTH) throw badRequest(`User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`);
  const position = unprintablePosition(name);
  if (position !== null) throw badRequest(`Invalid character in user group name, at position ${position}.`);
  return name;
}

async function checkNameAvailable(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const existing = await tx.userGroup.findFirst({ where: { realm_id: realmId, name, ...(exceptId ? { NOT: { id: exceptId } } : {}) } });
  if (existing) throw badRequest(`User group '${name}' already exists.`);
}

/** Whom a group's events reach: every active user of the realm, as Zulip. */
function recipients(tx: Tx, realmId: number): Promise<number[]> {
  return activeUserIds(tx, realmId);
}

function groupEvent<T extends { type: string }>(group: Pick<GroupRow, "deactivated">, event: T): T {
  return group.deactivated ? { ...event, [DEACTIVATED_GROUP_EVENT_KEY]: true } : event;
}

export interface CreateUserGroupOptions {
  name: string;
  description: string;
  members: number[];
  subgroups?: number[];
  settings?: Partial<Record<UserGroupSettingName, GroupSettingValue>>;
}

/**
 * POST /user_groups/create (Zulip 10.0's check_add_user_group): for whoever is in the realm's
 * can_create_groups (feature level 299). Settings not given take Zulip's defaults: the creator (an
 * anonymous group of them) may manage the group and add members (group_creator), everyone may
 * leave and mention it, nobody else may join or remove members.
 */
export async function createUserGroup(tx: Tx, events: EventRecorder, actor: Actor, options: CreateUserGroupOptions): Promise<UserGroupObject> {
  checkMemberOrAdmin(actor);
  if (!(await hasRealmGroupPermission(tx, actor, "can_create_groups"))) throw badRequest("Insufficient permission");
  const members = await checkUserIds(tx, actor.realm_id, options.members);
  const name = checkGroupName(options.name);
  await checkNameAvailable(tx, actor.realm_id, name);
  const systemIds = await systemGroupIds(tx, actor.realm_id);
  const settingIds: Record<string, number> = {};
  for (const setting of USER_GROUP_SETTING_NAMES) {
    const config = GROUP_PERMISSION_GROUP_SETTINGS[setting];
    const value = options.settings?.[setting];
    if (value !== undefined) settingIds[`${setting}_id`] = await resolveGroupSettingValue(tx, actor.realm_id, value, setting, config);
    else if (setting === "can_manage_group" || setting === "can_add_members_group") settingIds[`${setting}_id`] = await createCreatorGroup(tx, actor.realm_id, actor.id);
    else settingIds[`${setting}_id`] = systemIds.get(config.default_group_name)!;
  }
  // Zulip adds the subgroups once the group exists (its creator may, whatever the group's settings).
  const subgroups = await checkPotentialSubgroups(tx, actor.realm_id, options.subgroups ?? []);
  const group = await tx.userGroup.create({
    data: { realm_id: actor.realm_id, name, description: options.description, creator_id: actor.id, date_created: new Date(), ...settingIds },
  });
  if (members.length > 0) await tx.userGroupMembership.createMany({ data: members.map((user_id) => ({ user_group_id: group.id, user_id })) });
  if (subgroups.length > 0) await tx.groupGroupMembership.createMany({ data: subgroups.map((subgroup_id) => ({ supergroup_id: group.id, subgroup_id })) });
  const formatted = await getUserGroup(tx, actor.realm_id, group.id);
  events.send({ type: "user_group", op: "add", group: formatted }, await recipients(tx, actor.realm_id));
  return formatted;
}

export interface UpdateUserGroupChanges {
  name?: string;
  description?: string;
  settings?: Partial<Record<UserGroupSettingName, GroupSettingChange>>;
}

/**
 * PATCH /user_groups/{id} (Zulip 10.0's edit_user_group): a new name, description and settings
 * (`{new, old}`: EXPECTATION_MISMATCH when `old` is stale), for whoever may manage the group;
 * deactivated groups too (feature level 340). One `user_group update` event per change.
 */
export async function updateUserGroup(tx: Tx, events: EventRecorder, actor: Actor, groupId: number, changes: UpdateUserGroupChanges): Promise<void> {
  checkMemberOrAdmin(actor);
  const settings = Object.entries(changes.settings ?? {}).filter(([, change]) => change !== undefined) as Array<[UserGroupSettingName, GroupSettingChange]>;
  if (changes.name === undefined && changes.description === undefined && settings.length === 0) throw badRequest("No new data supplied");
  const group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_manage_group", allowDeactivated: true });
  const everyone = await recipients(tx, actor.realm_id);
  const send = (data: Record<string, unknown>) => events.send(groupEvent(group, { type: "user_group", op: "update", group_id: group.id, data }), everyone);
  if (changes.name !== undefined && changes.name !== group.name) {
    const name = checkGroupName(changes.name);
    if (name !== group.name) {
      await checkNameAvailable(tx, actor.realm_id, name, group.id);
      await tx.userGroup.update({ where: { id: group.id }, data: { name } });
      send({ name });
    }
  }
  if (changes.description !== undefined && changes.description !== group.description) {
    await tx.userGroup.update({ where: { id: group.id }, data: { description: changes.description } });
    send({ description: changes.description });
  }
  for (const setting of USER_GROUP_SETTING_NAMES) {
    const change = settings.find(([name]) => name === setting)?.[1];
    if (change === undefined) continue;
    const value = await applyGroupSettingChange(tx, actor, {
      settingName: setting,
      config: GROUP_PERMISSION_GROUP_SETTINGS[setting],
      currentGroupId: settingId(group, setting),
      change,
      store: async (newGroupId) => {
        await tx.userGroup.update({ where: { id: group.id }, data: { [`${setting}_id`]: newGroupId } });
      },
    });
    if (value !== null) send({ [setting]: value });
  }
}

/** Where a group is in use (Zulip's check_user_group_can_be_deactivated), as the `objections` of CANNOT_DEACTIVATE_GROUP_IN_USE. */
export type DeactivationObjection =
  | { type: "subgroup"; supergroup_ids: number[] }
  | { type: "channel"; channel_id: number; settings: string[] }
  | { type: "user_group"; group_id: number; settings: string[] }
  | { type: "realm"; settings: string[] };

/**
 * Zulip's check_user_group_can_be_deactivated: the active named groups it is a direct subgroup
 * of, and every channel, user group and realm setting whose value is the group or an anonymous
 * group with the group among its direct subgroups.
 */
export async function userGroupDeactivationObjections(tx: Pick<Tx, "$queryRaw" | "realm">, realmId: number, groupId: number): Promise<DeactivationObjection[]> {
  const objections: DeactivationObjection[] = [];
  const supergroups = await tx.$queryRaw<{ id: number; named: boolean; deactivated: boolean }[]>`
    SELECT g.id, g.name IS NOT NULL AS named, g.deactivated FROM group_group_membership m JOIN user_group g ON g.id = m.supergroup_id
    WHERE m.subgroup_id = ${groupId} ORDER BY g.id`;
  const activeSupergroups = supergroups.filter((g) => g.named && !g.deactivated).map((g) => g.id);
  if (activeSupergroups.length > 0) objections.push({ type: "subgroup", supergroup_ids: activeSupergroups });
  const using = new Set([groupId, ...supergroups.filter((g) => !g.named).map((g) => g.id)]);
  const uses = (value: unknown) => typeof value === "number" && using.has(value);

  const streamSettings = Object.keys(STREAM_PERMISSION_GROUP_SETTINGS);
  // Archived channels and deactivated groups object to nothing.
  const streams = await tx.$queryRaw<Array<Record<string, number | null> & { id: number }>>`SELECT * FROM stream WHERE realm_id = ${realmId} AND NOT deactivated ORDER BY id`;
  for (const stream of streams) {
    const settings = streamSettings.filter((name) => uses(stream[`${name}_id`]));
    if (settings.length > 0) objections.push({ type: "channel", channel_id: stream.id, settings });
  }
  const groups = await tx.$queryRaw<GroupRow[]>`SELECT * FROM user_group WHERE realm_id = ${realmId} AND name IS NOT NULL AND NOT deactivated ORDER BY id`;
  for (const group of groups) {
    const settings = USER_GROUP_SETTING_NAMES.filter((name) => uses(settingId(group, name)));
    if (settings.length > 0) objections.push({ type: "user_group", group_id: group.id, settings: [...settings] });
  }
  const realm = (await tx.realm.findUniqueOrThrow({ where: { id: realmId } })) as unknown as Record<string, unknown>;
  const realmSettings = Object.keys(REALM_PERMISSION_GROUP_SETTINGS).filter((name) => uses(realm[`${name}_id`]));
  if (realmSettings.length > 0) objections.push({ type: "realm", settings: realmSettings });
  return objections;
}

/** Zulip's CannotDeactivateGroupInUseError. */
export class CannotDeactivateGroupInUseError extends JsonableError {
  constructor(objections: DeactivationObjection[]) {
    super("Cannot deactivate user group in use.", { code: "CANNOT_DEACTIVATE_GROUP_IN_USE", extra: { objections } });
  }
}

/**
 * POST /user_groups/{id}/deactivate (Zulip's do_deactivate_user_group): for whoever may manage the
 * group, once nothing uses it. Clients with include_deactivated_groups get `user_group update`
 * `{deactivated: true}`, others `user_group remove` (apps/events/src/fanout.ts).
 */
export async function deactivateUserGroup(tx: Tx, events: EventRecorder, actor: Actor, groupId: number): Promise<void> {
  checkMemberOrAdmin(actor);
  // A deactivated group: "User group is deactivated." (Zulip's access_user_group_for_deactivation).
  const group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_manage_group" });
  const objections = await userGroupDeactivationObjections(tx, actor.realm_id, group.id);
  if (objections.length > 0) throw new CannotDeactivateGroupInUseError(objections);
  await tx.userGroup.update({ where: { id: group.id }, data: { deactivated: true } });
  events.send({ type: "user_group", op: "update", group_id: group.id, data: { deactivated: true } }, await recipients(tx, actor.realm_id));
}

/**
 * DELETE /user_groups/{id}: removed in Zulip 10.0 (feature level 294), kept for the 3.x clients
 * whose contract has it: the group is deactivated, as Zulip 10.0 would, and is gone for them (GET
 * /user_groups and their /register leave deactivated groups out; their queues get `remove`). A
 * deactivated group is no group to them: "Invalid user group".
 */
export async function deleteUserGroup(tx: Tx, events: EventRecorder, actor: Actor, groupId: number): Promise<void> {
  checkMemberOrAdmin(actor);
  const rows = await tx.$queryRaw<{ deactivated: boolean }[]>`SELECT deactivated FROM user_group WHERE id = ${groupId} AND realm_id = ${actor.realm_id} AND name IS NOT NULL`;
  if (rows.length === 0 || rows[0].deactivated) throw badRequest("Invalid user group");
  await deactivateUserGroup(tx, events, actor, groupId);
}

export interface UserGroupMemberChanges {
  add: number[];
  delete: number[];
  add_subgroups?: number[];
  delete_subgroups?: number[];
}

/**
 * POST /user_groups/{id}/members (Zulip 10.0's update_user_group_backend): adds then removes
 * members, then adds and removes subgroups (feature level 311), all or nothing. Adding oneself
 * takes can_join_group or can_add_members_group, adding others can_add_members_group, removing
 * oneself can_leave_group, removing others can_remove_members_group (each besides managing).
 */
export async function updateUserGroupMembers(tx: Tx, events: EventRecorder, actor: Actor, groupId: number, changes: UserGroupMemberChanges): Promise<void> {
  checkMemberOrAdmin(actor);
  const addSubgroups = changes.add_subgroups ?? [];
  const deleteSubgroups = changes.delete_subgroups ?? [];
  if (changes.add.length === 0 && changes.delete.length === 0 && addSubgroups.length === 0 && deleteSubgroups.length === 0) {
    throw badRequest('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
  }
  const everyone = await recipients(tx, actor.realm_id);
  if (changes.add.length > 0) {
    const self = changes.add.length === 1 && changes.add[0] === actor.id;
    let group: GroupRow;
    if (self) {
      try {
        group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_join_group" });
      } catch (error) {
        if (!(error instanceof JsonableError) || error.message !== "Insufficient permission") throw error;
        group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_add_members_group" });
      }
    } else {
      group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_add_members_group" });
    }
    const add = await checkUserIds(tx, actor.realm_id, changes.add);
    const current = await directMemberIds(tx, group.id);
    for (const id of add) if (current.has(id)) throw badRequest(`User ${id} is already a member of this group`);
    await tx.userGroupMembership.createMany({ data: add.map((user_id) => ({ user_group_id: group.id, user_id })) });
    events.send({ type: "user_group", op: "add_members", group_id: group.id, user_ids: add.sort((a, b) => a - b) }, everyone);
  }
  if (changes.delete.length > 0) {
    const remove = await checkUserIds(tx, actor.realm_id, changes.delete);
    const self = changes.delete.length === 1 && changes.delete[0] === actor.id;
    let group: GroupRow;
    if (self) {
      try {
        group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_leave_group" });
      } catch (error) {
        // Whoever may remove anyone may remove themselves.
        if (!(error instanceof JsonableError) || error.message !== "Insufficient permission") throw error;
        group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_remove_members_group" });
      }
    } else {
      group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_remove_members_group" });
    }
    const current = await directMemberIds(tx, group.id);
    for (const id of changes.delete) if (!current.has(id)) throw badRequest(`There is no member '${id}' in this user group`);
    await tx.userGroupMembership.deleteMany({ where: { user_group_id: group.id, user_id: { in: remove } } });
    events.send({ type: "user_group", op: "remove_members", group_id: group.id, user_ids: remove.sort((a, b) => a - b) }, everyone);
  }
  await changeSubgroups(tx, events, actor, groupId, { add: addSubgroups, delete: deleteSubgroups }, everyone);
}

/** The group's direct members that are active users (deactivated users are in no group; feature level 303). */
async function directMemberIds(tx: Tx, groupId: number): Promise<Set<number>> {
  const rows = await tx.$queryRaw<{ user_id: number }[]>`
    SELECT m.user_id FROM user_group_membership m JOIN user_profile u ON u.id = m.user_id WHERE m.user_group_id = ${groupId} AND u.is_active`;
  return new Set(rows.map((row) => row.user_id));
}

async function changeSubgroups(tx: Tx, events: EventRecorder, actor: Actor, groupId: number, changes: { add: number[]; delete: number[] }, everyone: number[]): Promise<void> {
  if (changes.add.length > 0) {
    const group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_add_members_group" });
    const subgroups = await checkPotentialSubgroups(tx, actor.realm_id, changes.add);
    const existing = await directSubgroupIds(tx, group.id);
    for (const id of changes.add) if (existing.has(id)) throw badRequest(`User group ${id} is already a subgroup of this group.`);
    // Nesting may not make a cycle: the group may not be (or be within) one of the new subgroups.
    const below = await tx.$queryRaw<{ id: number }[]>`
      WITH RECURSIVE r(id) AS (
        SELECT unnest(${subgroups}::int[])
        UNION SELECT m.subgroup_id FROM group_group_membership m JOIN r ON m.supergroup_id = r.id
      ) SELECT id FROM r WHERE id = ${group.id}`;
    if (below.length > 0) throw badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
    await tx.groupGroupMembership.createMany({ data: subgroups.map((subgroup_id) => ({ supergroup_id: group.id, subgroup_id })) });
    events.send({ type: "user_group", op: "add_subgroups", group_id: group.id, direct_subgroup_ids: subgroups }, everyone);
  }
  if (changes.delete.length > 0) {
    const group = await accessUserGroupForUpdate(tx, actor, groupId, { permission: "can_remove_members_group" });
    const subgroups = await checkPotentialSubgroups(tx, actor.realm_id, changes.delete);
    const existing = await directSubgroupIds(tx, group.id);
    for (const id of changes.delete) if (!existing.has(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
    await tx.groupGroupMembership.deleteMany({ where: { supergroup_id: group.id, subgroup_id: { in: subgroups } } });
    events.send({ type: "user_group", op: "remove_subgroups", group_id: group.id, direct_subgroup_ids: subgroups }, everyone);
  }
}

async function directSubgroupIds(tx: Tx, groupId: number): Promise<Set<number>> {
  const rows = await tx.groupGroupMembership.findMany({ where: { supergroup_id: groupId }, select: { subgroup_id: true } });
  return new Set(rows.map((row) => row.subgroup_id));
}

/**
 * POST /user_groups/{id}/subgroups (Zulip's update_subgroups_of_user_group): adds then removes
 * direct subgroups, all or nothing; a cycle is refused.
 */
export async function updateUserGroupSubgroups(tx: Tx, events: EventRecorder, actor: Actor, groupId: number, changes: { add: number[]; delete: number[] }): Promise<void> {
  checkMemberOrAdmin(actor);
  if (changes.add.length === 0 && changes.delete.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  await changeSubgroups(tx, events, actor, groupId, changes, await recipients(tx, actor.realm_id));
}

/**
 * A user deactivated or reactivated (feature level 303): deactivated users are in no group, so
 * every named group they are a direct member of gets `remove_members` (or, back, `add_members`),
 * and every group setting whose value is an anonymous group with them gets `user_group update`
 * with its new value. The memberships themselves stay, for a reactivation.
 */
export async function sendUserGroupEventsForUserActivity(tx: Tx, events: EventRecorder, realmId: number, userIds: number[], active: boolean): Promise<void> {
  if (userIds.length === 0) return;
  const rows = await tx.$queryRaw<{ group_id: number; user_id: number; named: boolean; deactivated: boolean }[]>`
    SELECT m.user_group_id AS group_id, m.user_id, g.name IS NOT NULL AS named, g.deactivated
    FROM user_group_membership m JOIN user_group g ON g.id = m.user_group_id
    WHERE m.user_id = ANY(${userIds}::int[]) AND g.realm_id = ${realmId} ORDER BY m.user_group_id, m.user_id`;
  if (rows.length === 0) return;
  const everyone = await recipients(tx, realmId);
  const byGroup = new Map<number, { users: number[]; deactivated: boolean }>();
  const anonymous = new Set<number>();
  for (const row of rows) {
    if (!row.named) {
      anonymous.add(row.group_id);
      continue;
    }
    const entry = byGroup.get(row.group_id) ?? { users: [], deactivated: row.deactivated };
    entry.users.push(row.user_id);
    byGroup.set(row.group_id, entry);
  }
  for (const [groupId, { users, deactivated }] of byGroup) {
    events.send(groupEvent({ deactivated }, { type: "user_group", op: active ? "add_members" : "remove_members", group_id: groupId, user_ids: users }), everyone);
  }
  if (anonymous.size === 0) return;
  const ids = [...anonymous];
  const holders = await tx.$queryRaw<GroupRow[]>`
    SELECT * FROM user_group WHERE realm_id = ${realmId} AND name IS NOT NULL AND (
      can_add_members_group_id = ANY(${ids}::int[]) OR can_join_group_id = ANY(${ids}::int[]) OR can_leave_group_id = ANY(${ids}::int[])
      OR can_manage_group_id = ANY(${ids}::int[]) OR can_mention_group_id = ANY(${ids}::int[]) OR can_remove_members_group_id = ANY(${ids}::int[]))
    ORDER BY id`;
  const values = await groupSettingValues(tx, ids);
  for (const group of holders) {
    const data: Record<string, unknown> = {};
    for (const name of USER_GROUP_SETTING_NAMES) {
      const id = settingId(group, name);
      if (id !== null && anonymous.has(id)) data[name] = values.get(id);
    }
    events.send(groupEvent(group, { type: "user_group", op: "update", group_id: group.id, data }), everyone);
  }
}

/** Zulip's access_user_group_by_id(for_read=True): a named group of the realm, deactivated or not. */
async function accessUserGroupForRead(db: Reader, actor: Actor, groupId: number): Promise<number> {
  checkMemberOrAdmin(actor);
  const rows = await db.$queryRaw<{ id: number }[]>`SELECT id FROM user_group WHERE id = ${groupId} AND realm_id = ${actor.realm_id} AND name IS NOT NULL`;
  if (rows.length === 0) throw badRequest("Invalid user group");
  return rows[0].id;
}

/**
 * GET /user_groups/{id}/members (Zulip's get_user_group_member_ids): the active users in the
 * group, directly or through its subgroups unless `directOnly`; deactivated users are in no group
 * (feature level 303).
 */
export async function getUserGroupMemberIds(db: Reader, actor: Actor, groupId: number, directOnly: boolean): Promise<number[]> {
  const id = await accessUserGroupForRead(db, actor, groupId);
  const rows = await db.$queryRaw<{ user_id: number }[]>`
    WITH RECURSIVE g(id) AS (
      SELECT ${id}::int
      UNION SELECT m.subgroup_id FROM group_group_membership m JOIN g ON m.supergroup_id = g.id WHERE NOT ${directOnly}
    )
    SELECT DISTINCT um.user_id FROM user_group_membership um JOIN g ON um.user_group_id = g.id JOIN user_profile u ON u.id = um.user_id
    WHERE u.is_active ORDER BY um.user_id`;
  return rows.map((row) => row.user_id);
}

/** GET /user_groups/{id}/members/{user_id} (Zulip's get_is_user_group_member). */
export async function isUserGroupMember(db: Reader, actor: Actor, groupId: number, userId: number, directOnly: boolean): Promise<boolean> {
  const members = await getUserGroupMemberIds(db, actor, groupId, directOnly);
  const users = await db.$queryRaw<{ id: number }[]>`SELECT id FROM user_profile WHERE id = ${userId} AND realm_id = ${actor.realm_id}`;
  if (users.length === 0) throw badRequest("No such user");
  return members.includes(userId);
}

/** GET /user_groups/{id}/subgroups (Zulip's get_subgroup_ids): its subgroups, recursively unless `directOnly`. */
export async function getUserGroupSubgroupIds(db: Reader, actor: Actor, groupId: number, directOnly: boolean): Promise<number[]> {
  const id = await accessUserGroupForRead(db, actor, groupId);
  const rows = await db.$queryRaw<{ id: number }[]>`
    WITH RECURSIVE g(id, depth) AS (
      SELECT m.subgroup_id, 1 FROM group_group_membership m WHERE m.supergroup_id = ${id}
      UNION SELECT m.subgroup_id, g.depth + 1 FROM group_group_membership m JOIN g ON m.supergroup_id = g.id WHERE NOT ${directOnly} AND g.depth < 100
    )
    SELECT DISTINCT id FROM g WHERE id <> ${id} ORDER BY id`;
  return rows.map((row) => row.id);
}
