// Zulip 10.0's group-setting values (feature levels 281 to 367; /api/group-setting-values): a
// permission setting of the realm, a channel or a user group names either a named group (the API
// shows its id) or an anonymous group, a user_group row with no name that exists only as this one
// setting's value (the API shows its direct members and direct subgroups). Realm, channel and
// group settings all parse, store, compare and show their values here.
import type { Tx } from "@chat/db";
import { badRequest, JsonableError } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { checkGroupForSetting, type GroupPermissionSetting, REALM_GROUP_SETTING_NAMES, realmGroupId, SYSTEM_GROUPS } from "./group-permissions.ts";

export interface AnonymousGroupValue {
  direct_members: number[];
  direct_subgroups: number[];
}
export type GroupSettingValue = number | AnonymousGroupValue;

/** Zulip's GroupSettingChangeRequest: the value wanted, and the one the client believes is current. */
export interface GroupSettingChange {
  new: GroupSettingValue;
  old?: GroupSettingValue;
}

/** Bounds on an anonymous group a client may send: a setting is a permission, not a mailing list. */
export const MAX_ANONYMOUS_GROUP_MEMBERS = 1000;
export const MAX_ANONYMOUS_GROUP_SUBGROUPS = 100;

type Reader = Pick<Tx, "$queryRaw">;

const INT_MAX = 2_147_483_647;

function isId(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= INT_MAX;
}

function parseIdList(value: unknown, max: number, name: string): number[] {
  if (!Array.isArray(value) || !value.every(isId)) throw badRequest(`${name} is not a valid group-setting value`);
  if (value.length > max) throw badRequest(`${name} has too many members or subgroups (at most ${max} members and ${MAX_ANONYMOUS_GROUP_SUBGROUPS} subgroups)`);
  return [...new Set(value)];
}

/**
 * A group-setting value as a client sends it: a group id, or `{direct_members, direct_subgroups}`
 * (both lists required), either as JSON text (form parameters) or already parsed.
 */
export function parseGroupSettingValue(raw: unknown, name: string): GroupSettingValue {
  let value = raw;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw badRequest(`${name} is not a valid group-setting value`);
    }
  }
  if (isId(value)) return value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(`${name} is not a valid group-setting value`);
  const keys = Object.keys(value);
  const record = value as Record<string, unknown>;
  if (keys.length !== 2 || !("direct_members" in record) || !("direct_subgroups" in record)) throw badRequest(`${name} is not a valid group-setting value`);
  return {
    direct_members: parseIdList(record.direct_members, MAX_ANONYMOUS_GROUP_MEMBERS, name),
    direct_subgroups: parseIdList(record.direct_subgroups, MAX_ANONYMOUS_GROUP_SUBGROUPS, name),
  };
}

/** `{"new": value, "old": value}` as PATCH endpoints take a group setting (old optional). */
export function parseGroupSettingChange(raw: unknown, name: string): GroupSettingChange {
  let value = raw;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw badRequest(`${name} is not a valid group-setting change`);
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("new" in value)) throw badRequest(`${name} is not a valid group-setting change`);
  const record = value as Record<string, unknown>;
  if (Object.keys(record).some((key) => key !== "new" && key !== "old")) throw badRequest(`${name} is not a valid group-setting change`);
  const change: GroupSettingChange = { new: parseGroupSettingValue(record.new, name) };
  if (record.old !== undefined) change.old = parseGroupSettingValue(record.old, name);
  return change;
}

/** Zulip's parse_group_setting_value: an anonymous group of exactly one subgroup and no members is that group. */
export function normalizeGroupSettingValue(value: GroupSettingValue): GroupSettingValue {
  if (typeof value === "number") return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) return value.direct_subgroups[0];
  return value;
}

/** Zulip's are_both_group_setting_values_equal: ids equal, or the same members and subgroups in any order. */
export function groupSettingValuesEqual(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  const same = (x: number[], y: number[]) => {
    const setX = new Set(x);
    const setY = new Set(y);
    return setX.size === setY.size && [...setX].every((id) => setY.has(id));
  };
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups);
}

/**
 * The API value of each of these groups (Zulip's get_group_setting_value_for_api): a named group's
 * id, an anonymous group's active direct members and direct subgroups, both sorted. Three queries
 * at most, whatever the number of groups.
 */
