// The three tiers as three OS processes on real Postgres and Redis, and the same flow in the
// embedded single process: a message sent through the API reaches a long poll on the event tier.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ApiClient } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "../support/services.ts";

jest.setTimeout(120_000);

const BOOTSTRAP = { BOOTSTRAP_OWNER_EMAIL: "owner@example.com", BOOTSTRAP_OWNER_PASSWORD: "owner-password", DEV_MODE: "true", BIND_ADDRESS: "127.0.0.1" };

async function login(baseUrl: string, email: string): Promise<ApiClient> {
  const res = await new ApiClient(baseUrl, null).post("/dev_fetch_api_key", { username: email });
  if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
  return new ApiClient(baseUrl, { email, apiKey: res.body.api_key });
}

/** Registers as `reader` on the event tier, long-polls, sends as `sender` through the API tier. */
/**
 * The held poll is answered when the message is sent, not at its heartbeat (EVENT_HEARTBEAT_SECONDS,
 * 20 s here): the bound tells the two apart with room for a loaded CI machine and the first send on
 * cold processes (one took 1.4 s). How fast a delivery is, is `npm run bench -- events`'s to say.
 */
const PUSHED_WITHIN_MS = 5_000;

async function sendAndReceive(sender: ApiClient, readerOnEvents: ApiClient, content: string): Promise<{ elapsedMs: number; events: any[]; queueId: string }> {
  const register = await readerOnEvents.post("/register", { event_types: ["message"] });
  expect(register.body.result).toBe("success");
  const queueId = register.body.queue_id;
  const poll = readerOnEvents.get("/events", { queue_id: queueId, last_event_id: register.body.last_event_id });
  await new Promise((r) => setTimeout(r, 200)); // the poll is waiting
  const started = Date.now();
  const sent = await sender.post("/messages", { type: "stream", to: "general", topic: "tiers", content });
  expect(sent.body.result).toBe("success");
  const res = await poll;
  return { elapsedMs: Date.now() - started, events: res.body.events, queueId };
}

describe("api, events and worker as separate processes on Postgres and Redis", () => {
  let database: TestDatabase;
  let redis: TestRedisPrefix;
  const processes: ServerProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisPrefix();
    env = { ...BOOTSTRAP, DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redis.prefix, PORT: "0", EVENT_HEARTBEAT_SECONDS: "20" };
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await database.drop();
    await redis.clear();
  });

  test("a stream message sent through the API process reaches a poll held on the events process at once, not at its heartbeat", async () => {
    const [api, events, worker] = await Promise.all([
      startProcess({ ...env, ROLE: "api" }),
      startProcess({ ...env, ROLE: "events" }),
      startProcess({ ...env, ROLE: "worker" }),
    ]);
    processes.push(api, events, worker);
    expect(worker.port).toBeNull();
    const apiUrl = `http://127.0.0.1:${api.port}`;
    const eventsUrl = `http://127.0.0.1:${events.port}`;

    // The API tier does not serve the event endpoints, and the event tier serves only them.
    const owner = await login(apiUrl, "owner@example.com");
    expect((await owner.post("/register")).body).toMatchObject({ result: "error", msg: "Endpoint not found" });
    await owner.post("/users", { email: "reader@example.com", password: "reader-pass", full_name: "Rita Reader", short_name: "rita" });
    const reader = await login(apiUrl, "reader@example.com");
    const readerOnEvents = new ApiClient(eventsUrl, reader.credentials);
    expect((await readerOnEvents.get("/users/me")).body.msg).toBe("Endpoint not found");

    const { elapsedMs, events: received } = await sendAndReceive(owner, readerOnEvents, "across three processes");
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ type: "message", id: 0, message: { content: "across three processes", sender_email: "owner@example.com" } });
    expect(elapsedMs).toBeLessThan(PUSHED_WITHIN_MS);
  });

  test("an events node that crashes loses no event and no queue: another node serves the same queue", async () => {
    const api = processes[0];
    const apiUrl = `http://127.0.0.1:${api.port}`;
    const owner = await login(apiUrl, "owner@example.com");
    const reader = await login(apiUrl, "reader@example.com");
    const first = processes[1];
    const onFirst = new ApiClient(`http://127.0.0.1:${first.port}`, reader.credentials);
    const queueId = (await onFirst.post("/register", { event_types: ["message"] })).body.queue_id;

    await first.kill();
    processes.splice(1, 1);
    // Sent while no event node is running: the change waits in the Redis stream.
    const sent = await owner.post("/messages", { type: "stream", to: "general", topic: "tiers", content: "sent during the outage" });
    expect(sent.body.result).toBe("success");

    const second = await startProcess({ ...env, ROLE: "events" });
    processes.push(second);
    const onSecond = new ApiClient(`http://127.0.0.1:${second.port}`, reader.credentials);
    const res = await onSecond.get("/events", { queue_id: queueId, last_event_id: -1 });
    expect(res.body.result).toBe("success");
    expect(res.body.events.map((e: any) => e.message?.content)).toEqual(["sent during the outage"]);
  });
});

