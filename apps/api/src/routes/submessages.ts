import { Router } from "express";
import { addSubmessage, MAX_SUBMESSAGE_CONTENT_LENGTH, MAX_SUBMESSAGE_TYPE_LENGTH } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

export const submessageEndpoints = {
  add: endpoint({
    method: "post",
    path: "/submessage",
    tag: "messages",
    auth: "basic",
    summary: "Attach a submessage to a message (a widget, a poll vote, a to-do task)",
    params: {
      message_id: params.int(),
      msg_type: params.string().maxLength(MAX_SUBMESSAGE_TYPE_LENGTH).describe("`widget` for polls and to-do lists."),
      content: params.string().maxLength(MAX_SUBMESSAGE_CONTENT_LENGTH).describe("JSON-encoded; for a poll or a to-do list, one of its changes."),
    },
    response: EMPTY_SUCCESS,
  }),
};

export function submessageRoutes(services: ApiServices): Router {
  const router = Router();
  const E = submessageEndpoints;

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.add.params);
      await services.actions.run(originOf(req, actor), (tx, events) =>
        addSubmessage(tx, events, actor, { messageId: p.message_id, msgType: p.msg_type, content: p.content }),
      );
      success(res);
    }),
  );
  return router;
}
