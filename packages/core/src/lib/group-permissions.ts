// Zulip 9.0's system groups and the permission settings whose values are groups. A setting holds a
// group's id; a user has the permission when they are in that group, directly or through its
// subgroups (the system groups nest: owners ⊂ administrators ⊂ moderators ⊂ full members ⊂
// members ⊂ everyone ⊂ internet). Integer policies stay in permissions.ts.
import { createHash } from "node:crypto";
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { isFullMember } from "./permissions.ts";

export const SYSTEM_GROUPS = {
  NOBODY: "role:nobody",
  OWNERS: "role:owners",
  ADMINISTRATORS: "role:administrators",
  MODERATORS: "role:moderators",
  FULL_MEMBERS: "role:fullmembers",
  MEMBERS: "role:members",
  EVERYONE: "role:everyone",
  EVERYONE_ON_INTERNET: "role:internet",
} as const;
export type SystemGroupName = (typeof SYSTEM_GROUPS)[keyof typeof SYSTEM_GROUPS];

/**
 * The system groups in Zulip's order of creation, with their descriptions; each from owners on is a
 * direct subgroup of the next (role:nobody is nobody's subgroup).
 */
export const SYSTEM_GROUP_LIST: ReadonlyArray<{ name: SystemGroupName; description: string }> = [
  { name: SYSTEM_GROUPS.NOBODY, description: "Nobody" },
  { name: SYSTEM_GROUPS.OWNERS, description: "Owners of this organization" },
  { name: SYSTEM_GROUPS.ADMINISTRATORS, description: "Administrators of this organization, including owners" },
  { name: SYSTEM_GROUPS.MODERATORS, description: "Moderators of this organization, including administrators" },
  { name: SYSTEM_GROUPS.FULL_MEMBERS, description: "Members of this organization, not including new accounts and guests" },
  { name: SYSTEM_GROUPS.MEMBERS, description: "Members of this organization, not including guests" },
  { name: SYSTEM_GROUPS.EVERYONE, description: "Everyone in this organization, including guests" },
  { name: SYSTEM_GROUPS.EVERYONE_ON_INTERNET, description: "Everyone on the Internet" },
];

/** The group a user of this role is a direct member of (Zulip's SYSTEM_USER_GROUP_ROLE_MAP). */
export function roleGroupName(role: number): SystemGroupName | null {
  switch (role) {
    case 100:
      return SYSTEM_GROUPS.OWNERS;
    case 200:
      return SYSTEM_GROUPS.ADMINISTRATORS;
    case 300:
      return SYSTEM_GROUPS.MODERATORS;
    case 400:
      return SYSTEM_GROUPS.MEMBERS;
    case 600:
      return SYSTEM_GROUPS.EVERYONE;
    default:
      return null;
  }
}

/**
 * Zulip's GroupPermissionSetting as /register's server_supported_permission_settings shows it
 * (feature level 221; 326 removed allow_owners_group, which no setting refused any more, and
 * id_field_name).
 */
export interface GroupPermissionSetting {
  require_system_group: boolean;
  allow_internet_group: boolean;
  allow_nobody_group: boolean;
  allow_everyone_group: boolean;
  default_group_name: SystemGroupName;
  default_for_system_groups: SystemGroupName | null;
  allowed_system_groups: SystemGroupName[];
}

function setting(_name: string, options: Partial<GroupPermissionSetting> & Pick<GroupPermissionSetting, "default_group_name">): GroupPermissionSetting {
  return {
    require_system_group: true,
    allow_internet_group: false,
    allow_nobody_group: false,
    allow_everyone_group: false,
    default_for_system_groups: null,
    allowed_system_groups: [],
    ...options,
  };
}

/**
 * A setting as Zulip 10.0 declares most of them: any group of the realm, named or anonymous
 * (feature level 309), role:nobody allowed, role:everyone and role:internet not unless said.
 */
function setting10(
  name: string,
  defaultGroup: SystemGroupName,
  options: Partial<GroupPermissionSetting> = {},
): GroupPermissionSetting {
  return setting(name, { require_system_group: false, allow_nobody_group: true, default_group_name: defaultGroup, ...options });
}

