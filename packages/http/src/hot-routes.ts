// Hot routes: the few requests that dominate a chat server's load (GET /messages) answered before
// Express, whose routing, middleware and response helpers cost about 0.15 ms of CPU per request
// here (measured on GET /messages). A hot route serves only its happy path and declines anything
// else (a body, no usable credentials, any error), which Express then answers as it always does,
// from the start: so every error still comes from the one ordinary route.
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import querystring from "node:querystring";

export interface HotRequest {
  req: IncomingMessage;
  /** The query string as Express's "simple" parser gives it (node:querystring). */
  query: querystring.ParsedUrlQuery;
}

export interface HotRouteSpec {
  method: "GET";
  /** Matched exactly (Express would also accept other spellings, which go to Express). */
  path: string;
  /** Answers and resolves true, or resolves false without touching `res`. */
  handle(request: HotRequest, res: ServerResponse): Promise<boolean>;
}

export interface HotRoute extends HotRouteSpec {
  /** Requests this route answered, and requests it passed to Express: a copy that keeps going stale shows here. */
  readonly stats: { served: number; declined: number };
}

export function hotRoute(spec: HotRouteSpec): HotRoute {
  return { ...spec, stats: { served: 0, declined: 0 } };
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");
}

/** A request listener that tries the hot routes first, then `app`. */
export function withHotRoutes(app: RequestListener, routes: HotRoute[]): RequestListener {
  if (routes.length === 0) return app;
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  return (req, res) => {
    const url = req.url ?? "/";
    const question = url.indexOf("?");
    const route = byKey.get(`${req.method} ${question === -1 ? url : url.slice(0, question)}`);
    // A body would be a parameter source (Zulip reads both); only Express reads bodies.
    if (route === undefined || hasBody(req)) {
      app(req, res);
      return;
    }
    const query = querystring.parse(question === -1 ? "" : url.slice(question + 1));
    const decline = () => {
      route.stats.declined++;
      app(req, res);
    };
    route.handle({ req, query }, res).then(
      (handled) => (handled ? route.stats.served++ : decline()),
      () => {
        if (!res.headersSent) decline();
      },
    );
  };
}

/** A JSON body, as Express's res.json would send it. */
export function sendJsonBody(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}
