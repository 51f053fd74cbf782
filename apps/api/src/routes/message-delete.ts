import { Router } from "express";
import { deleteMessage } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const messageDeleteEndpoints = {
  remove: endpoint({ method: "delete", path: "/messages/{message_id}", tag: "messages", auth: "basic", summary: "Delete a message", params: {}, response: EMPTY_SUCCESS }),
};

export function messageDeleteRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  serve(
    router,
    messageDeleteEndpoints.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteMessage(tx, events, actor, messageId));
      success(res);
    }),
  );
  return router;
}
