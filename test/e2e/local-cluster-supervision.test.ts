// `npm run cluster` as an operator runs it, on a machine whose Postgres has no database for it yet:
// the real command (cluster-cli.ts) with its nginx, API, events and worker processes. It creates
// its database, records its settings for `npm run cli` while it runs, serves metrics on the ports it
// prints, starts again a process killed with SIGKILL (nginx included) on the same port, keeps its
// logs after a stop, and restarts nothing once stopped. Around it, the pieces on their own: the
// database check against the shared Postgres, the state file's liveness, the choice of entry.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureDatabase, quoteIdentifier } from "../../apps/server/src/cluster-database.ts";
import { clusterSettingsForCli, clusterStatePath, lastClusterStatePath, writeClusterState, type ClusterState } from "../../apps/server/src/cluster-state.ts";
import { processStartTime } from "../../apps/server/src/process-identity.ts";
import { freePort, resolveServerEntry, restartDelay, TYPESCRIPT_NODE_ARGS } from "../../apps/server/src/local-cluster.ts";
import { admin, createRedisPrefix, POSTGRES_ADMIN_URL, REDIS_URL, uniqueName, type TestRedisPrefix } from "../support/services.ts";

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, "../..");
const CLUSTER_CLI = path.join(ROOT, "apps/server/src/cluster-cli.ts");


function urlFor(database: string, user?: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${encodeURIComponent(database)}`;
  if (user !== undefined) url.username = user;
  return url.toString();
}

async function databaseExists(name: string): Promise<boolean> {
  return admin(async (c) => (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1);
}

/** A GET outside the test's checked fetch: nginx's 502 pages are not the API document's answers. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 5000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (error) => resolve({ status: 0, body: error.message }));
  });
}

async function until<T>(what: string, check: () => T | null | undefined | Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the cluster's database", () => {
  test("a missing database is created, its name quoted as written; found the next time", async () => {
    const name = `${uniqueName("Chat cluster")} "quoted"`;
    try {
      expect(await databaseExists(name)).toBe(false);
      await expect(ensureDatabase(urlFor(name))).resolves.toBe("created");
      expect(await databaseExists(name)).toBe(true);
      await expect(ensureDatabase(urlFor(name))).resolves.toBe("exists");
    } finally {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`));
    }
  });

  test("a server that cannot be reached is named in the message", async () => {
    const port = await freePort();
    await expect(ensureDatabase(`postgres://postgres@127.0.0.1:${port}/chat`)).rejects.toThrow(`cannot reach Postgres at 127.0.0.1:${port}`);
  });

  test("a user who may not create databases is told what to run, and nothing is created", async () => {
    const role = uniqueName("nocreatedb");
    const name = uniqueName("chat_nocreate");
    await admin((c) => c.query(`CREATE ROLE ${quoteIdentifier(role)} LOGIN NOCREATEDB`));
    try {
      const attempt = ensureDatabase(urlFor(name, role));
      await expect(attempt).rejects.toThrow(`the database "${name}" does not exist, and the user "${role}" may not create databases`);
      await expect(attempt).rejects.toThrow(`CREATE DATABASE "${name}" OWNER "${role}"`);
      expect(await databaseExists(name)).toBe(false);
    } finally {
      await admin((c) => c.query(`DROP ROLE IF EXISTS ${quoteIdentifier(role)}`));
    }
  });
});

