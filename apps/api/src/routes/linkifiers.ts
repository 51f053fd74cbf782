import { Router } from "express";
import { addLinkifier, MissingArgumentError, linkifierDicts, linkifierTuples, removeLinkifier, reorderLinkifiers, updateLinkifier, type LinkifierUrl } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const LINKIFIER_IDS = { type: "array", items: { type: "integer" } };

/** Zulip 9.0's url_template, or Zulip 3.x's url_format_string (one of them is needed). */
const URL_PARAMS = {
  url_template: params.string().optional().describe("An RFC 6570 URL template whose variables are the pattern's named groups (feature level 176)."),
  url_format_string: params.string().optional().describe("Zulip 3.x's form, with %(name)s placeholders: taken when url_template is not sent."),
};

function linkifierUrl(p: { url_template?: string; url_format_string?: string }): LinkifierUrl {
  if (p.url_template !== undefined) return { urlTemplate: p.url_template };
  if (p.url_format_string !== undefined) return { urlFormatString: p.url_format_string };
  throw new MissingArgumentError("url_template");
}

export const linkifierEndpoints = {
  list: endpoint({
    method: "get",
    path: "/realm/filters",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "The organization's linkifiers (Zulip 3.x's tuples)",
    params: {},
    response: successBody({ filters: schema.array(schema.ref("Linkifier")) }),
  }),
  listModern: endpoint({
    method: "get",
    path: "/realm/linkifiers",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "The organization's linkifiers, in their order (feature level 54)",
    params: {},
    response: successBody({ linkifiers: schema.array(schema.object({ id: schema.integer(), pattern: schema.string(), url_template: schema.string() })) }),
  }),
  add: endpoint({
    method: "post",
    path: "/realm/filters",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Add a linkifier",
    params: { pattern: params.string(), ...URL_PARAMS },
    response: successBody({ id: schema.integer() }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  update: endpoint({
    method: "patch",
    path: "/realm/filters/{filter_id}",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Change a linkifier's pattern and URL template (feature level 57)",
    params: { pattern: params.string(), ...URL_PARAMS },
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  reorder: endpoint({
    method: "patch",
    path: "/realm/linkifiers",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Reorder the linkifiers (feature level 202)",
    params: { ordered_linkifier_ids: params.json<number[]>(LINKIFIER_IDS) },
    response: EMPTY_SUCCESS,
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
    E.listModern,
    route(async (_req, res) => {
      success(res, { linkifiers: await linkifierDicts(prisma, actorOf(res).realm_id) });
    }),
  );

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.add.params);
      const url = linkifierUrl(p);
      const id = await actions.run(originOf(req, actor), (tx, events) => addLinkifier(tx, events, actor, p.pattern, url));
      success(res, { id });
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const filterId = pathId(req, "filter_id");
      const p = parseParams(req, E.update.params);
      const url = linkifierUrl(p);
      await actions.run(originOf(req, actor), (tx, events) => updateLinkifier(tx, events, actor, filterId, p.pattern, url));
      success(res);
    }),
  );

  serve(
    router,
    E.reorder,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.reorder.params);
      await actions.run(originOf(req, actor), (tx, events) => reorderLinkifiers(tx, events, actor, p.ordered_linkifier_ids));
      success(res);
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
