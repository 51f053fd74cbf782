import { Router } from "express";
import { addLinkifier, linkifierTuples, removeLinkifier } from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export function linkifierRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;

  router.get(
    "/realm/filters",
    route(async (_req, res) => {
      success(res, { filters: await linkifierTuples(prisma, actorOf(res).realm_id) });
    }),
  );

  router.post(
    "/realm/filters",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { pattern: params.string(), url_format_string: params.string() });
      const id = await actions.run(originOf(req, actor), (tx, events) => addLinkifier(tx, events, actor, p.pattern, p.url_format_string));
      success(res, { id });
    }),
  );

  router.delete(
    "/realm/filters/:filter_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const filterId = pathId(req, "filter_id");
      await actions.run(originOf(req, actor), (tx, events) => removeLinkifier(tx, events, actor, filterId));
      success(res);
    }),
  );
  return router;
}
