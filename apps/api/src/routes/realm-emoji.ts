import { Router } from "express";
import { badRequest, checkAddRealmEmoji, getRealmEmojiDicts, removeRealmEmoji, uploadRealmEmoji } from "@chat/core";
import { actorOf, pathParam, route, success, originOf, requestIdOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { checkBeforeFileBody, receiveImage } from "./file-bodies.ts";

export function realmEmojiRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;

  router.get(
    "/realm/emoji",
    route(async (_req, res) => {
      success(res, { emoji: await getRealmEmojiDicts(prisma, actorOf(res).realm_id) });
    }),
  );

  // Multipart with one image file (the global form parser leaves this body to the route).
  router.post(
    "/realm/emoji/:emoji_name",
    route(async (req, res) => {
      const actor = actorOf(res);
      const { maxImageBytes } = services.uploads;
      // Who, which name, and whether it is free are settled before the file is read.
      const name = await checkBeforeFileBody(res, () => checkAddRealmEmoji(prisma, actor, pathParam(req, "emoji_name")));
      const upload = await receiveImage(req, res, maxImageBytes, () => badRequest("You must upload exactly one file."));
      await uploadRealmEmoji(services, actor, name, upload, requestIdOf(req));
      success(res);
    }),
  );

  router.delete(
    "/realm/emoji/:emoji_name",
    route(async (req, res) => {
      const actor = actorOf(res);
      const name = pathParam(req, "emoji_name");
      await actions.run(originOf(req, actor), (tx, events) => removeRealmEmoji(tx, events, actor, name));
      success(res);
    }),
  );
  return router;
}
