import { Router } from "express";
import { badRequest, changeMessageFlags, fetchMessageIds, markAllAsReadInBatches, markStreamAsRead, markTopicAsRead, parseNarrow } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import { parseAnchor } from "./message-fetch.ts";
import type { ApiServices } from "../services.ts";

/** Zulip's MAX_MESSAGES_PER_UPDATE: one flags/narrow request changes at most this many messages. */
const MAX_MESSAGES_PER_UPDATE = 5000;

const MESSAGE_IDS = { type: "array", items: { type: "integer" } };

const common = { tag: "messages", auth: "basic", response: EMPTY_SUCCESS } as const;

/** Feature level 355 (Zulip sends it with every answer, empty unless marking unread skipped some). */
const IGNORED_CHANNELS = schema.array(schema.integer(), {
  description: "The channels whose messages stayed read because the user is not subscribed to them (feature level 355).",
});

export const messageFlagEndpoints = {
  update: endpoint({
    ...common,
    method: "post",
    path: "/messages/flags",
    summary: "Add a flag to messages, or remove it",
    // An id no message can have is Zulip's `Invalid message(s)`, which the action answers.
    params: {
      messages: params.json<number[]>(MESSAGE_IDS, { ownIntegerRange: true }),
      op: params.string().describe("`add` or `remove`."),
      flag: params.string().describe("`read`, `starred`, `collapsed`, ..."),
    },
    response: successBody({ messages: schema.array(schema.integer()), ignored_because_not_subscribed_channels: IGNORED_CHANNELS }),
  }),
  updateForNarrow: endpoint({
    ...common,
    method: "post",
    path: "/messages/flags/narrow",
    summary: "Add a flag to a range of messages in a narrow, or remove it (feature level 155)",
    params: {
      anchor: params
        .custom<string>((raw) => raw, { anyOf: [{ type: "integer", minimum: 0 }, { enum: ["newest", "oldest", "first_unread"] }] })
        .describe("A message id, or `newest`, `oldest`, `first_unread`."),
      include_anchor: params.bool().default(true),
      num_before: params.int().describe(`With num_after, at most ${MAX_MESSAGES_PER_UPDATE} messages (more are cut, as in Zulip).`),
      num_after: params.int(),
      narrow: params.json<unknown>({}).default([]).describe("A list of `{operator, operand}` dicts, or of `[operator, operand]` pairs."),
      op: params.string().describe("`add` or `remove`."),
      flag: params.string().describe("`read`, `starred`, `collapsed`, ..."),
    },
    response: successBody({
      processed_count: schema.integer(),
      updated_count: schema.integer(),
      first_processed_id: schema.nullable(schema.integer()),
      last_processed_id: schema.nullable(schema.integer()),
      found_oldest: schema.boolean(),
      found_newest: schema.boolean(),
      ignored_because_not_subscribed_channels: IGNORED_CHANNELS,
    }),
    errors: ["BAD_NARROW"],
  }),
  markAllAsRead: endpoint({
    ...common,
    method: "post",
    path: "/mark_all_as_read",
    summary: "Mark every message read",
    description: "In batches that each commit; past a time limit it stops with `complete: false` (feature level 153), and repeating the request goes on.",
    params: {},
    response: successBody({ complete: schema.boolean() }),
  }),
  markStreamAsRead: endpoint({ ...common, method: "post", path: "/mark_stream_as_read", summary: "Mark a stream's messages read", params: { stream_id: params.int() } }),
  markTopicAsRead: endpoint({
    ...common,
    method: "post",
    path: "/mark_topic_as_read",
    summary: "Mark a topic's messages read",
    params: { stream_id: params.int(), topic_name: params.string() },
  }),
};

export function messageFlagRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions, prisma } = services;
  const E = messageFlagEndpoints;

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      const change = await actions.run(originOf(req, actor), (tx, events) => changeMessageFlags(tx, events, actor, p.op, p.flag, p.messages));
      success(res, { messages: change.messages, ignored_because_not_subscribed_channels: change.ignoredBecauseNotSubscribedChannels });
    }),
  );

  serve(
    router,
    E.updateForNarrow,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.updateForNarrow.params);
      if (p.num_before < 0 || p.num_after < 0) throw badRequest("num_before and num_after must not be negative");
      // Cut, not refused, as Zulip: the side before keeps at least half when both ask for much.
      const numBefore = Math.min(p.num_before, Math.max(MAX_MESSAGES_PER_UPDATE - p.num_after, MAX_MESSAGES_PER_UPDATE / 2));
      const numAfter = Math.min(p.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
      const range = { anchor: parseAnchor(p.anchor), includeAnchor: p.include_anchor, numBefore, numAfter, narrow: parseNarrow(p.narrow) };
      const found = await fetchMessageIds(prisma, actor, range, MAX_MESSAGES_PER_UPDATE);
      const change = await actions.run(originOf(req, actor), (tx, events) => changeMessageFlags(tx, events, actor, p.op, p.flag, found.ids));
      success(res, {
        processed_count: found.ids.length,
        updated_count: change.messages.length,
        first_processed_id: found.ids[0] ?? null,
        last_processed_id: found.ids.at(-1) ?? null,
        found_oldest: found.found_oldest,
        found_newest: found.found_newest,
        ignored_because_not_subscribed_channels: change.ignoredBecauseNotSubscribedChannels,
      });
    }),
  );

  serve(
    router,
    E.markAllAsRead,
    route(async (req, res) => {
      const actor = actorOf(res);
      success(res, { complete: await markAllAsReadInBatches(actions, originOf(req, actor), actor) });
    }),
  );

  serve(
    router,
    E.markStreamAsRead,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.markStreamAsRead.params);
      await actions.run(originOf(req, actor), (tx, events) => markStreamAsRead(tx, events, actor, p.stream_id));
      success(res);
    }),
  );

  serve(
    router,
    E.markTopicAsRead,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.markTopicAsRead.params);
      await actions.run(originOf(req, actor), (tx, events) => markTopicAsRead(tx, events, actor, p.stream_id, p.topic_name));
      success(res);
    }),
  );
  return router;
}
