import { Router } from "express";
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

const MESSAGE_IDS = { type: "array", items: { type: "integer" } };

const common = { tag: "messages", auth: "basic", response: EMPTY_SUCCESS } as const;

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
    response: successBody({ messages: schema.array(schema.integer()) }),
  }),
  markAllAsRead: endpoint({ ...common, method: "post", path: "/mark_all_as_read", summary: "Mark every message read", params: {} }),
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
  const { actions } = services;
  const E = messageFlagEndpoints;

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      const messages = await actions.run(originOf(req, actor), (tx, events) => updateMessageFlags(tx, events, actor, p.op, p.flag, p.messages));
      success(res, { messages });
    }),
  );

  serve(
    router,
    E.markAllAsRead,
    route(async (req, res) => {
      const actor = actorOf(res);
      await actions.run(originOf(req, actor), (tx, events) => markAllAsRead(tx, events, actor));
      success(res);
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
