// Outages of Redis and Postgres, on a redis-server and a Postgres cluster of this file's own (the
// shared services are never stopped), with the server as its own OS process. It proves:
// - Redis paused (SIGSTOP: unreachable, data kept): what needs Redis (/register, GET /events)
//   answers JSON 503 with Retry-After within 2 s; what does not (GET /users/me) succeeds; a send
//   commits and succeeds, and after SIGCONT its event reaches the queue registered before, once.
// - Redis killed, then started again on the same port: the same 503s, a long poll already waiting
//   included; the server recovers by itself
//   (no restart), and the send made meanwhile is published by the outbox sweeper; the process
//   does not spin while it waits.
// - Postgres stopped (fast, then immediate): requests, hot routes and event routes included, answer
//   503 with Retry-After within 2 s, and succeed again once Postgres is back, without a restart.
import { Client } from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { readFileSync } from "node:fs";
import { ApiClient, type ApiResponse } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from "../support/private-services.ts";

jest.setTimeout(120_000);

const OWNER = "owner@example.com";
const MAX_OUTAGE_ANSWER_MS = 2000;

let redis: PrivateRedis | null = null;
let postgres: PrivatePostgres | null = null;
let server: ServerProcess | null = null;
let owner: ApiClient;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  server = await startProcess({
    ROLE: "all",
    PORT: "0",
    BIND_ADDRESS: "127.0.0.1",
    DEV_MODE: "true",
    BOOTSTRAP_OWNER_EMAIL: OWNER,
    BOOTSTRAP_OWNER_PASSWORD: "owner-password",
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: "outage:",
    EVENT_HEARTBEAT_SECONDS: "20",
    OUTBOX_SWEEP_AFTER_SECONDS: "1",
  });
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const key = await new ApiClient(baseUrl, null).post("/dev_fetch_api_key", { username: OWNER });
  owner = new ApiClient(baseUrl, { email: OWNER, apiKey: key.body.api_key });
});

afterAll(async () => {
  // Each step runs whatever the others did: a failed test must not leave a process or a directory.
  await server?.stop().catch(() => undefined);
  await redis?.stop().catch(() => undefined);
  try {
    postgres?.remove();
  } catch {
    // already stopped
  }
});

async function timed(request: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; ms: number }> {
  const started = Date.now();
  const res = await request();
  return { res, ms: Date.now() - started };
}

/** Every latency measured, printed at the end for the record. */
const measured: string[] = [];
afterAll(() => {
  if (measured.length > 0) process.stdout.write(`outage answers:\n  ${measured.join("\n  ")}\n`);
});

/** The request answers a JSON 503 with Retry-After, quickly. */
async function expectUnavailable(label: string, request: () => Promise<ApiResponse>): Promise<void> {
  const { res, ms } = await timed(request);
  measured.push(`${label}: ${res.status} in ${ms} ms`);
  expect({ label, status: res.status, body: res.body }).toEqual({
    label,
    status: 503,
    body: { result: "error", msg: "Service temporarily unavailable", code: "SERVICE_UNAVAILABLE" },
  });
  expect(res.headers["retry-after"]).toBe("5");
  expect(ms).toBeLessThan(MAX_OUTAGE_ANSWER_MS);
}

/** GET /health/ready answers 503 naming `check` as failing, within 2 s. */
async function expectNotReady(label: string, check: "redis" | "database"): Promise<void> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${server!.port}/health/ready`);
  const ms = Date.now() - started;
  measured.push(`${label}: GET /health/ready ${res.status} in ${ms} ms`);
  const body = (await res.json()) as { code: string; checks: Record<string, string> };
  expect({ label, status: res.status, code: body.code, failing: Object.keys(body.checks).filter((name) => body.checks[name] !== "ok") }).toEqual({ label, status: 503, code: "SERVICE_UNAVAILABLE", failing: [check] });
  expect(body.checks[check]).toBe("unreachable");
  expect(ms).toBeLessThan(MAX_OUTAGE_ANSWER_MS);
}

async function ready(): Promise<number> {
  return (await fetch(`http://127.0.0.1:${server!.port}/health/ready`)).status;
}

async function expectSuccess(label: string, request: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const { res, ms } = await timed(request);
  measured.push(`${label}: ${res.status} in ${ms} ms`);
  expect({ label, body: res.body }).toMatchObject({ label, body: { result: "success" } });
  expect(ms).toBeLessThan(MAX_OUTAGE_ANSWER_MS);
  return res;
}

