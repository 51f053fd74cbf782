// PATCH /realm's group-based permission settings (Zulip 10.0's do_change_realm_permission_group_setting):
// each takes a `{new, old}` change of its group-setting value (a named group, or an anonymous group
// of members and subgroups), and each change is one `realm update_dict` event carrying the new
// value as the API shows it.
//
// Older clients still send the integer policies and 3.x booleans the groups replaced: each is taken
// as a shorthand for the system group it names (a setting named outright wins over its shorthand).
// Afterwards the integers and booleans are derived again from the groups (permissions.ts's
// legacyRealmPolicies); the stored columns follow, and each one that changed is announced as its
// era announced it, which only the clients that read it get (modern-realm-settings.ts).
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { OwnerRequiredError } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { isOwner } from "../lib/roles.ts";
import { REALM_GROUP_SETTING_NAMES, REALM_PERMISSION_GROUP_SETTINGS, realmGroupId, realmGroupSystemNames, SYSTEM_GROUPS, type RealmGroupSetting, type SystemGroupName } from "../lib/group-permissions.ts";
import { applyGroupSettingChange, groupSettingValues, type GroupSettingChange, type GroupSettingValue } from "../lib/group-setting-values.ts";
import { activeUserIds } from "../queries/users.ts";
import { legacyRealmPolicies, policyGroupName } from "../lib/permissions.ts";
import { syncFullMembers, systemGroupIds } from "./system-groups.ts";

export type RealmGroupSettingsChanges = Partial<Record<RealmGroupSetting, GroupSettingChange>>;

/** The integer policies and 3.x booleans PATCH /realm still takes, as shorthands for groups. */
export interface LegacyPermissionChanges {
  create_stream_policy?: number;
  private_message_policy?: number;
  invite_to_stream_policy?: number;
  invite_to_realm_policy?: number;
  user_group_edit_policy?: number;
  wildcard_mention_policy?: number;
  bot_creation_policy?: number;
  edit_topic_policy?: number;
  move_messages_between_streams_policy?: number;
  delete_own_message_policy?: number;
  add_custom_emoji_policy?: number;
  allow_community_topic_editing?: boolean;
  allow_message_deleting?: boolean;
  add_emoji_by_admins_only?: boolean;
}

export const LEGACY_PERMISSION_PROPERTIES = [
  "create_stream_policy",
  "private_message_policy",
  "invite_to_stream_policy",
  "invite_to_realm_policy",
  "user_group_edit_policy",
  "wildcard_mention_policy",
  "bot_creation_policy",
  "edit_topic_policy",
  "move_messages_between_streams_policy",
  "delete_own_message_policy",
  "add_custom_emoji_policy",
  "allow_community_topic_editing",
  "allow_message_deleting",
  "add_emoji_by_admins_only",
] as const;

/** The settings only owners change (Zulip's update_realm: the ones that grant invitations and group management). */
const OWNER_ONLY_SETTINGS: ReadonlySet<RealmGroupSetting> = new Set(["can_invite_users_group", "can_create_groups", "can_manage_all_groups", "can_manage_billing_group"]);

