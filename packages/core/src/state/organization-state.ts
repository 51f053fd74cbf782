// The organization's /register sections (user groups, linkifiers, default streams and stream
// groups, custom profile fields, custom emoji) and the appliers that keep them and the `realm`
// settings current. initial-state.ts and apply-events.ts spread these into their tables. The
// sections are the same for every member of a realm (default streams aside, which guests do not
// get), so an event node serves them from its copy (realm-state-cache.ts).
import type { PrismaClient } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { Actor } from "../models.ts";
import type { State } from "./initial-state.ts";
import { getUserGroups } from "../actions/user-groups.ts";
import { linkifierTuples } from "../actions/linkifiers.ts";
import { getDefaultStreamGroups, getDefaultStreams } from "../actions/default-streams.ts";
import { getCustomProfileFields, PROFILE_FIELD_TYPE_CHOICES } from "../actions/profile-fields.ts";
import { getRealmEmojiDicts } from "../queries/realm-emoji.ts";
import { isGuest } from "../lib/roles.ts";
import { REALM_GROUP_SETTING_NAMES } from "../lib/group-permissions.ts";
import { legacyRealmPolicies } from "../lib/permissions.ts";

type Section = (prisma: PrismaClient, actor: Actor, options: unknown, ctx: ServerContext) => Promise<State>;
type Applier = (state: State, event: Record<string, unknown>, userId: number) => void;

/** Each organization section as read from the database, for a guest or anyone else. */
export const ORGANIZATION_READERS: Record<string, (prisma: PrismaClient, realmId: number, guest: boolean) => Promise<State>> = {
  async realm_user_groups(prisma, realmId) {
    return { realm_user_groups: await getUserGroups(prisma, realmId) };
  },

  async realm_filters(prisma, realmId) {
    return { realm_filters: await linkifierTuples(prisma, realmId) };
  },

  async default_streams(prisma, realmId, guest) {
    return { realm_default_streams: guest ? [] : await getDefaultStreams(prisma, realmId) };
  },

  async default_stream_groups(prisma, realmId, guest) {
    return { realm_default_stream_groups: guest ? [] : await getDefaultStreamGroups(prisma, realmId) };
  },

  async custom_profile_fields(prisma, realmId) {
    return { custom_profile_fields: await getCustomProfileFields(prisma, realmId), custom_profile_field_types: PROFILE_FIELD_TYPE_CHOICES };
  },

  async realm_emoji(prisma, realmId) {
    return { realm_emoji: await getRealmEmojiDicts(prisma, realmId) };
  },
};

/** Every organization section, by section name. */
export async function readOrganizationSections(prisma: PrismaClient, realmId: number, guest: boolean): Promise<Record<string, State>> {
  const names = Object.keys(ORGANIZATION_READERS);
  const parts = await Promise.all(names.map((name) => ORGANIZATION_READERS[name](prisma, realmId, guest)));
  return Object.fromEntries(names.map((name, i) => [name, parts[i]]));
}

export const ORGANIZATION_STATE_SECTIONS: Record<string, Section> = Object.fromEntries(
  Object.entries(ORGANIZATION_READERS).map(([name, read]) => [
    name,
    async (prisma: PrismaClient, actor: Actor, _options: unknown, ctx: ServerContext): Promise<State> =>
      ctx.realmState ? (await ctx.realmState.organizationSections(actor.realm_id, isGuest(actor)))[name] : read(prisma, actor.realm_id, isGuest(actor)),
  ]),
);

interface GroupState {
  id: number;
  members: number[];
  [key: string]: unknown;
}

/** Whether a group of the state's realm_user_groups has the user, directly or through its subgroups. */
function stateGroupHas(groups: GroupState[], groupId: number, userId: number, seen = new Set<number>()): boolean {
  const group = groups.find((g) => g.id === groupId);
  if (!group || seen.has(groupId)) return false;
  seen.add(groupId);
  if (group.members.includes(userId)) return true;
  return ((group.direct_subgroup_ids as number[] | undefined) ?? []).some((id) => stateGroupHas(groups, id, userId, seen));
}

/** Whether the user has what a group-setting value grants (a group's id, or an anonymous group), as the state's groups say. */
function stateValueHas(groups: GroupState[], value: unknown, userId: number): boolean {
  if (typeof value === "number") return stateGroupHas(groups, value, userId);
  if (typeof value !== "object" || value === null) return false;
  const anonymous = value as { direct_members: number[]; direct_subgroups: number[] };
  return anonymous.direct_members.includes(userId) || anonymous.direct_subgroups.some((id) => stateGroupHas(groups, id, userId));
}

/**
 * After a realm group setting changed (Zulip 10.0): what the state derives from the settings, as
 * the server derives it (lib/permissions.ts's legacyRealmPolicies; group-permissions.ts's checks),
 * when the state holds the groups to read them with.
 */
function applyRealmGroupSettings(state: Record<string, unknown>): void {
  if (!Array.isArray(state.realm_user_groups)) return;
  const groups = state.realm_user_groups as GroupState[];
  const names: Record<string, string | null> = {};
  for (const setting of REALM_GROUP_SETTING_NAMES) {
    const value = state[`realm_${setting}`];
    const group = typeof value === "number" ? groups.find((g) => g.id === value) : undefined;
    names[setting] = group && group.is_system_group ? (group.name as string) : null;
  }
  const legacy = legacyRealmPolicies(names);
  for (const [property, value] of Object.entries(legacy)) if (`realm_${property}` in state) state[`realm_${property}`] = value;
  const userId = state.user_id as number;
  const guest = state.is_guest === true;
  const has = (setting: string) => !guest && stateValueHas(groups, state[`realm_${setting}`], userId);
  if ("can_create_streams" in state) state.can_create_streams = has("can_create_public_channel_group") || has("can_create_private_channel_group");
  if ("can_invite_others_to_realm" in state) state.can_invite_others_to_realm = has("can_invite_users_group");
  if ("can_subscribe_other_users" in state) state.can_subscribe_other_users = has("can_add_subscribers_group");
}

