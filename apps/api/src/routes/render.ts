import { Router } from "express";
import { fetchRenderContext, MAX_MESSAGE_LENGTH, realmHost, renderMarkdown } from "@chat/core";
import { actorOf, endpoint, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

export const renderEndpoints = {
  // Zulip's render_message_backend: the same renderer and context as sending, in the user's realm.
  render: endpoint({
    method: "post",
    path: "/messages/render",
    tag: "messages",
    auth: "basic",
    summary: "Markdown rendered as a message would be",
    // Rendering costs what sending does, so it is bounded as sending is.
    params: { content: params.string().maxBytes(MAX_MESSAGE_LENGTH, `Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`) },
    response: successBody({ rendered: schema.string() }),
  }),
};

export function renderRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma } = services;

  serve(
    router,
    renderEndpoints.render,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, renderEndpoints.render.params);
      const context = await fetchRenderContext(prisma, actor.realm_id, p.content, {
        imagePreviews: actor.realm.inline_image_preview,
        realmHost: realmHost(actor.realm.string_id, services.ctx.externalHost),
      });
      success(res, { rendered: renderMarkdown(p.content, context).html });
    }),
  );
  return router;
}
