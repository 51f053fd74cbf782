import { Router } from "express";
import { fitsPostgresInteger, getRealmPresences, getRealmPresencesSince, getUserPresence, JsonableError, updatePresence, usersByEmail, type UserProfile } from "@chat/core";
import { actorOf, endpoint, originOf, params, parseParams, pathParam, route, schema, serve, success, successBody } from "@chat/http";
import { clientName } from "../client-name.ts";
import type { ApiServices } from "../services.ts";

/** A user's presence counts as offline in GET /users/{email}/presence after this (Zulip's OFFLINE_THRESHOLD_SECS). */
const OFFLINE_THRESHOLD_SECONDS = 5 * 60;

const REALM_PRESENCES = { presences: schema.ref("RealmPresences"), server_timestamp: schema.number() };

export const presenceEndpoints = {
  update: endpoint({
    method: "post",
    path: "/users/me/presence",
    tag: "users",
    auth: "basic",
    summary: "Report the user's presence; the organization's presences back, unless `ping_only`",
    params: {
      status: params.string().describe("`active` or `idle`."),
      ping_only: params.bool().default(false),
      new_user_input: params.bool().default(false),
      slim_presence: params.bool().default(false).describe("Presences keyed by user id rather than email."),
      last_update_id: params.int().optional().describe("Only the presences changed after this update id, -1 for all (feature level 263); implies `slim_presence`."),
      history_limit_days: params.int().optional().describe("Only presences reported within this many days (feature level 288); 14 when not given, none for 0."),
    },
    response: successBody({}, { ...REALM_PRESENCES, presence_last_update_id: schema.integer() }),
  }),
  realm: endpoint({
    method: "get",
    path: "/realm/presence",
    tag: "users",
    auth: "basic",
    summary: "The organization's presences",
    params: {},
    response: successBody(REALM_PRESENCES),
  }),
  // Zulip's get_presence_backend: by email, or (as newer servers accept) by user id.
  user: endpoint({
    method: "get",
    path: "/users/{user_id_or_email}/presence",
    tag: "users",
    auth: "basic",
    summary: "A user's presence, by client",
    params: {},
    pathParams: { user_id_or_email: { schema: { type: "string" }, description: "The user's email address or id." } },
    response: successBody({ presence: schema.ref("UserPresence") }),
  }),
};

export function presenceRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = presenceEndpoints;

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      await actions.run(originOf(req, actor), (tx, events) => updatePresence(tx, events, actor, clientName(req), p.status));
      if (p.ping_only) return success(res);
      if (p.last_update_id !== undefined) {
        const since = await getRealmPresencesSince(prisma, actor.realm_id, p.last_update_id, p.history_limit_days);
        return success(res, { presences: since.presences, server_timestamp: Date.now() / 1000, presence_last_update_id: since.lastUpdateId });
      }
      success(res, { presences: await getRealmPresences(prisma, actor.realm_id, p.slim_presence, p.history_limit_days), server_timestamp: Date.now() / 1000 });
    }),
  );

  serve(
    router,
    E.realm,
    route(async (_req, res) => {
      const actor = actorOf(res);
      success(res, { presences: await getRealmPresences(prisma, actor.realm_id, false), server_timestamp: Date.now() / 1000 });
    }),
  );

  serve(
    router,
    E.user,
    route(async (req, res) => {
      const actor = actorOf(res);
      const key = pathParam(req, "user_id_or_email");
      let target: UserProfile | null;
      if (/^\d+$/.test(key)) {
        if (!fitsPostgresInteger(key)) throw new JsonableError("No such user");
        target = await prisma.userProfile.findFirst({ where: { id: Number(key), realm_id: actor.realm_id, is_active: true } });
      } else {
        // By the address the caller was shown, or a real one they may see (usersByEmail).
        target = (await usersByEmail(prisma, actor, [key])).get(key.trim().toLowerCase()) ?? null;
      }
      if (!target || !target.is_active) throw new JsonableError("No such user");
      if (target.is_bot) throw new JsonableError("Presence is not supported for bot users.");
      const presence = await getUserPresence(prisma, target.id);
      if (!presence) throw new JsonableError(`No presence data for ${key}`);
      const result: Record<string, { status: string; timestamp: number }> = {};
      for (const [client, info] of Object.entries(presence)) result[client] = { status: info.status, timestamp: info.timestamp };
      if (Date.now() / 1000 - result.aggregated.timestamp > OFFLINE_THRESHOLD_SECONDS) result.aggregated.status = "offline";
      success(res, { presence: result });
    }),
  );
  return router;
}
