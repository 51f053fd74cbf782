// Observing real tier processes. Metrics, scraped from METRICS_PORT as Prometheus would: request
// durations by route pattern and status (hot routes, Express routes, unmatched paths), requests in
// flight, held polls, queues, the fan-out's batches and lag, the outbox's age, worker jobs by kind
// and outcome, rate-limit hits, and the library's process metrics. Logs: a JSON line per request
// (LOG_LEVEL=http) with its request id (the client's X-Request-Id, or a new one, sent back), user,
// route, status and duration, and never the query string; the same id in the lines of the tiers
// that handle the changes the request made (the events tier's delivery, the worker's bot call).
import { ApiClient } from "../support/client.ts";
import { useTierProcesses } from "../support/tier-processes.ts";
import { startWebhookReceiver } from "../support/webhook-receiver.ts";

jest.setTimeout(120_000);

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Samples of one scrape: `name{labels}` -> value, as the text format writes them. */
async function scrape(port: number): Promise<{ contentType: string; samples: Map<string, number> }> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { contentType: res.headers.get("content-type") ?? "", samples };
}

function sample(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  const text = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(",");
  return samples.get(text === "" ? name : `${name}{${text}}`);
}

describe("metrics of tier processes", () => {
  const tiers = useTierProcesses({ METRICS_PORT: "0" });

  test("each tier's /metrics shows its own work", async () => {
    const api = await tiers.start("api", { RATE_LIMITING: "true", RATE_LIMIT_USER_REQUESTS_PER_MINUTE: "6" });
    const [events, worker] = await Promise.all([tiers.start("events"), tiers.start("worker")]);
    const owner = await tiers.owner(api);
    const eventsClient = new ApiClient(`http://127.0.0.1:${events.port}`, owner.credentials!);

    const register = await eventsClient.post("/register", { event_types: ["message"] });
    expect(register.body.result).toBe("success");
    // A poll held while the events node is scraped.
    const held = eventsClient.get("/events", { queue_id: register.body.queue_id, last_event_id: register.body.last_event_id });
    await waitFor("the poll held", async () => sample((await scrape(events.metricsPort!)).samples, "chat_long_polls_held") === 1);
    const eventsBefore = (await scrape(events.metricsPort!)).samples;
    expect(sample(eventsBefore, "chat_event_queues")).toBe(1);
    expect(sample(eventsBefore, "chat_http_requests_in_flight")).toBe(1);

    expect((await owner.post("/messages", { type: "stream", to: "general", topic: "metrics", content: "measured" })).body.result).toBe("success");
    expect((await held).body.events).toEqual([expect.objectContaining({ type: "message" })]);
    expect((await owner.get("/users/me")).status).toBe(200);
    expect((await owner.get("/no/such/endpoint")).status).toBe(404);
    // Past the per-user limit (6 a minute): refused, and counted.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await owner.get("/users/me")).status);
    expect(statuses).toContain(429);

    const apiScrape = await scrape(api.metricsPort!);
    expect(apiScrape.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const apiSamples = apiScrape.samples;
    // POST /messages is a hot route; GET /users/me an Express route under its mount path.
    expect(sample(apiSamples, "chat_http_request_duration_seconds_count", { method: "POST", route: "/api/v1/messages", status: "200" })).toBe(1);
    expect(sample(apiSamples, "chat_http_request_duration_seconds_count", { method: "GET", route: "/api/v1/users/me", status: "200" })).toBeGreaterThanOrEqual(1);
    // Refused before routing (authentication and rate limits come first), and paths no route has.
    expect(sample(apiSamples, "chat_http_request_duration_seconds_count", { method: "GET", route: "unmatched", status: "429" })).toBeGreaterThanOrEqual(1);
    expect(sample(apiSamples, "chat_http_request_duration_seconds_count", { method: "GET", route: "unmatched", status: "404" })).toBe(1);
    expect(sample(apiSamples, "chat_rate_limit_hits_total", { limit: "user" })).toBe(statuses.filter((status) => status === 429).length);
    expect(sample(apiSamples, "chat_outbox_oldest_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(sample(apiSamples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    // No series per raw path.
    expect([...apiSamples.keys()].some((key) => key.includes("/no/such/endpoint"))).toBe(false);

    const eventsSamples = (await scrape(events.metricsPort!)).samples;
    expect(sample(eventsSamples, "chat_fanout_batches_total")).toBeGreaterThanOrEqual(1);
    expect(sample(eventsSamples, "chat_fanout_lag_seconds")).toBeGreaterThanOrEqual(0);
    expect(sample(eventsSamples, "chat_fanout_lag_seconds")).toBeLessThan(5);
    expect(sample(eventsSamples, "chat_http_request_duration_seconds_count", { method: "GET", route: "/api/v1/events", status: "200" })).toBe(1);
    expect(sample(eventsSamples, "chat_http_request_duration_seconds_count", { method: "POST", route: "/api/v1/register", status: "200" })).toBe(1);

    // The worker's periodic jobs, once a second for the outbox sweep.
    await waitFor("an outbox sweep", async () => (sample((await scrape(worker.metricsPort!)).samples, "chat_jobs_total", { kind: "outbox sweep", outcome: "ok" }) ?? 0) >= 1);
    const workerSamples = (await scrape(worker.metricsPort!)).samples;
    expect(sample(workerSamples, "chat_jobs_total", { kind: "outbox sweep", outcome: "failed" })).toBeUndefined();
    // No HTTP tier in the worker: no requests measured.
    expect([...workerSamples.keys()].some((key) => key.startsWith("chat_http_request_duration_seconds_count{"))).toBe(false);
  });
});

describe("request logs", () => {
  const tiers = useTierProcesses({ LOG_LEVEL: "http" });

  /** The process's JSON log lines with this message. */
  function logLines(output: string, message: string): Array<Record<string, unknown>> {
    return output
      .split("\n")
      .filter((line) => line.startsWith("{") && line.includes(`"message":${JSON.stringify(message)}`))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
  const requestLines = (output: string) => logLines(output, "request");

  test("one line per request, with the request id sent back, the user, route, status and duration", async () => {
    const api = await tiers.start("api");
    const owner = await tiers.owner(api);
    const me = await owner.get("/users/me");
    const ownerId = me.body.user_id as number;

    // The client's id is kept and sent back; one that is not a plain token is replaced.
    const given = await owner.raw("get", "/users/me?client=test&api_key=secret-in-query").set("X-Request-Id", "req-abc.123");
    expect(given.headers["x-request-id"]).toBe("req-abc.123");
    const replaced = await owner.raw("get", "/users/me").set("X-Request-Id", "two words");
    expect(replaced.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const sent = await owner.raw("post", "/messages").type("form").send({ type: "stream", to: "general", topic: "logs", content: "logged" }).set("X-Request-Id", "send-1");
    expect(sent.status).toBe(200);
    const anonymous = await fetch(`http://127.0.0.1:${api.port}/api/v1/users/me`, { headers: { "X-Request-Id": "anon-1" } });
    expect(anonymous.status).toBe(401);

    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = requestLines(api.output());
    const byId = (id: string) => lines.filter((line) => line.requestId === id);
    expect(byId("req-abc.123")).toEqual([
      expect.objectContaining({ level: "http", method: "GET", path: "/api/v1/users/me", route: "/api/v1/users/me", status: 200, userId: ownerId, durationMs: expect.any(Number) }),
    ]);
    expect(byId(replaced.headers["x-request-id"] as string)).toHaveLength(1);
    // The hot route's line names its user too.
    expect(byId("send-1")).toEqual([expect.objectContaining({ method: "POST", route: "/api/v1/messages", status: 200, userId: ownerId })]);
    expect(byId("anon-1")).toEqual([expect.objectContaining({ status: 401, route: "unmatched" })]);
    expect(byId("anon-1")[0]).not.toHaveProperty("userId");
    expect(api.output()).not.toContain("secret-in-query");
  });

  test("the request's id follows its changes: the events tier's delivery and the worker's bot call name it", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const api = await tiers.start("api");
      const events = await tiers.start("events");
      const worker = await tiers.start("worker");
      const owner = await tiers.owner(api);
      const bot = await owner.post("/bots", { full_name: "Traced Bot", short_name: "traced", bot_type: 3, payload_url: receiver.url });
      expect(bot.body.result).toBe("success");
      const onEvents = new ApiClient(`http://127.0.0.1:${events.port}`, owner.credentials);
      const queue = await onEvents.post("/register", { event_types: ["message", "user_status"] });
      expect(queue.body.result).toBe("success");

      // A send (the hot route, a grouped write), and a change through Express (one transaction).
      const sent = await owner.raw("post", "/messages").type("form").set("X-Request-Id", "trace-send-1")
        .send({ type: "private", to: JSON.stringify([bot.body.user_id]), content: "hello bot" });
      expect(sent.status).toBe(200);
      const status = await owner.raw("post", "/users/me/status").type("form").set("X-Request-Id", "trace-status-1").send({ status_text: "tracing" });
      expect(status.status).toBe(200);

      const delivered = (id: string) => logLines(events.output(), "change delivered").filter((line) => (line.requestIds as string[] | undefined)?.includes(id));
      await waitFor("the events tier's delivery lines", async () => delivered("trace-send-1").length > 0 && delivered("trace-status-1").length > 0);
      // The registered queue (and the bot's own: none, an outgoing webhook bot registers none) was reached.
      expect(delivered("trace-send-1")).toEqual([expect.objectContaining({ level: "http", queues: 1, batchId: expect.any(String), realmId: expect.any(Number) })]);
      expect(delivered("trace-status-1")).toEqual([expect.objectContaining({ queues: 1 })]);

      await receiver.waitForRequests(1, 15_000);
      const calls = () => logLines(worker.output(), "service bot call").filter((line) => (line.requestIds as string[] | undefined)?.includes("trace-send-1"));
      await waitFor("the worker's bot call line", async () => calls().length > 0);
      expect(calls()).toEqual([expect.objectContaining({ level: "http", outcome: "ok", attempt: 1 })]);
    } finally {
      await receiver.close();
    }
  });
});
