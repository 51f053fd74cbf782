// Health on real processes: /health/live and /health/ready on the HTTP port of the API and events
// tiers and on METRICS_PORT (the worker's only HTTP), ready only while the database answers with
// every migration applied, Redis answers and the process is not draining. (Outages of Redis and
// Postgres themselves: outages.test.ts.)
import { Client } from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { startProcess } from "../support/processes.ts";
import { useTierProcesses } from "../support/tier-processes.ts";

jest.setTimeout(120_000);

async function getJson(port: number, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const ALL_OK = { database: "ok", redis: "ok", shutdown: "ok" };

describe("health of tier processes", () => {
  const tiers = useTierProcesses();

  test("every tier answers live and ready, on its HTTP port and on METRICS_PORT; the worker on METRICS_PORT alone", async () => {
    const api = await tiers.start("api", { METRICS_PORT: "0" });
    const [events, worker] = await Promise.all([tiers.start("events", { METRICS_PORT: "0" }), tiers.start("worker", { METRICS_PORT: "0" })]);
    expect(worker.port).toBeNull();
    const ports = [api.port!, api.metricsPort!, events.port!, events.metricsPort!, worker.metricsPort!];
    expect(new Set(ports).size).toBe(5);
    for (const port of ports) {
      expect(await getJson(port, "/health/live")).toEqual({ status: 200, body: { result: "success", msg: "", status: "ok" } });
      expect(await getJson(port, "/health/ready")).toEqual({ status: 200, body: { result: "success", msg: "", status: "ready", checks: ALL_OK } });
    }
    // The ops port serves health only.
    expect(await getJson(api.metricsPort!, "/api/v1/users/me")).toEqual({ status: 404, body: { result: "error", msg: "Endpoint not found", code: "BAD_REQUEST" } });
  });

  test("not ready while a migration this code has is missing from the database, and ready again once it is there", async () => {
    const worker = await tiers.start("worker", { METRICS_PORT: "0" });
    const db = new Client({ connectionString: tiers.databaseUrl() });
    await db.connect();
    try {
      const [last] = (await db.query<{ id: string }>(`SELECT id FROM "_prisma_migrations" ORDER BY migration_name DESC LIMIT 1`)).rows;
      // As if restored from a backup taken before the newest migration.
      await db.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = $1`, [last.id]);
      const notReady = await getJson(worker.metricsPort!, "/health/ready");
      expect(notReady).toEqual({
        status: 503,
        body: { result: "error", msg: "Not ready: database 1 migrations not applied", code: "SERVICE_UNAVAILABLE", checks: { ...ALL_OK, database: "1 migrations not applied" } },
      });
      await db.query(`UPDATE "_prisma_migrations" SET rolled_back_at = NULL WHERE id = $1`, [last.id]);
      expect((await getJson(worker.metricsPort!, "/health/ready")).status).toBe(200);
    } finally {
      await db.end();
    }
  });

  test("not ready as soon as a graceful shutdown begins, while it still answers", async () => {
    const api = await tiers.start("api", { METRICS_PORT: "0", SHUTDOWN_DELAY_SECONDS: "3" });
    const stopped = api.stop();
    await sleep(300);
    for (const port of [api.port!, api.metricsPort!]) {
      const res = await getJson(port, "/health/ready");
      expect(res).toEqual({ status: 503, body: expect.objectContaining({ msg: "Not ready: shutdown draining", checks: { ...ALL_OK, shutdown: "draining" } }) });
      expect((await getJson(port, "/health/live")).status).toBe(200);
    }
    await stopped;
    expect(api.child.exitCode).toBe(0);
  });
});

test("the embedded server (no Redis) checks its database only", async () => {
  const server = await startProcess({ ROLE: "all", PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1", DATA_DIR: "memory://", DEV_MODE: "true" });
  try {
    for (const port of [server.port!, server.metricsPort!]) {
      expect(await getJson(port, "/health/ready")).toEqual({ status: 200, body: { result: "success", msg: "", status: "ready", checks: { database: "ok", shutdown: "ok" } } });
    }
  } finally {
    await server.stop();
  }
});

/** The local address each of `ports` listens on, as the kernel has it (`ss`): what a remote host could reach. */
async function listenAddresses(ports: number[]): Promise<Map<number, string>> {
  const { execFileSync } = await import("node:child_process");
  const found = new Map<number, string>();
  for (const line of execFileSync("ss", ["-ltnH"], { encoding: "utf8" }).split("\n")) {
    const local = line.trim().split(/\s+/)[3];
    if (!local) continue;
    const at = local.lastIndexOf(":");
    const port = Number(local.slice(at + 1));
    if (ports.includes(port)) found.set(port, local.slice(0, at));
  }
  return found;
}

describe("the operators' port and DEV_MODE stay off the network unless told", () => {
  test("METRICS_PORT listens on loopback while the API listens on BIND_ADDRESS; METRICS_BIND_ADDRESS opens it", async () => {
    const base = { ROLE: "all", PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "0.0.0.0", DATA_DIR: "memory://" };
    const closed = await startProcess(base);
    try {
      const addresses = await listenAddresses([closed.port!, closed.metricsPort!]);
      expect(addresses.get(closed.metricsPort!)).toBe("127.0.0.1");
      expect(addresses.get(closed.port!)).toMatch(/^(0\.0\.0\.0|\*|\[::\])$/);
      expect((await getJson(closed.metricsPort!, "/health/live")).status).toBe(200);
    } finally {
      await closed.stop();
    }
    const open = await startProcess({ ...base, METRICS_BIND_ADDRESS: "0.0.0.0" });
    try {
      expect((await listenAddresses([open.metricsPort!])).get(open.metricsPort!)).toMatch(/^(0\.0\.0\.0|\*)$/);
    } finally {
      await open.stop();
    }
  });

  test("DEV_MODE on a non-loopback address stops at start with what to do; DEV_MODE_ALLOW_REMOTE lets it run", async () => {
    const env = { ROLE: "all", PORT: "0", BIND_ADDRESS: "0.0.0.0", DATA_DIR: "memory://", DEV_MODE: "true" };
    await expect(startProcess(env)).rejects.toThrow(/exited with 2 before it was ready[\s\S]*DEV_MODE_ALLOW_REMOTE=true/);
    const allowed = await startProcess({ ...env, DEV_MODE_ALLOW_REMOTE: "true" });
    try {
      const res = await fetch(`http://127.0.0.1:${allowed.port}/api/v1/dev_fetch_api_key`, { method: "POST", body: new URLSearchParams({ username: "owner@example.com" }) });
      expect(res.status).toBe(200);
    } finally {
      await allowed.stop();
    }
  });
});
