import { Router } from "express";
import { avatarUrl, badRequest, checkAvatarChangesAllowed, uploadAvatar } from "@chat/core";
import { actorOf, route, success, requestIdOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { checkBeforeFileBody, receiveImage } from "./file-bodies.ts";

/** POST /users/me/avatar: an uploaded image, resized to Zulip's sizes. */
export function avatarRoutes(services: ApiServices): Router {
  const router = Router();
  const { maxImageBytes } = services.uploads;

  router.post(
    "/users/me/avatar",
    route(async (req, res) => {
      const actor = actorOf(res);
      await checkBeforeFileBody(res, () => checkAvatarChangesAllowed(actor));
      const upload = await receiveImage(req, res, maxImageBytes, () => badRequest("You must upload exactly one avatar."));
      const user = await uploadAvatar(services, actor, upload, requestIdOf(req));
      success(res, { avatar_url: avatarUrl(user, false) });
    }),
  );
  return router;
}
