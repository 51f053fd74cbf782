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
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const STREAM_NAMES = { type: "array", items: { type: "string" } };

export function defaultStreamRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;

  router.post(
    "/default_streams",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { stream_id: params.int() });
      await actions.run(originOf(req, actor), (tx, events) => addDefaultStream(tx, events, actor, p.stream_id));
      success(res);
    }),
  );

  router.delete(
    "/default_streams",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { stream_id: params.int() });
      await actions.run(originOf(req, actor), (tx, events) => removeDefaultStream(tx, events, actor, p.stream_id));
      success(res);
    }),
  );

  router.post(
    "/default_stream_groups/create",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { group_name: params.string(), description: params.string(), stream_names: params.json<string[]>(STREAM_NAMES) });
      await actions.run(originOf(req, actor), (tx, events) =>
        createDefaultStreamGroup(tx, events, actor, { name: p.group_name, description: p.description, streamNames: p.stream_names }),
      );
      success(res);
    }),
  );

  router.patch(
    "/default_stream_groups/:group_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, { new_group_name: params.string().optional(), new_description: params.string().optional() });
      await actions.run(originOf(req, actor), (tx, events) =>
        updateDefaultStreamGroup(tx, events, actor, groupId, { name: p.new_group_name, description: p.new_description }),
      );
      success(res);
    }),
  );

  router.post(
    "/default_stream_groups/:group_id/streams",
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      const p = parseParams(req, { op: params.string(), stream_names: params.json<string[]>(STREAM_NAMES) });
      if (p.op !== "add" && p.op !== "remove") throw badRequest('Invalid value for "op". Specify one of "add" or "remove".');
      await actions.run(originOf(req, actor), (tx, events) => updateDefaultStreamGroupStreams(tx, events, actor, groupId, p.op as "add" | "remove", p.stream_names));
      success(res);
    }),
  );

  router.delete(
    "/default_stream_groups/:group_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const groupId = pathId(req, "group_id");
      await actions.run(originOf(req, actor), (tx, events) => removeDefaultStreamGroup(tx, events, actor, groupId));
      success(res);
    }),
  );
  return router;
}
