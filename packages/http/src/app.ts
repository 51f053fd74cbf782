// The Express pieces both HTTP tiers share: body parsing, JSON errors, and nothing that can
// answer with a stack trace.
import express, { Router, type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from "express";
import { JsonableError, serviceUnavailableFor } from "@chat/core";
import { logger } from "@chat/logger";
import { multipartBody } from "./multipart.ts";
import { requestIdOf, sendRequestId } from "./request-tracking.ts";
import { endpoint, serve, successBody, type Endpoint } from "./endpoints.ts";
import { optionsRouter } from "./http-options.ts";
import { ignoredParametersOf } from "./ignored-parameters.ts";
import { jsonSessionGate } from "./browser-session.ts";
import type { AuthOptions } from "./auth.ts";

/** A success body, with the request's ignored parameters when there are some (ignored-parameters.ts). */
export function success(res: Response, data: Record<string, unknown> = {}): void {
  res.json({ result: "success", msg: "", ...data, ...ignoredParametersOf(res.req) });
}

/** A success body with fields that are JSON text already (built by a hot path without objects). */
export function successJsonText(data: Record<string, unknown>, jsonText: Record<string, string>): string {
  let body = JSON.stringify({ result: "success", msg: "", ...data });
  for (const [name, json] of Object.entries(jsonText)) body = `${body.slice(0, -1)},${JSON.stringify(name)}:${json}}`;
  return body;
}

/**
 * A success body as UTF-8 bytes, with fields whose values are JSON bytes already (kept serialized
 * by a cache): the bytes are copied in, never decoded or encoded again.
 */
export function successJsonBytes(data: Record<string, unknown>, jsonBytes: Record<string, Uint8Array>): Buffer {
  const head = JSON.stringify({ result: "success", msg: "", ...data });
  const chunks: Uint8Array[] = [Buffer.from(head.slice(0, -1))];
  for (const [name, bytes] of Object.entries(jsonBytes)) chunks.push(Buffer.from(`,${JSON.stringify(name)}:`), bytes);
  chunks.push(Buffer.from("}"));
  return Buffer.concat(chunks);
}

/** Wraps an async route handler so a rejection reaches the error handler. */
export function route(handler: (req: Request, res: Response) => Promise<void> | void): RequestHandler {
  return (req, res, next) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch(next);
  };
}

/** What a body body-parser refuses is called, by its error type (413s and 415s; the rest are 400s). */
const BODY_ERRORS: Record<string, string> = {
  "entity.too.large": "Request body too large",
  "parameters.too.many": "Too many parameters",
  "charset.unsupported": "Unsupported charset: a form body is UTF-8 or ISO-8859-1",
  "encoding.unsupported": "Unsupported Content-Encoding",
};

/** The answer to a body that cannot be read, by body-parser's error type (hot routes answer the same). */
export function bodyErrorJson(type: unknown): { result: "error"; msg: string; code: "BAD_REQUEST" } {
  return { result: "error", msg: (typeof type === "string" && BODY_ERRORS[type]) || "Malformed request body", code: "BAD_REQUEST" };
}

/**
 * A path segment that is not percent-encoded UTF-8 (`/users/%E0%A4%A`): Express's router fails to
 * decode the parameter with a URIError marked 400. The fault is the URL's, not the body's.
 */
const MALFORMED_PATH = { result: "error", msg: "Malformed URL path", code: "BAD_REQUEST" } as const;

/** During an outage every request fails the same way: say so once in a while, not per request. */
const OUTAGE_LOG_EVERY_MS = 10_000;
let lastOutageLogAt = 0;

function sendJsonableError(res: Response, error: JsonableError): void {
  res.status(error.status).set(error.headers).json(error.toJSON());
}

const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  if (res.headersSent) return;
  if (error instanceof JsonableError) {
    sendJsonableError(res, error);
    return;
  }
  const unavailable = serviceUnavailableFor(error);
  if (unavailable) {
    if (Date.now() - lastOutageLogAt >= OUTAGE_LOG_EVERY_MS) {
      lastOutageLogAt = Date.now();
      logger.warn("answering 503: a backing service is unreachable", { requestId: requestIdOf(req), method: req.method, path: req.path, error: error instanceof Error ? error.message : String(error) });
    }
    sendJsonableError(res, unavailable);
    return;
  }
  // Errors from body-parser and the router carry a status (and body-parser's a type); they are the client's fault.
  const status = typeof error?.status === "number" ? error.status : typeof error?.statusCode === "number" ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    res.status(status).json(error instanceof URIError ? MALFORMED_PATH : bodyErrorJson(error.type));
    return;
  }
  logger.error("unhandled error", { requestId: requestIdOf(req), method: req.method, path: req.path, error: error instanceof Error ? error.stack : String(error) });
  // A 5xx is never the client's BAD_REQUEST: a client must not conclude its request was wrong.
  res.status(500).json({ result: "error", msg: "Internal server error", code: "INTERNAL_SERVER_ERROR" });
};

