// Hot routes: the few requests that dominate a chat server's load (GET and POST /messages)
// answered before Express, whose routing, middleware, body parser and response helpers cost about
// 0.2 ms of CPU per request here. A hot route serves only its happy path and declines anything else
// (no usable credentials, any error), which Express then answers as it always does, from the
// start: so every error still comes from the one ordinary route.
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import querystring from "node:querystring";
import qs from "qs";
import { serviceUnavailableFor } from "@chat/core";
import { bodyErrorJson } from "./app.ts";
import { answerHeaders, tagHotRoute } from "./request-tracking.ts";

/** As express.urlencoded is configured (app.ts): larger bodies go to Express, which refuses them. */
const MAX_FORM_BYTES = 5 * 1024 * 1024;
const MAX_FORM_PARAMETERS = 10_000;

export interface HotRequest {
  readonly req: IncomingMessage;
  /** The query string as sent, without its `?` ("" for none). */
  readonly search: string;
  /** The query string as Express's "simple" parser gives it (node:querystring), parsed when first read. */
  readonly query: querystring.ParsedUrlQuery;
  /** A POST's form body, parsed as express.urlencoded({ extended: false }) parses it. */
  readonly body: Record<string, unknown> | undefined;
}

/** A hot route's request: a route that reads its few parameters itself never has the query parsed. */
class ParsedHotRequest implements HotRequest {
  private parsedQuery: querystring.ParsedUrlQuery | undefined = undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly search: string,
    readonly body: Record<string, unknown> | undefined,
  ) {}

  get query(): querystring.ParsedUrlQuery {
    return (this.parsedQuery ??= querystring.parse(this.search));
  }
}

export interface HotRouteSpec {
  /** A GET has no body; a POST has a form body; a DELETE has a form body or none. */
  method: "GET" | "POST" | "DELETE";
  /** Matched exactly (Express would also accept other spellings, which go to Express). */
  path: string;
  /** Answers and resolves true, or resolves false without touching `res`. */
  handle?(request: HotRequest, res: ServerResponse): Promise<boolean>;
  /**
   * The same with a callback, for a route that holds its requests (long polls): no promise or
   * closure per request is kept alive while it is held. Calls `settle` once.
   */
  serve?(request: HotRequest, res: ServerResponse, settle: HotSettle): void;
}

/** How a callback-style hot route ends a request: answered (true), passed to Express (false), or failed. */
export type HotSettle = (req: IncomingMessage, res: ServerResponse, handled: boolean, error?: unknown) => void;

export interface HotRoute extends HotRouteSpec {
  /** Requests this route answered, and requests it passed to Express: a copy that keeps going stale shows here. */
  readonly stats: { served: number; declined: number };
}

export function hotRoute(spec: HotRouteSpec): HotRoute {
  if ((spec.handle === undefined) === (spec.serve === undefined)) throw new Error(`hot route ${spec.method} ${spec.path}: give handle or serve, one of them`);
  return { ...spec, stats: { served: 0, declined: 0 } };
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");
}

/**
 * Whether a POST's body is one this module reads: a UTF-8 form, uncompressed, of a declared
 * length within the limit. Anything else (multipart, other charsets, chunked) is Express's.
 */
function isPlainForm(req: IncomingMessage): boolean {
  const type = req.headers["content-type"];
  if (type === undefined || req.headers["content-encoding"] !== undefined || req.headers["transfer-encoding"] !== undefined) return false;
  const [mime, ...parameters] = type.split(";").map((part) => part.trim().toLowerCase());
  if (mime !== "application/x-www-form-urlencoded") return false;
  if (parameters.some((parameter) => parameter.startsWith("charset=") && parameter !== "charset=utf-8")) return false;
  const length = Number(req.headers["content-length"] ?? "0");
  return Number.isSafeInteger(length) && length <= MAX_FORM_BYTES;
}

/**
 * A form as express.urlencoded({ extended: false }) parses it (body-parser 2 uses qs with these
 * options), or undefined past its parameter limit, which Express answers with its error.
 */