describe("the state file and the entry", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "cluster-state-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const stateOf = (pid: number, pidStartTime: string | null): ClusterState => ({
    version: 1,
    pid,
    pidStartTime,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    url: "http://127.0.0.1:9991",
    logsDir: dir,
    settings: { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/chat", REDIS_URL: "redis://127.0.0.1:6379", EXTERNAL_HOST: "localhost:9991" },
    processes: [],
  });

  test("settings for the CLI only while the supervisor lives; with includeStopped, the last recorded", async () => {
    expect(clusterSettingsForCli(dir)).toBeNull();
    expect(clusterSettingsForCli(dir, { includeStopped: true })).toBeNull();
    const supervisor = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      await until("the stand-in supervisor", () => processStartTime(supervisor.pid!));
      const state = stateOf(supervisor.pid!, processStartTime(supervisor.pid!));
      writeClusterState(dir, state);
      expect(statSync(clusterStatePath(dir)).mode & 0o777).toBe(0o600);
      expect(clusterSettingsForCli(dir)).toEqual(state.settings);
      // Its pid reused by another process: not the supervisor.
      writeClusterState(dir, { ...state, pidStartTime: "1" });
      expect(clusterSettingsForCli(dir)).toBeNull();
      writeClusterState(dir, state);
    } finally {
      supervisor.kill("SIGKILL");
      await new Promise((resolve) => supervisor.once("exit", resolve));
    }
    // Killed without a stop: its state.json stays, but names a dead pid.
    expect(existsSync(clusterStatePath(dir))).toBe(true);
    expect(clusterSettingsForCli(dir)).toBeNull();
    expect(clusterSettingsForCli(dir, { includeStopped: true })).toEqual(stateOf(0, null).settings);
  });

  test("the bundle runs when it is newer than every source, else the TypeScript entry", () => {
    const bundle = path.join(dir, "dist/main.cjs");
    const sources = path.join(dir, "src");
    mkdirSync(path.join(sources, "deep"), { recursive: true });
    writeFileSync(path.join(sources, "deep/a.ts"), "");
    expect(resolveServerEntry("auto", bundle, [sources]).kind).toBe("typescript");
    expect(() => resolveServerEntry("bundle", bundle, [sources])).toThrow("npm run build");
    mkdirSync(path.dirname(bundle));
    writeFileSync(bundle, "");
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(sources, "deep/a.ts"), past, past);
    // Run as ./teamchat and the image run it.
    expect(resolveServerEntry("auto", bundle, [sources])).toMatchObject({ kind: "bundle", args: ["--max-semi-space-size=4", bundle] });
    expect(resolveServerEntry("typescript", bundle, [sources]).kind).toBe("typescript");
    writeFileSync(path.join(sources, "deep/a.ts"), "// edited after the build");
    const future = new Date(Date.now() + 60_000);
    utimesSync(path.join(sources, "deep/a.ts"), future, future);
    expect(resolveServerEntry("auto", bundle, [sources])).toMatchObject({ kind: "typescript", reason: expect.stringContaining("older than the sources") });
  });

  test("restarts back off: 1 s doubling to 30 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map((failures) => restartDelay(failures))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
});