export async function groupSettingValues(db: Reader, groupIds: ReadonlyArray<number | null>): Promise<Map<number, GroupSettingValue>> {
  const ids = [...new Set(groupIds.filter((id): id is number => id !== null))];
  const values = new Map<number, GroupSettingValue>(ids.map((id) => [id, id]));
  if (ids.length === 0) return values;
  const anonymous = (await db.$queryRaw<{ id: number }[]>`SELECT id FROM user_group WHERE id = ANY(${ids}::int[]) AND name IS NULL`).map((row) => row.id);
  if (anonymous.length === 0) return values;
  const [members, subgroups] = await Promise.all([
    db.$queryRaw<{ group_id: number; id: number }[]>`
      SELECT m.user_group_id AS group_id, m.user_id AS id FROM user_group_membership m JOIN user_profile u ON u.id = m.user_id
      WHERE m.user_group_id = ANY(${anonymous}::int[]) AND u.is_active ORDER BY m.user_id`,
    db.$queryRaw<{ group_id: number; id: number }[]>`
      SELECT supergroup_id AS group_id, subgroup_id AS id FROM group_group_membership WHERE supergroup_id = ANY(${anonymous}::int[]) ORDER BY subgroup_id`,
  ]);
  for (const id of anonymous) values.set(id, { direct_members: [], direct_subgroups: [] });
  for (const row of members) (values.get(row.group_id) as AnonymousGroupValue).direct_members.push(row.id);
  for (const row of subgroups) (values.get(row.group_id) as AnonymousGroupValue).direct_subgroups.push(row.id);
  return values;
}

/** One group's API value. */
export async function groupSettingValue(db: Reader, groupId: number): Promise<GroupSettingValue> {
  return (await groupSettingValues(db, [groupId])).get(groupId)!;
}

async function isAnonymousGroup(tx: Reader, groupId: number | null): Promise<boolean> {
  if (groupId === null) return false;
  const rows = await tx.$queryRaw<{ anonymous: boolean }[]>`SELECT name IS NULL AS anonymous FROM user_group WHERE id = ${groupId}`;
  return rows[0]?.anonymous === true;
}

/** A named group that may be a subgroup: of the realm, not deactivated (Zulip's has_user_group_access_for_subgroup). */
async function checkSubgroups(tx: Tx, realmId: number, subgroupIds: number[]): Promise<void> {
  if (subgroupIds.length === 0) return;
  const found = await tx.userGroup.findMany({ where: { id: { in: subgroupIds }, realm_id: realmId, name: { not: null } }, select: { id: true, deactivated: true } });
  const byId = new Map(found.map((group) => [group.id, group]));
  for (const id of subgroupIds) {
    const group = byId.get(id);
    if (!group) throw badRequest(`Invalid user group ID: ${id}`);
    if (group.deactivated) throw badRequest("User group is deactivated.");
  }
}

async function checkActiveMembers(tx: Tx, realmId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  const found = new Set(
    (await tx.userProfile.findMany({ where: { id: { in: userIds }, realm_id: realmId, is_active: true }, select: { id: true } })).map((user) => user.id),
  );
  for (const id of userIds) if (!found.has(id)) throw badRequest(`Invalid user ID: ${id}`);
}

/**
 * The group a setting should hold for this value (Zulip's access_user_group_for_setting): a named
 * group the setting may take, or an anonymous group with exactly these direct members and
 * subgroups, updated in place when the setting already holds one, else created.
 */
export async function resolveGroupSettingValue(
  tx: Tx,
  realmId: number,
  value: GroupSettingValue,
  settingName: string,
  config: GroupPermissionSetting,
  currentGroupId: number | null = null,
): Promise<number> {
  const normalized = normalizeGroupSettingValue(value);
  if (typeof normalized === "number") {
    const group = await checkGroupForSetting(tx, realmId, normalized, settingName, config);
    if (!group.is_system_group) {
      const row = await tx.userGroup.findUnique({ where: { id: group.id }, select: { deactivated: true } });
      if (row?.deactivated) throw badRequest("User group is deactivated.");
    }
    return group.id;
  }
  if (config.require_system_group) throw badRequest(`'${settingName}' must be a system user group.`);
  await checkActiveMembers(tx, realmId, normalized.direct_members);
  await checkSubgroups(tx, realmId, normalized.direct_subgroups);
  let groupId: number;
  if (currentGroupId !== null && (await isAnonymousGroup(tx, currentGroupId))) {
    groupId = currentGroupId;
    await tx.userGroupMembership.deleteMany({ where: { user_group_id: groupId } });
    await tx.groupGroupMembership.deleteMany({ where: { supergroup_id: groupId } });
  } else {
    groupId = (await tx.userGroup.create({ data: { realm_id: realmId, name: null, date_created: null } })).id;
  }
  if (normalized.direct_members.length > 0) {
    await tx.userGroupMembership.createMany({ data: normalized.direct_members.map((user_id) => ({ user_group_id: groupId, user_id })) });
  }
  if (normalized.direct_subgroups.length > 0) {
    await tx.groupGroupMembership.createMany({ data: normalized.direct_subgroups.map((subgroup_id) => ({ supergroup_id: groupId, subgroup_id })) });
  }
  return groupId;
}