/** What each shorthand sets: setting → system group. */
function shorthandGroups(property: (typeof LEGACY_PERMISSION_PROPERTIES)[number], value: number | boolean): Array<[RealmGroupSetting, SystemGroupName]> {
  const group = (v: number) => policyGroupName(property, v) as SystemGroupName;
  switch (property) {
    case "create_stream_policy":
      return [["can_create_public_channel_group", group(value as number)], ["can_create_private_channel_group", group(value as number)]];
    case "private_message_policy":
      return [["direct_message_permission_group", value === 2 ? SYSTEM_GROUPS.NOBODY : SYSTEM_GROUPS.EVERYONE]];
    case "invite_to_stream_policy":
      return [["can_add_subscribers_group", group(value as number)]];
    case "invite_to_realm_policy":
      return [["can_invite_users_group", group(value as number)]];
    case "user_group_edit_policy":
      return [["can_create_groups", group(value as number)], ["can_manage_all_groups", group(value as number)]];
    case "wildcard_mention_policy":
      return [["can_mention_many_users_group", group(value as number)]];
    case "bot_creation_policy":
      return [
        ["can_create_bots_group", value === 1 ? SYSTEM_GROUPS.MEMBERS : SYSTEM_GROUPS.ADMINISTRATORS],
        ["can_create_write_only_bots_group", value === 3 ? SYSTEM_GROUPS.ADMINISTRATORS : SYSTEM_GROUPS.MEMBERS],
      ];
    case "edit_topic_policy":
      return [["can_move_messages_between_topics_group", group(value as number)]];
    case "move_messages_between_streams_policy":
      return [["can_move_messages_between_channels_group", group(value as number)]];
    case "delete_own_message_policy":
      return [["can_delete_own_message_group", group(value as number)]];
    case "add_custom_emoji_policy":
      return [["can_add_custom_emoji_group", group(value as number)]];
    // 3.x: anyone (guests too) retitled others' messages, else administrators only.
    case "allow_community_topic_editing":
      return [["can_move_messages_between_topics_group", value ? SYSTEM_GROUPS.EVERYONE : SYSTEM_GROUPS.ADMINISTRATORS]];
    // 3.x: any sender deleted their own messages, else administrators only.
    case "allow_message_deleting":
      return [["can_delete_own_message_group", value ? SYSTEM_GROUPS.EVERYONE : SYSTEM_GROUPS.ADMINISTRATORS]];
    // 3.x: members added emoji, else administrators only.
    case "add_emoji_by_admins_only":
      return [["can_add_custom_emoji_group", value ? SYSTEM_GROUPS.ADMINISTRATORS : SYSTEM_GROUPS.MEMBERS]];
  }
}

/** The legacy properties that have a column of their own on the realm (kept in step for whoever reads it). */
const STORED_LEGACY = [
  "create_stream_policy",
  "invite_to_stream_policy",
  "invite_to_realm_policy",
  "user_group_edit_policy",
  "private_message_policy",
  "wildcard_mention_policy",
  "bot_creation_policy",
  "edit_topic_policy",
  "move_messages_between_streams_policy",
  "delete_own_message_policy",
  "add_custom_emoji_policy",
  "allow_community_topic_editing",
  "allow_message_deleting",
  "add_emoji_by_admins_only",
] as const;

/** Announced as `update_dict` (the message editing settings, feature level 150); the others as `update`. */
const UPDATE_DICT_LEGACY: ReadonlySet<string> = new Set(["edit_topic_policy", "allow_community_topic_editing"]);

/**
 * Checks and applies the group settings among `changes` and the shorthands for them (after the rest
 * of PATCH /realm, in its transaction, so an error here undoes everything), then brings
 * role:fullmembers in line with a new waiting period. Returns each setting or shorthand the client
 * sent that changed, with its new value.
 */
export async function updateRealmGroupSettings(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  changes: RealmGroupSettingsChanges & LegacyPermissionChanges & { waiting_period_threshold?: number },
  everyone: number[],
): Promise<Record<string, unknown>> {
  // Most PATCH /realm calls name no group setting nor shorthand: no queries for them.
  const named = LEGACY_PERMISSION_PROPERTIES.some((property) => changes[property] !== undefined) || REALM_GROUP_SETTING_NAMES.some((setting) => changes[setting] !== undefined);
  if (!named) {
    if (changes.waiting_period_threshold !== undefined) await syncFullMembers(tx, events, actor.realm_id);
    return {};
  }
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
  const before = legacyRealmPolicies(await realmGroupSystemNames(tx, realm));
  const groups = await systemGroupIds(tx, actor.realm_id);

  const wanted = new Map<RealmGroupSetting, GroupSettingChange>();
  for (const property of LEGACY_PERMISSION_PROPERTIES) {
    const value = changes[property];
    // A shorthand that says what the groups already say changes nothing (a 3.x client saving its
    // form keeps a finer setting made since).
    if (value === undefined || before[property] === value) continue;
    for (const [setting, name] of shorthandGroups(property, value)) {
      const id = groups.get(name);
      if (id !== undefined && changes[setting] === undefined) wanted.set(setting, { new: id });
    }
  }
  for (const setting of REALM_GROUP_SETTING_NAMES) {
    const change = changes[setting];
    if (change !== undefined) wanted.set(setting, change);
  }
  if (!isOwner(actor) && [...wanted.keys()].some((setting) => OWNER_ONLY_SETTINGS.has(setting))) throw new OwnerRequiredError();

  const data: Record<string, unknown> = {};
  const current: Record<string, number | null> = {};
  for (const [setting, change] of wanted) {
    const value = await applyGroupSettingChange(tx, actor, {
      settingName: setting,
      config: REALM_PERMISSION_GROUP_SETTINGS[setting],
      currentGroupId: current[setting] !== undefined ? current[setting] : realmGroupId(realm, setting),
      change,
      store: async (groupId) => {
        current[setting] = groupId;
        await tx.realm.update({ where: { id: realm.id }, data: { [`${setting}_id`]: groupId } });
      },
    });
    if (value === null) continue;
    if (changes[setting] !== undefined) data[setting] = value;
    events.send({ type: "realm", op: "update_dict", property: "default", data: { [setting]: value } }, everyone);
  }

  if (wanted.size > 0) await syncLegacyPolicies(tx, events, realm.id, before, everyone, changes, data);
  if (changes.waiting_period_threshold !== undefined) await syncFullMembers(tx, events, actor.realm_id);
  return data;
}

