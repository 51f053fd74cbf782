import { Router } from "express";
import { addReaction, removeReaction } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export function reactionRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  router.post(
    "/messages/:message_id/reactions",
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      const p = parseParams(req, { emoji_name: params.string(), emoji_code: params.string().optional(), reaction_type: params.string().optional() });
      await actions.run(originOf(req, actor), (tx, events) =>
        addReaction(tx, events, actor, messageId, { emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type }),
      );
      success(res);
    }),
  );

  router.delete(
    "/messages/:message_id/reactions",
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      const p = parseParams(req, { emoji_name: params.string().optional(), emoji_code: params.string().optional(), reaction_type: params.string().optional() });
      await actions.run(originOf(req, actor), (tx, events) =>
        removeReaction(tx, events, actor, messageId, { emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type }),
      );
      success(res);
    }),
  );
  return router;
}