/** An anonymous group with this one member: Zulip's "group_creator" default (the creator as a group). */
export async function createCreatorGroup(tx: Tx, realmId: number, userId: number): Promise<number> {
  const groupId = (await tx.userGroup.create({ data: { realm_id: realmId, name: null, date_created: null } })).id;
  await tx.userGroupMembership.create({ data: { user_group_id: groupId, user_id: userId } });
  return groupId;
}

/** The id of a realm's system group (role:nobody and the rest). */
export async function systemGroupId(tx: Reader, realmId: number, name: string): Promise<number> {
  const rows = await tx.$queryRaw<{ id: number }[]>`SELECT id FROM user_group WHERE realm_id = ${realmId} AND is_system_group AND name = ${name}`;
  if (!rows[0]) throw new Error(`realm ${realmId} has no system group ${name}`);
  return rows[0].id;
}

/** Zulip's PreviousSettingValueMismatchedError. */
export function expectationMismatch(): JsonableError {
  return new JsonableError("'old' value does not match the expected value.", { code: "EXPECTATION_MISMATCH" });
}

/**
 * Applies a `{new, old}` change to one setting (Zulip's validate_group_setting_value_change, then
 * access_user_group_for_setting): refuses a stale `old`, does nothing when the value would not
 * change, else resolves the group, lets `store` point the setting at it, and drops an anonymous
 * group the setting no longer holds. Returns the new API value, or null when nothing changed.
 */
export async function applyGroupSettingChange(
  tx: Tx,
  actor: Pick<Actor, "realm_id">,
  options: {
    settingName: string;
    config: GroupPermissionSetting;
    currentGroupId: number | null;
    change: GroupSettingChange;
    store: (groupId: number) => Promise<void>;
  },
): Promise<GroupSettingValue | null> {
  const { settingName, config, currentGroupId, change } = options;
  const current = currentGroupId === null ? await systemGroupId(tx, actor.realm_id, SYSTEM_GROUPS.NOBODY) : await groupSettingValue(tx, currentGroupId);
  if (change.old !== undefined && !groupSettingValuesEqual(normalizeGroupSettingValue(change.old), current)) throw expectationMismatch();
  const wanted = normalizeGroupSettingValue(change.new);
  if (groupSettingValuesEqual(current, wanted)) return null;
  const groupId = await resolveGroupSettingValue(tx, actor.realm_id, wanted, settingName, config, currentGroupId);
  if (groupId !== currentGroupId) {
    await options.store(groupId);
    if (await isAnonymousGroup(tx, currentGroupId)) await tx.userGroup.delete({ where: { id: currentGroupId! } });
  }
  return groupSettingValue(tx, groupId);
}

/**
 * /register's `realm_<setting>` for each realm group setting (Zulip's
 * get_group_setting_value_for_register_api): its API value, three queries at most for all of them.
 */
export async function realmGroupSettingsForApi(db: Reader, realm: Realm): Promise<Record<string, GroupSettingValue>> {
  const ids = REALM_GROUP_SETTING_NAMES.map((name) => realmGroupId(realm, name));
  const values = await groupSettingValues(db, ids);
  const nobody = ids.some((id) => id === null) ? await systemGroupId(db, realm.id, SYSTEM_GROUPS.NOBODY) : null;
  return Object.fromEntries(REALM_GROUP_SETTING_NAMES.map((name, i) => [`realm_${name}`, ids[i] === null ? nobody! : values.get(ids[i]!)!]));
}
