// Scheduled messages are sent by the worker tier at their time, once, whatever happens to the
// worker holding them: real worker processes on Postgres and Redis, killed with SIGKILL. Before
// its time: the delayed job lives in Redis, and a worker started later sends it. While sending:
// the test holds the message's row lock so the worker's delivery transaction waits inside it,
// finds that worker by its database connection and kills it; the other worker takes the job over
// (BullMQ's stalled jobs, or the sweep) and the message arrives exactly once.
import { execFileSync } from "node:child_process";
import { Client } from "pg";
import type { ApiClient } from "../support/client.ts";
import type { ServerProcess } from "../support/processes.ts";
import { useTierProcesses } from "../support/tier-processes.ts";

jest.setTimeout(180_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pid of the process whose TCP socket has this local port. */
function pidOwningPort(port: number): number {
  const out = execFileSync("ss", ["-tnpH", "state", "established", `( sport = :${port} )`], { encoding: "utf8" });
  const match = /pid=(\d+)/.exec(out);
  if (!match) throw new Error(`no process owns local port ${port}: ${JSON.stringify(out)}`);
  return Number(match[1]);
}

async function waitUntil<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function messagesWith(owner: ApiClient, content: string): Promise<Array<Record<string, any>>> {
  const narrow = [{ operator: "stream", operand: "later" }];
  const res = await owner.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow, apply_markdown: false });
  return (res.body.messages as Array<Record<string, any>>).filter((m) => m.content === content);
}

describe("scheduled messages outlive a killed worker (Postgres, Redis, real processes)", () => {
  // A killed worker's job runs elsewhere within two to four seconds.
  const tiers = useTierProcesses({ JOB_STALL_SECONDS: "2" });
  let api: ServerProcess;
  let owner: ApiClient;
  let streamId: number;

  beforeAll(async () => {
    api = await tiers.start("api");
    owner = await tiers.owner(api);
    expect((await owner.post("/users/me/subscriptions", { subscriptions: [{ name: "later" }] })).body.result).toBe("success");
    const streams = (await owner.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
    streamId = streams.find((s) => s.name === "later")!.stream_id;
  });

  async function schedule(content: string, at: number): Promise<number> {
    const res = await owner.post("/scheduled_messages", { type: "stream", to: String(streamId), topic: "kill", content, scheduled_delivery_timestamp: at });
    if (res.body.result !== "success") throw new Error(`scheduling failed: ${JSON.stringify(res.body)}`);
    return res.body.scheduled_message_id as number;
  }

  test("killed before its time: a worker started later sends it, once, on time", async () => {
    const first = await tiers.start("worker");
    const at = Math.ceil(Date.now() / 1000) + 10;
    const content = `before its time ${at}`;
    const id = await schedule(content, at);
    await first.kill();
    // Nobody is there to send it; a new worker comes up before its time.
    const second = await tiers.start("worker");
    const [message] = await waitUntil("the message", async () => {
      const found = await messagesWith(owner, content);
      return found.length > 0 ? found : null;
    });
    expect(message.timestamp).toBeGreaterThanOrEqual(at);
    // Sent by its delayed job (at its time), not the sweep (five seconds late).
    expect(message.timestamp).toBeLessThan(at + 5);
    expect(second.output()).toContain("sent a scheduled message");
    await sleep(7000);
    expect(await messagesWith(owner, content)).toHaveLength(1);
    expect((await owner.get("/scheduled_messages")).body.scheduled_messages.map((m: { scheduled_message_id: number }) => m.scheduled_message_id)).not.toContain(id);
    await second.kill();
  });

  test("killed while sending: the other worker sends it, exactly once", async () => {
    const workers = [await tiers.start("worker"), await tiers.start("worker")];
    const at = Math.ceil(Date.now() / 1000) + 3;
    const content = `while sending ${at}`;
    const id = await schedule(content, at);
    const db = new Client({ connectionString: tiers.databaseUrl() });
    await db.connect();
    try {
      // Hold the row: at its time the worker's delivery transaction waits inside, on this lock.
      await db.query("BEGIN");
      await db.query("SELECT id FROM scheduled_message WHERE id = $1 FOR UPDATE", [id]);
      const waiting = await waitUntil("a worker waiting on the row", async () => {
        // pg_stat_activity is read once a transaction: a fresh look each time, outside the lock's.
        await db.query("SELECT pg_stat_clear_snapshot()");
        const res = await db.query<{ client_port: number }>(
          "SELECT client_port FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%scheduled_message%' AND datname = current_database()",
        );
        return res.rows[0];
      }, 20_000);
      const pid = pidOwningPort(waiting.client_port);
      const victim = workers.find((w) => w.child.pid === pid);
      expect(victim).toBeDefined();
      await victim!.kill();
      await db.query("COMMIT");
    } finally {
      await db.end();
    }
    const survivor = workers.find((w) => w.child.exitCode === null && w.child.signalCode === null)!;
    await waitUntil("the message", async () => (await messagesWith(owner, content)).length > 0);
    // Whatever else runs later (the job's retry, the sweeps) sends nothing more.
    await sleep(8000);
    expect(await messagesWith(owner, content)).toHaveLength(1);
    expect(survivor.output()).toMatch(/sent a scheduled message|the sweep handled a scheduled message/);
    const check = new Client({ connectionString: tiers.databaseUrl() });
    await check.connect();
    try {
      const row = await check.query("SELECT delivered, failed FROM scheduled_message WHERE id = $1", [id]);
      expect(row.rows[0]).toEqual({ delivered: true, failed: false });
    } finally {
      await check.end();
    }
  });
});
