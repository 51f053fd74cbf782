import { Router } from "express";
import {
  createUserGroup,
  deactivateUserGroup,
  deleteUserGroup,
  getUserGroupMemberIds,
  getUserGroups,
  getUserGroupSubgroupIds,
  type GroupSettingChange,
  type GroupSettingValue,
  isGuest,
  isUserGroupMember,
  JsonableError,
  MAX_ANONYMOUS_GROUP_MEMBERS,
  MAX_ANONYMOUS_GROUP_SUBGROUPS,
  MAX_USER_GROUP_REQUEST_IDS,
  parseGroupSettingChange,
  parseGroupSettingValue,
  updateUserGroup,
  updateUserGroupMembers,
  updateUserGroupSubgroups,
  USER_GROUP_SETTING_NAMES,
  type UserGroupSettingName,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const USER_IDS = { type: "array", items: { type: "integer" }, maxItems: MAX_USER_GROUP_REQUEST_IDS };
const GROUP_IDS = USER_IDS;

/** A group-setting value (/api/group-setting-values): a named group's id, or an anonymous group's direct members and subgroups. */
const GROUP_SETTING_VALUE = {
  anyOf: [
    { type: "integer" },
    {
      type: "object",
      properties: {
        direct_members: { type: "array", items: { type: "integer" }, maxItems: MAX_ANONYMOUS_GROUP_MEMBERS },
        direct_subgroups: { type: "array", items: { type: "integer" }, maxItems: MAX_ANONYMOUS_GROUP_SUBGROUPS },
      },
      required: ["direct_members", "direct_subgroups"],
      additionalProperties: false,
    },
  ],
};
/** PATCH's form: `{new, old}` (Zulip's GroupSettingChangeRequest); a bare value, as Zulip 9.0's can_mention_group, is `new`. */
const GROUP_SETTING_CHANGE = {
  anyOf: [
    GROUP_SETTING_VALUE,
    { type: "object", properties: { new: GROUP_SETTING_VALUE, old: GROUP_SETTING_VALUE }, required: ["new"], additionalProperties: false },
  ],
};
const JSON_BOUNDS = { maxItems: MAX_ANONYMOUS_GROUP_MEMBERS };

const settingValueParams = Object.fromEntries(USER_GROUP_SETTING_NAMES.map((name) => [name, params.json<unknown>(GROUP_SETTING_VALUE, JSON_BOUNDS).optional()])) as Record<
  UserGroupSettingName,
  ReturnType<ReturnType<typeof params.json<unknown>>["optional"]>
>;
const settingChangeParams = Object.fromEntries(USER_GROUP_SETTING_NAMES.map((name) => [name, params.json<unknown>(GROUP_SETTING_CHANGE, JSON_BOUNDS).optional()])) as typeof settingValueParams;

const common = { tag: "users", auth: "basic", response: EMPTY_SUCCESS } as const;
/** Changes an administrator (for some, an owner) may have to make: UNAUTHORIZED_PRINCIPAL for anyone else. */
const ADMIN = { errors: ["UNAUTHORIZED_PRINCIPAL"] } as const;

export const userGroupEndpoints = {
  list: endpoint({
    ...common,
    method: "get",
    path: "/user_groups",
    summary: "The organization's user groups",
    params: {
      include_deactivated_groups: params.bool().optional().describe("Include deactivated groups (feature level 294)."),
      allow_deactivated: params.bool().optional().describe("include_deactivated_groups's name before feature level 294."),
    },
    response: successBody({ user_groups: schema.array(schema.ref("UserGroup")) }),
  }),
  create: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/user_groups/create",
    summary: "Create a user group",
    params: { name: params.string(), description: params.string(), members: params.json<number[]>(USER_IDS), subgroups: params.json<number[]>(GROUP_IDS).optional(), ...settingValueParams },
    response: successBody({ group_id: schema.integer() }),
  }),
  update: endpoint({
    ...common,
    ...ADMIN,
    errors: ["UNAUTHORIZED_PRINCIPAL", "EXPECTATION_MISMATCH"],
    method: "patch",
    path: "/user_groups/{group_id}",
    summary: "Rename a user group, change its description or its settings",
    params: { name: params.string().optional(), description: params.string().optional(), ...settingChangeParams },
  }),
  remove: endpoint({
    ...common,
    errors: ["UNAUTHORIZED_PRINCIPAL", "CANNOT_DEACTIVATE_GROUP_IN_USE"],
    method: "delete",
    path: "/user_groups/{group_id}",
    summary: "Delete a user group (Zulip 3.x): removed in Zulip 10.0, kept for 3.x clients; deactivates the group",
    params: {},
  }),
  deactivate: endpoint({
    ...common,
    errors: ["UNAUTHORIZED_PRINCIPAL", "CANNOT_DEACTIVATE_GROUP_IN_USE"],
    method: "post",
    path: "/user_groups/{group_id}/deactivate",
    summary: "Deactivate a user group",
    params: {},
  }),
  members: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/user_groups/{group_id}/members",
    summary: "Add members to a user group and remove others, and its subgroups",
    params: {
      add: params.json<number[]>(USER_IDS).default([]),
      delete: params.json<number[]>(USER_IDS).default([]),
      add_subgroups: params.json<number[]>(GROUP_IDS).default([]),
      delete_subgroups: params.json<number[]>(GROUP_IDS).default([]),
    },
  }),
  memberList: endpoint({
    ...common,
    method: "get",
    path: "/user_groups/{group_id}/members",
    summary: "A user group's members (active users only; feature level 303)",
    params: { direct_member_only: params.bool().default(false) },
    response: successBody({ members: schema.array(schema.integer()) }),
  }),
  isMember: endpoint({
    ...common,
    method: "get",
    path: "/user_groups/{group_id}/members/{user_id}",
    summary: "Whether a user is in a user group",
    params: { direct_member_only: params.bool().default(false) },
    response: successBody({ is_user_group_member: schema.boolean() }),
  }),
  subgroupList: endpoint({
    ...common,
    method: "get",
    path: "/user_groups/{group_id}/subgroups",
    summary: "A user group's subgroups",
    params: { direct_subgroup_only: params.bool().default(false) },
    response: successBody({ subgroups: schema.array(schema.integer()) }),
  }),
  subgroups: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/user_groups/{group_id}/subgroups",
    summary: "Add subgroups to a user group and remove others",
    params: { add: params.json<number[]>(GROUP_IDS).default([]), delete: params.json<number[]>(GROUP_IDS).default([]) },
  }),
};