describe("the embedded single process (PGlite, in-process bus)", () => {
  let dataDir: string;
  let server: ServerProcess | null = null;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "chat-embedded-"));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("the same flow passes, and data is kept across restarts", async () => {
    // No BOOTSTRAP_OWNER_PASSWORD: one is generated and printed, once.
    const { BOOTSTRAP_OWNER_PASSWORD: _unused, ...bootstrap } = BOOTSTRAP;
    const env = { ...bootstrap, ROLE: "all", PORT: "0", DATA_DIR: dataDir, EVENT_HEARTBEAT_SECONDS: "20" };
    server = await startProcess(env);
    let url = `http://127.0.0.1:${server.port}`;
    const printed = /Password:\s+(\S+)/.exec(server.output());
    expect(printed).not.toBeNull();
    const byPassword = await new ApiClient(url, null).post("/fetch_api_key", { username: "owner@example.com", password: printed![1] });
    expect(byPassword.body.result).toBe("success");
    const owner = await login(url, "owner@example.com");
    await owner.post("/users", { email: "reader@example.com", password: "reader-pass", full_name: "Rita Reader", short_name: "rita" });
    const reader = await login(url, "reader@example.com");

    const { elapsedMs, events } = await sendAndReceive(owner, reader, "inside one process");
    expect(events.map((e) => e.message?.content)).toEqual(["inside one process"]);
    expect(elapsedMs).toBeLessThan(PUSHED_WITHIN_MS);

    await server.stop();
    server = await startProcess(env);
    url = `http://127.0.0.1:${server.port}`;
    expect(server.output()).not.toMatch(/Password:/);
    const again = new ApiClient(url, reader.credentials);
    const me = await again.get("/users/me");
    expect(me.body).toMatchObject({ result: "success", email: "reader@example.com" });
    expect(me.body.max_message_id).toBeGreaterThan(0);
    // The bootstrap ran once: still one organization with its one owner.
    const users = (await again.get("/users")).body.members.map((u: { email: string }) => u.email);
    expect(users.sort()).toEqual(["owner@example.com", "reader@example.com"]);
  });
});

describe("PROCESSES=2: several server processes share one port (node:cluster)", () => {
  let database: TestDatabase;
  let redis: TestRedisPrefix;
  let server: ServerProcess | null = null;

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const readyPids = (output: string) =>
    output
      .split("\n")
      .filter((line) => line.includes("server process ready"))
      .map((line) => JSON.parse(line).pid as number);

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisPrefix();
  });
  afterAll(async () => {
    await server?.stop();
    await database.drop();
    await redis.clear();
  });

  test("both serve, a process that dies is replaced, and SIGTERM stops them all", async () => {
    server = await startProcess({ ...BOOTSTRAP, ROLE: "all", PROCESSES: "2", DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redis.prefix, PORT: "0", EVENT_HEARTBEAT_SECONDS: "20" });
    const pids = readyPids(server.output());
    expect(new Set(pids).size).toBe(2);
    const url = `http://127.0.0.1:${server.port}`;
    const owner = await login(url, "owner@example.com");
    await owner.post("/users", { email: "reader@example.com", password: "reader-pass", full_name: "Rita Reader", short_name: "rita" });
    const reader = await login(url, "reader@example.com");
    const { events } = await sendAndReceive(owner, reader, "across processes");
    expect(events.map((e) => e.message?.content)).toEqual(["across processes"]);

    process.kill(pids[0], "SIGKILL");
    const deadline = Date.now() + 30_000;
    while (readyPids(server.output()).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const replacement = readyPids(server.output())[2];
    expect(replacement).toBeDefined();
    expect(alive(replacement)).toBe(true);
    // Requests keep succeeding with one process replaced.
    for (let i = 0; i < 6; i++) expect((await reader.get("/users/me")).body.result).toBe("success");

    await server.stop();
    server = null;
    expect(alive(pids[1])).toBe(false);
    expect(alive(replacement)).toBe(false);
  });
});
