import { Router } from "express";
import { avatarUrl, badRequest, checkAvatarChangesAllowed, uploadAvatar } from "@chat/core";
import { actorOf, endpoint, requestIdOf, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { checkBeforeFileBody, receiveImage } from "./file-bodies.ts";

export const avatarEndpoints = {
  upload: endpoint({
    method: "post",
    path: "/users/me/avatar",
    tag: "users",
    auth: "basic",
    summary: "Upload the user's avatar",
    params: {},
    file: { name: "file", description: "One image (any field name); resized to Zulip's sizes.", required: true },
    response: successBody({ avatar_url: schema.string() }),
    errors: ["BAD_IMAGE"],
  }),
};

/** POST /users/me/avatar: an uploaded image, resized to Zulip's sizes. */
export function avatarRoutes(services: ApiServices): Router {
  const router = Router();
  const { maxImageBytes } = services.uploads;

  serve(
    router,
    avatarEndpoints.upload,
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