/** Retries until the request succeeds (the server reconnecting by itself); returns how long it took. */
async function untilSuccess(request: () => Promise<ApiResponse>, timeoutMs = 15_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await request();
    if (res.body.result === "success") return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`still failing after ${timeoutMs} ms: ${res.status} ${JSON.stringify(res.body)}`);
    await sleep(200);
  }
}

function send(content: string): Promise<ApiResponse> {
  return owner.post("/messages", { type: "stream", to: "general", topic: "outages", content });
}

/** The fields of an event these tests read. */
interface QueueEvent {
  id: number;
  type: string;
  message?: { content: string };
}

function isMessageWith(event: QueueEvent, content: string): boolean {
  return event.type === "message" && event.message !== undefined && event.message.content.includes(content);
}

/** Polls the queue until an event for a message with this content arrives; every event read. */
async function eventsUntil(queueId: string, content: string, timeoutMs = 15_000): Promise<QueueEvent[]> {
  const started = Date.now();
  const seen: QueueEvent[] = [];
  let lastEventId = -1;
  while (!seen.some((event) => isMessageWith(event, content))) {
    if (Date.now() - started > timeoutMs) throw new Error(`no event for "${content}" within ${timeoutMs} ms; saw ${JSON.stringify(seen)}`);
    const res = await owner.get("/events", { queue_id: queueId, last_event_id: lastEventId, dont_block: true });
    expect(res.body.result).toBe("success");
    for (const event of res.body.events as QueueEvent[]) {
      seen.push(event);
      lastEventId = event.id;
    }
    await sleep(100);
  }
  return seen;
}

