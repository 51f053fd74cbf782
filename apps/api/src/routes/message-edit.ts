import { Router, type NextFunction, type Request, type Response } from "express";
import { fetchOneMessage, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH, messageEditHistory, messageRawContent, PROPAGATE_MODES, realmHost, realmUri, updateMessage } from "@chat/core";
import { actorOf, endpoint, ignoredParametersOf, originOf, params, parseParams, rawParam, requestProtocol, route, schema, serve, success, successBody, successJsonText } from "@chat/http";
import type { ApiServices } from "../services.ts";

/**
 * `/messages/{message_id}` shares its prefix with `/messages/flags`, `/messages/render` and
 * others: a segment that is not a number is left to the routes that follow.
 */
function messageIdOf(req: Request): number | null {
  const raw = String(req.params.message_id);
  // An id past Postgres' integer is "Invalid message(s)" from accessMessage, before any query.
  return /^\d+$/.test(raw) ? Number(raw) : null;
}

function numericOnly(req: Request, _res: Response, next: NextFunction): void {
  next(messageIdOf(req) === null ? "route" : undefined);
}

/** A message's topic as sending and editing take it, under its name and the older one. */
export const TOPIC_PARAMS = {
  topic: { schema: { type: "string", maxLength: MAX_TOPIC_LENGTH }, description: `The topic, at most ${MAX_TOPIC_LENGTH} characters.` },
  subject: { schema: { type: "string", maxLength: MAX_TOPIC_LENGTH }, description: "The topic, under the name clients before Zulip 2.0 send (`topic` wins)." },
};

export const messageEditEndpoints = {
  rawContent: endpoint({
    method: "get",
    path: "/messages/{message_id}",
    tag: "messages",
    auth: "basic-or-spectator",
    summary: "A message, and its Markdown source",
    params: {
      apply_markdown: params.bool().default(true).describe("Whether `message.content` is HTML (else the Markdown source)."),
      allow_empty_topic_name: params.bool().default(false).describe("Whether the empty topic reads as `\"\"`; else as `realm_empty_topic_display_name` (feature level 334)."),
    },
    response: successBody({ raw_content: schema.string(), message: schema.ref("Message") }),
  }),
  history: endpoint({
    method: "get",
    path: "/messages/{message_id}/history",
    tag: "messages",
    auth: "basic",
    summary: "A message's edit history, oldest first",
    params: {
      allow_empty_topic_name: params.bool().default(false).describe("Whether the empty topic reads as `\"\"` in `topic` and `prev_topic`; else as `realm_empty_topic_display_name` (feature level 334)."),
    },
    response: successBody({ message_history: schema.array(schema.ref("EditHistorySnapshot")) }),
  }),
  update: endpoint({
    method: "patch",
    path: "/messages/{message_id}",
    tag: "messages",
    auth: "basic",
    summary: "Edit a message's content or topic, or move it to another stream",
    params: {
      content: params.string().maxBytes(MAX_MESSAGE_LENGTH, `Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`).optional(),
      propagate_mode: params.oneOf(PROPAGATE_MODES).default("change_one"),
      stream_id: params.int().optional(),
      // Feature levels 9 and 152: the Notification Bot's notes after a move.
      send_notification_to_old_thread: params.bool().default(false).describe("Whether the Notification Bot says in the topic left where its messages went."),
      send_notification_to_new_thread: params.bool().default(true).describe("Whether the Notification Bot says in the topic moved to where its messages came from."),
    },
    otherParams: TOPIC_PARAMS,
    response: successBody({
      detached_uploads: schema.array(schema.ref("Attachment"), {
        description: "The sender's uploads the new content no longer links and no other message does: reachable only through the edit history now (feature level 285).",
      }),
    }),
    errors: ["STREAM_WILDCARD_MENTION_NOT_ALLOWED", "TOPIC_WILDCARD_MENTION_NOT_ALLOWED", "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"],
  }),
};

export function messageEditRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = messageEditEndpoints;

  serve(
    router,
    E.rawContent,
    numericOnly,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.rawContent.params);
      const id = messageIdOf(req)!;
      // raw_content for clients before feature level 120 (zulip-terminal reads it), message for later ones.
      const [rawContent, message] = await Promise.all([messageRawContent(prisma, actor, id), fetchOneMessage(prisma, services.messageCache, actor, id, p.apply_markdown, p.allow_empty_topic_name)]);
      res.type("json").send(successJsonText({ raw_content: rawContent, ...ignoredParametersOf(req) }, { message }));
    }),
  );

  serve(
    router,
    E.history,
    numericOnly,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.history.params);
      success(res, { message_history: await messageEditHistory(prisma, actor, messageIdOf(req)!, p.allow_empty_topic_name) });
    }),
  );

  serve(
    router,
    E.update,
    numericOnly,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      // `subject` is what clients before Zulip 2.0 send.
      const topic = rawParam(req, "topic") ?? rawParam(req, "subject");
      const result = await actions.run(originOf(req, actor), (tx, events) =>
        updateMessage(tx, events, actor, messageIdOf(req)!, {
          content: p.content,
          topic,
          propagateMode: p.propagate_mode,
          streamId: p.stream_id,
          realmHost: realmHost(actor.realm.string_id, services.ctx.externalHost),
          sendNotificationToOldThread: p.send_notification_to_old_thread,
          sendNotificationToNewThread: p.send_notification_to_new_thread,
          ctx: services.ctx,
          realmUrl: realmUri(actor.realm.string_id, services.ctx.externalHost, requestProtocol(req)),
        }),
      );
      success(res, { detached_uploads: result.detachedUploads });
    }),
  );
  return router;
}
