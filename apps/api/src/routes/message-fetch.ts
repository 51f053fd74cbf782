import { Router, type Request } from "express";
import { badRequest, fetchMessages, MissingArgumentError, parseNarrow, type Actor, type ActorVersion, type Anchor } from "@chat/core";
import { actorOf, actorVersionOf, authenticateFresh, params, parseParams, rawParam, requireCachedUser, route, successWithJsonText } from "@chat/http";
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
  const auth = { prisma, externalHost: services.ctx.externalHost, actors: services.actorCache };

  const fetch = async (req: Request, actor: Actor, version: ActorVersion | null) => {
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
    return fetchMessages(prisma, messageCache, actor, {
      anchor,
      numBefore: p.num_before,
      numAfter: p.num_after,
      narrow: parseNarrow(p.narrow),
      applyMarkdown: p.apply_markdown,
      clientGravatar: p.client_gravatar,
    }, version);
  };

  // The hottest read: authenticated from this node's copy of the actor, which the page query
  // checks (actor-cache.ts). Whatever goes wrong with a copy, stale or not, is answered again with
  // a fresh authentication, so every error (and every answer) is the database's current one.
  router.get(
    "/messages",
    requireCachedUser(auth),
    route(async (req, res) => {
      const version = actorVersionOf(res);
      let result;
      try {
        result = await fetch(req, actorOf(res), version);
      } catch (error) {
        if (version === null) throw error;
        result = await fetch(req, await authenticateFresh(auth, req, res), null);
      }
      const { messages, ...fields } = result;
      successWithJsonText(res, fields, { messages: `[${messages.join(",")}]` });
    }),
  );
  return router;
}
