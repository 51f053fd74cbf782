import { Router } from "express";
import {
  createProfileField,
  deleteProfileField,
  getCustomProfileFields,
  reorderProfileFields,
  updateProfileField,
  type FieldData,
} from "@chat/core";
import { actorOf, params, parseParams, route, success, originOf } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const FIELD_DATA = { type: "object" };
const FIELD_IDS = { type: "array", items: { type: "integer" } };

export function profileFieldRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;

  router.get(
    "/realm/profile_fields",
    route(async (_req, res) => {
      success(res, { custom_fields: await getCustomProfileFields(prisma, actorOf(res).realm_id) });
    }),
  );

  router.post(
    "/realm/profile_fields",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, {
        name: params.string().default(""),
        hint: params.string().default(""),
        field_type: params.int().default(1),
        field_data: params.json<FieldData>(FIELD_DATA).optional(),
      });
      const id = await actions.run(originOf(req, actor), (tx, events) =>
        createProfileField(tx, events, actor, { name: p.name, hint: p.hint, fieldType: p.field_type, fieldData: p.field_data }),
      );
      success(res, { id });
    }),
  );

  router.patch(
    "/realm/profile_fields",
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, { order: params.json<number[]>(FIELD_IDS) });
      await actions.run(originOf(req, actor), (tx, events) => reorderProfileFields(tx, events, actor, p.order));
      success(res);
    }),
  );

  router.patch(
    "/realm/profile_fields/:field_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const fieldId = pathId(req, "field_id");
      const p = parseParams(req, {
        name: params.string().optional(),
        hint: params.string().optional(),
        field_data: params.json<FieldData>(FIELD_DATA).optional(),
      });
      await actions.run(originOf(req, actor), (tx, events) =>
        updateProfileField(tx, events, actor, fieldId, { name: p.name, hint: p.hint, fieldData: p.field_data }),
      );
      success(res);
    }),
  );

  router.delete(
    "/realm/profile_fields/:field_id",
    route(async (req, res) => {
      const actor = actorOf(res);
      const fieldId = pathId(req, "field_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteProfileField(tx, events, actor, fieldId));
      success(res);
    }),
  );
  return router;
}