/**
 * After the groups changed: the integer policies and booleans derived again, stored, and each
 * that changed announced (and answered, when the client sent it).
 */
async function syncLegacyPolicies(
  tx: Tx,
  events: EventRecorder,
  realmId: number,
  before: Record<string, number | boolean>,
  everyone: number[],
  sent: LegacyPermissionChanges,
  data: Record<string, unknown>,
): Promise<void> {
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId } });
  const after = legacyRealmPolicies(await realmGroupSystemNames(tx, realm));
  const write: Partial<Record<(typeof STORED_LEGACY)[number], number | boolean>> = {};
  for (const property of STORED_LEGACY) {
    if ((realm as Realm)[property] !== after[property]) write[property] = after[property];
    if (before[property] === after[property]) continue;
    // A client that sent a shorthand reads its era's answer: every policy or boolean it moved.
    if (LEGACY_PERMISSION_PROPERTIES.some((name) => sent[name] !== undefined)) data[property] = after[property];
    if (UPDATE_DICT_LEGACY.has(property)) events.send({ type: "realm", op: "update_dict", property: "default", data: { [property]: after[property] } }, everyone);
    else events.send({ type: "realm", op: "update", property, value: after[property] }, everyone);
  }
  if (Object.keys(write).length > 0) await tx.realm.update({ where: { id: realmId }, data: write as Record<string, never> });
}

/**
 * After users are deactivated or reactivated (feature level 303): a realm setting holding an
 * anonymous group one of them is a direct member of now shows them, or no longer does, so one
 * `realm update_dict` carries every such setting's new value (Zulip's
 * send_update_events_for_anonymous_group_settings), to the realm's active users.
 */
export async function sendRealmSettingEventsForUserActivity(tx: Tx, events: EventRecorder, realmId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId } });
  const ids = REALM_GROUP_SETTING_NAMES.map((name) => realmGroupId(realm, name)).filter((id): id is number => id !== null);
  const affected = new Set(
    (
      await tx.$queryRaw<{ id: number }[]>`
        SELECT DISTINCT g.id FROM user_group g JOIN user_group_membership m ON m.user_group_id = g.id
        WHERE g.id = ANY(${ids}::int[]) AND g.name IS NULL AND m.user_id = ANY(${userIds}::int[])`
    ).map((row) => row.id),
  );
  if (affected.size === 0) return;
  const values = await groupSettingValues(tx, [...affected]);
  const data: Record<string, GroupSettingValue> = {};
  for (const name of REALM_GROUP_SETTING_NAMES) {
    const id = realmGroupId(realm, name);
    if (id !== null && affected.has(id)) data[name] = values.get(id)!;
  }
  events.send({ type: "realm", op: "update_dict", property: "default", data }, await activeUserIds(tx, realmId));
}
