import { Router } from "express";
import { checkCanDeleteTopic, deleteTopic, emptyTopicFromDisplayName } from "@chat/core";
import { actorOf, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const topicDeleteEndpoints = {
  remove: endpoint({
    method: "post",
    path: "/streams/{stream_id}/delete_topic",
    tag: "streams",
    auth: "basic",
    summary: "Delete a topic's messages",
    description:
      "Administrators only (Zulip 9.0). Deletes, newest first and in batches that each commit, every message of the topic they can read; past a time limit it stops with `complete: false` (feature level 211), and repeating the request goes on.",
    params: { topic_name: params.string().maxLength(600) },
    response: successBody({ complete: schema.boolean() }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

export function topicDeleteRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  serve(
    router,
    topicDeleteEndpoints.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkCanDeleteTopic(actor);
      const streamId = pathId(req, "stream_id");
      const p = parseParams(req, topicDeleteEndpoints.remove.params);
      const complete = await deleteTopic(actions, originOf(req, actor), actor, streamId, emptyTopicFromDisplayName(p.topic_name));
      success(res, { complete });
    }),
  );
  return router;
}
