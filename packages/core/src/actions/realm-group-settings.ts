// PATCH /realm's group-based permission settings (Zulip 9.0's do_change_realm_permission_group_setting):
// each names a system group the setting allows, and a change is one `realm update_dict` event.
// 3.x's create_stream_policy and private_message_policy set the groups that replaced them, so a
// client of that era still changes what is enforced.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import type { Actor } from "../models.ts";
import { checkGroupForSetting, REALM_GROUP_SETTING_NAMES, REALM_PERMISSION_GROUP_SETTINGS, SYSTEM_GROUPS, type RealmGroupSetting, type SystemGroupName } from "../lib/group-permissions.ts";
import { syncFullMembers, systemGroupIds } from "./system-groups.ts";

export type RealmGroupSettingsChanges = Partial<Record<RealmGroupSetting, number>>;

/** 3.x's create_stream_policy values as the groups that replaced the policy. */
const CREATE_STREAM_POLICY_GROUPS: Record<number, SystemGroupName> = { 1: SYSTEM_GROUPS.MEMBERS, 2: SYSTEM_GROUPS.ADMINISTRATORS, 3: SYSTEM_GROUPS.FULL_MEMBERS };
/** 3.x's private_message_policy: 1 unlimited, 2 disabled. */
const PRIVATE_MESSAGE_POLICY_GROUPS: Record<number, SystemGroupName> = { 1: SYSTEM_GROUPS.EVERYONE, 2: SYSTEM_GROUPS.NOBODY };

/**
 * Checks and applies the group settings among `changes` (after the rest of PATCH /realm, in its
 * transaction, so an error here undoes everything), then brings role:fullmembers in line with a
 * new waiting period. Returns each changed setting with its new group id.
 */
export async function updateRealmGroupSettings(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  changes: RealmGroupSettingsChanges & { create_stream_policy?: number; private_message_policy?: number; waiting_period_threshold?: number },
  everyone: number[],
): Promise<Record<string, number>> {
  const wanted = new Map<RealmGroupSetting, number>();
  const groups = await systemGroupIds(tx, actor.realm_id);
  const legacy = (setting: RealmGroupSetting, name: SystemGroupName | undefined) => {
    const id = name && groups.get(name);
    if (id !== undefined && changes[setting] === undefined) wanted.set(setting, id);
  };
  if (changes.create_stream_policy !== undefined) {
    legacy("can_create_public_channel_group", CREATE_STREAM_POLICY_GROUPS[changes.create_stream_policy]);
    legacy("can_create_private_channel_group", CREATE_STREAM_POLICY_GROUPS[changes.create_stream_policy]);
  }
  if (changes.private_message_policy !== undefined) legacy("direct_message_permission_group", PRIVATE_MESSAGE_POLICY_GROUPS[changes.private_message_policy]);
  for (const setting of REALM_GROUP_SETTING_NAMES) {
    const value = changes[setting];
    if (value === undefined) continue;
    const group = await checkGroupForSetting(tx, actor.realm_id, value, setting, REALM_PERMISSION_GROUP_SETTINGS[setting]);
    wanted.set(setting, group.id);
  }

  const data: Record<string, number> = {};
  if (wanted.size > 0) {
    const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
    const write: Record<string, number> = {};
    for (const [setting, id] of wanted) {
      if ((realm as unknown as Record<string, unknown>)[`${setting}_id`] === id) continue;
      write[`${setting}_id`] = id;
      data[setting] = id;
      events.send({ type: "realm", op: "update_dict", property: "default", data: { [setting]: id } }, everyone);
    }
    if (Object.keys(write).length > 0) await tx.realm.update({ where: { id: actor.realm_id }, data: write });
  }
  if (changes.waiting_period_threshold !== undefined) await syncFullMembers(tx, events, actor.realm_id);
  // Only the settings the client named are its answer.
  return Object.fromEntries(Object.entries(data).filter(([setting]) => changes[setting as RealmGroupSetting] !== undefined));
}
