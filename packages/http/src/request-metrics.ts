// Each HTTP request in the process's metrics (@chat/metrics): in flight while answered, then its
// duration under its route's pattern (the raw path would give a series per message id).
import type { IncomingMessage, ServerResponse } from "node:http";
import { httpRequestDuration, httpRequestsInFlight } from "@chat/metrics";

const HOT_ROUTE = Symbol("hot route");

type Tagged = IncomingMessage & { [HOT_ROUTE]?: string; route?: { path: unknown }; baseUrl?: string };

/** Marks a request a hot route took (hot-routes.ts); Express's own route wins if it declines. */
export function tagHotRoute(req: IncomingMessage, path: string): void {
  (req as Tagged)[HOT_ROUTE] = path;
}

/** The pattern that answered: Express's route (mount path included), a hot route's path, or "unmatched". */
export function routeLabel(req: IncomingMessage): string {
  const tagged = req as Tagged;
  if (tagged.route !== undefined) return `${tagged.baseUrl ?? ""}${String(tagged.route.path)}`;
  return tagged[HOT_ROUTE] ?? "unmatched";
}

export function observeRequest(req: IncomingMessage, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  httpRequestsInFlight.inc();
  res.once("close", () => {
    httpRequestsInFlight.dec();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    httpRequestDuration.observe({ method: req.method ?? "", route: routeLabel(req), status: String(res.statusCode) }, seconds);
  });
}
