import { Router } from "express";
import { fetchRenderContext, renderMarkdown } from "@chat/core";
import { actorOf, params, parseParams, route, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

export function renderRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma } = services;

  // Zulip's render_message_backend: the same renderer and context as sending, in the user's realm.
  router.post(
    "/messages/render",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { content: params.string() });
      const context = await fetchRenderContext(prisma, actor.realm_id, p.content);
      success(res, { rendered: renderMarkdown(p.content, context).html });
    }),
  );
  return router;
}
