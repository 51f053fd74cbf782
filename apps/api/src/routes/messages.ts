import type { IncomingMessage } from "node:http";
import { Router } from "express";
import { badRequest, fitsPostgresInteger, MAX_MESSAGE_LENGTH, MAX_PRIVATE_RECIPIENTS, realmHost, sendMessageAtomic, type Actor, type SentMessage, type MessageDestination, type PrivateRecipients, type StreamIndicator } from "@chat/core";
import {
  actorOf,
  authenticateHotRequest,
  countHotRequest,
  DEFAULT_MAX_JSON_LENGTH,
  endpoint,
  hotRoute,
  ignoredParametersField,
  params,
  parseParams,
  rawParam,
  requestIdOf,
  route,
  schema,
  sendJsonBody,
  serve,
  success,
  successBody,
  type HotRoute,
  type ParamSource,
  tagRequestUser,
} from "@chat/http";
import { clientName } from "../client-name.ts";
import { TOPIC_PARAMS } from "./message-edit.ts";
import type { ApiServices } from "../services.ts";

// Most values are plain names, which are not tried: a failed JSON.parse builds an exception
// (measured: 2% of a send's CPU).
/** The JSON value `raw` holds, or undefined. */
function tryJson(raw: string): unknown {
  if (!/^\s*[[{"\d-]/.test(raw)) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** `to` for a stream: its name, its id, or (older clients) a JSON list holding one of those. */
export function parseStreamIndicator(raw: string): StreamIndicator {
  let value = tryJson(raw);
  if (Array.isArray(value)) {
    if (value.length !== 1) throw badRequest("Expected exactly one stream");
    value = value[0];
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    if (!fitsPostgresInteger(value)) throw badRequest("Invalid stream id");
    return value;
  }
  if (typeof value === "string") return value;
  return raw;
}

/** `to` for a private message: a JSON list of user ids or of emails, or comma-separated emails. */
export function parsePrivateRecipients(raw: string): PrivateRecipients {
  const value = tryJson(raw);
  const list = Array.isArray(value) ? value : typeof value === "number" ? [value] : raw.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length > MAX_PRIVATE_RECIPIENTS) throw badRequest(`to has too many items (limit: ${MAX_PRIVATE_RECIPIENTS})`);
  for (const item of list) {
    if (typeof item === "number" && Number.isSafeInteger(item) && !fitsPostgresInteger(item)) throw badRequest(`Invalid user ID: ${item}`);
  }
  if (list.every((item) => typeof item === "number" && Number.isSafeInteger(item))) return list as number[];
  if (list.every((item) => typeof item === "string")) return list as string[];
  throw badRequest("Recipient lists may contain emails or user IDs, but not both.");
}

/**
 * A stream message without `to` goes to the sender's default stream (a bot's
 * default_sending_stream), as Zulip's Addressee.legacy_build has it.
 */
function streamOrDefault(to: string | undefined, actor: Actor): StreamIndicator {
  if (to !== undefined && to.trim() !== "" && to.trim() !== "[]") return parseStreamIndicator(to);
  if (actor.default_sending_stream_id !== null) return actor.default_sending_stream_id;
  throw badRequest("Missing stream");
}

/** Event queue ids are short (`<server>:<uuid>`); local ids are the client's counters. */
const MAX_QUEUE_ID_LENGTH = 100;
const MAX_LOCAL_ID_LENGTH = 100;

export const messageEndpoints = {
  send: endpoint({
    method: "post",
    path: "/messages",
    tag: "messages",
    auth: "basic",
    summary: "Send a message",
    params: {
      // `direct` is feature level 174's name for `private`, `channel` level 248's for `stream`.
      type: params.oneOf(["stream", "channel", "private", "direct"] as const),
      // A list of up to DEFAULT_MAX_ITEMS addresses is longer than an ordinary string.
      to: params
        .string()
        .maxLength(DEFAULT_MAX_JSON_LENGTH)
        .optional()
        .describe(
          "A stream: its name or id (or a JSON list of one); without it, a bot's default stream. Private: a JSON list of user ids or of emails, or emails separated by commas.",
        ),
      content: params.string().maxBytes(MAX_MESSAGE_LENGTH, `Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`),
      queue_id: params.string().maxLength(MAX_QUEUE_ID_LENGTH).optional().describe("The sender's event queue, whose `message` event then carries `local_message_id`."),
      local_id: params.string().maxLength(MAX_LOCAL_ID_LENGTH).optional().describe("The client's id for the message, echoed as `local_message_id` to `queue_id`."),
      read_by_sender: params.bool().optional().describe("Whether the message starts read for its sender (feature level 236); read when absent."),
    },
    otherParams: TOPIC_PARAMS,
    response: successBody(
      { id: schema.integer() },
      // The sender's new policy for the topic, when sending changed it (feature level 218): 2 unmuted, 3 followed.
      { automatic_new_visibility_policy: schema.integer({ enum: [2, 3] }) },
    ),
    errors: ["STREAM_DOES_NOT_EXIST", "STREAM_WILDCARD_MENTION_NOT_ALLOWED", "TOPIC_WILDCARD_MENTION_NOT_ALLOWED"],
  }),
};

function sender(services: ApiServices) {
  return async (source: ParamSource, actor: Actor, req: IncomingMessage): Promise<SentMessage> => {
    const p = parseParams(source, messageEndpoints.send.params);
    const destination: MessageDestination =
      p.type === "stream" || p.type === "channel"
        ? { type: "stream", stream: streamOrDefault(p.to, actor), topic: rawParam(source, "topic") ?? rawParam(source, "subject") }
        : { type: "private", to: parsePrivateRecipients(p.to ?? "") };
    // Zulip marks a message read for its sender only when the sending client is a person's
    // (Client.default_read_by_sender); this server always has, and 3.x-era clients expect it.
    const localEcho = p.queue_id !== undefined && p.local_id !== undefined ? { queueId: p.queue_id, localId: p.local_id } : undefined;
    const request = { destination, content: p.content, client: clientName(req), readBySender: p.read_by_sender ?? true, localEcho, realmHost: realmHost(actor.realm.string_id, services.ctx.externalHost) };
    return sendMessageAtomic(services.actions, actor, request, requestIdOf(req));
  };
}

/** POST /messages' answer: the id, and automatic_new_visibility_policy only when sending set one (as Zulip). */
function sentBody(result: SentMessage): { id: number; automatic_new_visibility_policy?: number } {
  return result.automaticNewVisibilityPolicy === undefined ? { id: result.id } : { id: result.id, automatic_new_visibility_policy: result.automaticNewVisibilityPolicy };
}

export function messageRoutes(services: ApiServices): Router {
  const router = Router();
  const send = sender(services);
  serve(
    router,
    messageEndpoints.send,
    route(async (req, res) => {
      const result = await send(req, actorOf(res), req);
      success(res, sentBody(result));
    }),
  );
  return router;
}

/**
 * The commonest write, before Express. A failed send wrote nothing (sendMessageAtomic), so on any
 * error it declines and the route above answers, from the start, with the error.
 */
export function messageSendHotRoute(services: ApiServices): HotRoute {
  const send = sender(services);
  const auth = { prisma: services.prisma, externalHost: services.ctx.externalHost };
  return hotRoute({
    method: "POST",
    path: "/api/v1/messages",
    async handle({ req, query, body }, res) {
      const actor = await authenticateHotRequest(auth, req);
      if (actor === undefined) return false;
      tagRequestUser(req, actor.id);
      if (!(await countHotRequest(services.rateLimits, req, actor.id))) return false;
      const source = { query, body };
      const result = await send(source, actor, req);
      sendJsonBody(res, 200, JSON.stringify({ result: "success", msg: "", ...sentBody(result), ...ignoredParametersField(messageEndpoints.send, source) }));
      return true;
    },
  });
}
