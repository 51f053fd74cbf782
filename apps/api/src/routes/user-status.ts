import { Router } from "express";
import { updateUserStatus } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

export const userStatusEndpoints = {
  update: endpoint({
    method: "post",
    path: "/users/me/status",
    tag: "users",
    auth: "basic",
    summary: "Set the user's away flag and status text",
    params: { away: params.bool().optional(), status_text: params.string().optional() },
    response: EMPTY_SUCCESS,
  }),
};

export function userStatusRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  serve(
    router,
    userStatusEndpoints.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, userStatusEndpoints.update.params);
      await actions.run(originOf(req, actor), (tx, events) => updateUserStatus(tx, events, actor, { away: p.away, statusText: p.status_text }));
      success(res);
    }),
  );
  return router;
}
