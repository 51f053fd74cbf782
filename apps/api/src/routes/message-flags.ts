import { Router } from "express";
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";

const MESSAGE_IDS = { type: "array", items: { type: "integer" } };

export function messageFlagRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  router.post(
    "/messages/flags",
    route(async (req, res) => {
      const actor = actorOf(res);
      // An id no message can have is Zulip's `Invalid message(s)`, which the action answers.
      const p = parseParams(req, { messages: params.json<number[]>(MESSAGE_IDS, { ownIntegerRange: true }), op: params.string(), flag: params.string() });
      const messages = await actions.run(originOf(req, actor), (tx, events) => updateMessageFlags(tx, events, actor, p.op, p.flag, p.messages));
      success(res, { messages });
    }),
  );

  router.post(
    "/mark_all_as_read",
    route(async (req, res) => {
      const actor = actorOf(res);
      await actions.run(originOf(req, actor), (tx, events) => markAllAsRead(tx, events, actor));
      success(res);
    }),
  );

  router.post(
    "/mark_stream_as_read",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { stream_id: params.int() });
      await actions.run(originOf(req, actor), (tx, events) => markStreamAsRead(tx, events, actor, p.stream_id));
      success(res);
    }),
  );

  router.post(
    "/mark_topic_as_read",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { stream_id: params.int(), topic_name: params.string() });
      await actions.run(originOf(req, actor), (tx, events) => markTopicAsRead(tx, events, actor, p.stream_id, p.topic_name));
      success(res);
    }),
  );
  return router;
}
