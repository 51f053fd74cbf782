import { Router } from "express";
import { addLinkifier, linkifierTuples, removeLinkifier } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const linkifierEndpoints = {
  list: endpoint({
    method: "get",
    path: "/realm/filters",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "The organization's linkifiers",
    params: {},
    response: successBody({ filters: schema.array(schema.ref("Linkifier")) }),
  }),
  add: endpoint({
    method: "post",
    path: "/realm/filters",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Add a linkifier",
    params: { pattern: params.string(), url_format_string: params.string() },
    response: successBody({ id: schema.integer() }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  remove: endpoint({ method: "delete", path: "/realm/filters/{filter_id}", tag: "server_and_organizations", auth: "basic", summary: "Remove a linkifier", params: {}, response: EMPTY_SUCCESS, errors: ["UNAUTHORIZED_PRINCIPAL"] }),
};

export function linkifierRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = linkifierEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { filters: await linkifierTuples(prisma, actorOf(res).realm_id) });
    }),
  );

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.add.params);
      const id = await actions.run(originOf(req, actor), (tx, events) => addLinkifier(tx, events, actor, p.pattern, p.url_format_string));
      success(res, { id });
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const filterId = pathId(req, "filter_id");
      await actions.run(originOf(req, actor), (tx, events) => removeLinkifier(tx, events, actor, filterId));
      success(res);
    }),
  );
  return router;
}
