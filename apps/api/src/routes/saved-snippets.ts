import { Router } from "express";
import { createSavedSnippet, deleteSavedSnippet, editSavedSnippet, getSavedSnippets, MAX_SAVED_SNIPPET_CONTENT_LENGTH } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

// Zulip strips the text before it checks the length (actions/saved-snippets.ts); the raw bound
// leaves room for the whitespace a client may send around it.
const RAW_TITLE_LIMIT = 1000;
const RAW_CONTENT_LIMIT = MAX_SAVED_SNIPPET_CONTENT_LENGTH + 1000;
const title = () => params.string().maxLength(RAW_TITLE_LIMIT).describe("At most 60 characters once stripped of surrounding whitespace; not blank.");
const content = () => params.string().maxLength(RAW_CONTENT_LIMIT).describe("At most 10000 characters once stripped of surrounding whitespace; not blank.");

const SNIPPET_ID = { saved_snippet_id: { schema: { type: "integer" }, description: "The saved snippet's id." } };

export const savedSnippetEndpoints = {
  list: endpoint({
    method: "get",
    path: "/saved_snippets",
    tag: "drafts",
    auth: "basic",
    summary: "The user's saved snippets, oldest first",
    params: {},
    response: successBody({ saved_snippets: schema.array(schema.ref("SavedSnippet")) }),
  }),
  create: endpoint({
    method: "post",
    path: "/saved_snippets",
    tag: "drafts",
    auth: "basic",
    summary: "Create a saved snippet",
    params: { title: title(), content: content() },
    response: successBody({ saved_snippet_id: schema.integer() }),
  }),
  edit: endpoint({
    method: "patch",
    path: "/saved_snippets/{saved_snippet_id}",
    tag: "drafts",
    auth: "basic",
    summary: "Edit a saved snippet's title or content (feature level 368)",
    params: { title: title().optional(), content: content().optional() },
    pathParams: SNIPPET_ID,
    response: EMPTY_SUCCESS,
  }),
  remove: endpoint({ method: "delete", path: "/saved_snippets/{saved_snippet_id}", tag: "drafts", auth: "basic", summary: "Delete a saved snippet", params: {}, pathParams: SNIPPET_ID, response: EMPTY_SUCCESS }),
};

export function savedSnippetRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = savedSnippetEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { saved_snippets: await getSavedSnippets(prisma, actorOf(res).id) });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.create.params);
      const id = await actions.run(originOf(req, actor), (tx, events) => createSavedSnippet(tx, events, actor, p.title, p.content));
      success(res, { saved_snippet_id: id });
    }),
  );

  serve(
    router,
    E.edit,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "saved_snippet_id");
      const p = parseParams(req, E.edit.params);
      await actions.run(originOf(req, actor), (tx, events) => editSavedSnippet(tx, events, actor, id, p));
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "saved_snippet_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteSavedSnippet(tx, events, actor, id));
      success(res);
    }),
  );
  return router;
}
