import { Router } from "express";
import { JsonableError, messageReadReceipts } from "@chat/core";
import { actorOf, endpoint, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

export const readReceiptEndpoints = {
  // Zulip's read receipts (feature level 137); zulip-flutter offers them when realm_enable_read_receipts.
  list: endpoint({
    method: "get",
    path: "/messages/{message_id}/read_receipts",
    tag: "messages",
    auth: "basic",
    summary: "Who has read a message: not its sender, nor users who turned off send_read_receipts",
    params: {},
    response: successBody({ user_ids: schema.array(schema.integer()) }),
  }),
};

export function readReceiptRoutes(services: ApiServices): Router {
  const router = Router();
  serve(
    router,
    readReceiptEndpoints.list,
    route(async (req, res) => {
      const raw = String(req.params.message_id);
      if (!/^\d+$/.test(raw)) throw new JsonableError("Endpoint not found", { status: 404 });
      // An id past Postgres' integer is "Invalid message(s)" from the access check, before any query.
      success(res, { user_ids: await messageReadReceipts(services.prisma, actorOf(res), Number(raw)) });
    }),
  );
  return router;
}
