// OPTIONS, answered as Zulip's rest_dispatch answers it: 204 No Content and an Allow header naming
// the methods the path serves (HEAD wherever GET is), before authentication, rate limits and the
// body parser. The methods come from the endpoints' contracts, and Express matches the path against
// them as it matches the routes themselves (same decoding, case and trailing slash), so a
// hand-written list cannot drift. No CORS header is added: this grants no cross-origin access.
import { Router, type Request, type Response } from "express";
import { expressPath, type Endpoint } from "./endpoints.ts";
import { servedPath } from "./openapi.ts";

/** A segment a path parameter without a declared schema takes: an id (`pathId` 404s on anything else). */
const ID_SEGMENT = /^\d+$/;

/** A contract's method, and what each path parameter must look like for its route to serve it. */
interface MethodAtPath {
  method: string;
  patterns: Array<[name: string, pattern: RegExp]>;
}

function segmentPatterns(contract: Endpoint): MethodAtPath["patterns"] {
  const names = [...contract.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
  return names.flatMap((name): MethodAtPath["patterns"] => {
    const doc = contract.pathParams?.[name];
    if (doc === undefined) return [[name, ID_SEGMENT]];
    return typeof doc.schema.pattern === "string" ? [[name, new RegExp(doc.schema.pattern)]] : [];
  });
}

/** Whether the request's path parameters are ones the route serves (`/users/me` is not `/users/{user_id}`'s). */
function servesParams(entry: MethodAtPath, params: Request["params"]): boolean {
  return entry.patterns.every(([name, pattern]) => pattern.test(String(params[name])));
}

/** "DELETE, GET, HEAD, PATCH": sorted, as Zulip sends it. */
function allowHeader(methods: Set<string>): string {
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort().join(", ");
}

/** The contracts grouped by the Express pattern of the path they are served at. */
function methodsByPath(contracts: Endpoint[]): Map<string, MethodAtPath[]> {
  const byPath = new Map<string, MethodAtPath[]>();
  for (const contract of contracts) {
    const path = expressPath({ path: servedPath(contract), pathParams: contract.pathParams });
    const entries = byPath.get(path) ?? [];
    entries.push({ method: contract.method.toUpperCase(), patterns: segmentPatterns(contract) });
    byPath.set(path, entries);
  }
  return byPath;
}

/**
 * Answers every OPTIONS request for the paths `contracts` are served at; any other request leaves
 * at once. A path none of them serves gets `notFound`, the app's own 404: Express's automatic
 * answer (200, text/plain, the methods of whichever router matched first) is never given.
 */
export function optionsRouter(contracts: Endpoint[], notFound: (res: Response) => void): Router {
  const allowed = new WeakMap<Request, Set<string>>();
  const router = Router();
  // Leaving the router before its routes are matched: other methods pay for one check, not one per path.
  router.use((req, _res, next) => next(req.method === "OPTIONS" ? undefined : "router"));
  for (const [path, entries] of methodsByPath(contracts)) {
    router.options(path, (req, _res, next) => {
      const methods = allowed.get(req) ?? new Set<string>();
      for (const entry of entries) if (servesParams(entry, req.params)) methods.add(entry.method);
      allowed.set(req, methods);
      next();
    });
  }
  router.use((req, res) => {
    const methods = allowed.get(req);
    if (methods === undefined || methods.size === 0) {
      notFound(res);
      return;
    }
    res.status(204).setHeader("Allow", allowHeader(methods));
    res.end();
  });
  return router;
}
