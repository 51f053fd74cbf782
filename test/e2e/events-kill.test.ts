// Two events processes, 200 long-polling clients and a sender, on real Postgres and Redis: one
// events process is SIGKILLed mid-stream. Its clients poll the other node with the same queue and
// last_event_id; the survivor takes the dead node's shards over once their leases lapse, handling
// what it left pending first. Every client receives every message exactly once, in order, and
// none registers again.
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { ApiClient } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { asksToRetry, basicAuth, rawPoll, takeEvents, type PollAnswer, type RawPoller } from "../support/raw-poll.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "../support/services.ts";

jest.setTimeout(240_000);

const USERS = 4;
const QUEUES_PER_USER = 50;
const MESSAGES = 40;
const KILL_AFTER_MESSAGE = 15;

interface Poller extends RawPoller {
  node: 0 | 1;
  /** Connection errors met (the killed node's), each followed by a poll of the other node. */
  switched: number;
}

describe("an events process killed under load", () => {
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

  test("every client gets every message once, in order, without registering again", async () => {
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
      EVENT_QUEUES_PER_USER: String(QUEUES_PER_USER),
    };
    const api = await startProcess({ ...env, ROLE: "api" });
    processes.push(api);
    const nodes = await Promise.all([startProcess({ ...env, ROLE: "events" }), startProcess({ ...env, ROLE: "events" })]);
    processes.push(...nodes);
    const ports = nodes.map((node) => node.port!);
    const apiUrl = `http://127.0.0.1:${api.port}`;
    const owner = new ApiClient(apiUrl, { email: "owner@example.com", apiKey: (await new ApiClient(apiUrl, null).post("/dev_fetch_api_key", { username: "owner@example.com" })).body.api_key });

    // 200 queues, half of them polled on each node.
    const pollers: Poller[] = [];
    for (let u = 0; u < USERS; u++) {
      const email = `killed${u}@example.com`;
      expect((await owner.post("/users", { email, password: "kill-password", full_name: `Killed ${u}`, short_name: `k${u}` })).body.result).toBe("success");
      const apiKey = (await new ApiClient(apiUrl, null).post("/dev_fetch_api_key", { username: email })).body.api_key as string;
      const client = new ApiClient(`http://127.0.0.1:${ports[u % 2]}`, { email, apiKey });
      const registered = await Promise.all(Array.from({ length: QUEUES_PER_USER }, () => client.post("/register", { event_types: ["message"] })));
      for (const [i, res] of registered.entries()) {
        expect(res.body.result).toBe("success");
        pollers.push({ auth: basicAuth(email, apiKey), queueId: res.body.queue_id, lastEventId: res.body.last_event_id, received: [], node: (i % 2) as 0 | 1, switched: 0 });
      }
    }

    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const failures: string[] = [];
    let retried = 0;
    let stopping = false;
    const loops = pollers.map(async (poller) => {
      while (!stopping) {
        let answer: PollAnswer;
        try {
          answer = await rawPoll(agent, ports[poller.node], poller);
        } catch (error) {
          // The killed node: its connections reset, then refuse. The client tries the other node.
          if (poller.node === 0 && poller.switched === 0) {
            poller.node = 1;
            poller.switched++;
            continue;
          }
          failures.push(`${poller.queueId} on node ${poller.node}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
          return;
        }
        if (asksToRetry(answer)) {
          retried++;
          await sleep(200);
          continue;
        }
        if (answer.status !== 200 || answer.body.result !== "success") {
          failures.push(`${poller.queueId}: ${answer.status} ${JSON.stringify(answer.body)}`);
          return;
        }
        takeEvents(poller, answer);
      }
    });
    await sleep(1500);

    const sent: number[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const res = await owner.post("/messages", { type: "stream", to: "general", topic: "kill", content: `message ${i}` });
      expect(res.body.result).toBe("success");
      sent.push(res.body.id);
      if (i === KILL_AFTER_MESSAGE) await nodes[0].kill();
      await sleep(100);
    }
    const deadline = Date.now() + 60_000;
    while (pollers.some((poller) => poller.received.length < sent.length) && failures.length === 0 && Date.now() < deadline) await sleep(200);
    stopping = true;
    await owner.post("/messages", { type: "stream", to: "general", topic: "kill", content: "the end" });
    await Promise.all(loops);
    agent.destroy();

    expect(failures.slice(0, 5)).toEqual([]);
    // Every client of the killed node moved, with its queue: nobody registered again.
    expect(pollers.filter((poller) => poller.node === 0)).toEqual([]);
    const wrong = pollers.filter((poller) => JSON.stringify(poller.received.filter((id) => sent.includes(id))) !== JSON.stringify(sent));
    expect(wrong.slice(0, 3).map((poller) => ({ queue: poller.queueId, received: poller.received }))).toEqual([]);
    process.stdout.write(`kill: ${pollers.filter((p) => p.switched > 0).length} clients moved; all ${pollers.length} got ${sent.length} messages once, in order; ${retried} polls asked to retry (503)\n`);
  });
});