function settingValues(p: Record<string, unknown>): Partial<Record<UserGroupSettingName, GroupSettingValue>> {
  const values: Partial<Record<UserGroupSettingName, GroupSettingValue>> = {};
  for (const name of USER_GROUP_SETTING_NAMES) if (p[name] !== undefined) values[name] = parseGroupSettingValue(p[name], name);
  return values;
}

function settingChanges(p: Record<string, unknown>): Partial<Record<UserGroupSettingName, GroupSettingChange>> {
  const changes: Partial<Record<UserGroupSettingName, GroupSettingChange>> = {};
  for (const name of USER_GROUP_SETTING_NAMES) {
    const raw = p[name];
    if (raw === undefined) continue;
    const isChange = typeof raw === "object" && raw !== null && "new" in raw;
    changes[name] = isChange ? parseGroupSettingChange(raw, name) : { new: parseGroupSettingValue(raw, name) };
  }
  return changes;
}

export function userGroupRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = userGroupEndpoints;

  serve(
    router,
    E.list,
    route(async (req, res) => {
      const actor = actorOf(res);
      if (isGuest(actor)) throw new JsonableError("Not allowed for guest users");
      const p = parseParams(req, E.list.params);
      const includeDeactivated = p.include_deactivated_groups ?? p.allow_deactivated ?? false;
      success(res, { user_groups: await getUserGroups(prisma, actor.realm_id, { includeDeactivated }) });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.create.params);
      const settings = settingValues(p);
      const group = await actions.run(originOf(req, actor), (tx, events) =>
        createUserGroup(tx, events, actor, { name: p.name, description: p.description, members: p.members, subgroups: p.subgroups, settings }),
      );
      success(res, { group_id: group.id });
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.update.params);
      const settings = settingChanges(p);
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroup(tx, events, actor, groupId, { name: p.name, description: p.description, settings }));
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteUserGroup(tx, events, actor, groupId));
      success(res);
    }),
  );

  serve(
    router,
    E.deactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      await actions.run(originOf(req, actor), (tx, events) => deactivateUserGroup(tx, events, actor, groupId));
      success(res);
    }),
  );

  serve(
    router,
    E.members,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.members.params);
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroupMembers(tx, events, actor, groupId, p));
      success(res);
    }),
  );

  serve(
    router,
    E.subgroups,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.subgroups.params);
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroupSubgroups(tx, events, actor, groupId, p));
      success(res);
    }),
  );
  serve(
    router,
    E.memberList,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.memberList.params);
      success(res, { members: await getUserGroupMemberIds(prisma, actor, groupId, p.direct_member_only) });
    }),
  );

  serve(
    router,
    E.isMember,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const userId = pathId(req, "user_id");
      const p = parseParams(req, E.isMember.params);
      success(res, { is_user_group_member: await isUserGroupMember(prisma, actor, groupId, userId, p.direct_member_only) });
    }),
  );

  serve(
    router,
    E.subgroupList,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.subgroupList.params);
      success(res, { subgroups: await getUserGroupSubgroupIds(prisma, actor, groupId, p.direct_subgroup_only) });
    }),
  );
  return router;
}
