import { Router } from "express";
import { fetchRenderContext, MAX_MESSAGE_LENGTH, renderMarkdown } from "@chat/core";
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
      // Rendering costs what sending does, so it is bounded as sending is.
      const p = parseParams(req, { content: params.string().maxBytes(MAX_MESSAGE_LENGTH, `Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`) });
      const context = await fetchRenderContext(prisma, actor.realm_id, p.content);
      success(res, { rendered: renderMarkdown(p.content, context).html });
    }),
  );
  return router;
}
