import { randomBytes } from "node:crypto";
import { Router, type Request } from "express";
import {
  type Actor,
  type UserProfile,
  accessibleUserIdsIfRestricted,
  AdministratorRequiredError,
  avatarUrl,
  botDomain,
  inaccessibleUserDict,
  JsonableError,
  mayAccessUser,
  badRequest,
  createUser,
  deactivateUser,
  deactivationEmail,
  deleteAvatar,
  formatUser,
  getProfileData,
  getUserInRealm,
  isAdmin,
  isSystemBot,
  queueEmail,
  reactivateUser,
  realmUri,
  regenerateApiKey,
  updateProfileData,
  updateUser,
  usersByEmail,
  type ProfileDataChange,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, pathParam, requestIdOf, requestProtocol, route, schema, serve, success, successBody } from "@chat/http";

/** Zulip's limit on deactivation_notification_comment. */
const MAX_DEACTIVATION_COMMENT_LENGTH = 2000;
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

/** Zulip's email bound (EmailField, 254), with room for surrounding whitespace. */
const MAX_EMAIL_PARAM_LENGTH = 320;

/**
 * GET and PATCH /users/{email}: the user the path's address names, where the actor may see them
 * (a real address only for those usersByEmail lets see it, so a guess tells nothing).
 */
async function userNamedByEmail(db: Parameters<typeof usersByEmail>[0] & Parameters<typeof mayAccessUser>[0], actor: Actor, req: Request): Promise<UserProfile> {
  // pathParam refuses a NUL, which Postgres would refuse in the query; no address runs this long.
  const email = pathParam(req, "email");
  if (email.length > MAX_EMAIL_PARAM_LENGTH) throw badRequest("No such user");
  const user = (await usersByEmail(db, actor, [email])).get(email.trim().toLowerCase());
  if (!user || !(await mayAccessUser(db, actor, user.id))) throw badRequest("No such user");
  return user;
}

const PROFILE_DATA_SCHEMA = {
  type: "array",
  items: {
    type: "object",
    required: ["id", "value"],
    properties: { id: { type: "integer" }, value: { type: ["string", "array", "null"], items: { type: "integer" } } },
  },
};

const UPDATE_USER_PARAMS = {
  full_name: params.jsonOrPlainString().optional(),
  is_admin: params.bool().optional(),
  is_guest: params.bool().optional(),
  role: params.int().optional(),
  profile_data: params.json<ProfileDataChange[]>(PROFILE_DATA_SCHEMA).optional(),
  new_email: params.string().maxLength(MAX_EMAIL_PARAM_LENGTH).optional().describe("Feature level 313: needs the can_change_user_emails special permission, which no one has on this server."),
};

const readOptions = {
  client_gravatar: params.bool().default(false),
  include_custom_profile_fields: params.bool().default(false),
};

const common = { tag: "users", auth: "basic", response: EMPTY_SUCCESS } as const;
/** Changes an administrator (for some, an owner) may have to make: UNAUTHORIZED_PRINCIPAL for anyone else. */
const ADMIN = { errors: ["UNAUTHORIZED_PRINCIPAL"] } as const;

