import { Router } from "express";
import { updateUserStatus } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";

export function userStatusRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  router.post(
    "/users/me/status",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { away: params.bool().optional(), status_text: params.string().optional() });
      await actions.run(originOf(req, actor), (tx, events) => updateUserStatus(tx, events, actor, { away: p.away, statusText: p.status_text }));
      success(res);
    }),
  );
  return router;
}
