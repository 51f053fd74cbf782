// Each HTTP request's id, measurements and log line. The id is the client's (or the proxy's)
// X-Request-Id when it is a plain token, else a new UUID; it is sent back, and every log line of
// the request names it. The metrics (@chat/metrics) time requests under their route's pattern,
// never the raw path (which would give a series per message id). One JSON line per request at
// the `http` level (LOG_LEVEL=http): a line per long poll is too many by default.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Actor, ChangeOrigin } from "@chat/core";
import { httpLogging, logger } from "@chat/logger";
import { httpRequestDuration, httpRequestsInFlight } from "@chat/metrics";

const HOT_ROUTE = Symbol("hot route");
const REQUEST_ID = Symbol("request id");
const USER_ID = Symbol("user id");

type Tagged = IncomingMessage & {
  [HOT_ROUTE]?: string;
  [REQUEST_ID]?: string;
  [USER_ID]?: number;
  route?: { path: unknown };
  baseUrl?: string;
};

/**
 * A new request id, shaped as a UUID: this process's random first 24 characters, then a count.
 * Unique per process and, by the random part, across processes; a random UUID per request cost a
 * node answering thousands of long polls a second more than the rest of its tracking.
 */
const REQUEST_ID_PREFIX = randomUUID().slice(0, 24);
let requestCount = 0;
function newRequestId(): string {
  requestCount = (requestCount + 1) % 2 ** 48;
  return REQUEST_ID_PREFIX + requestCount.toString(16).padStart(12, "0");
}

/** A request id a client may choose: a token that is safe in a log line and a header. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Marks a request a hot route took (hot-routes.ts); Express's own route wins if it declines. */
export function tagHotRoute(req: IncomingMessage, path: string): void {
  (req as Tagged)[HOT_ROUTE] = path;
}

/** The user a request acts as, for its log line. */
export function tagRequestUser(req: IncomingMessage, userId: number): void {
  (req as Tagged)[USER_ID] = userId;
}

/** The request's id (trackRequest gave it one), for log lines about it. */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return (req as Tagged)[REQUEST_ID];
}

/** A change this request makes, as its actions record it: the actor's organization and the request's id. */
export function originOf(req: IncomingMessage, actor: Pick<Actor, "realm_id">): ChangeOrigin {
  return { realmId: actor.realm_id, requestId: requestIdOf(req) };
}

/** Sets the request's id (trackRequest gave it one) on its response: Express's first middleware. */
export function sendRequestId(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const requestId = (req as Tagged)[REQUEST_ID];
  if (requestId !== undefined) res.setHeader("X-Request-Id", requestId);
  next();
}

/**
 * Headers for an answer written without Express (hot routes), as a flat list of names and values
 * (writeHead's quickest form), with the request's id when it has one.
 */
export function answerHeaders(req: IncomingMessage, headers: string[]): string[] {
  const requestId = (req as Tagged)[REQUEST_ID];
  if (requestId !== undefined) headers.push("X-Request-Id", requestId);
  return headers;
}

/** The pattern that answered: Express's route (mount path included), a hot route's path, or "unmatched". */
export function routeLabel(req: IncomingMessage): string {
  const tagged = req as Tagged;
  if (tagged.route !== undefined) return `${tagged.baseUrl ?? ""}${String(tagged.route.path)}`;
  return tagged[HOT_ROUTE] ?? "unmatched";
}

export interface TrackingOptions {
  /** Time it in the metrics (only where something reads them: METRICS_PORT set). */
  measure: boolean;
}

const STARTED = Symbol("started");
const TRACKED_URL = Symbol("tracked url");
const TRACKING = Symbol("tracking");
/** What a tracked request's close does: measure it (1), log it (2), or both. */
const MEASURE = 1;
const LOG = 2;

type Tracked = Tagged & { [STARTED]?: number; [TRACKED_URL]?: string; [TRACKING]?: number };

export function trackRequest(req: IncomingMessage, res: ServerResponse, options: TrackingOptions): void {
  const given = req.headers["x-request-id"];
  const requestId = typeof given === "string" && ACCEPTED_REQUEST_ID.test(given) ? given : newRequestId();
  // Sent back by whatever answers (sendRequestId in Express, answerHeaders in hot routes): set
  // here, it would take every answer off Node's quicker path for headers given all at once.
  (req as Tagged)[REQUEST_ID] = requestId;
  const tracking = (options.measure ? MEASURE : 0) | (httpLogging() ? LOG : 0);
  if (tracking === 0) return;
  // On the request, with one listener for all: ten thousand long polls are held at once, and a
  // closure, its context and a once-wrapper each showed in their memory.
  const tracked = req as Tracked;
  tracked[STARTED] = performance.now();
  // Now: Express rewrites req.url inside mounted routers.
  tracked[TRACKED_URL] = req.url ?? "/";
  tracked[TRACKING] = tracking;
  if (tracking & MEASURE) httpRequestsInFlight.inc();
  res.on("close", onTrackedClose);
}

function onTrackedClose(this: ServerResponse): void {
  const res = this;
  const req = res.req as Tracked;
  const tracking = req[TRACKING] ?? 0;
  const seconds = (performance.now() - (req[STARTED] ?? 0)) / 1e3;
  const route = routeLabel(req);
  if (tracking & MEASURE) {
    httpRequestsInFlight.dec();
    httpRequestDuration.observe({ method: req.method ?? "", route, status: String(res.statusCode) }, seconds);
  }
  if (tracking & LOG) {
    const url = req[TRACKED_URL] ?? "/";
    const question = url.indexOf("?");
    logger.http("request", {
      requestId: req[REQUEST_ID],
      method: req.method,
      // Never the query: an `api_key` may be in it.
      path: question === -1 ? url : url.slice(0, question),
      route,
      status: res.statusCode,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      userId: req[USER_ID] ?? userOfExpressResponse(res),
      ...(res.writableFinished ? {} : { aborted: true }),
    });
  }
}

/** The actor requireUser put on Express's res.locals, if any. */
function userOfExpressResponse(res: ServerResponse): number | undefined {
  const locals = (res as ServerResponse & { locals?: { actor?: { id?: unknown } } }).locals;
  return typeof locals?.actor?.id === "number" ? locals.actor.id : undefined;
}
