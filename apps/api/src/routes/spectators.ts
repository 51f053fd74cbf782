// What spectators (no credentials) may ask of the API beside GET /messages (message-fetch.ts):
// one web-public message and a web-public stream's topics, as Zulip's json_fetch_raw_message and
// get_topics_backend answer anonymous users. Mounted before authentication; a request with any
// credentials goes on to the ordinary routes of the same paths.
import { Router, type Request } from "express";
import { fetchWebPublicMessage, getRealmForSubdomain, spectatorRealm, webPublicStreamTopics, type Realm } from "@chat/core";
import { ignoredParametersOf, parseParams, requestSubdomain, serve, spectatorRoute, success, successJsonText } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { messageEditEndpoints } from "./message-edit.ts";
import { pathId } from "./path-ids.ts";
import { streamEndpoints } from "./streams.ts";

export function spectatorRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, ctx } = services;
  const realmOf = async (req: Request): Promise<Realm> => spectatorRealm(prisma, await getRealmForSubdomain(prisma, requestSubdomain(req, ctx.externalHost)), ctx);

  serve(
    router,
    messageEditEndpoints.rawContent,
    // `/messages/flags` and the like are other routes' paths.
    (req, _res, next) => next(/^\d+$/.test(String(req.params.message_id)) ? undefined : "route"),
    spectatorRoute(services, async (req, res) => {
      const realm = await realmOf(req);
      const p = parseParams(req, messageEditEndpoints.rawContent.params);
      const { rawContent, message } = await fetchWebPublicMessage(prisma, services.messageCache, realm, Number(req.params.message_id), p.apply_markdown, p.allow_empty_topic_name);
      res.type("json").send(successJsonText({ raw_content: rawContent, ...ignoredParametersOf(req) }, { message }));
    }),
  );

  serve(
    router,
    streamEndpoints.topics,
    spectatorRoute(services, async (req, res) => {
      const realm = await realmOf(req);
      const p = parseParams(req, streamEndpoints.topics.params);
      success(res, { topics: await webPublicStreamTopics(prisma, realm, pathId(req, "stream_id"), p.allow_empty_topic_name) });
    }),
  );
  return router;
}
