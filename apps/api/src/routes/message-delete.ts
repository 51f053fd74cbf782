import { Router } from "express";
import { deleteMessage } from "@chat/core";
import { actorOf, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export function messageDeleteRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  router.delete(
    "/messages/:message_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteMessage(tx, events, actor, messageId));
      success(res);
    }),
  );
  return router;
}
