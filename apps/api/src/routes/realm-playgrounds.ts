import { Router } from "express";
import { addRealmPlayground, checkRealmAdministrator, removeRealmPlayground } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

export const realmPlaygroundEndpoints = {
  add: endpoint({
    method: "post",
    path: "/realm/playgrounds",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Add a code playground (feature levels 49 and 196)",
    params: {
      name: params.string().describe("Shown to users, for example `Python playground`."),
      pygments_language: params.string().describe("The code blocks' language it opens (letters, digits, spaces and `_+-./#`; at most 40 characters)."),
      url_template: params.string().describe("An RFC 6570 URL template whose only variable is `code`."),
    },
    response: successBody({ id: schema.integer() }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  remove: endpoint({
    method: "delete",
    path: "/realm/playgrounds/{playground_id}",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Remove a code playground",
    params: {},
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

export function realmPlaygroundRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = realmPlaygroundEndpoints;

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkRealmAdministrator(actor);
      const p = parseParams(req, E.add.params);
      const playground = { name: p.name, pygmentsLanguage: p.pygments_language, urlTemplate: p.url_template };
      const id = await actions.run(originOf(req, actor), (tx, events) => addRealmPlayground(tx, events, actor, playground));
      success(res, { id });
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkRealmAdministrator(actor);
      const playgroundId = pathId(req, "playground_id");
      await actions.run(originOf(req, actor), (tx, events) => removeRealmPlayground(tx, events, actor, playgroundId));
      success(res);
    }),
  );
  return router;
}
