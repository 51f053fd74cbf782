// A worker killed with SIGKILL in the middle of an outgoing webhook call loses no job: two worker
// processes on Postgres and Redis; the receiver holds a call, the test finds the worker process
// that made it (by the connection's port) and kills it; the other worker calls again once the
// job's lock lapses, and the bot's reply appears exactly once. Each round a fresh worker replaces
// the killed one. WEBHOOK_KILL_ROUNDS sets the rounds (20 for the run).
import { execFileSync } from "node:child_process";
import { ApiClient } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "../support/services.ts";
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from "../support/webhook-receiver.ts";

const ROUNDS = Number(process.env.WEBHOOK_KILL_ROUNDS ?? 3);
jest.setTimeout(60_000 + ROUNDS * 30_000);

/** The pid of the process whose TCP socket has this local port (the worker that made the call). */
function pidOwningPort(port: number): number {
  const out = execFileSync("ss", ["-tnpH", "state", "established", `( sport = :${port} )`], { encoding: "utf8" });
  const match = /pid=(\d+)/.exec(out);
  if (!match) throw new Error(`no process owns local port ${port}: ${JSON.stringify(out)}`);
  return Number(match[1]);
}

describe("outgoing webhooks survive a worker killed mid-delivery (Postgres, Redis, real processes)", () => {
  let database: TestDatabase;
  let redis: TestRedisPrefix;
  let receiver: WebhookReceiver;
  let workers: ServerProcess[] = [];
  const others: ServerProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisPrefix();
    receiver = await startWebhookReceiver();
    env = {
      DEV_MODE: "true",
      BIND_ADDRESS: "127.0.0.1",
      BOOTSTRAP_OWNER_EMAIL: "owner@example.com",
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redis.prefix,
      PORT: "0",
      // A killed worker's job runs elsewhere within two to four seconds.
      JOB_STALL_SECONDS: "2",
    };
  });
  afterAll(async () => {
    await Promise.all([...workers, ...others].map((p) => p.stop()));
    await receiver?.close();
    await database?.drop();
    await redis?.clear();
  });

  test(`${ROUNDS} rounds: the job outlives the worker that held it, and the reply comes once`, async () => {
    const api = await startProcess({ ...env, ROLE: "api" });
    others.push(api);
    workers = await Promise.all([startProcess({ ...env, ROLE: "worker" }), startProcess({ ...env, ROLE: "worker" })]);
    const baseUrl = `http://127.0.0.1:${api.port}`;
    const key = await new ApiClient(baseUrl, null).post("/dev_fetch_api_key", { username: "owner@example.com" });
    const owner = new ApiClient(baseUrl, { email: "owner@example.com", apiKey: key.body.api_key });
    expect((await owner.post("/users/me/subscriptions", { subscriptions: [{ name: "kill" }] })).body.result).toBe("success");
    const bot = await owner.post("/bots", { full_name: "Survivor Bot", short_name: "survivor", bot_type: 3, payload_url: receiver.url });
    expect(bot.body).toEqual(expect.objectContaining({ result: "success", user_id: expect.any(Number) }));
    const botId = bot.body.user_id as number;

    // The first call of each message hangs (its worker is killed during it); later ones are answered.
    const calls = new Map<string, number>();
    receiver.answer = (request: ReceivedRequest) => {
      const data = String(request.json?.data);
      calls.set(data, (calls.get(data) ?? 0) + 1);
      return calls.get(data) === 1 ? { hang: true } : { json: { content: `survived: ${data}` } };
    };

    for (let round = 0; round < ROUNDS; round++) {
      const content = `@**Survivor Bot** round ${round}`;
      const before = receiver.received.length;
      const sent = await owner.post("/messages", { type: "stream", to: "kill", topic: `round ${round}`, content });
      expect(sent.body.result).toBe("success");
      await receiver.waitForRequests(before + 1, 15_000);
      const held = receiver.received[before];
      expect(held.json?.data).toBe(content);
      const pid = pidOwningPort(held.remotePort);
      const victim = workers.find((w) => w.child.pid === pid);
      expect(victim).toBeDefined();
      await victim!.kill();
      workers = workers.filter((w) => w !== victim);
      // A new worker joins while the survivor takes the job over.
      const replacement = startProcess({ ...env, ROLE: "worker" });

      await receiver.waitForRequests(before + 2, 20_000);
      expect(receiver.received[before + 1].json?.data).toBe(content);
      const narrow = [{ operator: "stream", operand: "kill" }, { operator: "topic", operand: `round ${round}` }];
      const deadline = Date.now() + 10_000;
      let replies: Array<{ content: string }> = [];
      while (Date.now() < deadline) {
        const res = await owner.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow, apply_markdown: false });
        replies = res.body.messages.filter((m: { sender_id: number }) => m.sender_id === botId);
        if (replies.length > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(replies.map((m) => m.content)).toEqual([`survived: ${content}`]);
      workers.push(await replacement);
    }
    // Nothing more arrives later: each message was called at most twice, and replied to once.
    await new Promise((r) => setTimeout(r, 1000));
    expect([...calls.values()].every((n) => n === 2)).toBe(true);
    expect(calls.size).toBe(ROUNDS);
  });
});
