// The organization's /register sections (user groups, linkifiers, default streams and stream
// groups, custom profile fields) and the appliers that keep them and the `realm` settings current.
// initial-state.ts and apply-events.ts spread these into their tables.
import type { PrismaClient } from "@chat/db";
import type { Actor } from "../models.ts";
import type { State } from "./initial-state.ts";
import { getUserGroups } from "../actions/user-groups.ts";
import { linkifierTuples } from "../actions/linkifiers.ts";
import { getDefaultStreamGroups, getDefaultStreams } from "../actions/default-streams.ts";
import { getCustomProfileFields, PROFILE_FIELD_TYPE_CHOICES } from "../actions/profile-fields.ts";
import { isGuest } from "../lib/roles.ts";

type Section = (prisma: PrismaClient, actor: Actor) => Promise<State>;
type Applier = (state: State, event: Record<string, unknown>, userId: number) => void;

export const ORGANIZATION_STATE_SECTIONS: Record<string, Section> = {
  async realm_user_groups(prisma, actor) {
    return { realm_user_groups: await getUserGroups(prisma, actor.realm_id) };
  },

  async realm_filters(prisma, actor) {
    return { realm_filters: await linkifierTuples(prisma, actor.realm_id) };
  },

  async default_streams(prisma, actor) {
    return { realm_default_streams: isGuest(actor) ? [] : await getDefaultStreams(prisma, actor.realm_id) };
  },

  async default_stream_groups(prisma, actor) {
    return { realm_default_stream_groups: isGuest(actor) ? [] : await getDefaultStreamGroups(prisma, actor.realm_id) };
  },

  async custom_profile_fields(prisma, actor) {
    return { custom_profile_fields: await getCustomProfileFields(prisma, actor.realm_id), custom_profile_field_types: PROFILE_FIELD_TYPE_CHOICES };
  },
};

interface GroupState {
  id: number;
  members: number[];
  [key: string]: unknown;
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
    }
  },

  realm_filters(state, event) {
    if ("realm_filters" in state) state.realm_filters = event.realm_filters;
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
      if (property === "create_stream_policy" && "can_create_streams" in state) {
        state.can_create_streams = !state.is_guest && (value !== 2 || Boolean(state.is_admin));
      }
    };
    if (event.op === "update") set(event.property as string, event.value);
    else if (event.op === "update_dict") {
      for (const [property, value] of Object.entries(event.data as Record<string, unknown>)) set(property, value);
    }
  },
};
