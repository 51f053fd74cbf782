import { Router, type NextFunction, type Request, type Response } from "express";
import { MAX_MESSAGE_LENGTH, messageEditHistory, messageRawContent, PROPAGATE_MODES, updateMessage } from "@chat/core";
import { actorOf, params, parseParams, rawParam, route, success, originOf } from "@chat/http";
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

export function messageEditRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;

  router.get(
    "/messages/:message_id",
    numericOnly,
    route(async (req, res) => {
      const actor = actorOf(res);
      const rawContent = await messageRawContent(prisma, actor, messageIdOf(req)!);
      success(res, { raw_content: rawContent });
    }),
  );

  router.get(
    "/messages/:message_id/history",
    numericOnly,
    route(async (req, res) => {
      const actor = actorOf(res);
      success(res, { message_history: await messageEditHistory(prisma, actor, messageIdOf(req)!) });
    }),
  );

  router.patch(
    "/messages/:message_id",
    numericOnly,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, {
        content: params.string().maxBytes(MAX_MESSAGE_LENGTH, `Message too long (limit: ${MAX_MESSAGE_LENGTH} bytes)`).optional(),
        propagate_mode: params.oneOf(PROPAGATE_MODES).default("change_one"),
        stream_id: params.int().optional(),
      });
      // `subject` is what clients before Zulip 2.0 send.
      const topic = rawParam(req, "topic") ?? rawParam(req, "subject");
      await actions.run(originOf(req, actor), (tx, events) =>
        updateMessage(tx, events, actor, messageIdOf(req)!, { content: p.content, topic, propagateMode: p.propagate_mode, streamId: p.stream_id }),
      );
      success(res);
    }),
  );
  return router;
}
