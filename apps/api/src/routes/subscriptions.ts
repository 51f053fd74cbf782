import { Router } from "express";
import {
  accessStreamById,
  badRequest,
  parseGroupSettingValue,
  STREAM_GROUP_SETTING_NAMES,
  streamGroupValues,
  type GroupSettingValue,
  type StreamGroupSettingName,
  emptyTopicFromDisplayName,
  getReadableUserInRealm,
  isSubscribed,
  MAX_STREAMS_PER_REQUEST,
  formatSubscription,
  setSubscriptionProperties,
  setTopicMuted,
  subscribeByName,
  subscribersByRecipient,
  subscriptionsOf,
  unsubscribeByName,
  type Principal,
  type PropertyChange,
  type SubscribeResult,
  parseStreamRetentionDays,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { clientName } from "../client-name.ts";
import { pathId } from "./path-ids.ts";
import { streamGroupSettingParam, streamGroupSettingParams } from "./streams.ts";

/** The channel settings a subscribe request gives the streams it creates, parsed (feature levels 320 to 357). */
function groupSettingValuesOf(p: Partial<Record<StreamGroupSettingName, unknown>>): Partial<Record<StreamGroupSettingName, GroupSettingValue>> {
  const values: Partial<Record<StreamGroupSettingName, GroupSettingValue>> = {};
  for (const name of STREAM_GROUP_SETTING_NAMES) if (p[name] !== undefined) values[name] = parseGroupSettingValue(p[name], name);
  return values;
}

const STREAM_REQUESTS = {
  type: "array",
  maxItems: MAX_STREAMS_PER_REQUEST,
  items: {
    type: "object",
    required: ["name"],
    properties: { name: { type: "string" }, description: { type: "string" }, color: { type: "string" } },
  },
};
const STRING_LIST = { type: "array", maxItems: MAX_STREAMS_PER_REQUEST, items: { type: "string" } };
const PRINCIPALS = { anyOf: [{ type: "array", items: { type: "string" } }, { type: "array", items: { type: "integer" } }] };
const PROPERTY_CHANGES = {
  type: "array",
  items: {
    type: "object",
    required: ["stream_id", "property", "value"],
    properties: { stream_id: { type: "integer" }, property: { type: "string" }, value: {} },
  },
};

type StreamRequest = { name: string; description?: string; color?: string };

/** Stream names by the id of the user subscribed (feature level 289), or by email for older clients. */
const NAMES_BY_USER = schema.dict(schema.array(schema.string()));

/**
 * Clients every release of which predates feature level 289, and which read `subscribed` and
 * `already_subscribed` by email (the Python library's examples do): by their User-Agent's product
 * token (client-name.ts). The Python library (and the bots and the terminal client built on it)
 * and zulip-js. Everything else gets Zulip 10.0's user ids.
 */
const EMAIL_KEYED_CLIENTS = /^Zulip(Python|Terminal|JS|[A-Za-z0-9]*Bot)$/i;

export function subscribeResultUsersBy(req: Parameters<typeof clientName>[0]): "id" | "email" {
  return EMAIL_KEYED_CLIENTS.test(clientName(req)) ? "email" : "id";
}
const STREAM_NAMES = schema.array(schema.string());

export const subscriptionEndpoints = {
  list: endpoint({
    method: "get",
    path: "/users/me/subscriptions",
    tag: "streams",
    auth: "basic",
    summary: "The user's subscriptions",
    params: { include_subscribers: params.bool().default(false) },
    response: successBody({ subscriptions: schema.array(schema.ref("Subscription")) }),
  }),
  subscribe: endpoint({
    method: "post",
    path: "/users/me/subscriptions",
    tag: "streams",
    auth: "basic",
    summary: "Subscribe the user (or `principals`) to streams, creating those that do not exist",
    params: {
      subscriptions: params.json<StreamRequest[]>(STREAM_REQUESTS),
      principals: params.json<Principal[]>(PRINCIPALS).optional(),
      invite_only: params.bool().default(false),
      is_web_public: params.bool().default(false).describe("New streams are readable by people who are not logged in (feature level 98; organization owners)."),
      is_default_stream: params.bool().default(false).describe("Streams this request creates become default streams for new users (feature level 200; administrators)."),
      ...streamGroupSettingParams(streamGroupSettingParam),
      message_retention_days: params.jsonOrPlainString().maxLength(40).optional().describe("`realm_default`, `unlimited`, or days, for the streams this request creates (feature level 17; owners)."),
      history_public_to_subscribers: params.bool().optional(),
      stream_post_policy: params.int().optional().describe("Deprecated (removed in Zulip 10.0): `can_send_message_group` as the system group the policy means."),
      is_announcement_only: params.bool().optional().describe("Deprecated (3.x): `stream_post_policy` 2 (true) or 1 (false)."),
      authorization_errors_fatal: params.bool().default(true),
      announce: params.bool().default(false),
    },
    response: successBody({ subscribed: NAMES_BY_USER, already_subscribed: NAMES_BY_USER }, { unauthorized: STREAM_NAMES }),
    errors: ["STREAM_DOES_NOT_EXIST", "UNAUTHORIZED_PRINCIPAL"],
    errorStatuses: [403],
  }),
  update: endpoint({
    method: "patch",
    path: "/users/me/subscriptions",
    tag: "streams",
    auth: "basic",
    summary: "Subscribe to some streams and unsubscribe from others",
    params: {
      add: params.json<StreamRequest[]>(STREAM_REQUESTS).default([]),
      delete: params.json<string[]>(STRING_LIST).default([]),
    },
    response: successBody({ subscribed: NAMES_BY_USER, already_subscribed: NAMES_BY_USER, removed: STREAM_NAMES, not_removed: STREAM_NAMES }),
    errors: ["STREAM_DOES_NOT_EXIST"],
  }),
  unsubscribe: endpoint({
    method: "delete",
    path: "/users/me/subscriptions",
    tag: "streams",
    auth: "basic",
    summary: "Unsubscribe the user (or `principals`) from streams",
    params: { subscriptions: params.json<string[]>(STRING_LIST), principals: params.json<Principal[]>(PRINCIPALS).optional() },
    response: successBody({ removed: STREAM_NAMES, not_removed: STREAM_NAMES }),
    errors: ["STREAM_DOES_NOT_EXIST", "UNAUTHORIZED_PRINCIPAL"],
    errorStatuses: [403],
  }),
  properties: endpoint({
    method: "post",
    path: "/users/me/subscriptions/properties",
    tag: "streams",
    auth: "basic",
    summary: "Change properties of the user's subscriptions",
    params: { subscription_data: params.json<PropertyChange[]>(PROPERTY_CHANGES) },
    response: successBody({ subscription_data: schema.array(schema.object({ stream_id: schema.integer(), property: schema.string(), value: schema.any() })) }),
  }),
  // Zulip's get_subscription_backend (feature level 12): administrators may ask of private streams.
  status: endpoint({
    method: "get",
    path: "/users/{user_id}/subscriptions/{stream_id}",
    tag: "streams",
    auth: "basic",
    summary: "Whether a user is subscribed to a stream",
    params: {},
    response: successBody({ is_subscribed: schema.boolean() }),
  }),
  mutedTopics: endpoint({
    method: "patch",
    path: "/users/me/subscriptions/muted_topics",
    tag: "streams",
    auth: "basic",
    summary: "Mute a topic, or unmute it",
    params: {
      stream: params.string().optional().describe("The stream's name (or give `stream_id`)."),
      stream_id: params.int().optional(),
      topic: params.string(),
      op: params.oneOf(["add", "remove"] as const),
    },
    response: EMPTY_SUCCESS,
    errors: ["STREAM_DOES_NOT_EXIST"],
  }),
};

export function subscriptionRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions, ctx } = services;
  const E = subscriptionEndpoints;

  serve(
    router,
    E.list,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { include_subscribers } = parseParams(req, E.list.params);
      // Archived streams' subscriptions too, with is_archived (feature level 315).
      const subscriptions = await subscriptionsOf(prisma, actor.id, { activeOnly: true, includeArchived: true });
      const subscribers = include_subscribers ? await subscribersByRecipient(prisma, subscriptions.map((s) => s.stream.recipient_id!), "emails") : null;
      const groupValues = await streamGroupValues(prisma, subscriptions.map((s) => s.stream));
      success(res, {
        subscriptions: subscriptions.map(({ subscription, stream }) =>
          formatSubscription(subscription, stream, { emailDomain: ctx.externalHost, subscribers: subscribers ? (subscribers.get(stream.recipient_id!) ?? []) : undefined, groupValues }),
        ),
      });
    }),
  );

  serve(
    router,
    E.subscribe,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.subscribe.params);
      const result = await actions.run(originOf(req, actor), (tx, events) =>
        subscribeByName(tx, events, ctx, actor, {
          streams: p.subscriptions,
          principals: p.principals,
          inviteOnly: p.invite_only,
          isWebPublic: p.is_web_public,
          isDefaultStream: p.is_default_stream,
          groupSettings: groupSettingValuesOf(p),
          messageRetentionDays: p.message_retention_days === undefined ? undefined : parseStreamRetentionDays(actor, p.message_retention_days),
          historyPublicToSubscribers: p.history_public_to_subscribers,
          streamPostPolicy: p.stream_post_policy ?? (p.is_announcement_only ? 2 : 1),
          authorizationErrorsFatal: p.authorization_errors_fatal,
          announce: p.announce,
          usersBy: subscribeResultUsersBy(req),
        }),
      );
      success(res, { ...result });
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      if (p.add.length === 0 && p.delete.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      const result = await actions.run(originOf(req, actor), async (tx, events) => {
        const added: SubscribeResult = p.add.length
          ? await subscribeByName(tx, events, ctx, actor, { streams: p.add, inviteOnly: false, streamPostPolicy: 1, authorizationErrorsFatal: true, announce: false, usersBy: subscribeResultUsersBy(req) })
          : { subscribed: {}, already_subscribed: {} };
        const removed = p.delete.length ? await unsubscribeByName(tx, events, actor, p.delete) : { removed: [], not_removed: [] };
        return { ...added, ...removed };
      });
      success(res, result);
    }),
  );

  serve(
    router,
    E.unsubscribe,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.unsubscribe.params);
      const result = await actions.run(originOf(req, actor), (tx, events) => unsubscribeByName(tx, events, actor, p.subscriptions, p.principals));
      success(res, result);
    }),
  );

  serve(
    router,
    E.properties,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { subscription_data } = parseParams(req, E.properties.params);
      await actions.run(originOf(req, actor), (tx, events) => setSubscriptionProperties(tx, events, actor, subscription_data));
      success(res, { subscription_data });
    }),
  );

  serve(
    router,
    E.status,
    route(async (req, res) => {
      const actor = actorOf(res);
      const target = await getReadableUserInRealm(prisma, actor.realm, pathId(req, "user_id"));
      const stream = await accessStreamById(prisma, actor, pathId(req, "stream_id"));
      success(res, { is_subscribed: await isSubscribed(prisma, target.id, stream) });
    }),
  );

  serve(
    router,
    E.mutedTopics,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.mutedTopics.params);
      if (p.stream === undefined && p.stream_id === undefined) throw badRequest("Please supply 'stream'.");
      if (p.stream !== undefined && p.stream_id !== undefined) throw badRequest("Please choose one: 'stream' or 'stream_id'.");
      // A 3.x client names the empty topic by its display name (feature level 334), never by "".
      if (p.topic.trim() === "") throw badRequest("Topic can't be empty");
      const topic = emptyTopicFromDisplayName(p.topic.trim());
      const stream = p.stream_id !== undefined ? { id: p.stream_id } : { name: p.stream! };
      await actions.run(originOf(req, actor), (tx, events) => setTopicMuted(tx, events, actor, stream, topic, p.op));
      success(res);
    }),
  );
  return router;
}
