import { Router } from "express";
import { sendTypingNotification } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { parsePrivateRecipients } from "./messages.ts";

export const typingEndpoints = {
  notify: endpoint({
    method: "post",
    path: "/typing",
    tag: "users",
    auth: "basic",
    summary: "Tell a private conversation's recipients the user started or stopped typing",
    params: {
      op: params.string().describe("`start` or `stop`."),
      to: params.string().optional().describe("The recipients: a JSON list of user ids (or of emails, deprecated), or emails separated by commas."),
    },
    response: EMPTY_SUCCESS,
  }),
};

export function typingRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  serve(
    router,
    typingEndpoints.notify,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, typingEndpoints.notify.params);
      const to = p.to === undefined ? [] : parsePrivateRecipients(p.to);
      await actions.run(originOf(req, actor), (tx, events) => sendTypingNotification(tx, events, actor, to, p.op));
      success(res);
    }),
  );
  return router;
}
