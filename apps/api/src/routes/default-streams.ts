import { Router } from "express";
import {
  addDefaultStream,
  badRequest,
  createDefaultStreamGroup,
  removeDefaultStream,
  removeDefaultStreamGroup,
  updateDefaultStreamGroup,
  updateDefaultStreamGroupStreams,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const STREAM_NAMES = { type: "array", items: { type: "string" } };

// Administrators only: UNAUTHORIZED_PRINCIPAL for anyone else.
const common = { tag: "streams", auth: "basic", response: EMPTY_SUCCESS, errors: ["UNAUTHORIZED_PRINCIPAL"] } as const;

export const defaultStreamEndpoints = {
  add: endpoint({ ...common, method: "post", path: "/default_streams", summary: "Make a stream one new users join", params: { stream_id: params.int() } }),
  remove: endpoint({ ...common, method: "delete", path: "/default_streams", summary: "Make a stream no longer one new users join", params: { stream_id: params.int() } }),
  createGroup: endpoint({
    ...common,
    method: "post",
    path: "/default_stream_groups/create",
    summary: "Create a default stream group",
    params: { group_name: params.string(), description: params.string(), stream_names: params.json<string[]>(STREAM_NAMES) },
  }),
  updateGroup: endpoint({
    ...common,
    method: "patch",
    path: "/default_stream_groups/{group_id}",
    summary: "Rename a default stream group or change its description",
    params: { new_group_name: params.string().optional(), new_description: params.string().optional() },
  }),
  updateGroupStreams: endpoint({
    ...common,
    method: "post",
    path: "/default_stream_groups/{group_id}/streams",
    summary: "Add streams to a default stream group, or remove them",
    params: { op: params.string().describe("`add` or `remove`."), stream_names: params.json<string[]>(STREAM_NAMES) },
  }),
  removeGroup: endpoint({ ...common, method: "delete", path: "/default_stream_groups/{group_id}", summary: "Delete a default stream group", params: {} }),
};

export function defaultStreamRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = defaultStreamEndpoints;

  serve(
    router,
    E.add,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.add.params);
      await actions.run(originOf(req, actor), (tx, events) => addDefaultStream(tx, events, actor, p.stream_id));
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.remove.params);
      await actions.run(originOf(req, actor), (tx, events) => removeDefaultStream(tx, events, actor, p.stream_id));
      success(res);
    }),
  );

  serve(
    router,
    E.createGroup,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.createGroup.params);
      await actions.run(originOf(req, actor), (tx, events) =>
        createDefaultStreamGroup(tx, events, actor, { name: p.group_name, description: p.description, streamNames: p.stream_names }),
      );
      success(res);
    }),
  );

  serve(
    router,
    E.updateGroup,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.updateGroup.params);
      await actions.run(originOf(req, actor), (tx, events) =>
        updateDefaultStreamGroup(tx, events, actor, groupId, { name: p.new_group_name, description: p.new_description }),
      );
      success(res);
    }),
  );

  serve(
    router,
    E.updateGroupStreams,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, E.updateGroupStreams.params);
      if (p.op !== "add" && p.op !== "remove") throw badRequest('Invalid value for "op". Specify one of "add" or "remove".');
      await actions.run(originOf(req, actor), (tx, events) => updateDefaultStreamGroupStreams(tx, events, actor, groupId, p.op as "add" | "remove", p.stream_names));
      success(res);
    }),
  );

  serve(
    router,
    E.removeGroup,
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      await actions.run(originOf(req, actor), (tx, events) => removeDefaultStreamGroup(tx, events, actor, groupId));
      success(res);
    }),
  );
  return router;
}
