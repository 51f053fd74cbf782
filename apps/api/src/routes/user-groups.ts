import { Router } from "express";
import { createUserGroup, deleteUserGroup, getUserGroups, isGuest, JsonableError, updateUserGroup, updateUserGroupMembers } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const USER_IDS = { type: "array", items: { type: "integer" } };

export function userGroupRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;

  router.get(
    "/user_groups",
    route(async (_req, res) => {
      const actor = actorOf(res);
      if (isGuest(actor)) throw new JsonableError("Not allowed for guest users");
      success(res, { user_groups: await getUserGroups(prisma, actor.realm_id) });
    }),
  );

  router.post(
    "/user_groups/create",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { name: params.string(), description: params.string(), members: params.json<number[]>(USER_IDS) });
      await actions.run(originOf(req, actor), (tx, events) => createUserGroup(tx, events, actor, p));
      success(res);
    }),
  );

  router.patch(
    "/user_groups/:group_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, { name: params.string().optional(), description: params.string().optional() });
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroup(tx, events, actor, groupId, p));
      success(res);
    }),
  );

  router.delete(
    "/user_groups/:group_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteUserGroup(tx, events, actor, groupId));
      success(res);
    }),
  );

  router.post(
    "/user_groups/:group_id/members",
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, { add: params.json<number[]>(USER_IDS).default([]), delete: params.json<number[]>(USER_IDS).default([]) });
      await actions.run(originOf(req, actor), (tx, events) => updateUserGroupMembers(tx, events, actor, groupId, p));
      success(res);
    }),
  );
  return router;
}
