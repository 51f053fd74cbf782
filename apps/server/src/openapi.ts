// GET /api/v1/openapi.json: the API document (OpenAPI 3.1) of every endpoint a server of this
// code serves, whichever tiers a process runs: the API tier's, the event tier's, the files' and
// the health checks'. Built from the endpoints' contracts once per process.
import { Router } from "express";
import { apiEndpoints, fileEndpoints } from "@chat/app-api";
import { eventEndpoints } from "@chat/app-events";
import type { Role } from "@chat/config";
import { API_SCHEMAS, endpoint, healthEndpoints, openApiDocument, serve, type Endpoint, type OpenApiDocument } from "@chat/http";

export const openApiEndpoint = endpoint({
  method: "get",
  path: "/openapi.json",
  tag: "server_and_organizations",
  auth: "none",
  summary: "This document: the API in OpenAPI 3.1",
  params: {},
  response: {
    type: "object",
    required: ["openapi", "info", "paths", "components"],
    properties: { openapi: { const: "3.1.0" }, info: { type: "object" }, paths: { type: "object" }, components: { type: "object" } },
  },
});

/** Every endpoint's contract, in the document's order. */
export function allEndpoints(): Endpoint[] {
  return [openApiEndpoint, ...apiEndpoints, ...Object.values(eventEndpoints), ...fileEndpoints, ...healthEndpoints];
}

/** The contracts a process of `role` serves besides the health checks (its OPTIONS answers name their methods). */
export function servedEndpoints(role: Exclude<Role, "worker">): Endpoint[] {
  const api = [openApiEndpoint, ...apiEndpoints, ...fileEndpoints];
  const events = Object.values(eventEndpoints);
  return role === "api" ? api : role === "events" ? events : [...api, ...events];
}

let built: { document: OpenApiDocument; text: string } | null = null;

/** The document, built on first use. */
export function apiDocument(): OpenApiDocument {
  built ??= (() => {
    const document = openApiDocument({ endpoints: allEndpoints(), schemas: API_SCHEMAS, version: "1.0.0" });
    return { document, text: JSON.stringify(document) };
  })();
  return built.document;
}

/** Mounted at /api/v1 before authentication: a client reads it without credentials, as /server_settings. */
export function openApiRoutes(): Router {
  const router = Router();
  serve(router, openApiEndpoint, (_req, res) => {
    apiDocument();
    res.type("json").send(built!.text);
  });
  return router;
}
