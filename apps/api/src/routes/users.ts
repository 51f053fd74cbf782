import { randomBytes } from "node:crypto";
import { Router } from "express";
import {
  AdministratorRequiredError,
  avatarUrl,
  badRequest,
  createUser,
  deactivateUser,
  deleteAvatar,
  formatUser,
  getProfileData,
  getUserInRealm,
  isAdmin,
  isSystemBot,
  reactivateUser,
  regenerateApiKey,
  updateProfileData,
  updateUser,
  type ProfileDataChange,
} from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf, requestIdOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const PROFILE_DATA_SCHEMA = {
  type: "array",
  items: {
    type: "object",
    required: ["id", "value"],
    properties: { id: { type: "integer" }, value: { type: ["string", "array", "null"], items: { type: "integer" } } },
  },
};

const readOptions = {
  client_gravatar: params.bool().default(false),
  include_custom_profile_fields: params.bool().default(false),
};

export function userRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions, ctx } = services;

  router.get(
    "/users",
    route(async (req, res) => {
      const actor = actorOf(res);
      const options = parseParams(req, readOptions);
      // The server's own bots are not the realm's members (Zulip lists them apart, as cross-realm bots).
      const users = (await prisma.userProfile.findMany({ where: { realm_id: actor.realm_id }, orderBy: { id: "asc" } })).filter((user) => !isSystemBot(user));
      const profiles = options.include_custom_profile_fields ? await getProfileData(prisma, users.map((u) => u.id)) : null;
      const members = users.map((user) =>
        formatUser(user, { clientGravatar: options.client_gravatar, forAdmin: isAdmin(actor), profileData: profiles?.get(user.id) }),
      );
      success(res, { members });
    }),
  );

  router.post(
    "/users",
    route(async (req, res) => {
      const actor = actorOf(res);
      if (!isAdmin(actor)) throw new AdministratorRequiredError();
      const p = parseParams(req, { email: params.string(), password: params.string(), full_name: params.string(), short_name: params.string().optional() });
      const user = await actions.run(originOf(req, actor), (tx, events) =>
        createUser(tx, events, ctx, actor.realm, { email: p.email, password: p.password, fullName: p.full_name, shortName: p.short_name }),
      );
      success(res, { user_id: user.id });
    }),
  );

  router.get(
    "/users/me",
    route(async (_req, res) => {
      const actor = actorOf(res);
      const [max] = await prisma.$queryRaw<{ max: number | null }[]>`SELECT max(message_id) AS max FROM user_message WHERE user_id = ${actor.id}`;
      const profileData = (await getProfileData(prisma, [actor.id])).get(actor.id);
      success(res, {
        ...formatUser(actor, { clientGravatar: false, forAdmin: true, profileData }),
        short_name: actor.short_name,
        client_id: randomBytes(16).toString("hex"),
        max_message_id: max?.max ?? -1,
        pointer: actor.pointer,
      });
    }),
  );

  router.delete(
    "/users/me",
    route(async (req, res) => {
      const actor = actorOf(res);
      await actions.run(originOf(req, actor), (tx, events) => deactivateUser(tx, events, actor, actor));
      success(res);
    }),
  );

  // Back to the gravatar (Zulip's delete_avatar_backend); the uploaded files go after the commit.
  router.delete(
    "/users/me/avatar",
    route(async (req, res) => {
      const user = await deleteAvatar(services, actorOf(res), requestIdOf(req));
      success(res, { avatar_url: avatarUrl(user, false) });
    }),
  );

  // A new API key for the caller (Zulip's regenerate_api_key); the old one stops working at once.
  router.post(
    "/users/me/api_key/regenerate",
    route(async (req, res) => {
      const actor = actorOf(res);
      const apiKey = await actions.run(originOf(req, actor), (tx, events) => regenerateApiKey(tx, events, actor));
      success(res, { api_key: apiKey });
    }),
  );

  router.get(
    "/users/:user_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      const options = parseParams(req, readOptions);
      const user = await getUserInRealm(prisma, actor.realm, userId, { allowDeactivated: true });
      const profileData = options.include_custom_profile_fields ? (await getProfileData(prisma, [user.id])).get(user.id) : undefined;
      success(res, { user: formatUser(user, { clientGravatar: options.client_gravatar, forAdmin: isAdmin(actor), profileData }) });
    }),
  );

  router.patch(
    "/users/:user_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      const p = parseParams(req, {
        full_name: params.jsonOrPlainString().optional(),
        is_admin: params.bool().optional(),
        is_guest: params.bool().optional(),
        role: params.int().optional(),
        profile_data: params.json<ProfileDataChange[]>(PROFILE_DATA_SCHEMA).optional(),
      });
      await actions.run(originOf(req, actor), async (tx, events) => {
        const target = await getUserInRealm(tx, actor.realm, userId);
        await updateUser(tx, events, actor, target, { fullName: p.full_name, isAdmin: p.is_admin, isGuest: p.is_guest, role: p.role });
        if (p.profile_data) await updateProfileData(tx, events, actor, target, p.profile_data);
      });
      success(res);
    }),
  );

  router.delete(
    "/users/:user_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      await actions.run(originOf(req, actor), async (tx, events) => {
        const target = await getUserInRealm(tx, actor.realm, userId, { allowBots: false });
        await deactivateUser(tx, events, actor, target);
      });
      success(res);
    }),
  );

  // A deactivated user or bot back (Zulip's reactivate_user_backend); the server's own bots are no one's to touch.
  router.post(
    "/users/:user_id/reactivate",
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      await actions.run(originOf(req, actor), async (tx, events) => {
        const target = await getUserInRealm(tx, actor.realm, userId, { allowDeactivated: true });
        if (isSystemBot(target)) throw badRequest("No such user");
        await reactivateUser(tx, events, actor, target);
      });
      success(res);
    }),
  );
  return router;
}