export type ReadinessProbe = () => Promise<{ ready: boolean; checks: Record<string, string> }>;

/**
 * GET /health/live (the process answers) and /health/ready (it should take traffic; 503 naming
 * what is wrong, e.g. while draining, so load balancers stop sending before it stops answering).
 */
const LIVE = { method: "get", root: true, tag: "operations", auth: "none", summary: "The process answers", params: {}, response: successBody({ status: { const: "ok" } }) } as const;

export const healthEndpoints: Endpoint[] = [
  endpoint({ ...LIVE, path: "/health" }),
  endpoint({ ...LIVE, path: "/health/live" }),
  endpoint({
    method: "get",
    root: true,
    path: "/health/ready",
    tag: "operations",
    auth: "none",
    summary: "The process should take traffic: its database and Redis answer, it is not draining (503 names what is wrong)",
    params: {},
    response: successBody({ status: { const: "ready" }, checks: { type: "object", additionalProperties: { type: "string" } } }),
  }),
];

export function healthRoutes(readiness?: ReadinessProbe): Router {
  const router = Router();
  const [health, live, ready] = healthEndpoints;
  const answerLive = (_req: Request, res: Response) => {
    success(res, { status: "ok" });
  };
  serve(router, health, answerLive);
  serve(router, live, answerLive);
  serve(router, ready, async (_req, res) => {
    const { ready, checks } = readiness ? await readiness() : { ready: true, checks: {} };
    if (ready) {
      success(res, { status: "ready", checks });
      return;
    }
    const failing = Object.entries(checks).filter(([, value]) => value !== "ok");
    res.status(503).json({ result: "error", msg: `Not ready: ${failing.map(([name, value]) => `${name} ${value}`).join(", ")}`, code: "SERVICE_UNAVAILABLE", checks });
  });
  return router;
}

export interface HttpAppOptions {
  /** Mounted at /api/v1, and at /json for browser sessions when `sessions` is given. */
  api: Router;
  /** Serve `api` at /json too, authenticated by the browser session (browser-session.ts). */
  sessions?: AuthOptions;
  /** Mounted at the root, before the API (health checks, uploads). */
  root?: Router;
  /**
   * Mounted first, before OPTIONS answers and body parsing: protocols that answer their own
   * OPTIONS and read their own bodies (tus resumable uploads at /api/v1/tus).
   */
  early?: Router;
  /** Proxies whose X-Forwarded-For and -Proto are believed (TRUSTED_PROXIES; loopback unless given); none when empty. */
  trustedProxies?: string[];
  /** Whether the process should take traffic (GET /health/ready): ready unless given. */
  readiness?: ReadinessProbe;
  /** The contracts of the endpoints `api` and `root` serve: OPTIONS names their methods (the health checks' are added). */
  endpoints?: Endpoint[];
}

function sendNotFound(res: Response): void {
  res.status(404).json({ result: "error", msg: "Endpoint not found", code: "BAD_REQUEST" });
}

export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  // API responses are not cached by clients; a weak ETag would hash every body (58 KiB for a page of messages).
  app.set("etag", false);
  // Anyone else's X-Forwarded-* would choose the client address the rate limits count and the
  // scheme of realm_uri.
  const trustedProxies = options.trustedProxies ?? ["loopback"];
  app.set("trust proxy", trustedProxies.length === 0 ? false : trustedProxies);
  app.set("query parser", "simple");
  app.use(sendRequestId);
  if (options.early) app.use(options.early);
  // Before the body parser: an OPTIONS answer reads nothing but the path.
  app.use(optionsRouter([...healthEndpoints, ...(options.endpoints ?? [])], sendNotFound));
  app.use(express.urlencoded({ extended: false, limit: "5mb", parameterLimit: 10_000 }));
  app.use(multipartBody);
  app.use(healthRoutes(options.readiness));
  if (options.root) app.use(options.root);
  app.use("/api/v1", options.api);
  // The same router, not a copy: /json is /api/v1 for a browser, by construction.
  if (options.sessions) app.use("/json", jsonSessionGate(options.sessions), options.api);
  app.use((_req, res) => sendNotFound(res));
  app.use(errorHandler);
  return app;
}
