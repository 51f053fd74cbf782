import { Router } from "express";
import { badRequest, checkAddRealmEmoji, getRealmEmojiDicts, removeRealmEmoji, uploadRealmEmoji } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, pathParam, requestIdOf, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { checkBeforeFileBody, receiveImage } from "./file-bodies.ts";

const EMOJI_NAME = { emoji_name: { schema: { type: "string" }, description: "The emoji's name: lowercase letters, digits, `-` and `_`." } };

export const realmEmojiEndpoints = {
  list: endpoint({
    method: "get",
    path: "/realm/emoji",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "The organization's custom emoji, by id",
    params: {},
    response: successBody({ emoji: schema.dict(schema.ref("RealmEmoji")) }),
  }),
  upload: endpoint({
    method: "post",
    path: "/realm/emoji/{emoji_name}",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Add a custom emoji",
    params: {},
    pathParams: EMOJI_NAME,
    file: { name: "file", description: "One image (any field name).", required: true },
    response: EMPTY_SUCCESS,
    errors: ["BAD_IMAGE", "UNAUTHORIZED_PRINCIPAL"],
  }),
  remove: endpoint({
    method: "delete",
    path: "/realm/emoji/{emoji_name}",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Deactivate a custom emoji",
    params: {},
    pathParams: EMOJI_NAME,
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

export function realmEmojiRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = realmEmojiEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { emoji: await getRealmEmojiDicts(prisma, actorOf(res).realm_id) });
    }),
  );

  // Multipart with one image file (the global form parser leaves this body to the route).
  serve(
    router,
    E.upload,
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

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const name = pathParam(req, "emoji_name");
      await actions.run(originOf(req, actor), (tx, events) => removeRealmEmoji(tx, events, actor, name));
      success(res);
    }),
  );
  return router;
}