describe("npm run cluster", () => {
  const databaseName = uniqueName("chat_cluster");
  let redis: TestRedisPrefix;
  let dataDir: string;
  let cli: ChildProcess;
  let stdout = "";
  let port: number;
  let exited: Promise<number | null>;
  const state = () => JSON.parse(readFileSync(clusterStatePath(dataDir), "utf8")) as ClusterState;
  const member = (name: string) => state().processes.find((p) => p.name === name)!;
  const logs = () => path.join(dataDir, "cluster/logs");
  const env = () => ({
    ...process.env,
    DATABASE_URL: urlFor(databaseName),
    REDIS_URL,
    REDIS_PREFIX: redis.prefix,
    DATA_DIR: dataDir,
    // Children inherit jest's NODE_ENV=test, whose log level hides the lines these logs should keep.
    NODE_ENV: "production",
    LOG_LEVEL: "info",
    BOOTSTRAP_OWNER_PASSWORD: "owner-password",
  });

  beforeAll(async () => {
    redis = createRedisPrefix();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "cluster-data-"));
    port = await freePort();
    expect(await databaseExists(databaseName)).toBe(false);
    cli = spawn(process.execPath, [...TYPESCRIPT_NODE_ARGS, CLUSTER_CLI, "--api", "1", "--events", "1", "--port", String(port), "--metrics-port", "0", "--quiet"], {
      cwd: ROOT,
      env: env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    cli.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    cli.stderr!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    exited = new Promise((resolve) => cli.once("exit", (code) => resolve(code)));
    await until("the cluster's ready summary", () => {
      if (cli.exitCode !== null) throw new Error(`npm run cluster exited with ${cli.exitCode}:\n${stdout}`);
      return stdout.includes("Ctrl-C stops the cluster");
    }, 180_000);
  });

  afterAll(async () => {
    if (cli && cli.exitCode === null) {
      cli.kill("SIGTERM");
      await exited;
    }
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(databaseName)} WITH (FORCE)`));
    await redis?.clear();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("it created its missing database and says so", async () => {
    expect(await databaseExists(databaseName)).toBe(true);
    expect(stdout).toContain(`database   ${urlFor(databaseName)} (created now)`);
    expect(stdout).toContain(`cluster ready: http://127.0.0.1:${port}`);
  });

  test("a second cluster on the same data folder refuses to start", async () => {
    const second = spawn(process.execPath, [...TYPESCRIPT_NODE_ARGS, CLUSTER_CLI, "--port", String(await freePort()), "--metrics-port", "0"], { cwd: ROOT, env: env(), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    second.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise((resolve) => second.once("exit", resolve));
    expect(code).toBe(1);
    expect(output).toContain(`a cluster already runs on the data folder ${dataDir} (supervisor pid ${cli.pid}`);
  });

  test("while it runs, its state file gives the CLI its database, Redis and host", () => {
    expect(statSync(clusterStatePath(dataDir)).mode & 0o777).toBe(0o600);
    expect(state()).toMatchObject({ pid: cli.pid, url: `http://127.0.0.1:${port}`, logsDir: logs() });
    expect(clusterSettingsForCli(dataDir)).toEqual({ DATABASE_URL: urlFor(databaseName), REDIS_URL, REDIS_PREFIX: redis.prefix, EXTERNAL_HOST: `localhost:${port}` });
    expect(state().processes.map((p) => p.name)).toEqual(["api-1", "events-1", "worker", "nginx"]);
  });

  test("every process serves /metrics on the port the summary prints and the Prometheus targets list", async () => {
    const targets = JSON.parse(readFileSync(path.join(dataDir, "cluster/prometheus-targets.json"), "utf8")) as Array<{ targets: string[]; labels: { process: string } }>;
    for (const name of ["api-1", "events-1", "worker"]) {
      const { metricsPort } = member(name);
      expect(stdout).toContain(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(targets.find((t) => t.labels.process === name)?.targets).toEqual([`127.0.0.1:${metricsPort}`]);
      const res = await get(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      expect(res.body).toContain("process_resident_memory_bytes");
    }
  });

  test("an API process killed with SIGKILL is logged and started again on its port, and serves through nginx", async () => {
    expect((await get(`http://127.0.0.1:${port}/api/v1/server_settings`)).status).toBe(200);
    const before = member("api-1");
    process.kill(before.pid!, "SIGKILL");
    const after = await until("api-1 started again", () => {
      const now = member("api-1");
      return now.pid !== null && now.pid !== before.pid ? now : null;
    });
    expect([after.port, after.metricsPort]).toEqual([before.port, before.metricsPort]);
    const served = await until("nginx to send to api-1 again", async () => ((await get(`http://127.0.0.1:${port}/api/v1/server_settings`)).status === 200 ? true : null));
    expect(served).toBe(true);
    expect((await fetch(`http://127.0.0.1:${after.port}/api/v1/server_settings`)).status).toBe(200);
    const clusterLog = readFileSync(path.join(logs(), "cluster.log"), "utf8");
    expect(clusterLog).toContain(`api-1 (pid ${before.pid}) died: killed by SIGKILL`);
    // Its last output came with it (its ready line is among it).
    const death = clusterLog.slice(clusterLog.indexOf(`api-1 (pid ${before.pid}) died`), clusterLog.indexOf("api-1: starting again"));
    expect(death).toContain("Its last output:");
    expect(death).toContain("team chat api tier ready");
    expect(clusterLog).toContain("api-1: starting again in 1.0 s");
    expect(clusterLog).toContain(`api-1: started again (pid ${after.pid})`);
    expect(stdout).toContain(`api-1 (pid ${before.pid}) died: killed by SIGKILL`);
  });

  test("nginx killed with SIGKILL is started again, its orphaned workers stopped, and serves", async () => {
    const before = member("nginx");
    process.kill(before.pid!, "SIGKILL");
    const after = await until("nginx started again", () => {
      const now = member("nginx");
      return now.pid !== null && now.pid !== before.pid ? now : null;
    });
    expect((await get(`http://127.0.0.1:${port}/api/v1/server_settings`)).status).toBe(200);
    expect(readFileSync(path.join(logs(), "cluster.log"), "utf8")).toContain(`nginx: started again (pid ${after.pid})`);
  });

  test("SIGTERM stops everything, restarts nothing, keeps the logs and retires the state file", async () => {
    const pids = state().processes.map((p) => p.pid!);
    const apiPort = member("api-1").port!;
    cli.kill("SIGTERM");
    expect(await exited).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect((await get(`http://127.0.0.1:${apiPort}/api/v1/server_settings`)).status).toBe(0);
    expect((await get(`http://127.0.0.1:${port}/api/v1/server_settings`)).status).toBe(0);

    expect(existsSync(clusterStatePath(dataDir))).toBe(false);
    expect(clusterSettingsForCli(dataDir)).toBeNull();
    expect(clusterSettingsForCli(dataDir, { includeStopped: true })).toMatchObject({ DATABASE_URL: urlFor(databaseName) });
    expect(JSON.parse(readFileSync(lastClusterStatePath(dataDir), "utf8")).stoppedAt).toEqual(expect.any(String));

    const clusterLog = readFileSync(path.join(logs(), "cluster.log"), "utf8");
    expect(clusterLog.slice(clusterLog.lastIndexOf(" stopping\n"))).not.toContain("starting again");
    expect(clusterLog).toMatch(/ stopped\n$/);
    const access = readFileSync(path.join(logs(), "access.log"), "utf8");
    expect(access).toContain('"GET /api/v1/server_settings HTTP/1.1" 200');
    expect(existsSync(path.join(logs(), "error.log"))).toBe(true);
    // Both lives of api-1 in its one file.
    expect(readFileSync(path.join(logs(), "api-1.log"), "utf8").match(/team chat api tier ready/g)).toHaveLength(2);
    for (const name of ["events-1", "worker"]) expect(readFileSync(path.join(logs(), `${name}.log`), "utf8")).toMatch(/team chat \w+ tier ready/);
    expect(stdout).toContain(`cluster stopped; logs kept in ${logs()}/`);
  });
});
