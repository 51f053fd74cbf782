// An events node stopped again and again while polls are held and messages flow: every shutdown
// is clean (exit 0, no "[ioredis] Unhandled error event", no error logged), however the polls,
// the fan-out and the Redis connections are caught by it.
import { setTimeout as sleep } from "node:timers/promises";
import { ApiClient } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "../support/services.ts";

jest.setTimeout(240_000);

const CYCLES = 8;
const POLLS = 50;

describe("an events node shut down repeatedly under load", () => {
  let database: TestDatabase;
  let redis: TestRedisPrefix;
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisPrefix();
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await database.drop();
    await redis.clear();
  });

  test(`${CYCLES} shutdowns, each clean`, async () => {
    const env = {
      BOOTSTRAP_OWNER_EMAIL: "owner@example.com",
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
      DEV_MODE: "true",
      BIND_ADDRESS: "127.0.0.1",
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redis.prefix,
      PORT: "0",
      EVENT_HEARTBEAT_SECONDS: "60",
      EVENT_QUEUES_PER_USER: String(POLLS),
    };
    const api = await startProcess({ ...env, ROLE: "api" });
    processes.push(api);
    const apiUrl = `http://127.0.0.1:${api.port}`;
    const owner = new ApiClient(apiUrl, { email: "owner@example.com", apiKey: (await new ApiClient(apiUrl, null).post("/dev_fetch_api_key", { username: "owner@example.com" })).body.api_key });
    const outputs: string[] = [];
    let sending = true;
    let sent = 0;
    const sender = (async () => {
      while (sending) {
        await owner.post("/messages", { type: "stream", to: "general", topic: "cycles", content: `message ${sent++}` });
        await sleep(20);
      }
    })();
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const node = await startProcess({ ...env, ROLE: "events" });
        processes.push(node);
        const client = new ApiClient(`http://127.0.0.1:${node.port}`, owner.credentials);
        const queues = await Promise.all(Array.from({ length: POLLS }, () => client.post("/register", { event_types: ["message"] })));
        // Polls held, woken and coming back while the node stops, at a different moment each cycle.
        let polling = true;
        const pollers = queues.map(async (registered) => {
          let lastEventId = registered.body.last_event_id as number;
          while (polling) {
            const res = await client.get("/events", { queue_id: registered.body.queue_id, last_event_id: lastEventId }).catch(() => null);
            if (res === null || res.body.result !== "success") return;
            for (const event of res.body.events as Array<{ id: number }>) lastEventId = Math.max(lastEventId, event.id);
          }
        });
        await sleep(300 + cycle * 70);
        await node.stop();
        polling = false;
        await Promise.all(pollers);
        outputs.push(node.output());
        expect({ cycle, exitCode: node.child.exitCode }).toEqual({ cycle, exitCode: 0 });
      }
    } finally {
      sending = false;
      await sender;
    }
    expect(sent).toBeGreaterThan(CYCLES);
    const unclean = outputs.map((output, cycle) => ({ cycle, lines: output.split("\n").filter((line) => line.includes("Unhandled error event") || line.includes('"level":"error"')) }));
    expect(unclean.filter(({ lines }) => lines.length > 0)).toEqual([]);
  });
});
