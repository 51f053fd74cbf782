// Organization data exports (Zulip's /export/realm): administrators ask for one, list them and
// delete them; the worker tier writes the tarball (apps/worker/src/realm-export.ts). The tarball
// is downloaded at its export_url, /realm_exports/<realm>/<random>/<name>.tar.gz, by the
// organization's administrators only (HTTP Basic, the `api_key` parameter or the session cookie),
// the random part making the URL unguessable besides.
import { Router, type Request } from "express";
import {
  deleteRealmExport,
  EXPORT_PUBLIC,
  EXPORT_TYPES,
  failRealmExport,
  listExportConsents,
  type ExportType,
  JsonableError,
  listRealmExports,
  queueRealmExport,
  realmExportStorageKey,
  requestRealmExport,
  isAdmin,
} from "@chat/core";
import { actorOf, endpoint, originOf, params, parseParams, requireUser, route, schema, serve, success, successBody, EMPTY_SUCCESS } from "@chat/http";
import { logger } from "@chat/logger";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";
import { fileNotFound, streamStoredBody } from "./stored-files.ts";

const nullableNumber = schema.nullable(schema.number());

/** One export, as Zulip's zulip.yaml describes `RealmExport`. */
export const REALM_EXPORT = schema.object({
  id: schema.integer(),
  acting_user_id: schema.nullable(schema.integer()),
  export_time: schema.number({ description: "When it was asked for, in seconds since the epoch." }),
  deleted_timestamp: nullableNumber,
  failed_timestamp: nullableNumber,
  export_url: schema.nullable(schema.string({ description: "Where the finished tarball is downloaded (administrators only)." })),
  pending: schema.boolean(),
  export_type: { enum: [...EXPORT_TYPES], description: "1 public data, 2 full data with members' consent (feature level 304)." },
});

const EXPORT_ID = { export_id: { schema: { type: "integer" }, description: "The export's id." } };

export const realmExportEndpoints = {
  request: endpoint({
    method: "post",
    path: "/export/realm",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Ask for a data export of the organization (administrators; five in seven days)",
    params: {
      export_type: params
        .json<number>({ enum: [...EXPORT_TYPES] })
        .default(EXPORT_PUBLIC)
        .describe("1 public data (the default), or 2 full data with the consent of members (their direct messages and private channels only if they allow it: allow_private_data_export); feature level 304."),
    },
    response: successBody({ id: schema.integer({ description: "The export's id (feature level 182)." }) }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  list: endpoint({
    method: "get",
    path: "/export/realm",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "The organization's data exports (administrators)",
    params: {},
    response: successBody({ exports: schema.array(REALM_EXPORT) }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  consents: endpoint({
    method: "get",
    path: "/export/realm/consents",
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Whether each active user lets administrators export their private data (administrators; feature level 295)",
    params: {},
    response: successBody({ export_consents: schema.array(schema.object({ user_id: schema.integer(), consented: schema.boolean() })) }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  remove: endpoint({
    method: "delete",
    path: "/export/realm/{export_id}",
    pathParams: EXPORT_ID,
    tag: "server_and_organizations",
    auth: "basic",
    summary: "Delete a finished data export's tarball (administrators)",
    params: {},
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

const DOWNLOAD_PATH = {
  realm_id: { schema: { type: "string", pattern: "^[0-9]{1,10}$" }, description: "The organization's id." },
  // Loose here (so OPTIONS and the document match any such path); the handler takes only the 24 characters exports are given.
  token: { schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" }, description: "The export's random part." },
  filename: { schema: { type: "string" }, description: "The tarball's name." },
};

export const realmExportFileEndpoints = {
  download: endpoint({
    method: "get",
    root: true,
    path: "/realm_exports/{realm_id}/{token}/{filename}",
    pathParams: DOWNLOAD_PATH,
    tag: "files",
    auth: "basic-or-api-key",
    summary: "A finished organization export's tarball (the organization's administrators)",
    params: {},
    response: { binary: ["application/gzip", "*/*"] },
    errorStatuses: [403],
  }),
};

export function realmExportRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, actions, ctx } = services;
  const E = realmExportEndpoints;

  serve(
    router,
    E.request,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.request.params);
      const id = await actions.run(originOf(req, actor), (tx, events) => requestRealmExport(tx, events, ctx, actor, p.export_type as ExportType));
      try {
        await queueRealmExport(services.jobs, id);
      } catch (error) {
        // Nothing will write it: the administrators see it failed rather than pending for ever.
        logger.error("could not queue an organization export", { export: id, error: error instanceof Error ? error.message : String(error) });
        await actions.run(originOf(req, actor), (tx, events) => failRealmExport(tx, events, ctx, id));
        throw error;
      }
      success(res, { id });
    }),
  );

  serve(
    router,
    E.list,
    route(async (_req, res) => {
      success(res, { exports: await listRealmExports(prisma, ctx, actorOf(res)) });
    }),
  );

  serve(
    router,
    E.consents,
    route(async (_req, res) => {
      success(res, { export_consents: await listExportConsents(prisma, actorOf(res)) });
    }),
  );

  serve(
    router,
    E.remove,
    route(async (req, res) => {
      const actor = actorOf(res);
      const exportId = pathId(req, "export_id");
      const key = await actions.run(originOf(req, actor), (tx, events) => deleteRealmExport(tx, events, ctx, actor, exportId));
      await services.storage.delete([key]).catch((error: unknown) => {
        logger.warn("could not delete an export's tarball", { key, error: error instanceof Error ? error.message : String(error) });
      });
      success(res);
    }),
  );
  return router;
}

function exportPathOf(req: Request): string {
  const realm = String(req.params.realm_id ?? "");
  const token = String(req.params.token ?? "");
  const name = String(req.params.filename ?? "");
  if (!/^\d{1,10}$/.test(realm) || !/^[A-Za-z0-9_-]{24}$/.test(token) || !/^[A-Za-z0-9._-]{1,200}$/.test(name)) throw fileNotFound();
  return `realm_exports/${realm}/${token}/${name}`;
}

/** The tarball downloads, outside /api/v1. */
export function realmExportFileRoutes(services: ApiServices): Router {
  const router = Router();
  const authenticate = requireUser({ prisma: services.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits, apiKeyParameter: true, sessionCookie: true });
  serve(
    router,
    realmExportFileEndpoints.download,
    authenticate,
    route(async (req, res) => {
      const actor = actorOf(res);
      const exportPath = exportPathOf(req);
      const rows = await services.prisma.$queryRawUnsafe<{ realm_id: number }[]>(
        "SELECT realm_id FROM realm_export WHERE export_path = $1 AND deleted_timestamp IS NULL",
        exportPath,
      );
      const row = rows[0];
      if (!row || row.realm_id !== actor.realm_id) throw fileNotFound();
      if (!isAdmin(actor)) throw new JsonableError("You are not authorized to view this file.", { status: 403 });
      const key = realmExportStorageKey(exportPath);
      const object = await services.storage.get(key);
      if (!object) throw fileNotFound();
      res.set({
        "Content-Type": "application/gzip",
        "Content-Disposition": `attachment; filename="${String(req.params.filename)}"`,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
        "Content-Length": String(object.size),
      });
      await streamStoredBody(req, res, object, key);
    }),
  );
  return router;
}
