import { Router } from "express";
import { badRequest, fetchMessages, MissingArgumentError, parseNarrow, type Anchor } from "@chat/core";
import { actorOf, params, parseParams, rawParam, route, successWithJsonText } from "@chat/http";
import type { ApiServices } from "../services.ts";

/** `anchor`: a message id, or newest / oldest / first_unread (Zulip 2.2+). */
function parseAnchor(raw: string): Anchor {
  if (raw === "newest" || raw === "oldest" || raw === "first_unread") return raw;
  if (/^\d+$/.test(raw.trim()) && Number.isSafeInteger(Number(raw))) return Number(raw);
  throw badRequest("Invalid anchor");
}

export function messageFetchRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, messageCache } = services;

  router.get(
    "/messages",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, {
        num_before: params.int(),
        num_after: params.int(),
        narrow: params.json<unknown>({}).default([]),
        client_gravatar: params.bool().default(false),
        apply_markdown: params.bool().default(true),
        use_first_unread_anchor: params.bool().default(false),
      });
      const rawAnchor = rawParam(req, "anchor");
      // The deprecated flag wins, as in Zulip; without it, an anchor is required.
      if (rawAnchor === undefined && !p.use_first_unread_anchor) throw new MissingArgumentError("anchor");
      const anchor = p.use_first_unread_anchor ? "first_unread" : parseAnchor(rawAnchor!);
      const result = await fetchMessages(prisma, messageCache, actor, {
        anchor,
        numBefore: p.num_before,
        numAfter: p.num_after,
        narrow: parseNarrow(p.narrow),
        applyMarkdown: p.apply_markdown,
        clientGravatar: p.client_gravatar,
      });
      const { messages, ...fields } = result;
      successWithJsonText(res, fields, { messages: `[${messages.join(",")}]` });
    }),
  );
  return router;
}
