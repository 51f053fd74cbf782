import { Router } from "express";
import { addReaction, removeReaction } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const REACTION_TYPE = () => params.string().optional().describe("`unicode_emoji`, `realm_emoji` or `zulip_extra_emoji`.");

export const reactionEndpoints = {
  add: endpoint({
    method: "post",
    path: "/messages/{message_id}/reactions",
    tag: "messages",
    auth: "basic",
    summary: "Add an emoji reaction",
    params: { emoji_name: params.string(), emoji_code: params.string().optional(), reaction_type: REACTION_TYPE() },
    response: EMPTY_SUCCESS,
    errors: ["REACTION_ALREADY_EXISTS"],
  }),
  remove: endpoint({
    method: "delete",
    path: "/messages/{message_id}/reactions",
    tag: "messages",
    auth: "basic",
    summary: "Remove an emoji reaction",
    params: { emoji_name: params.string().optional(), emoji_code: params.string().optional(), reaction_type: REACTION_TYPE() },
    response: EMPTY_SUCCESS,
    errors: ["REACTION_DOES_NOT_EXIST"],
  }),
};

export function reactionRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = reactionEndpoints;

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      const p = parseParams(req, E.add.params);
      await actions.run(originOf(req, actor), (tx, events) =>
        addReaction(tx, events, actor, messageId, { emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type }),
      );
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const messageId = pathId(req, "message_id");
      const p = parseParams(req, E.remove.params);
      await actions.run(originOf(req, actor), (tx, events) =>
        removeReaction(tx, events, actor, messageId, { emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type }),
      );
      success(res);
    }),
  );
  return router;
}
