import { Router } from "express";
import { MAX_REPORT_DESCRIPTION_LENGTH, realmUri, reportMessage, REPORT_TYPES } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, requestProtocol, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const messageReportEndpoints = {
  report: endpoint({
    method: "post",
    path: "/messages/{message_id}/report",
    tag: "messages",
    auth: "basic",
    summary: "Report a message to the organization's moderators (Zulip's feature level 382)",
    params: {
      report_type: params.oneOf(REPORT_TYPES).describe("spam, harassment, inappropriate, norms or other."),
      description: params.string().maxLength(MAX_REPORT_DESCRIPTION_LENGTH).default("").describe("Why; required for `other`."),
    },
    pathParams: { message_id: { schema: { type: "integer" }, description: "The message's id." } },
    response: EMPTY_SUCCESS,
  }),
};

export function messageReportRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions, ctx } = services;
  const E = messageReportEndpoints;

  serve(
    router,
    E.report,
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      const p = parseParams(req, E.report.params);
      const realmUrl = realmUri(actor.realm.string_id, ctx.externalHost, requestProtocol(req));
      await actions.run(originOf(req, actor), (tx, events) => reportMessage(tx, events, ctx, actor, { messageId, reportType: p.report_type, description: p.description, realmUrl }));
      success(res);
    }),
  );
  return router;
}
