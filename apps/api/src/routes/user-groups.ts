import { Router } from "express";
import { createUserGroup, deleteUserGroup, getUserGroups, isGuest, JsonableError, updateUserGroup, updateUserGroupMembers } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const USER_IDS = { type: "array", items: { type: "integer" } };

const common = { tag: "users", auth: "basic", response: EMPTY_SUCCESS } as const;
/** Changes an administrator (for some, an owner) may have to make: UNAUTHORIZED_PRINCIPAL for anyone else. */
const ADMIN = { errors: ["UNAUTHORIZED_PRINCIPAL"] } as const;

export const userGroupEndpoints = {
  list: endpoint({ ...common, method: "get", path: "/user_groups", summary: "The organization's user groups", params: {}, response: successBody({ user_groups: schema.array(schema.ref("UserGroup")) }) }),
  create: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/user_groups/create",
    summary: "Create a user group",
    params: { name: params.string(), description: params.string(), members: params.json<number[]>(USER_IDS), can_mention_group: params.int().optional() },
  }),
  update: endpoint({
    ...common,
    ...ADMIN,
    method: "patch",
    path: "/user_groups/{group_id}",
    summary: "Rename a user group or change its description",
    params: { name: params.string().optional(), description: params.string().optional(), can_mention_group: params.int().optional() },
  }),
  remove: endpoint({ ...common, ...ADMIN, method: "delete", path: "/user_groups/{group_id}", summary: "Delete a user group", params: {} }),
  members: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/user_groups/{group_id}/members",
    summary: "Add members to a user group and remove others",
    params: { add: params.json<number[]>(USER_IDS).default([]), delete: params.json<number[]>(USER_IDS).default([]) },
  }),
};

export function userGroupRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = userGroupEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      const actor = actorOf(res);
      if (isGuest(actor)) throw new JsonableError("Not allowed for guest users");
      success(res, { user_groups: await getUserGroups(prisma, actor.realm_id) });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.create.params);
      await actions.run(originOf(req, actor), (tx, events) => createUserGroup(tx, events, actor, p));
      success(res);
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.update.params);
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroup(tx, events, actor, groupId, p));
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
    E.members,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.members.params);
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroupMembers(tx, events, actor, groupId, p));
      success(res);
    }),
  );
  return router;
}
