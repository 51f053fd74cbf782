import { Router } from "express";
import { getRealmEmojiDicts, removeRealmEmoji } from "@chat/core";
import { actorOf, pathParam, route, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

export function realmEmojiRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;

  router.get(
    "/realm/emoji",
    route(async (_req, res) => {
      success(res, { emoji: await getRealmEmojiDicts(prisma, actorOf(res).realm_id) });
    }),
  );

  router.delete(
    "/realm/emoji/:emoji_name",
    route(async (req, res) => {
      const actor = actorOf(res);
      const name = pathParam(req, "emoji_name");
      await actions.run(actor.realm_id, (tx, events) => removeRealmEmoji(tx, events, actor, name));
      success(res);
    }),
  );
  return router;
}
