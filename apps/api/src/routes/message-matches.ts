import { Router } from "express";
import { MAX_MATCHES_NARROW_IDS, messagesMatchingNarrow, parseNarrow } from "@chat/core";
import { actorOf, endpoint, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

const MATCH = schema.object({ match_content: schema.string(), match_subject: schema.string() });

export const messageMatchEndpoints = {
  matchesNarrow: endpoint({
    method: "get",
    path: "/messages/matches_narrow",
    tag: "messages",
    auth: "basic",
    summary: "Which of some messages the user received match a narrow, with search highlighting",
    description:
      "Zulip's messages_in_narrow_backend: of `msg_ids`, the messages the user received (has a row for) that match `narrow`, keyed by id. Each has `match_content` (the rendered content) and `match_subject` (the topic, as HTML), with the words of a `search` term highlighted as in GET /messages.",
    params: {
      msg_ids: params.json<number[]>({ type: "array", maxItems: MAX_MATCHES_NARROW_IDS, items: { type: "integer" } }).describe("The message ids to check."),
      narrow: params.json<unknown>({}).describe("A list of `{operator, operand}` dicts, or of `[operator, operand]` pairs, as GET /messages takes."),
    },
    response: successBody({ messages: schema.dict(MATCH) }),
    errors: ["BAD_NARROW"],
  }),
};

export function messageMatchRoutes(services: ApiServices): Router {
  const router = Router();
  const E = messageMatchEndpoints;
  serve(
    router,
    E.matchesNarrow,
    route(async (req, res) => {
      const p = parseParams(req, E.matchesNarrow.params);
      const narrow = parseNarrow(p.narrow);
      success(res, { messages: await messagesMatchingNarrow(services.prisma, actorOf(res), p.msg_ids, narrow) });
    }),
  );
  return router;
}