export const ORGANIZATION_APPLIERS: Record<string, Applier> = {
  user_group(state, event) {
    if (!("realm_user_groups" in state)) return;
    const groups = state.realm_user_groups as GroupState[];
    const group = groups.find((g) => g.id === event.group_id);
    if (event.op === "add") {
      const added = event.group as GroupState;
      if (!groups.some((g) => g.id === added.id)) groups.push({ ...added, members: [...added.members] });
      groups.sort((a, b) => a.id - b.id);
    } else if (event.op === "remove") {
      state.realm_user_groups = groups.filter((g) => g.id !== event.group_id);
    } else if (event.op === "update" && group) {
      Object.assign(group, event.data as Record<string, unknown>);
    } else if (event.op === "add_members" && group) {
      group.members = [...new Set([...group.members, ...(event.user_ids as number[])])].sort((a, b) => a - b);
    } else if (event.op === "remove_members" && group) {
      const removed = new Set(event.user_ids as number[]);
      group.members = group.members.filter((id) => !removed.has(id));
    } else if (event.op === "add_subgroups" && group) {
      const current = (group.direct_subgroup_ids as number[] | undefined) ?? [];
      group.direct_subgroup_ids = [...new Set([...current, ...(event.direct_subgroup_ids as number[])])].sort((a, b) => a - b);
    } else if (event.op === "remove_subgroups" && group) {
      const removed = new Set(event.direct_subgroup_ids as number[]);
      group.direct_subgroup_ids = ((group.direct_subgroup_ids as number[] | undefined) ?? []).filter((id) => !removed.has(id));
    }
  },

  realm_filters(state, event) {
    if ("realm_filters" in state) state.realm_filters = event.realm_filters;
  },

  realm_linkifiers(state, event) {
    if ("realm_linkifiers" in state) state.realm_linkifiers = event.realm_linkifiers;
  },

  default_streams(state, event) {
    if ("realm_default_streams" in state) state.realm_default_streams = event.default_streams;
  },

  default_stream_groups(state, event) {
    if ("realm_default_stream_groups" in state) state.realm_default_stream_groups = event.default_stream_groups;
  },

  custom_profile_fields(state, event) {
    if ("custom_profile_fields" in state) state.custom_profile_fields = event.fields;
  },

  realm(state, event) {
    const set = (property: string, value: unknown) => {
      const key = `realm_${property}`;
      if (!(key in state)) return;
      state[key] = value;
      // As lib/permissions.ts decides, but for the waiting period of policy 3 (full members), which
      // the state does not hold: a member past it, as everyone is while it is 0 days (the default).
      const mayUnder = (policy: unknown) => Boolean(state.is_admin) || (!state.is_guest && policy !== 2 && (policy !== 4 || state.role === 300));
      if (property === "create_stream_policy" && "can_create_streams" in state) state.can_create_streams = mayUnder(value);
      if (property === "invite_to_stream_policy" && "can_subscribe_other_users" in state) state.can_subscribe_other_users = mayUnder(value);
      // Zulip 9.0's groups decide (group-permissions.ts); the state's realm_user_groups say who is in them.
      if ((property === "can_create_public_channel_group" || property === "can_create_private_channel_group") && "can_create_streams" in state && Array.isArray(state.realm_user_groups)) {
        const groups = state.realm_user_groups as GroupState[];
        state.can_create_streams = [state.realm_can_create_public_channel_group, state.realm_can_create_private_channel_group].some((id) => stateGroupHas(groups, id as number, state.user_id as number));
      }
      // As permissions.ts's canInviteOthersToRealm (policyAllows): 6 nobody, 2 administrators, 4 moderators.
      if (property === "invite_to_realm_policy" && "can_invite_others_to_realm" in state) {
        const role = typeof state.role === "number" ? state.role : state.is_admin ? 200 : state.is_guest ? 600 : 400;
        state.can_invite_others_to_realm = value !== 6 && (role <= 200 || (value !== 2 && (role <= 300 || (value !== 4 && role !== 600))));
      }
    };
    // The announcement streams go by two names (feature level 241); the state holds both.
    const ALIASES: Record<string, string> = {
      notifications_stream_id: "new_stream_announcements_stream_id",
      new_stream_announcements_stream_id: "notifications_stream_id",
      signup_notifications_stream_id: "signup_announcements_stream_id",
      signup_announcements_stream_id: "signup_notifications_stream_id",
    };
    const setBoth = (property: string, value: unknown) => {
      set(property, value);
      if (property in ALIASES) set(ALIASES[property], value);
      if (property === "jitsi_server_url" && "jitsi_server_url" in state) state.jitsi_server_url = value ?? state.server_jitsi_server_url;
    };
    if (event.op === "update") setBoth(event.property as string, event.value);
    else if (event.op === "update_dict") {
      for (const [property, value] of Object.entries(event.data as Record<string, unknown>)) setBoth(property, value);
      if (Object.keys(event.data as Record<string, unknown>).some((key) => (REALM_GROUP_SETTING_NAMES as string[]).includes(key))) {
        applyRealmGroupSettings(state);
      }
    }
  },
};
