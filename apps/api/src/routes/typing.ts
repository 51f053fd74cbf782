import { Router } from "express";
import { sendTypingNotification } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { parsePrivateRecipients } from "./messages.ts";

export function typingRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  router.post(
    "/typing",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { op: params.string(), to: params.string().optional() });
      const to = p.to === undefined ? [] : parsePrivateRecipients(p.to);
      await actions.run(originOf(req, actor), (tx, events) => sendTypingNotification(tx, events, actor, to, p.op));
      success(res);
    }),
  );
  return router;
}
