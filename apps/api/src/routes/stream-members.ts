import { Router } from "express";
import { streamSubscriberIds } from "@chat/core";
import { actorOf, endpoint, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const streamMemberEndpoints = {
  members: endpoint({
    method: "get",
    path: "/streams/{stream_id}/members",
    tag: "streams",
    auth: "basic",
    summary: "A stream's subscribers, as user ids (feature level 79)",
    description: "Any stream the user may see: web-public ones, public ones for all but guests, private ones for their subscribers and administrators (Zulip's get_subscribers_backend).",
    params: {},
    response: successBody({ subscribers: schema.array(schema.integer()) }),
  }),
};

export function streamMemberRoutes(services: ApiServices): Router {
  const router = Router();
  serve(
    router,
    streamMemberEndpoints.members,
    route(async (req, res) => {
      success(res, { subscribers: await streamSubscriberIds(services.prisma, actorOf(res), pathId(req, "stream_id")) });
    }),
  );
  return router;
}
