// The process's Prometheus metrics (prom-client), served as text at /metrics on METRICS_PORT
// (apps/server/src/main.ts), never through the load balancer. One registry per process: the tiers a
// process runs record into it, and gauges that are cheaper to read than to keep (held polls,
// queues, the outbox's age) are read at scrape time from the sources the tiers register.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export const registry = new Registry();

let collectingProcessMetrics = false;

/**
 * Node's own metrics (CPU, memory, event loop lag, GC), collected only by a process that serves
 * /metrics: their event loop monitor wakes the process every 10 ms, which was 60% of an idle trial
 * server's CPU (450 ms in 40 s, 180 ms without; issue 32).
 */
export function collectProcessMetrics(): void {
  if (collectingProcessMetrics) return;
  collectingProcessMetrics = true;
  collectDefaultMetrics({ register: registry });
}

export const httpRequestDuration = new Histogram({
  name: "chat_http_request_duration_seconds",
  help: "HTTP requests by route (its pattern, never the raw path), method and status; long polls included, under their route",
  labelNames: ["method", "route", "status"] as const,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const httpRequestsInFlight = new Gauge({
  name: "chat_http_requests_in_flight",
  help: "HTTP requests being answered (held long polls included)",
  registers: [registry],
});

export const rateLimitHits = new Counter({
  name: "chat_rate_limit_hits_total",
  help: "Requests refused for a rate limit, by limit",
  labelNames: ["limit"] as const,
  registers: [registry],
});

export const jobRuns = new Counter({
  name: "chat_jobs_total",
  help: "Worker jobs by kind and outcome (ok, failed; for service bot calls also retry and gave_up; service bot jobs put off while their organization held its share: deferred)",
  labelNames: ["kind", "outcome"] as const,
  registers: [registry],
});

export const fanoutLag = new Gauge({
  name: "chat_fanout_lag_seconds",
  help: "How old the newest change-stream batch this node's fan-out appended was when it was appended",
  registers: [registry],
});

export const fanoutBatches = new Counter({
  name: "chat_fanout_batches_total",
  help: "Change-stream batches this node's fan-out appended to event queues",
  registers: [registry],
});

/** Values read when scraped; a source that fails leaves its gauge out of that scrape. */
type Source = () => number | Promise<number>;
const sources = new Map<string, Source>();

function scrapedGauge(name: string, help: string): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const source = sources.get(name);
      if (source === undefined) return;
      try {
        this.set(await source());
      } catch {
        this.reset();
      }
    },
  });
}

scrapedGauge("chat_long_polls_held", "GET /events requests held on this node, waiting for events");
scrapedGauge("chat_event_queues", "Event queues in the queue store (all nodes')");
scrapedGauge("chat_outbox_oldest_age_seconds", "Age of the oldest change not yet published to the change stream (0: none)");

export type ScrapedGauge = "chat_long_polls_held" | "chat_event_queues" | "chat_outbox_oldest_age_seconds";

/** Where a scraped gauge reads its value; the last registration wins (one per process). */
export function measureAtScrape(name: ScrapedGauge, source: Source): void {
  sources.set(name, source);
}

/** The metrics as Prometheus text, and its content type. */
export async function metricsText(): Promise<{ contentType: string; text: string }> {
  return { contentType: registry.contentType, text: await registry.metrics() };
}
