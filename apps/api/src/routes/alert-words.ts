import { Router } from "express";
import { addAlertWords, getAlertWords, MAX_ALERT_WORD_LENGTH, MAX_ALERT_WORDS, removeAlertWords } from "@chat/core";
import { actorOf, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";

const ALERT_WORDS = { type: "array", maxItems: MAX_ALERT_WORDS, items: { type: "string", maxLength: MAX_ALERT_WORD_LENGTH } };

const spec = { alert_words: params.json<string[]>(ALERT_WORDS) };
const ALERT_WORDS_BODY = successBody({ alert_words: schema.array(schema.string()) });
const common = { tag: "users", auth: "basic", response: ALERT_WORDS_BODY } as const;

export const alertWordEndpoints = {
  list: endpoint({ ...common, method: "get", path: "/users/me/alert_words", summary: "The user's alert words", params: {} }),
  add: endpoint({ ...common, method: "post", path: "/users/me/alert_words", summary: "Add alert words", params: spec }),
  remove: endpoint({ ...common, method: "delete", path: "/users/me/alert_words", summary: "Remove alert words", params: spec }),
};

export function alertWordRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = alertWordEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      const actor = actorOf(res);
      success(res, { alert_words: await getAlertWords(prisma, actor.id) });
    }),
  );

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.add.params);
      const list = await actions.run(originOf(req, actor), (tx, events) => addAlertWords(tx, events, actor, p.alert_words));
      success(res, { alert_words: list });
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.remove.params);
      const list = await actions.run(originOf(req, actor), (tx, events) => removeAlertWords(tx, events, actor, p.alert_words));
      success(res, { alert_words: list });
    }),
  );
  return router;
}