export const userEndpoints = {
  list: endpoint({ ...common, method: "get", path: "/users", summary: "The organization's users and bots", params: readOptions, response: successBody({ members: schema.array(schema.ref("User")) }) }),
  create: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/users",
    summary: "Create a user (administrators with the can_create_users permission)",
    params: { email: params.string(), password: params.string(), full_name: params.string(), short_name: params.string().optional() },
    response: successBody({ user_id: schema.integer() }),
  }),
  me: endpoint({ ...common, method: "get", path: "/users/me", summary: "The user's own profile", params: {}, response: schema.ref("OwnUser") }),
  deactivateMe: endpoint({ ...common, ...ADMIN, method: "delete", path: "/users/me", summary: "Deactivate the user's own account", params: {} }),
  // Back to the gravatar (Zulip's delete_avatar_backend); the uploaded files go after the commit.
  deleteAvatar: endpoint({ ...common, method: "delete", path: "/users/me/avatar", summary: "Back to the gravatar", params: {}, response: successBody({ avatar_url: schema.string() }) }),
  // A new API key for the caller (Zulip's regenerate_api_key); the old one stops working at once.
  regenerateApiKey: endpoint({
    ...common,
    method: "post",
    path: "/users/me/api_key/regenerate",
    summary: "A new API key for the user; the old one stops working",
    params: {},
    response: successBody({ api_key: schema.string() }),
  }),
  get: endpoint({ ...common, method: "get", path: "/users/{user_id}", summary: "A user", params: readOptions, response: successBody({ user: schema.ref("User") }) }),
  // Zulip's get_user_by_email (feature level 39): any segment that is not an id is an address.
  getByEmail: endpoint({
    ...common,
    method: "get",
    path: "/users/{email}",
    summary: "A user, by email address",
    params: readOptions,
    pathParams: { email: { schema: { type: "string" }, description: "The `email` clients are shown, or the real address where the caller may see it." } },
    response: successBody({ user: schema.ref("User") }),
  }),
  update: endpoint({
    ...common,
    ...ADMIN,
    method: "patch",
    path: "/users/{user_id}",
    summary: "Change a user (administrators)",
    params: UPDATE_USER_PARAMS,
  }),
  // Feature level 313: PATCH /users/{user_id} with the user named as GET /users/{email} names them.
  updateByEmail: endpoint({
    ...common,
    ...ADMIN,
    method: "patch",
    path: "/users/{email}",
    summary: "Change a user named by email (administrators)",
    params: UPDATE_USER_PARAMS,
    // `/users/me` is not a user named "me": it has no PATCH, as in Zulip.
    pathParams: { email: { schema: { type: "string", pattern: "^(?!me$)" }, description: "The `email` clients are shown, or the real address where the caller may see it." } },
  }),
  deactivate: endpoint({
    ...common,
    ...ADMIN,
    method: "delete",
    path: "/users/{user_id}",
    summary: "Deactivate a user (administrators)",
    params: {
      deactivation_notification_comment: params
        .string()
        .maxLength(MAX_DEACTIVATION_COMMENT_LENGTH)
        .optional()
        .describe("Sent with an email telling the user their account was deactivated (feature level 135); no email when unset."),
    },
  }),
  // A deactivated user or bot back (Zulip's reactivate_user_backend); the server's own bots are no one's to touch.
  reactivate: endpoint({ ...common, ...ADMIN, method: "post", path: "/users/{user_id}/reactivate", summary: "Reactivate a user or bot (administrators)", params: {} }),
};

