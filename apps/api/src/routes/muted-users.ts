import { Router } from "express";
import { muteUser, unmuteUser } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const common = { path: "/users/me/muted_users/{muted_user_id}", tag: "users", auth: "basic", params: {}, response: EMPTY_SUCCESS } as const;

export const mutedUserEndpoints = {
  mute: endpoint({ ...common, method: "post", summary: "Mute a user (feature levels 48, 188: bots too)" }),
  unmute: endpoint({ ...common, method: "delete", summary: "Unmute a user (feature level 48)" }),
};

export function mutedUserRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = mutedUserEndpoints;

  serve(
    router,
    E.mute,
    route(async (req, res) => {
      const actor = actorOf(res);
      const mutedUserId = pathId(req, "muted_user_id");
      await actions.run(originOf(req, actor), (tx, events) => muteUser(tx, events, actor, mutedUserId));
      success(res);
    }),
  );

  serve(
    router,
    E.unmute,
    route(async (req, res) => {
      const actor = actorOf(res);
      const mutedUserId = pathId(req, "muted_user_id");
      await actions.run(originOf(req, actor), (tx, events) => unmuteUser(tx, events, actor, mutedUserId));
      success(res);
    }),
  );
  return router;
}
