import { Router } from "express";
import { getReadableUserInRealm, getUserStatus, updateUserStatus } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const userStatusEndpoints = {
  update: endpoint({
    method: "post",
    path: "/users/me/status",
    tag: "users",
    auth: "basic",
    summary: "Set the user's away flag, status text and status emoji",
    params: {
      away: params.bool().optional(),
      status_text: params.string().optional(),
      // Feature level 86: "" clears the emoji; a code and type not sent are looked up by the name.
      emoji_name: params.string().maxLength(200).optional(),
      emoji_code: params.string().maxLength(200).optional(),
      reaction_type: params.string().maxLength(50).optional(),
    },
    response: EMPTY_SUCCESS,
  }),
  // Zulip's get_status_backend (feature level 262): only what differs from the default.
  get: endpoint({
    method: "get",
    path: "/users/{user_id}/status",
    tag: "users",
    auth: "basic",
    summary: "A user's status",
    params: {},
    response: successBody({ status: schema.object({}, { away: schema.boolean(), status_text: schema.string(), emoji_name: schema.string(), emoji_code: schema.string(), reaction_type: schema.string() }) }),
  }),
};

export function userStatusRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  serve(
    router,
    userStatusEndpoints.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, userStatusEndpoints.update.params);
      await actions.run(originOf(req, actor), (tx, events) => updateUserStatus(tx, events, actor, { away: p.away, statusText: p.status_text, emojiName: p.emoji_name, emojiCode: p.emoji_code, reactionType: p.reaction_type }));
      success(res);
    }),
  );

  serve(
    router,
    userStatusEndpoints.get,
    route(async (req, res) => {
      const actor = actorOf(res);
      const target = await getReadableUserInRealm(services.prisma, actor.realm, pathId(req, "user_id"));
      success(res, { status: await getUserStatus(services.prisma, target.id) });
    }),
  );
  return router;
}
