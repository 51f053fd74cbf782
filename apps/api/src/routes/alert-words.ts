import { Router } from "express";
import { addAlertWords, getAlertWords, MAX_ALERT_WORD_LENGTH, MAX_ALERT_WORDS, removeAlertWords } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";

const ALERT_WORDS = { type: "array", maxItems: MAX_ALERT_WORDS, items: { type: "string", maxLength: MAX_ALERT_WORD_LENGTH } };

export function alertWordRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const spec = { alert_words: params.json<string[]>(ALERT_WORDS) };

  router.get(
    "/users/me/alert_words",
    route(async (_req, res) => {
      const actor = actorOf(res);
      success(res, { alert_words: await getAlertWords(prisma, actor.id) });
    }),
  );

  router.post(
    "/users/me/alert_words",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, spec);
      const list = await actions.run(originOf(req, actor), (tx, events) => addAlertWords(tx, events, actor, p.alert_words));
      success(res, { alert_words: list });
    }),
  );

  router.delete(
    "/users/me/alert_words",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, spec);
      const list = await actions.run(originOf(req, actor), (tx, events) => removeAlertWords(tx, events, actor, p.alert_words));
      success(res, { alert_words: list });
    }),
  );
  return router;
}
