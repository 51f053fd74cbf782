import { Router, type RequestHandler } from "express";
import {
  badRequest,
  fetchMessages,
  fetchWebPublicMessages,
  getRealmForSubdomain,
  IncompatibleParametersError,
  MAX_MESSAGES_PER_FETCH,
  MAX_INT,
  MissingArgumentError,
  NotLoggedInError,
  parseNarrow,
  spectatorRealm,
  type Actor,
  type ActorVersion,
  type Anchor,
  type FetchResult,
  type RangeRequest,
} from "@chat/core";
import {
  actorOf,
  cachedActorFor,
  countHotRequest,
  endpoint,
  hotRoute,
  type HotRoute,
  spectatorRoute,
  ignoredParametersField,
  params,
  type ParamSource,
  type ParsedParams,
  parseParams,
  requestSubdomain,
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
    auth: "basic-or-spectator",
    summary: "A page of messages around an anchor, in a narrow",
    description: "Without credentials (a spectator), only web-public messages: the narrow must hold `channels:web-public` and only the operators `channel`, `channels`, `topic`, `sender`, `has`, `search`, `near` and `id` (feature level 109).",
    params: {
      // Required unless use_first_unread_anchor, which wins (as in Zulip).
      anchor: params
        .custom<string>((raw) => raw, { anyOf: [{ type: "integer", minimum: 0 }, { enum: ["newest", "oldest", "first_unread"] }] })
        .optional()
        .describe("A message id, or `newest`, `oldest`, `first_unread`. Required unless `use_first_unread_anchor`."),
      include_anchor: params.bool().default(true).describe("Whether the anchor message itself is returned (feature level 155)."),
      num_before: params.int().default(0),
      num_after: params.int().default(0),
      message_ids: params
        .json<number[]>({ type: "array", items: { type: "integer", minimum: 0 } }, { maxItems: 2 * MAX_MESSAGES_PER_FETCH, ownIntegerRange: true })
        .optional()
        .describe(`Instead of an anchor and counts: these messages (at most ${MAX_MESSAGES_PER_FETCH}), those of them the narrow selects (feature level 300). The answer then has no \`anchor\`, and its \`found_*\` are false.`),
      narrow: params.json<unknown>({}).default([]).describe("A list of `{operator, operand}` dicts, or of `[operator, operand]` pairs."),
      allow_empty_topic_name: params.bool().default(false).describe("Whether the empty topic reads as `\"\"`; else as `realm_empty_topic_display_name` (feature level 334)."),
      client_gravatar: params.bool().default(false),
      apply_markdown: params.bool().default(true),
      use_first_unread_anchor: params.bool().default(false).describe("Deprecated: `anchor=first_unread`."),
    },
    response: successBody(
      {
        found_newest: schema.boolean(),
        found_oldest: schema.boolean(),
        found_anchor: schema.boolean(),
        history_limited: schema.boolean(),
        messages: schema.array(schema.ref("Message")),
      },
      // Absent when the request named its messages (message_ids).
      { anchor: schema.integer() },
    ),
    errors: ["BAD_NARROW"],
  }),
};

type FetchParams = ParsedParams<typeof messageFetchEndpoints.fetch.params>;

/**
 * Which messages: an anchor and counts, or named ones (message_ids, feature level 300), never both
 * (Zulip's get_messages_backend: counts of 0 and include_anchor alone do not count).
 */
function rangeOf(p: FetchParams): Omit<RangeRequest, "narrow"> {
  if (p.message_ids !== undefined) {
    if (p.num_before !== 0 || p.num_after !== 0 || p.anchor !== undefined || p.use_first_unread_anchor) {
      throw new IncompatibleParametersError(["num_before", "num_after", "anchor", "message_ids", "include_anchor", "use_first_unread_anchor"]);
    }
    return { anchor: 0, includeAnchor: false, numBefore: 0, numAfter: 0, messageIds: p.message_ids };
  }
  // The deprecated flag wins, as in Zulip; without it, an anchor is required.
  if (p.anchor === undefined && !p.use_first_unread_anchor) throw new MissingArgumentError("anchor");
  const anchor = p.use_first_unread_anchor ? "first_unread" : parseAnchor(p.anchor!);
  return { anchor, includeAnchor: p.include_anchor, numBefore: p.num_before, numAfter: p.num_after };
}

function fetcher(services: ApiServices) {
  const { prisma, messageCache } = services;
  return async (source: ParamSource, actor: Actor, version: ActorVersion | null): Promise<FetchResult> => {
    const p = parseParams(source, messageFetchEndpoints.fetch.params);
    return fetchMessages(prisma, messageCache, actor, {
      ...rangeOf(p),
      narrow: parseNarrow(p.narrow),
      applyMarkdown: p.apply_markdown,
      clientGravatar: p.client_gravatar,
      allowEmptyTopicName: p.allow_empty_topic_name,
    }, version);
  };
}

/**
 * A spectator's GET /messages (no credentials at all): the web-public messages of an organization
 * that lets spectators in, counted per client address (Zulip's anonymous get_messages_backend).
 * Anything else goes on to authentication and its ordinary 401.
 */
function spectatorFetch(services: ApiServices): RequestHandler {
  const { prisma, messageCache, ctx } = services;
  return spectatorRoute(services, async (req, res) => {
    const realm = await spectatorRealm(prisma, await getRealmForSubdomain(prisma, requestSubdomain(req, ctx.externalHost)), ctx);
    const p = parseParams(req, messageFetchEndpoints.fetch.params);
    const result = await fetchWebPublicMessages(prisma, messageCache, realm, {
      ...rangeOf(p),
      narrow: parseNarrow(withoutInHome(p.narrow)),
      applyMarkdown: p.apply_markdown,
      clientGravatar: false,
      allowEmptyTopicName: p.allow_empty_topic_name,
    });
    res.type("json").send(responseBody(result, req));
  });
}

/** The operators a spectator's narrow may name, as sent (Zulip 9.0's is_spectator_compatible; `subject` is `topic`). */
const SPECTATOR_OPERATORS = new Set(["channel", "stream", "channels", "streams", "topic", "subject", "sender", "has", "search", "near", "id"]);

/**
 * Zulip's clean_narrow_for_web_public_api: a spectator's `in:home` means everything they may read.
 * Any operator a spectator may not use is the 401 of a request without credentials, as in Zulip
 * (before an operator this server does not know could be a 400 instead).
 */
function withoutInHome(narrow: unknown): unknown {
  if (!Array.isArray(narrow)) return narrow;
  const terms = narrow.map((term: unknown) =>
    Array.isArray(term)
      ? { term, operator: term[0] as unknown, operand: term[1] as unknown, negated: false as unknown }
      : term !== null && typeof term === "object"
        ? { term, operator: (term as Record<string, unknown>).operator, operand: (term as Record<string, unknown>).operand, negated: (term as Record<string, unknown>).negated ?? false }
        : { term, operator: undefined, operand: undefined, negated: undefined },
  );
  const kept = terms.filter(({ operator, operand, negated }) => !(operator === "in" && operand === "home" && negated === false));
  if (kept.some(({ operator }) => typeof operator === "string" && !SPECTATOR_OPERATORS.has(operator))) throw new NotLoggedInError();
  return kept.map(({ term }) => term);
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
    spectatorFetch(services),
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