async function outboxRows(): Promise<number> {
  const client = new Client({ connectionString: postgres!.url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox")).rows[0].n;
  } finally {
    await client.end();
  }
}

/** CPU seconds the process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

describe("Redis outage", () => {
  test("paused: what needs Redis answers 503 within 2 s, a send commits and succeeds, and its event reaches the queue after SIGCONT, once", async () => {
    const register = await owner.post("/register", { event_types: ["message"] });
    expect(register.body.result).toBe("success");
    const queueId = register.body.queue_id as string;

    expect(await ready()).toBe(200);
    redis!.pause();
    try {
      await expectNotReady("Redis paused", "redis");
      await expectSuccess("Redis paused: GET /users/me", () => owner.get("/users/me"));
      await expectUnavailable("Redis paused: POST /register", () => owner.post("/register", { event_types: ["message"] }));
      await expectUnavailable("Redis paused: GET /events", () => owner.get("/events", { queue_id: queueId, last_event_id: -1 }));
      // Committed with its outbox row: success, so that the client does not send it again.
      const sent = await expectSuccess("Redis paused: POST /messages", () => send("sent while Redis was paused"));
      expect(sent.body.id).toEqual(expect.any(Number));
      expect(await outboxRows()).toBeGreaterThan(0);
    } finally {
      redis!.resume();
    }

    const events = await eventsUntil(queueId, "sent while Redis was paused");
    expect(await ready()).toBe(200);
    expect(events.filter((event) => isMessageWith(event, "sent while Redis was paused"))).toHaveLength(1);
    const sweptAfter = Date.now();
    while ((await outboxRows()) > 0) {
      if (Date.now() - sweptAfter > 10_000) throw new Error("the outbox was not emptied");
      await sleep(200);
    }
  });

  test("killed and started again: 503 within 2 s meanwhile, recovery without a restart, and the send made meanwhile published by the outbox sweeper", async () => {
    // A long poll already waiting answers too, not only at its heartbeat (20 s here).
    const before = await owner.post("/register", { event_types: ["message"] });
    const waiting = owner.get("/events", { queue_id: before.body.queue_id, last_event_id: before.body.last_event_id });
    await sleep(300);
    const killedAt = Date.now();
    await redis!.kill();
    const waited = await waiting;
    measured.push(`Redis killed: a waiting GET /events answered ${waited.status} ${Date.now() - killedAt} ms after the kill`);
    expect([waited.status, waited.body.code, waited.headers["retry-after"]]).toEqual([503, "SERVICE_UNAVAILABLE", "5"]);
    expect(Date.now() - killedAt).toBeLessThan(MAX_OUTAGE_ANSWER_MS);

    await expectUnavailable("Redis killed: POST /register", () => owner.post("/register", { event_types: ["message"] }));
    // A well-formed queue id (realm:user:seconds:random): one that is not is refused without asking Redis.
    await expectUnavailable("Redis killed: GET /events", () => owner.get("/events", { queue_id: "1:1:1700000000:0123456789abcdef", last_event_id: -1 }));
    await expectSuccess("Redis killed: POST /messages", () => send("sent while Redis was down"));
    expect(await outboxRows()).toBeGreaterThan(0);

    // Reconnect loops, the sweeper and the fan-out retry about once a second: the process idles.
    const cpuBefore = cpuSeconds(server!.child.pid!);
    await sleep(2000);
    const cpuUsed = cpuSeconds(server!.child.pid!) - cpuBefore;
    measured.push(`Redis killed: ${cpuUsed.toFixed(2)} CPU seconds in 2 s of outage`);
    expect(cpuUsed).toBeLessThan(0.5);

    await redis!.start();
    const recoveredMs = await untilSuccess(() => owner.post("/register", { event_types: ["message"] }));
    measured.push(`Redis back: /register succeeded again after ${recoveredMs} ms`);

    // A queue registered after the restart is fed again (the fan-out recreated its consumer group),
    // and a waiting long poll is woken (the queue-ready subscription is back).
    const register = await owner.post("/register", { event_types: ["message"] });
    expect(register.body.result).toBe("success");
    const queueId = register.body.queue_id as string;
    let lastEventId = register.body.last_event_id as number;
    let arrived = false;
    const started = Date.now();
    await send("sent after Redis came back");
    while (!arrived) {
      const polled = await owner.get("/events", { queue_id: queueId, last_event_id: lastEventId });
      expect(polled.body.result).toBe("success");
      for (const event of polled.body.events as QueueEvent[]) {
        lastEventId = event.id;
        if (isMessageWith(event, "sent after Redis came back")) arrived = true;
      }
    }
    measured.push(`Redis back: a new send reached a long poll in ${Date.now() - started} ms`);

    // The row committed during the outage was published by the sweeper (its publisher had failed).
    while ((await outboxRows()) > 0) {
      if (Date.now() - started > 10_000) throw new Error("the sweeper did not publish the outage's outbox row");
      await sleep(200);
    }
    expect(server!.output()).toContain("outbox sweeper published left-behind events");
    expect(server!.child.exitCode).toBeNull();
  });
});

describe("Postgres outage", () => {
  test.each(["fast", "immediate"] as const)("stopped (-m %s): requests answer 503 within 2 s, and succeed again once it is back, without a restart", async (mode) => {
    const register = await owner.post("/register", { event_types: ["message"] });
    expect(register.body.result).toBe("success");
    const queueId = register.body.queue_id as string;

    postgres!.stop(mode);
    try {
      await expectNotReady(`Postgres stopped (${mode})`, "database");
      await expectUnavailable(`Postgres stopped (${mode}): GET /users/me`, () => owner.get("/users/me"));
      await expectUnavailable(`Postgres stopped (${mode}): POST /messages`, () => send("never committed"));
      await expectUnavailable(`Postgres stopped (${mode}): GET /messages`, () => owner.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [["stream", "general"]] }));
      await expectUnavailable(`Postgres stopped (${mode}): POST /register`, () => owner.post("/register", { event_types: ["message"] }));
      await expectUnavailable(`Postgres stopped (${mode}): GET /events`, () => owner.get("/events", { queue_id: queueId, last_event_id: -1, dont_block: true }));
    } finally {
      postgres!.start();
    }

    const recoveredMs = await untilSuccess(() => owner.get("/users/me"));
    measured.push(`Postgres back (${mode}): GET /users/me succeeded again after ${recoveredMs} ms`);
    expect(await ready()).toBe(200);
    await expectSuccess(`Postgres back (${mode}): POST /messages`, () => send(`sent after Postgres came back (${mode})`));
    await eventsUntil(queueId, `sent after Postgres came back (${mode})`);
    const page = await owner.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [["stream", "general"]] });
    expect(page.body.messages.map((m: { content: string }) => m.content)).not.toContain("<p>never committed</p>");
    expect(server!.child.exitCode).toBeNull();
  });
});
