import { Router } from "express";
import { badRequest, fetchMessages, MAX_INT, MissingArgumentError, parseNarrow, type Actor, type ActorVersion, type Anchor, type FetchResult } from "@chat/core";
import {
  actorOf,
  cachedActorFor,
  countHotRequest,
  endpoint,
  hotRoute,
  type HotRoute,
  ignoredParametersField,
  params,
  type ParamSource,
  parseParams,
  requireUserKeepingCopy,
  route,
  schema,
  sendJsonBody,
  serve,
  successBody,
  successJsonText,
  tagRequestUser,
} from "@chat/http";
import type { ApiServices } from "../services.ts";

/** `anchor`: a message id, or newest / oldest / first_unread (Zulip 2.2+). */
export function parseAnchor(raw: string): Anchor {
  if (raw === "newest" || raw === "oldest" || raw === "first_unread") return raw;
  // Past the largest message id every anchor means the same (Zulip clamps it too); Postgres'
  // integer must not see a larger one.
  if (/^\d+$/.test(raw.trim())) return Math.min(Number(raw), MAX_INT);
  throw badRequest("Invalid anchor");
}

export const messageFetchEndpoints = {
  fetch: endpoint({
    method: "get",
    path: "/messages",
    tag: "messages",
    auth: "basic",
    summary: "A page of messages around an anchor, in a narrow",
    params: {
      // Required unless use_first_unread_anchor, which wins (as in Zulip).
      anchor: params
        .custom<string>((raw) => raw, { anyOf: [{ type: "integer", minimum: 0 }, { enum: ["newest", "oldest", "first_unread"] }] })
        .optional()
        .describe("A message id, or `newest`, `oldest`, `first_unread`. Required unless `use_first_unread_anchor`."),
      include_anchor: params.bool().default(true).describe("Whether the anchor message itself is returned (feature level 155)."),
      num_before: params.int(),
      num_after: params.int(),
      narrow: params.json<unknown>({}).default([]).describe("A list of `{operator, operand}` dicts, or of `[operator, operand]` pairs."),
      // zulip-flutter sends it always (feature level 334); topics are never empty here, so nothing changes.
      allow_empty_topic_name: params.bool().default(false),
      client_gravatar: params.bool().default(false),
      apply_markdown: params.bool().default(true),
      use_first_unread_anchor: params.bool().default(false).describe("Deprecated: `anchor=first_unread`."),
    },
    response: successBody(
      {
        anchor: schema.integer(),
        found_newest: schema.boolean(),
        found_oldest: schema.boolean(),
        found_anchor: schema.boolean(),
        history_limited: schema.boolean(),
        messages: schema.array(schema.ref("Message")),
      },
    ),
    errors: ["BAD_NARROW"],
  }),
};

function fetcher(services: ApiServices) {
  const { prisma, messageCache } = services;
  return async (source: ParamSource, actor: Actor, version: ActorVersion | null): Promise<FetchResult> => {
    const p = parseParams(source, messageFetchEndpoints.fetch.params);
    // The deprecated flag wins, as in Zulip; without it, an anchor is required.
    if (p.anchor === undefined && !p.use_first_unread_anchor) throw new MissingArgumentError("anchor");
    const anchor = p.use_first_unread_anchor ? "first_unread" : parseAnchor(p.anchor!);
    return fetchMessages(prisma, messageCache, actor, {
      anchor,
      includeAnchor: p.include_anchor,
      numBefore: p.num_before,
      numAfter: p.num_after,
      narrow: parseNarrow(p.narrow),
      applyMarkdown: p.apply_markdown,
      clientGravatar: p.client_gravatar,
    }, version);
  };
}

function responseBody({ messages, ...fields }: FetchResult, source: ParamSource): string {
  return successJsonText({ ...fields, ...ignoredParametersField(messageFetchEndpoints.fetch, source) }, { messages: `[${messages.join(",")}]` });
}

export function messageFetchRoutes(services: ApiServices): Router {
  const router = Router();
  const fetch = fetcher(services);
  // Reached when the hot route below declines: the user is read afresh and kept for next time.
  serve(
    router,
    messageFetchEndpoints.fetch,
    requireUserKeepingCopy({ prisma: services.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits, actors: services.actorCache }),
    route(async (req, res) => {
      res.type("json").send(responseBody(await fetch(req, actorOf(res), null), req));
    }),
  );
  return router;
}

/**
 * The hottest read, before Express: it acts as this node's copy of its user, which the page
 * query checks (actor-cache.ts). Without a copy, or on any error at all (a stale copy included),
 * it declines, and the route above answers from the start with a fresh authentication: so every
 * error, and every answer, is the database's current one.
 */
export function messageFetchHotRoute(services: ApiServices): HotRoute {
  const fetch = fetcher(services);
  const copies = { externalHost: services.ctx.externalHost, actors: services.actorCache };
  return hotRoute({
    method: "GET",
    path: "/api/v1/messages",
    async handle({ req, query }, res) {
      const cached = cachedActorFor(copies, req);
      if (cached === undefined) return false;
      tagRequestUser(req, cached.actor.id);
      if (!(await countHotRequest(services.rateLimits, req, cached.actor.id))) return false;
      const source = { query, body: undefined };
      const result = await fetch(source, cached.actor, cached.version);
      sendJsonBody(res, 200, responseBody(result, source));
      return true;
    },
  });
}
