import { Router } from "express";
import {
  deleteScheduledMessage,
  editScheduledMessage,
  getScheduledMessages,
  JsonableError,
  MAX_MESSAGE_LENGTH,
  MAX_PRIVATE_RECIPIENTS,
  parseScheduledRecipientIds,
  parseScheduledStreamId,
  queueScheduledMessage,
  realmHost,
  scheduledMessageType,
  scheduleMessage,
} from "@chat/core";
import { actorOf, DEFAULT_MAX_JSON_LENGTH, EMPTY_SUCCESS, endpoint, originOf, Param, params, parseParams, rawParam, route, schema, serve, success, successBody } from "@chat/http";
import { clientName } from "../client-name.ts";
import type { ApiServices } from "../services.ts";
import { TOPIC_PARAMS } from "./message-edit.ts";
import { pathId } from "./path-ids.ts";

// `direct` is feature level 174's name for `private`, `channel` level 248's for `stream`.
const TYPE = params.oneOf(["stream", "channel", "private", "direct"] as const);
// Zulip's `to`: a JSON-encoded stream id or list of user ids. The route reads the text itself
// (parseScheduledStreamId / parseScheduledRecipientIds), with Zulip's refusals.
const TO = new Param<string>((raw) => raw, { maxLength: DEFAULT_MAX_JSON_LENGTH }, {
  schema: { oneOf: [{ type: "integer" }, { type: "array", items: { type: "integer" } }] },
  json: true,
});
const CONTENT = params.string().maxBytes(MAX_MESSAGE_LENGTH, `Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`);
// Unix seconds; Postgres' integer bounds it (the year 2038).
const DELIVER_AT = params.int({ min: 0 });
const ID = { scheduled_message_id: { schema: { type: "integer" }, description: "The scheduled message's id." } };

export const scheduledMessageEndpoints = {
  list: endpoint({
    method: "get",
    path: "/scheduled_messages",
    tag: "scheduled_messages",
    auth: "basic",
    summary: "The user's scheduled messages not yet sent",
    params: {},
    response: successBody({ scheduled_messages: schema.array(schema.ref("ScheduledMessage")) }),
  }),
  create: endpoint({
    method: "post",
    path: "/scheduled_messages",
    tag: "scheduled_messages",
    auth: "basic",
    summary: "Schedule a message",
    params: {
      type: TYPE,
      to: TO.describe("A stream: its id. Direct: a JSON list of user ids."),
      content: CONTENT,
      scheduled_delivery_timestamp: DELIVER_AT.describe("When to send it, in Unix seconds; in the future."),
      read_by_sender: params.bool().optional().describe("Whether the message starts read for its sender; by default read unless it is a note to self."),
    },
    otherParams: TOPIC_PARAMS,
    response: successBody({ scheduled_message_id: schema.integer() }),
    errors: ["STREAM_DOES_NOT_EXIST"],
  }),
  edit: endpoint({
    method: "patch",
    path: "/scheduled_messages/{scheduled_message_id}",
    tag: "scheduled_messages",
    auth: "basic",
    summary: "Edit a scheduled message",
    params: {
      type: TYPE.optional().describe("A new type; `to` then too, and `topic` for a stream."),
      to: TO.optional(),
      content: CONTENT.optional(),
      scheduled_delivery_timestamp: DELIVER_AT.optional().describe("A new time; required for a message that failed."),
    },
    otherParams: TOPIC_PARAMS,
    pathParams: ID,
    response: EMPTY_SUCCESS,
    errors: ["STREAM_DOES_NOT_EXIST"],
  }),
  remove: endpoint({
    method: "delete",
    path: "/scheduled_messages/{scheduled_message_id}",
    tag: "scheduled_messages",
    auth: "basic",
    summary: "Delete a scheduled message",
    params: {},
    pathParams: ID,
    response: EMPTY_SUCCESS,
  }),
};

export function scheduledMessageRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions, jobs } = services;
  const E = scheduledMessageEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { scheduled_messages: await getScheduledMessages(prisma, actorOf(res).id) });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.create.params);
      const type = scheduledMessageType(p.type);
      const request = {
        type,
        to: type === "stream" ? parseScheduledStreamId(p.to) : parseScheduledRecipientIds(p.to, MAX_PRIVATE_RECIPIENTS),
        topic: rawParam(req, "topic") ?? rawParam(req, "subject"),
        content: p.content,
        deliverAt: p.scheduled_delivery_timestamp,
        readBySender: p.read_by_sender,
        client: clientName(req),
        realmHost: realmHost(actor.realm.string_id, services.ctx.externalHost),
      };
      const id = await actions.run(originOf(req, actor), (tx, events) => scheduleMessage(tx, events, actor, request));
      await queueScheduledMessage(jobs, { id, realmId: actor.realm_id, at: request.deliverAt });
      success(res, { scheduled_message_id: id });
    }),
  );

  serve(
    router,
    E.edit,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "scheduled_message_id");
      const p = parseParams(req, E.edit.params);
      const topic = rawParam(req, "topic") ?? rawParam(req, "subject");
      if (p.type === undefined && p.to === undefined && topic === undefined && p.content === undefined && p.scheduled_delivery_timestamp === undefined) {
        throw new JsonableError("Nothing to change");
      }
      const type = p.type === undefined ? undefined : scheduledMessageType(p.type);
      if (type !== undefined && p.to === undefined) throw new JsonableError("Recipient required when updating type of scheduled message.");
      if (type === "stream" && topic === undefined) throw new JsonableError("Topic required when updating scheduled message type to stream.");
      const changes = {
        type,
        to: p.to,
        topic,
        content: p.content,
        deliverAt: p.scheduled_delivery_timestamp,
        client: clientName(req),
        realmHost: realmHost(actor.realm.string_id, services.ctx.externalHost),
        maxRecipients: MAX_PRIVATE_RECIPIENTS,
      };
      const { realmId, at } = await actions.run(originOf(req, actor), (tx, events) => editScheduledMessage(tx, events, actor, id, changes));
      // A new time needs a job of its own; the old one will find the time changed. (Queued again
      // otherwise too: the same job id queues nothing, and a lost job is replaced.)
      await queueScheduledMessage(jobs, { id, realmId, at });
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "scheduled_message_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteScheduledMessage(tx, events, actor, id));
      success(res);
    }),
  );
  return router;
}