/** The realm's group settings: Zulip 10.0's Realm.REALM_PERMISSION_GROUP_SETTINGS, flag for flag. */
export const REALM_PERMISSION_GROUP_SETTINGS = {
  create_multiuse_invite_group: setting10("create_multiuse_invite_group", SYSTEM_GROUPS.ADMINISTRATORS),
  can_access_all_users_group: setting("can_access_all_users_group", {
    allow_everyone_group: true,
    default_group_name: SYSTEM_GROUPS.EVERYONE,
    allowed_system_groups: [SYSTEM_GROUPS.EVERYONE, SYSTEM_GROUPS.MEMBERS],
  }),
  can_add_custom_emoji_group: setting10("can_add_custom_emoji_group", SYSTEM_GROUPS.MEMBERS),
  can_add_subscribers_group: setting10("can_add_subscribers_group", SYSTEM_GROUPS.MEMBERS),
  can_create_bots_group: setting10("can_create_bots_group", SYSTEM_GROUPS.MEMBERS),
  can_create_groups: setting10("can_create_groups", SYSTEM_GROUPS.MEMBERS),
  can_create_public_channel_group: setting10("can_create_public_channel_group", SYSTEM_GROUPS.MEMBERS),
  can_create_private_channel_group: setting10("can_create_private_channel_group", SYSTEM_GROUPS.MEMBERS),
  can_create_web_public_channel_group: setting("can_create_web_public_channel_group", {
    allow_nobody_group: true,
    default_group_name: SYSTEM_GROUPS.OWNERS,
    allowed_system_groups: [SYSTEM_GROUPS.MODERATORS, SYSTEM_GROUPS.ADMINISTRATORS, SYSTEM_GROUPS.OWNERS, SYSTEM_GROUPS.NOBODY],
  }),
  can_create_write_only_bots_group: setting10("can_create_write_only_bots_group", SYSTEM_GROUPS.MEMBERS),
  can_delete_any_message_group: setting10("can_delete_any_message_group", SYSTEM_GROUPS.ADMINISTRATORS),
  can_delete_own_message_group: setting10("can_delete_own_message_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
  can_invite_users_group: setting10("can_invite_users_group", SYSTEM_GROUPS.MEMBERS),
  can_manage_all_groups: setting10("can_manage_all_groups", SYSTEM_GROUPS.OWNERS, { allow_nobody_group: false }),
  can_manage_billing_group: setting10("can_manage_billing_group", SYSTEM_GROUPS.ADMINISTRATORS, { allow_nobody_group: false }),
  can_mention_many_users_group: setting10("can_mention_many_users_group", SYSTEM_GROUPS.ADMINISTRATORS, { allow_everyone_group: true }),
  can_move_messages_between_channels_group: setting10("can_move_messages_between_channels_group", SYSTEM_GROUPS.MEMBERS),
  can_move_messages_between_topics_group: setting10("can_move_messages_between_topics_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
  can_resolve_topics_group: setting10("can_resolve_topics_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
  can_summarize_topics_group: setting10("can_summarize_topics_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
  direct_message_initiator_group: setting10("direct_message_initiator_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
  direct_message_permission_group: setting10("direct_message_permission_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
} as const;
export type RealmGroupSetting = keyof typeof REALM_PERMISSION_GROUP_SETTINGS;
export const REALM_GROUP_SETTING_NAMES = Object.keys(REALM_PERMISSION_GROUP_SETTINGS) as RealmGroupSetting[];

/** A stream's (Zulip's Stream.stream_permission_group_settings). */
export const STREAM_PERMISSION_GROUP_SETTINGS = {
  // Any group, named or anonymous, since feature level 320 (Zulip 10.0's flags).
  can_remove_subscribers_group: setting10("can_remove_subscribers_group", SYSTEM_GROUPS.ADMINISTRATORS, { allow_everyone_group: true }),
  // Zulip 10.0's (feature levels 325, 333, 342, 357). can_administer_channel_group's default is the
  // channel's creator (an anonymous group of them), else role:nobody.
  can_add_subscribers_group: setting10("can_add_subscribers_group", SYSTEM_GROUPS.NOBODY),
  can_administer_channel_group: setting10("can_administer_channel_group", SYSTEM_GROUPS.NOBODY),
  can_send_message_group: setting10("can_send_message_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true }),
  can_subscribe_group: setting10("can_subscribe_group", SYSTEM_GROUPS.NOBODY),
} as const;

/** A user group's (Zulip's NamedUserGroup.GROUP_PERMISSION_SETTINGS). */
export const GROUP_PERMISSION_GROUP_SETTINGS = {
  can_mention_group: setting("can_mention_group", {
    require_system_group: false,
    allow_nobody_group: true,
    allow_everyone_group: true,
    default_group_name: SYSTEM_GROUPS.EVERYONE,
    default_for_system_groups: SYSTEM_GROUPS.NOBODY,
  }),
  // Zulip 10.0's (feature levels 283, 301, 305, 308, 324); "group_creator" defaults are the
  // creator as an anonymous group.
  can_add_members_group: setting10("can_add_members_group", SYSTEM_GROUPS.NOBODY, { default_for_system_groups: SYSTEM_GROUPS.NOBODY }),
  can_join_group: setting10("can_join_group", SYSTEM_GROUPS.NOBODY, { default_for_system_groups: SYSTEM_GROUPS.NOBODY }),
  can_leave_group: setting10("can_leave_group", SYSTEM_GROUPS.EVERYONE, { allow_everyone_group: true, default_for_system_groups: SYSTEM_GROUPS.NOBODY }),
  can_manage_group: setting10("can_manage_group", SYSTEM_GROUPS.NOBODY, { default_for_system_groups: SYSTEM_GROUPS.NOBODY }),
  can_remove_members_group: setting10("can_remove_members_group", SYSTEM_GROUPS.NOBODY, { default_for_system_groups: SYSTEM_GROUPS.NOBODY }),
} as const;

/** /register's server_supported_permission_settings (Zulip's get_server_supported_permission_settings). */
export function serverSupportedPermissionSettings(): Record<string, Record<string, GroupPermissionSetting>> {
  return { realm: { ...REALM_PERMISSION_GROUP_SETTINGS }, stream: { ...STREAM_PERMISSION_GROUP_SETTINGS }, group: { ...GROUP_PERMISSION_GROUP_SETTINGS } };
}

type Reader = Pick<Tx, "$queryRaw">;

/**
 * Answers to "is this user in this group", remembered for the life of one request or job (a
 * membership can change with the next transaction, so nothing outlives the caller).
 */
export class GroupMembershipCache {
  private readonly answers = new Map<string, Promise<boolean>>();
  constructor(readonly db: Reader) {}

  isMember(realmId: number, userId: number, groupId: number): Promise<boolean> {
    const key = `${realmId}:${groupId}:${userId}`;
    let answer = this.answers.get(key);
    if (!answer) {
      answer = queryMembership(this.db, realmId, userId, groupId);
      this.answers.set(key, answer);
    }
    return answer;
  }
}

async function queryMembership(db: Reader, realmId: number, userId: number, groupId: number): Promise<boolean> {
  const rows = await db.$queryRaw<{ member: boolean }[]>`
    WITH RECURSIVE g(id) AS (
      SELECT id FROM user_group WHERE id = ${groupId} AND realm_id = ${realmId}
      UNION SELECT m.subgroup_id FROM group_group_membership m JOIN g ON m.supergroup_id = g.id
    )
    SELECT EXISTS (SELECT 1 FROM user_group_membership um JOIN g ON um.user_group_id = g.id WHERE um.user_id = ${userId}) AS member`;
  return rows[0]?.member ?? false;
}

/** Whether the user is in the group or any of its subgroups, recursively (Zulip's is_user_in_group). */
export function isUserInGroup(db: Reader | GroupMembershipCache, realmId: number, userId: number, groupId: number | null): Promise<boolean> {
  if (groupId === null) return Promise.resolve(false);
  return db instanceof GroupMembershipCache ? db.isMember(realmId, userId, groupId) : queryMembership(db, realmId, userId, groupId);
}

/** Which of these users are in the group (recursively): one query. */
export async function usersInGroup(db: Reader, realmId: number, groupId: number | null, userIds: number[]): Promise<Set<number>> {
  if (groupId === null || userIds.length === 0) return new Set();
  const rows = await db.$queryRaw<{ user_id: number }[]>`
    WITH RECURSIVE g(id) AS (
      SELECT id FROM user_group WHERE id = ${groupId} AND realm_id = ${realmId}
      UNION SELECT m.subgroup_id FROM group_group_membership m JOIN g ON m.supergroup_id = g.id
    )
    SELECT DISTINCT um.user_id FROM user_group_membership um JOIN g ON um.user_group_id = g.id WHERE um.user_id = ANY(${userIds}::int[])`;
  return new Set(rows.map((row) => row.user_id));
}

/** The group a realm setting names. */
export function realmGroupId(realm: Realm, name: RealmGroupSetting): number | null {
  return (realm as unknown as Record<string, number | null>)[`${name}_id`] ?? null;
}

/**
 * System groups' names by id, kept for the life of the process: a system group is never renamed,
 * deleted or given other subgroups, and ids are not reused.
 */
const systemGroupNames = new Map<number, string | null>();

async function systemGroupName(db: Reader | GroupMembershipCache, groupId: number): Promise<string | null> {
  if (systemGroupNames.has(groupId)) return systemGroupNames.get(groupId)!;
  const reader = db instanceof GroupMembershipCache ? db.db : db;
  const rows = await reader.$queryRaw<{ name: string; is_system_group: boolean }[]>`SELECT name, is_system_group FROM user_group WHERE id = ${groupId}`;
  const name = rows[0]?.is_system_group ? rows[0].name : null;
  // Only system groups are remembered: a group users made changes.
  if (name !== null) systemGroupNames.set(groupId, name);
  return name;
}

/** Whether a user of this role is in the system group, where the role alone says (not role:fullmembers). */
function roleInSystemGroup(role: number, name: string): boolean | undefined {
  switch (name) {
    case SYSTEM_GROUPS.NOBODY:
      return false;
    case SYSTEM_GROUPS.OWNERS:
      return role <= 100;
    case SYSTEM_GROUPS.ADMINISTRATORS:
      return role <= 200;
    case SYSTEM_GROUPS.MODERATORS:
      return role <= 300;
    case SYSTEM_GROUPS.MEMBERS:
      return role <= 400;
    case SYSTEM_GROUPS.EVERYONE:
    case SYSTEM_GROUPS.EVERYONE_ON_INTERNET:
      return true;
    default:
      return undefined;
  }
}

/**
 * Whether the actor is in the group: for a system group other than role:fullmembers from their role
 * (as the memberships system-groups.ts keeps say), with no query once the group is known; else as
 * isUserInGroup.
 */
export async function isActorInGroup(db: Reader | GroupMembershipCache, actor: Pick<Actor, "id" | "realm_id" | "role">, groupId: number | null): Promise<boolean> {
  if (groupId === null) return false;
  const name = await systemGroupName(db, groupId);
  // role:fullmembers from the role and the waiting period as of now, where the actor says them
  // (the group's memberships follow the waiting period only when it is synced).
  if (name === SYSTEM_GROUPS.FULL_MEMBERS && "date_joined" in actor && "realm" in actor) return isFullMember(actor as Actor);
  const byRole = name === null ? undefined : roleInSystemGroup(actor.role, name);
  return byRole ?? isUserInGroup(db, actor.realm_id, actor.id, groupId);
}

/**
 * Whether the actor has the permission a setting holding this group grants (Zulip's
 * user_has_permission_for_group_setting): a setting that may not be role:everyone never grants
 * anything to a guest, whatever group it holds.
 */
export function hasGroupSettingPermission(
  db: Reader | GroupMembershipCache,
  actor: Pick<Actor, "id" | "realm_id" | "role">,
  groupId: number | null,
  config: Pick<GroupPermissionSetting, "allow_everyone_group">,
): Promise<boolean> {
  if (!config.allow_everyone_group && actor.role === 600) return Promise.resolve(false);
  return isActorInGroup(db, actor, groupId);
}

/** Whether the actor has the permission a realm group setting grants. */
export function hasRealmGroupPermission(db: Reader | GroupMembershipCache, actor: Actor, name: RealmGroupSetting): Promise<boolean> {
  return hasGroupSettingPermission(db, actor, realmGroupId(actor.realm, name), REALM_PERMISSION_GROUP_SETTINGS[name]);
}

/** Zulip's can_create_public_streams: the realm's can_create_public_channel_group. */
export const canCreatePublicStreams = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> =>
  hasRealmGroupPermission(db, actor, "can_create_public_channel_group");
/** Zulip's can_create_private_streams. */
export const canCreatePrivateStreams = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> =>
  hasRealmGroupPermission(db, actor, "can_create_private_channel_group");
/**
 * Zulip's can_create_web_public_streams, as far as the group goes: the realm's
 * can_create_web_public_channel_group (whether spectators are enabled at all is the caller's check).
 */
export const canCreateWebPublicStreamsByGroup = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> =>
  hasRealmGroupPermission(db, actor, "can_create_web_public_channel_group");
/** Zulip's create_multiuse_invite_group: who may create reusable invitation links. */
export const canCreateMultiuseInviteByGroup = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> =>
  hasRealmGroupPermission(db, actor, "create_multiuse_invite_group");

/**
 * Whether the actor sees every user of the realm (Zulip's user_access_restricted_in_realm, reversed):
 * only guests are ever restricted, when can_access_all_users_group is role:members.
 */
export async function canAccessAllUsers(db: Reader | GroupMembershipCache, actor: Pick<Actor, "id" | "realm_id" | "role" | "realm">): Promise<boolean> {
  if (actor.role !== 600) return true;
  return isActorInGroup(db, actor, realmGroupId(actor.realm, "can_access_all_users_group"));
}

// "May this actor…" for each of Zulip 10.0's realm settings (feature levels 281 to 367), each the
// one check every path it governs makes.

/** Zulip's can_delete_any_message (feature level 281): delete anyone's message, whenever sent. */
export const canDeleteAnyMessage = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_delete_any_message_group");
/** Zulip's can_delete_own_message (feature level 291): one's own messages and one's bots', within the time limit. */
export const canDeleteOwnMessage = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_delete_own_message_group");
/** Feature level 307: add custom emoji. */
export const canAddCustomEmoji = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_add_custom_emoji_group");
/** Zulip's can_move_messages_between_channels (feature level 310). */
export const canMoveMessagesBetweenChannels = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> =>
  hasRealmGroupPermission(db, actor, "can_move_messages_between_channels_group");
/** Zulip's can_move_messages_to_another_topic (feature level 316): retitle others' messages, or one's own past nothing. */
export const canMoveMessagesBetweenTopics = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> =>
  hasRealmGroupPermission(db, actor, "can_move_messages_between_topics_group");
/** Zulip's can_resolve_topic (feature level 367): resolving or unresolving a topic takes this, not the move permission. */
export const canResolveTopics = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_resolve_topics_group");
/** Zulip's can_invite_users_by_email (feature level 321): email invitations. */
export const canInviteUsersByEmail = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_invite_users_group");
/** Zulip's can_create_groups (feature level 299). */
export const canCreateUserGroups = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_create_groups");
/** Zulip's can_manage_all_groups (feature levels 299 and 305): manage every group, whatever the manager's role or membership. */
export const canManageAllGroups = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_manage_all_groups");
/** Feature level 352: wildcard mentions in channels past WILDCARD_MENTION_THRESHOLD subscribers. */
export const canMentionManyUsers = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_mention_many_users_group");
/** Feature level 350: this server has no AI, so nothing uses it yet; the setting is kept and shown. */
export const canSummarizeTopics = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_summarize_topics_group");
/** Feature level 363: this server has no billing, so nothing uses it yet; the setting is kept and shown. */
export const canManageBilling = (db: Reader | GroupMembershipCache, actor: Actor): Promise<boolean> => hasRealmGroupPermission(db, actor, "can_manage_billing_group");

/**
 * Zulip's can_add_subscribers_to_streams (feature levels 341 and 342): subscribing others to a
 * channel takes the realm's can_add_subscribers_group, or the channel's own (its id as
 * `streamGroupId`, channel area's to pass; null: only the realm's counts).
 */
export async function canAddSubscribers(db: Reader | GroupMembershipCache, actor: Actor, streamGroupId: number | null = null): Promise<boolean> {
  if (await hasRealmGroupPermission(db, actor, "can_add_subscribers_group")) return true;
  return streamGroupId !== null && hasGroupSettingPermission(db, actor, streamGroupId, STREAM_PERMISSION_GROUP_SETTINGS.can_add_subscribers_group);
}

/** Zulip's UserProfile bot types: 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded. */
const INCOMING_WEBHOOK_BOT = 2;

/**
 * Zulip 10.0's check_bot_creation_policy (feature level 344): can_create_bots_group may add any
 * kind of bot; can_create_write_only_bots_group only incoming webhooks, which can only send.
 */
export async function canCreateBotOfType(db: Reader | GroupMembershipCache, actor: Actor, botType: number): Promise<boolean> {
  if (await hasRealmGroupPermission(db, actor, "can_create_bots_group")) return true;
  return botType === INCOMING_WEBHOOK_BOT && hasRealmGroupPermission(db, actor, "can_create_write_only_bots_group");
}

/** The bot types the actor may create, for /register's and the bots page's choices. */
export async function creatableBotTypes(db: Reader | GroupMembershipCache, actor: Actor): Promise<{ any: boolean; incomingWebhook: boolean }> {
  const any = await hasRealmGroupPermission(db, actor, "can_create_bots_group");
  return { any, incomingWebhook: any || (await hasRealmGroupPermission(db, actor, "can_create_write_only_bots_group")) };
}

/**
 * Zulip's access_user_group_for_setting: a group of the realm that the setting may name, else the
 * error Zulip gives.
 */
export async function checkGroupForSetting(
  tx: Pick<Tx, "userGroup">,
  realmId: number,
  groupId: number,
  settingName: string,
  config: GroupPermissionSetting,
): Promise<{ id: number; name: string; is_system_group: boolean }> {
  const found = await tx.userGroup.findFirst({ where: { id: groupId, realm_id: realmId }, select: { id: true, name: true, is_system_group: true } });
  // An anonymous group is one setting's own value: no other setting may name it by id.
  if (!found || found.name === null) throw badRequest("Invalid user group");
  const group = { ...found, name: found.name };
  if (config.require_system_group && !group.is_system_group) throw badRequest(`'${settingName}' must be a system user group.`);
  const refuse = () => badRequest(`'${settingName}' setting cannot be set to '${group.name}' group.`);
  if (group.is_system_group) {
    if (!config.allow_internet_group && group.name === SYSTEM_GROUPS.EVERYONE_ON_INTERNET) throw refuse();
    if (!config.allow_nobody_group && group.name === SYSTEM_GROUPS.NOBODY) throw refuse();
    if (!config.allow_everyone_group && group.name === SYSTEM_GROUPS.EVERYONE) throw refuse();
    if (config.allowed_system_groups.length > 0 && !config.allowed_system_groups.includes(group.name as SystemGroupName)) throw refuse();
  }
  return group;
}

/** A direct message's participant as the checks below need them. */
interface Participant {
  id: number;
  is_bot: boolean;
  recipient_id: number | null;
}

/**
 * Zulip 9.0's check_can_send_direct_message: bots, and messages only to bots or oneself, always
 * pass; otherwise someone in the conversation (the sender or a recipient) must be in the realm's
 * direct_message_permission_group, and a sender outside direct_message_initiator_group may only
 * continue a conversation that already has messages.
 */
export async function checkCanSendDirectMessage(db: Reader, sender: Actor, recipients: Participant[]): Promise<void> {
  if (sender.is_bot) return;
  const others = recipients.filter((u) => u.id !== sender.id);
  if (others.every((u) => u.is_bot)) return;
  const permissionGroup = realmGroupId(sender.realm, "direct_message_permission_group");
  const groupName = permissionGroup === null ? SYSTEM_GROUPS.NOBODY : await systemGroupName(db, permissionGroup);
  // role:everyone (the default) has everyone in it: no query.
  const everyoneAllowed = groupName === SYSTEM_GROUPS.EVERYONE || groupName === SYSTEM_GROUPS.EVERYONE_ON_INTERNET;
  if (!everyoneAllowed && (groupName === SYSTEM_GROUPS.NOBODY || (await usersInGroup(db, sender.realm_id, permissionGroup, [sender.id, ...others.map((u) => u.id)])).size === 0)) {
    if (groupName === SYSTEM_GROUPS.NOBODY) throw badRequest("Direct messages are disabled in this organization.");
    throw badRequest("This conversation does not include any users who can authorize it.");
  }
  if (await hasRealmGroupPermission(db, sender, "direct_message_initiator_group")) return;
  if (!(await conversationHasMessages(db, sender, others))) throw badRequest("You do not have permission to initiate direct message conversations.");
}

/** Whether the direct conversation of the sender and these others has any message yet. */
async function conversationHasMessages(db: Reader, sender: Actor, others: Participant[]): Promise<boolean> {
  if (others.length === 1) {
    const other = others[0];
    const rows = await db.$queryRaw<{ found: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM message WHERE (sender_id = ${sender.id} AND recipient_id = ${other.recipient_id ?? -1})
                                        OR (sender_id = ${other.id} AND recipient_id = ${sender.recipient_id ?? -1})) AS found`;
    return rows[0]?.found === true;
  }
  // A group conversation is its huddle (actions/messages.ts: sha1 of the sorted member ids).
  const ids = [sender.id, ...others.map((u) => u.id)].sort((a, b) => a - b);
  const hash = createHash("sha1").update(ids.join(",")).digest("hex");
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM huddle h JOIN message m ON m.recipient_id = h.recipient_id WHERE h.huddle_hash = ${hash}) AS found`;
  return rows[0]?.found === true;
}

/**
 * Zulip 9.0's check_user_group_mention_allowed: a (non-silent) mention of a group takes being in
 * its can_mention_group, unless that is role:everyone; the server's own bots may mention only
 * such groups.
 */
export async function checkGroupMentionsAllowed(db: Reader, sender: Actor, groupIds: number[], senderIsSystemBot = false): Promise<void> {
  if (groupIds.length === 0) return;
  const groups = await db.$queryRaw<{ id: number; name: string; can_mention_group_id: number | null; can_mention_name: string | null }[]>`
    SELECT g.id, g.name, g.can_mention_group_id, c.name AS can_mention_name
    FROM user_group g LEFT JOIN user_group c ON c.id = g.can_mention_group_id
    WHERE g.id = ANY(${groupIds}::int[]) AND g.realm_id = ${sender.realm_id} ORDER BY g.id`;
  for (const group of groups) {
    if (group.can_mention_name === SYSTEM_GROUPS.EVERYONE) continue;
    if (senderIsSystemBot) throw badRequest(`You are not allowed to mention user group '${group.name}'.`);
    if (!(await isUserInGroup(db, sender.realm_id, sender.id, group.can_mention_group_id))) {
      throw badRequest(`You are not allowed to mention user group '${group.name}'. You must be a member of '${group.can_mention_name ?? ""}' to mention this group.`);
    }
  }
}

/**
 * Each realm group setting as the name of the system group it holds, or null for a group users
 * made or an anonymous one (one query): what the integer policies older clients read are derived
 * from (permissions.ts's legacyRealmPolicies).
 */
export async function realmGroupSystemNames(db: Reader, realm: Realm): Promise<Record<RealmGroupSetting, string | null>> {
  const ids = REALM_GROUP_SETTING_NAMES.map((name) => realmGroupId(realm, name)).filter((id): id is number => id !== null);
  const rows = await db.$queryRaw<{ id: number; name: string }[]>`SELECT id, name FROM user_group WHERE id = ANY(${ids}::int[]) AND is_system_group`;
  const names = new Map(rows.map((row) => [row.id, row.name]));
  return Object.fromEntries(REALM_GROUP_SETTING_NAMES.map((name) => [name, names.get(realmGroupId(realm, name) ?? -1) ?? null])) as Record<RealmGroupSetting, string | null>;
}
