import { Router } from "express";
import {
  AdministratorRequiredError,
  accessStreamById,
  accessStreamByIdAsMember,
  addDefaultStream,
  badRequest,
  canSeeStream,
  checkCanCreateWebPublicStreams,
  deactivateStream,
  formatStream,
  getStreamByName,
  isAdmin,
  isGuest,
  isSubscribed,
  occupiedStreams,
  removeDefaultStream,
  renderMarkdown,
  updateStream,
  parseStreamRetentionDays,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const renderDescription = (text: string) => (text === "" ? "" : renderMarkdown(text).html);

export const streamEndpoints = {
  getId: endpoint({
    method: "get",
    path: "/get_stream_id",
    tag: "streams",
    auth: "basic",
    summary: "A stream's id, by name",
    params: { stream: params.string() },
    response: successBody({ stream_id: schema.integer() }),
  }),
  list: endpoint({
    method: "get",
    path: "/streams",
    tag: "streams",
    auth: "basic",
    summary: "The streams the user can see, chosen by the flags",
    params: {
      include_public: params.bool().default(true),
      include_web_public: params.bool().default(false),
      include_subscribed: params.bool().default(true),
      include_all_active: params.bool().default(false),
      include_default: params.bool().default(false),
      include_owner_subscribed: params.bool().default(false),
    },
    response: successBody({ streams: schema.array(schema.ref("Stream")) }),
  }),
  // Zulip's get_stream_backend (feature level 132).
  get: endpoint({
    method: "get",
    path: "/streams/{stream_id}",
    tag: "streams",
    auth: "basic",
    summary: "A stream the user can see",
    params: {},
    response: successBody({ stream: schema.ref("Stream") }),
  }),
  // Zulip's get_stream_email_address (feature level 226). This server has no incoming email
  // gateway, so, as Zulip without EMAIL_GATEWAY_PATTERN, the address is empty.
  emailAddress: endpoint({
    method: "get",
    path: "/streams/{stream_id}/email_address",
    tag: "streams",
    auth: "basic",
    summary: "The address that posts to a stream by email (empty: no email gateway)",
    params: {},
    response: successBody({ email: schema.string() }),
  }),
  update: endpoint({
    method: "patch",
    path: "/streams/{stream_id}",
    tag: "streams",
    auth: "basic",
    summary: "Change a stream (administrators)",
    params: {
      description: params.jsonOrPlainString().optional(),
      new_name: params.jsonOrPlainString().optional(),
      is_private: params.bool().optional(),
      is_web_public: params.bool().optional().describe("Readable by people who are not logged in (feature level 98; organization owners)."),
      is_announcement_only: params.bool().optional().describe("Deprecated: `stream_post_policy` 2 (true) or 1 (false)."),
      stream_post_policy: params.int().optional(),
      history_public_to_subscribers: params.bool().optional(),
      can_remove_subscribers_group: params.int().optional().describe("A system group's id (feature levels 142, 197): who may unsubscribe others."),
      is_default_stream: params.bool().optional().describe("Make it a default stream for new users, or stop (feature level 200); a private stream cannot be one."),
      message_retention_days: params.jsonOrPlainString().maxLength(40).optional().describe("`realm_default`, `unlimited`, or days (feature levels 17, 91; owners)."),
    },
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  deactivate: endpoint({ method: "delete", path: "/streams/{stream_id}", tag: "streams", auth: "basic", summary: "Delete a stream (administrators)", params: {}, response: EMPTY_SUCCESS, errors: ["UNAUTHORIZED_PRINCIPAL"] }),
  topics: endpoint({
    method: "get",
    path: "/users/me/{stream_id}/topics",
    tag: "streams",
    auth: "basic-or-spectator",
    summary: "A stream's topics the user can read, newest first",
    params: {},
    response: successBody({ topics: schema.array(schema.ref("Topic")) }),
  }),
};

export function streamRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = streamEndpoints;

  serve(
    router,
    E.getId,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { stream: name } = parseParams(req, E.getId.params);
      const stream = await getStreamByName(prisma, actor.realm_id, name);
      if (!stream || !canSeeStream(actor, stream, await isSubscribed(prisma, actor.id, stream))) throw badRequest(`Invalid stream name '${name}'`);
      success(res, { stream_id: stream.id });
    }),
  );

  serve(
    router,
    E.list,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.list.params);
      if (p.include_all_active && !isAdmin(actor)) throw badRequest("User not authorized for this query");
      const streams = await occupiedStreams(prisma, actor.realm_id);
      const subscribedTo = async (userId: number) =>
        new Set((await prisma.subscription.findMany({ where: { user_id: userId, active: true }, select: { recipient_id: true } })).map((s) => s.recipient_id));
      const mine = await subscribedTo(actor.id);
      const owners = p.include_owner_subscribed && actor.is_bot && actor.bot_owner_id ? await subscribedTo(actor.bot_owner_id) : new Set<number>();
      const defaults = p.include_default ? new Set((await prisma.defaultStream.findMany({ where: { realm_id: actor.realm_id } })).map((d) => d.stream_id)) : new Set<number>();
      const chosen = streams.filter((stream) => {
        if (p.include_all_active) return true;
        if (p.include_public && !stream.invite_only && !isGuest(actor)) return true;
        if (p.include_web_public && stream.is_web_public) return true;
        if (p.include_subscribed && mine.has(stream.recipient_id!)) return true;
        if (owners.has(stream.recipient_id!)) return true;
        return defaults.has(stream.id);
      });
      chosen.sort((a, b) => a.name.localeCompare(b.name));
      success(res, { streams: chosen.map(formatStream) });
    }),
  );

  serve(
    router,
    E.get,
    route(async (req, res) => {
      const stream = await accessStreamByIdAsMember(prisma, actorOf(res), pathId(req, "stream_id"));
      success(res, { stream: formatStream(stream) });
    }),
  );

  serve(
    router,
    E.emailAddress,
    route(async (req, res) => {
      await accessStreamByIdAsMember(prisma, actorOf(res), pathId(req, "stream_id"));
      success(res, { email: "" });
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const streamId = pathId(req, "stream_id");
      const p = parseParams(req, E.update.params);
      await actions.run(originOf(req, actor), async (tx, events) => {
        const stream = await accessStreamById(tx, actor, streamId);
        if (!isAdmin(actor)) throw new AdministratorRequiredError();
        const streamPostPolicy = p.stream_post_policy ?? (p.is_announcement_only === undefined ? undefined : p.is_announcement_only ? 2 : 1);
        // Only making a stream web-public is restricted (Zulip's update_stream_backend).
        if (p.is_web_public === true) await checkCanCreateWebPublicStreams(tx, actor, services.ctx);
        await updateStream(
          tx,
          events,
          services.ctx,
          stream,
          { description: p.description, newName: p.new_name, isPrivate: p.is_private, isWebPublic: p.is_web_public, streamPostPolicy, historyPublicToSubscribers: p.history_public_to_subscribers, canRemoveSubscribersGroup: p.can_remove_subscribers_group, isDefaultStream: p.is_default_stream, messageRetentionDays: p.message_retention_days === undefined ? undefined : parseStreamRetentionDays(actor, p.message_retention_days) },
          renderDescription,
        );
        // After the permission change: a stream made public may then become a default one.
        if (p.is_default_stream === true) await addDefaultStream(tx, events, actor, stream.id);
        if (p.is_default_stream === false) await removeDefaultStream(tx, events, actor, stream.id);
      });
      success(res);
    }),
  );

  serve(
    router,
    E.deactivate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const streamId = pathId(req, "stream_id");
      await actions.run(originOf(req, actor), async (tx, events) => {
        const stream = await accessStreamById(tx, actor, streamId);
        if (!isAdmin(actor)) throw new AdministratorRequiredError();
        await deactivateStream(tx, events, stream);
      });
      success(res);
    }),
  );

  serve(
    router,
    E.topics,
    route(async (req, res) => {
      const actor = actorOf(res);
      const streamId = pathId(req, "stream_id");
      const stream = await accessStreamById(prisma, actor, streamId);
      const subscribed = await isSubscribed(prisma, actor.id, stream);
      // Topics of the history the user can read: all of it for a public stream (or a private one
      // with shared history, to its subscribers), otherwise only messages the user received.
      const fullHistory = subscribed ? stream.history_public_to_subscribers : !stream.invite_only && (!isGuest(actor) || stream.is_web_public);
      const topics = fullHistory
        ? await prisma.$queryRaw<{ name: string; max_id: number }[]>`
            SELECT DISTINCT ON (upper(subject)) subject AS name, id AS max_id
            FROM message WHERE recipient_id = ${stream.recipient_id} ORDER BY upper(subject), id DESC`
        : await prisma.$queryRaw<{ name: string; max_id: number }[]>`
            SELECT DISTINCT ON (upper(m.subject)) m.subject AS name, m.id AS max_id
            FROM message m JOIN user_message um ON um.message_id = m.id AND um.user_id = ${actor.id}
            WHERE m.recipient_id = ${stream.recipient_id} ORDER BY upper(m.subject), m.id DESC`;
      topics.sort((a, b) => b.max_id - a.max_id);
      success(res, { topics });
    }),
  );
  return router;
}
