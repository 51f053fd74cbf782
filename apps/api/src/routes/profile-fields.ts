import { Router } from "express";
import {
  createProfileField,
  deleteProfileField,
  getCustomProfileFields,
  reorderProfileFields,
  updateProfileData,
  updateProfileField,
  type FieldData,
  type ProfileDataChange,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const FIELD_DATA = { type: "object" };
const FIELD_IDS = { type: "array", items: { type: "integer" } };
/** Zulip's ProfileDataElementUpdateDict: a field's id and its value (text, or user ids). */
const OWN_PROFILE_DATA = {
  type: "array",
  items: {
    type: "object",
    required: ["id", "value"],
    properties: { id: { type: "integer" }, value: { type: ["string", "array"], items: { type: "integer" } } },
    additionalProperties: false,
  },
};

const common = { tag: "server_and_organizations", auth: "basic", response: EMPTY_SUCCESS } as const;
/** Changes an administrator (for some, an owner) may have to make: UNAUTHORIZED_PRINCIPAL for anyone else. */
const ADMIN = { errors: ["UNAUTHORIZED_PRINCIPAL"] } as const;

export const profileFieldEndpoints = {
  list: endpoint({
    ...common,
    method: "get",
    path: "/realm/profile_fields",
    summary: "The organization's custom profile fields",
    params: {},
    response: successBody({ custom_fields: schema.array(schema.ref("CustomProfileField")) }),
  }),
  create: endpoint({
    ...common,
    ...ADMIN,
    method: "post",
    path: "/realm/profile_fields",
    summary: "Create a custom profile field",
    params: {
      name: params.string().default(""),
      hint: params.string().default(""),
      field_type: params.int().default(1),
      field_data: params.json<FieldData>(FIELD_DATA).optional(),
      display_in_profile_summary: params.bool().default(false).describe("Shown in the profile summary (feature level 146): at most 2 fields, not long text or users."),
      required: params.bool().default(false).describe("Users are asked to fill it in (feature level 244)."),
      editable_by_user: params.bool().default(true).describe("Users may edit their own value (feature level 296)."),
    },
    response: successBody({ id: schema.integer() }),
  }),
  reorder: endpoint({ ...common, ...ADMIN, method: "patch", path: "/realm/profile_fields", summary: "Reorder the custom profile fields", params: { order: params.json<number[]>(FIELD_IDS) } }),
  update: endpoint({
    ...common,
    ...ADMIN,
    method: "patch",
    path: "/realm/profile_fields/{field_id}",
    summary: "Change a custom profile field",
    params: {
      name: params.string().optional(),
      hint: params.string().optional(),
      field_data: params.json<FieldData>(FIELD_DATA).optional(),
      display_in_profile_summary: params.bool().optional(),
      required: params.bool().optional(),
      editable_by_user: params.bool().optional(),
    },
  }),
  remove: endpoint({ ...common, ...ADMIN, method: "delete", path: "/realm/profile_fields/{field_id}", summary: "Delete a custom profile field", params: {} }),
  // Zulip's update_user_custom_profile_data: one's own values; fields not editable_by_user (feature level 296) are administrators' only.
  updateOwn: endpoint({
    ...common,
    tag: "users",
    method: "patch",
    path: "/users/me/profile_data",
    summary: "Set one's own custom profile field values",
    params: { data: params.json<ProfileDataChange[]>(OWN_PROFILE_DATA).describe("A JSON list of {id, value}.") },
  }),
};

export function profileFieldRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions } = services;
  const E = profileFieldEndpoints;

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { custom_fields: await getCustomProfileFields(prisma, actorOf(res).realm_id) });
    }),
  );

  serve(
    router,
    E.create,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.create.params);
      const id = await actions.run(originOf(req, actor), (tx, events) =>
        createProfileField(tx, events, actor, {
          name: p.name,
          hint: p.hint,
          fieldType: p.field_type,
          fieldData: p.field_data,
          displayInProfileSummary: p.display_in_profile_summary,
          required: p.required,
          editableByUser: p.editable_by_user,
        }),
      );
      success(res, { id });
    }),
  );

  serve(
    router,
    E.reorder,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.reorder.params);
      await actions.run(originOf(req, actor), (tx, events) => reorderProfileFields(tx, events, actor, p.order));
      success(res);
    }),
  );

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const fieldId = pathId(req, "field_id");
      const p = parseParams(req, E.update.params);
      await actions.run(originOf(req, actor), (tx, events) =>
        updateProfileField(tx, events, actor, fieldId, {
          name: p.name,
          hint: p.hint,
          fieldData: p.field_data,
          required: p.required,
          displayInProfileSummary: p.display_in_profile_summary,
          editableByUser: p.editable_by_user,
        }),
      );
      success(res);
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const fieldId = pathId(req, "field_id");
      await actions.run(originOf(req, actor), (tx, events) => deleteProfileField(tx, events, actor, fieldId));
      success(res);
    }),
  );

  serve(
    router,
    E.updateOwn,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.updateOwn.params);
      await actions.run(originOf(req, actor), (tx, events) => updateProfileData(tx, events, actor, actor, p.data));
      success(res);
    }),
  );
  return router;
}
