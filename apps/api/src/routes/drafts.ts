import { Router } from "express";
import { checkDraftsEnabled, createDrafts, deleteDraft, DRAFT_BOUNDS, editDraft, getDrafts, type DraftData } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

/** Zulip's DraftData: these fields and no others; `timestamp` (Unix seconds) defaults to now. */
const DRAFT = {
  type: "object",
  required: ["type", "to", "topic", "content"],
  properties: {
    type: { enum: ["", "stream", "private"] },
    to: { type: "array", items: { type: "integer" } },
    topic: { type: "string" },
    content: { type: "string" },
    timestamp: { anyOf: [{ type: "number" }, { type: "null" }] },
  },
  additionalProperties: false,
};

const DRAFT_ID = { draft_id: { schema: { type: "integer" }, description: "The draft's id." } };

export const draftEndpoints = {
  list: endpoint({
    method: "get",
    path: "/drafts",
    tag: "drafts",
    auth: "basic",
    summary: "The user's drafts, oldest edit first",
    params: {},
    response: successBody({ count: schema.integer(), drafts: schema.array(schema.ref("Draft")) }),
  }),
  create: endpoint({
    method: "post",
    path: "/drafts",
    tag: "drafts",
    auth: "basic",
    summary: "Create drafts",
    params: { drafts: params.json<DraftData[]>({ type: "array", items: DRAFT }, DRAFT_BOUNDS).describe("A JSON list of drafts: type, to, topic, content, and optionally timestamp.") },
    response: successBody({ ids: schema.array(schema.integer()) }),
  }),
  edit: endpoint({
    method: "patch",
    path: "/drafts/{draft_id}",
    tag: "drafts",
    auth: "basic",
    summary: "Replace a draft",
    params: { draft: params.json<DraftData>(DRAFT, DRAFT_BOUNDS).describe("The draft, whole, as POST /drafts takes one.") },
    pathParams: DRAFT_ID,
    response: EMPTY_SUCCESS,
  }),
  remove: endpoint({ method: "delete", path: "/drafts/{draft_id}", tag: "drafts", auth: "basic", summary: "Delete a draft", params: {}, pathParams: DRAFT_ID, response: EMPTY_SUCCESS }),
};

export function draftRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = draftEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      const actor = actorOf(res);
      checkDraftsEnabled(actor);
      const drafts = await getDrafts(prisma, actor.id);
      success(res, { count: drafts.length, drafts });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      // Zulip refuses before it reads the drafts.
      checkDraftsEnabled(actor);
      const p = parseParams(req, E.create.params);
      const ids = await actions.run(originOf(req, actor), (tx, events) => createDrafts(tx, events, actor, p.drafts));
      success(res, { ids });
    }),
  );

  serve(
    router,
    E.edit,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkDraftsEnabled(actor);
      const draftId = pathId(req, "draft_id");
      const p = parseParams(req, E.edit.params);
      await actions.run(originOf(req, actor), (tx, events) => editDraft(tx, events, actor, draftId, p.draft));
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      checkDraftsEnabled(actor);
      const draftId = pathId(req, "draft_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteDraft(tx, events, actor, draftId));
      success(res);
    }),
  );
  return router;
}