function parseForm(text: string): Record<string, unknown> | undefined {
  if (text.length === 0) return {};
  let count = 1;
  for (let at = text.indexOf("&"); at !== -1; at = text.indexOf("&", at + 1)) if (++count > MAX_FORM_PARAMETERS) return undefined;
  return qs.parse(text, { allowPrototypes: true, arrayLimit: count, depth: 0, charset: "utf-8", parameterLimit: MAX_FORM_PARAMETERS, strictDepth: true });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** A request listener that tries the hot routes first, then `app`. */
export function withHotRoutes(app: RequestListener, routes: HotRoute[]): RequestListener {
  if (routes.length === 0) return app;
  // Each route with its one settle function, shared by its requests. Found by comparing the
  // request line's path in place (a node serves a few hot routes): a key string per request was
  // garbage on every long poll.
  const entries = routes.map((route) => ({ route, settle: settleFor(route, app) }));
  const find = (method: string | undefined, url: string, pathLength: number) => {
    for (const entry of entries) if (entry.route.method === method && entry.route.path.length === pathLength && url.startsWith(entry.route.path)) return entry;
    return undefined;
  };
  return (req, res) => {
    const url = req.url ?? "/";
    const question = url.indexOf("?");
    const entry = find(req.method, url, question === -1 ? url.length : question);
    if (entry === undefined) {
      app(req, res);
      return;
    }
    // A GET has no body (one would be a parameter source too, as Zulip reads both: only Express
    // reads those), a POST a plain form, a DELETE either.
    const { method } = entry.route;
    const bodyless = method !== "POST" && !hasBody(req);
    if (!bodyless && (method === "GET" || !isPlainForm(req))) {
      app(req, res);
      return;
    }
    const { route, settle } = entry;
    tagHotRoute(req, route.path);
    const search = question === -1 ? "" : url.slice(question + 1);
    if (bodyless) {
      startHotRoute(route, new ParsedHotRequest(req, search, undefined), res, settle);
      return;
    }
    readBody(req).then(
      (text) => {
        const body = parseForm(text);
        if (body === undefined) {
          // As Express's body parser refuses it (413, parameters.too.many): a body is read once.
          sendJsonBody(res, 413, JSON.stringify(bodyErrorJson("parameters.too.many")));
          settle(req, res, true);
          return;
        }
        // Handed over parsed should Express answer it: its body parser leaves a request whose
        // body was read as it is.
        (req as IncomingMessage & { body?: unknown }).body = body;
        startHotRoute(route, new ParsedHotRequest(req, search, body), res, settle);
      },
      (error: unknown) => settle(req, res, false, error),
    );
  };
}

function startHotRoute(route: HotRoute, request: HotRequest, res: ServerResponse, settle: HotSettle): void {
  if (route.serve !== undefined) {
    route.serve(request, res, settle);
    return;
  }
  route.handle!(request, res).then(
    (handled) => settle(request.req, res, handled),
    (error: unknown) => settle(request.req, res, false, error),
  );
}

function settleFor(route: HotRoute, app: RequestListener): HotSettle {
  return (req, res, handled, error) => {
    if (error !== undefined) {
      if (answerFailure(route, res, error)) return;
    } else if (handled) {
      route.stats.served++;
      return;
    }
    route.stats.declined++;
    app(req, res);
  };
}

/**
 * Answers a hot route's failure when Postgres or Redis is unreachable (true): the ordinary route
 * would wait out the same timeout again before giving the same 503, so the answer is given here,
 * at once. Any other failure is the ordinary route's to answer (false), unless the answer went.
 */
function answerFailure(route: HotRoute, res: ServerResponse, error: unknown): boolean {
  if (res.headersSent) return true;
  const unavailable = serviceUnavailableFor(error);
  if (unavailable === null) return false;
  route.stats.served++;
  res.writeHead(unavailable.status, answerHeaders(res.req, [...Object.entries(unavailable.headers).flat(), "Content-Type", "application/json; charset=utf-8"]));
  res.end(JSON.stringify(unavailable.toJSON()));
  return true;
}

/** A JSON body, as Express's res.json would send it, after `headers` (a flat list of names and values, added to). */
export function sendJsonBody(res: ServerResponse, status: number, body: string | Buffer, headers: string[] = []): void {
  // Encoded once: a page of messages is a 58 KiB string of many joined pieces.
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  headers.push("Content-Type", "application/json; charset=utf-8", "Content-Length", String(bytes.length));
  res.writeHead(status, answerHeaders(res.req, headers));
  res.end(bytes);
}