export function userRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions, ctx } = services;
  const E = userEndpoints;

  serve(
    router,
    E.list,
    route(async (req, res) => {
      const actor = actorOf(res);
      const options = parseParams(req, E.list.params);
      // The server's own bots are not the realm's members (Zulip lists them apart, as cross-realm bots).
      const users = (await prisma.userProfile.findMany({ where: { realm_id: actor.realm_id }, orderBy: { id: "asc" } })).filter((user) => !isSystemBot(user));
      const profiles = options.include_custom_profile_fields ? await getProfileData(prisma, users.map((u) => u.id)) : null;
      // Each user's delivery_email as their email_address_visibility lets the actor's role see it, left out otherwise (as Zulip 3.x).
      const withDeliveryEmail = { role: actor.role, modern: false };
      // A guest the realm's can_access_all_users_group leaves out sees the others as "Unknown user" (Zulip 9.0).
      const accessible = await accessibleUserIdsIfRestricted(prisma, actor);
      const members = users.map((user) =>
        accessible === null || accessible.has(user.id)
          ? formatUser(user, { clientGravatar: options.client_gravatar, withDeliveryEmail, profileData: profiles?.get(user.id) })
          : inaccessibleUserDict(user.id, botDomain(ctx), `${req.protocol}://${req.get("host") ?? ctx.externalHost}`),
      );
      success(res, { members });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      if (!isAdmin(actor)) throw new AdministratorRequiredError();
      // Feature level 36: a permission of its own, which the operator grants (npm run cli -- grant-create-users).
      if (!actor.can_create_users) throw new JsonableError("User not authorized to create users");
      const p = parseParams(req, E.create.params);
      const user = await actions.run(originOf(req, actor), (tx, events) =>
        createUser(tx, events, ctx, actor.realm, { email: p.email, password: p.password, fullName: p.full_name, shortName: p.short_name }),
      );
      success(res, { user_id: user.id });
    }),
  );

  serve(
    router,
    E.me,
    route(async (_req, res) => {
      const actor = actorOf(res);
      const [max] = await prisma.$queryRaw<{ max: number | null }[]>`SELECT max(message_id) AS max FROM user_message WHERE user_id = ${actor.id}`;
      const profileData = (await getProfileData(prisma, [actor.id])).get(actor.id);
      success(res, {
        ...formatUser(actor, { clientGravatar: false, withDeliveryEmail: true, profileData }),
        short_name: actor.short_name,
        client_id: randomBytes(16).toString("hex"),
        max_message_id: max?.max ?? -1,
        pointer: actor.pointer,
      });
    }),
  );

  serve(
    router,
    E.deactivateMe,
    route(async (req, res) => {
      const actor = actorOf(res);
      await actions.run(originOf(req, actor), (tx, events) => deactivateUser(tx, events, actor, actor));
      success(res);
    }),
  );

  serve(
    router,
    E.deleteAvatar,
    route(async (req, res) => {
      const user = await deleteAvatar(services, actorOf(res), requestIdOf(req));
      success(res, { avatar_url: avatarUrl(user, false) });
    }),
  );

  serve(
    router,
    E.regenerateApiKey,
    route(async (req, res) => {
      const actor = actorOf(res);
      const apiKey = await actions.run(originOf(req, actor), (tx, events) => regenerateApiKey(tx, events, actor));
      success(res, { api_key: apiKey });
    }),
  );

  // Before GET /users/{user_id}, which takes the path when it is an id (Express pattern match is first come).
  serve(
    router,
    E.getByEmail,
    (req, _res, next) => (/^\d+$/.test(String(req.params.email)) ? next("route") : next()),
    route(async (req, res) => {
      const actor = actorOf(res);
      const options = parseParams(req, E.getByEmail.params);
      const user = await userNamedByEmail(prisma, actor, req);
      const profileData = options.include_custom_profile_fields ? (await getProfileData(prisma, [user.id])).get(user.id) : undefined;
      // Each user's delivery_email as their email_address_visibility lets the actor's role see it, left out otherwise (as Zulip 3.x).
      const withDeliveryEmail = { role: actor.role, modern: false };
      success(res, { user: formatUser(user, { clientGravatar: options.client_gravatar, withDeliveryEmail, profileData }) });
    }),
  );

  serve(
    router,
    E.get,
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      const options = parseParams(req, E.get.params);
      const user = await getUserInRealm(prisma, actor.realm, userId, { allowDeactivated: true });
      if (!(await mayAccessUser(prisma, actor, user.id))) throw badRequest("Insufficient permission");
      const profileData = options.include_custom_profile_fields ? (await getProfileData(prisma, [user.id])).get(user.id) : undefined;
      // Each user's delivery_email as their email_address_visibility lets the actor's role see it, left out otherwise (as Zulip 3.x).
      const withDeliveryEmail = { role: actor.role, modern: false };
      success(res, { user: formatUser(user, { clientGravatar: options.client_gravatar, withDeliveryEmail, profileData }) });
    }),
  );

  /** PATCH /users/{user_id} and /users/{email}: the same change, the target found its own way. */
  type ActionTx = Parameters<Parameters<typeof actions.run>[1]>[0];
  const updateTarget = (findTarget: (tx: ActionTx, actor: Actor, req: Request) => Promise<UserProfile>) =>
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      await actions.run(originOf(req, actor), async (tx, events) => {
        const target = await findTarget(tx, actor, req);
        // Zulip gives new_email only to holders of the can_change_user_emails special
        // permission (feature level 313); this server grants it to no one.
        if (p.new_email !== undefined && p.new_email.trim().toLowerCase() !== target.delivery_email.toLowerCase()) {
          throw new JsonableError("User not authorized to change user emails");
        }
        await updateUser(tx, events, actor, target, { fullName: p.full_name, isAdmin: p.is_admin, isGuest: p.is_guest, role: p.role });
        if (p.profile_data) await updateProfileData(tx, events, actor, target, p.profile_data);
      });
      success(res);
    });

  // Before PATCH /users/{user_id}, which takes the path when it is an id.
  serve(
    router,
    E.updateByEmail,
    (req, _res, next) => (/^\d+$/.test(String(req.params.email)) ? next("route") : next()),
    // getUserInRealm too: a deactivated user is not changed.
    updateTarget(async (tx, actor, req) => getUserInRealm(tx, actor.realm, (await userNamedByEmail(tx, actor, req)).id)),
  );

  serve(
    router,
    E.update,
    updateTarget((tx, actor, req) => getUserInRealm(tx, actor.realm, pathId(req, "user_id"))),
  );

  serve(
    router,
    E.deactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      const p = parseParams(req, E.deactivate.params);
      const target = await actions.run(originOf(req, actor), async (tx, events) => {
        const target = await getUserInRealm(tx, actor.realm, userId, { allowBots: false });
        await deactivateUser(tx, events, actor, target);
        return target;
      });
      if (p.deactivation_notification_comment !== undefined) {
        const realmUrl = realmUri(actor.realm.string_id, ctx.externalHost, requestProtocol(req));
        await queueEmail(services.jobs, deactivationEmail({ email: target.delivery_email, realmName: actor.realm.name, realmUri: realmUrl, comment: p.deactivation_notification_comment.trim() }));
      }
      success(res);
    }),
  );

  serve(
    router,
    E.reactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const userId = pathId(req, "user_id");
      await actions.run(originOf(req, actor), async (tx, events) => {
        const target = await getUserInRealm(tx, actor.realm, userId, { allowDeactivated: true });
        if (isSystemBot(target)) throw badRequest("No such user");
        await reactivateUser(tx, events, actor, target, ctx.bots);
      });
      success(res);
    }),
  );
  return router;
}
