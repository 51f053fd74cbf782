import { Router } from "express";
import { badRequest, fitsPostgresInteger, MAX_TOPIC_LENGTH, sendMessageEditTypingNotification, sendStreamTypingNotification, sendTypingNotification, TYPING_OPS } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, rawParam, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { parsePrivateRecipients } from "./messages.ts";

/** A stream's id as clients of feature levels 58 to 214 send it: `to` = a JSON list of that one id. */
function legacyStreamId(to: string | undefined): number {
  let value: unknown;
  try {
    value = to === undefined ? undefined : JSON.parse(to);
  } catch {
    value = undefined;
  }
  if (Array.isArray(value) && value.length === 1) value = value[0];
  if (typeof value === "number" && Number.isSafeInteger(value) && fitsPostgresInteger(value)) return value;
  throw badRequest("Missing stream_id");
}

export const typingEndpoints = {
  notify: endpoint({
    method: "post",
    path: "/typing",
    tag: "users",
    auth: "basic",
    summary: "Tell a conversation's participants, or a topic's subscribers, that the user started or stopped typing",
    params: {
      op: params.string().describe("`start` or `stop`."),
      // `direct` is feature level 174's name for `private`, `channel` level 248's for `stream`.
      type: params.oneOf(["direct", "private", "stream", "channel"] as const).default("direct"),
      to: params
        .string()
        .optional()
        .describe("Direct: the recipients, a JSON list of user ids (or of emails, deprecated), or emails separated by commas. Stream (before feature level 215): a JSON list of the stream's id."),
      stream_id: params.int().optional().describe("Stream: the stream (feature level 215)."),
    },
    otherParams: {
      topic: { schema: { type: "string", maxLength: MAX_TOPIC_LENGTH }, description: "Stream: the topic." },
    },
    response: EMPTY_SUCCESS,
  }),
  // Feature level 361's form of feature level 351's POST /message_edit_typing.
  editing: endpoint({
    method: "post",
    path: "/messages/{message_id}/typing",
    tag: "users",
    auth: "basic",
    summary: "Tell whoever can see a message that the user started or stopped editing it",
    params: { op: params.oneOf(TYPING_OPS).describe("`start` or `stop`.") },
    response: EMPTY_SUCCESS,
  }),
  editingByParam: endpoint({
    method: "post",
    path: "/message_edit_typing",
    tag: "users",
    auth: "basic",
    summary: "Feature levels 351 to 360's name for POST /messages/{message_id}/typing",
    params: { message_id: params.int(), op: params.oneOf(TYPING_OPS).describe("`start` or `stop`.") },
    response: EMPTY_SUCCESS,
  }),
};

export function typingRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  serve(
    router,
    typingEndpoints.notify,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, typingEndpoints.notify.params);
      if (p.type === "stream" || p.type === "channel") {
        const streamId = p.stream_id ?? legacyStreamId(p.to);
        const topic = rawParam(req, "topic");
        await actions.run(originOf(req, actor), (tx, events) => sendStreamTypingNotification(tx, events, actor, streamId, topic, p.op));
      } else {
        const to = p.to === undefined ? [] : parsePrivateRecipients(p.to);
        await actions.run(originOf(req, actor), (tx, events) => sendTypingNotification(tx, events, actor, to, p.op));
      }
      success(res);
    }),
  );

  serve(
    router,
    typingEndpoints.editing,
    (req, _res, next) => next(/^\d+$/.test(String(req.params.message_id)) ? undefined : "route"),
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, typingEndpoints.editing.params);
      const messageId = Number(req.params.message_id);
      await actions.run(originOf(req, actor), (tx, events) => sendMessageEditTypingNotification(tx, events, actor, messageId, p.op));
      success(res);
    }),
  );

  serve(
    router,
    typingEndpoints.editingByParam,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, typingEndpoints.editingByParam.params);
      await actions.run(originOf(req, actor), (tx, events) => sendMessageEditTypingNotification(tx, events, actor, p.message_id, p.op));
      success(res);
    }),
  );
  return router;
}
