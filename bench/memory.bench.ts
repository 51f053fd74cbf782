// Idle memory (issue 32): resident set size (VmRSS) of each process once it has been ready and idle
// for BENCH_MEMORY_IDLE_SECONDS (60 by default), read from /proc, beside ceilings measured in the
// same run: a bare Node process, and a bare PGlite (plain Node opening a PGlite of the server's
// settings on a directory of its own, migrated, idle).
//   - The embedded trial as a newcomer starts it: `npm start` on a fresh DATA_DIR (PGlite, the
//     in-process bus, every tier in one process). The whole process tree (npm and the server) and
//     the server alone, which is the tree of `./teamchat` (what npm start runs, without npm).
//     Target: the tree under 250 MiB.
//   - Each tier of the scaled-out deployment as the Docker image runs it (its CMD and malloc
//     setting, read from docker/Dockerfile) on Postgres and Redis, METRICS_PORT set as in compose
//     and Kubernetes. Target: each under 150 MiB.
// Every process is started first, one after the other; each is read IDLE seconds after it was ready.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MIGRATIONS_DIR } from "@chat/db";
import { pgliteStartParams } from "../packages/db/src/pglite-instance.ts";
import { BASELINE_WASM_FLAG } from "../packages/db/src/wasm-compilation.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL } from "../test/support/services.ts";
import { processRssBytes } from "./lib/process-cpu.ts";
import { report } from "./lib/stats.ts";

const IDLE_SECONDS = Number(process.env.BENCH_MEMORY_IDLE_SECONDS ?? 60);
const ROOT = path.resolve(__dirname, "..");
const MIB = 1024 * 1024;
const TREE_TARGET_MIB = 250;
const TIER_TARGET_MIB = 150;

/** How the Docker image runs a tier, read from docker/Dockerfile: its CMD and its malloc setting. */
function dockerLaunch(): { args: string[]; malloc: Record<string, string> } {
  const dockerfile = readFileSync(path.join(ROOT, "docker/Dockerfile"), "utf8");
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  const trim = /MALLOC_TRIM_THRESHOLD_=(\d+)/.exec(dockerfile);
  if (!cmd || !trim) throw new Error("docker/Dockerfile has no CMD array or no MALLOC_TRIM_THRESHOLD_");
  const [node, ...args] = JSON.parse(cmd[1]) as string[];
  if (node !== "node") throw new Error(`the image's CMD runs ${node}, not node`);
  return { args: args.map((arg) => (arg.startsWith("apps/") ? path.join(ROOT, arg) : arg)), malloc: { MALLOC_TRIM_THRESHOLD_: trim[1] } };
}

interface Idler {
  name: string;
  child: ChildProcess;
  readyAt: number;
  output: () => string;
}

/** Only what a person's shell would hand over: none of the bench's own settings (DATABASE_URL…) or npm's. */
function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
}

/** Spawns a process and resolves once a line of its output says it is ready. */
function startIdler(name: string, command: string, args: string[], env: Record<string, string>, isReady: (line: string) => boolean): Promise<Idler> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} was not ready within 120 s:\n${output}`));
    }, 120_000);
    let ready = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready || !output.split("\n").some(isReady)) return;
      ready = true;
      clearTimeout(timer);
      resolve({ name, child, readyAt: Date.now(), output: () => output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code, signal) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
}

const serverReady = (line: string) => line.includes("tier") && line.includes("ready");

/** The process and its descendants, from /proc. */
function processTree(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
  );
  return [pid, ...children.flatMap(processTree)];
}

function commandOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
}

async function stop(idler: Idler): Promise<void> {
  const { child } = idler;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // npm passes SIGTERM on to the server; the server shuts down and npm exits with it.
  child.kill("SIGTERM");
  const killer = setTimeout(() => {
    for (const pid of processTree(child.pid!).reverse()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }, 15_000);
  await exited;
  clearTimeout(killer);
}

/** Resolves once `idler` has been idle for IDLE_SECONDS since it was ready. */
async function idleFor(idler: Idler): Promise<void> {
  const wait = idler.readyAt + IDLE_SECONDS * 1000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  if (idler.child.exitCode !== null || idler.child.signalCode !== null) throw new Error(`${idler.name} exited while idle:\n${idler.output()}`);
}

const mib = (bytes: number) => bytes / MIB;

export async function benchMemory(): Promise<boolean> {
  const docker = dockerLaunch();
  // The ceilings run with the same Node flags and malloc setting as the servers (the teamchat launcher sets them too).
  const nodeFlags = docker.args.filter((arg) => arg.startsWith("--"));
  const mallocEnv = docker.malloc;
  // The tiers run the bundle: built as npm start would build it.
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-server.cjs"), "--if-stale"], { stdio: "inherit" });
  const scratch = mkdtempSync(path.join(os.tmpdir(), "bench-memory-"));
  const database = await createTestDatabase();
  const redis = createRedisPrefix();
  const idlers: Idler[] = [];
  try {
    process.stdout.write(`starting every process, then reading each one's RSS ${IDLE_SECONDS} s after it was ready...\n`);
    const bareNode = await startIdler("bare node", process.execPath, [...nodeFlags, "-e", "process.stdout.write('ready\\n'); setInterval(() => {}, 1 << 30)"], { ...baseEnv(), ...mallocEnv }, (line) => line === "ready");
    idlers.push(bareNode);

    const pgliteDir = path.join(scratch, "bare-pglite");
    const barePgliteArgs = (last: string) => [...nodeFlags, BASELINE_WASM_FLAG, path.join(__dirname, "lib/bare-pglite.cjs"), pgliteDir, JSON.stringify(pgliteStartParams()), last];
    execFileSync(process.execPath, barePgliteArgs("init"), { cwd: ROOT, env: { ...baseEnv(), ...mallocEnv } });
    const barePglite = await startIdler("bare PGlite", process.execPath, barePgliteArgs(MIGRATIONS_DIR), { ...baseEnv(), ...mallocEnv }, (line) => line === "ready");
    idlers.push(barePglite);

    // As the README says to start it: npm start, which builds if needed and runs ./teamchat.
    const trial = await startIdler(
      "npm start",
      "npm",
      ["start"],
      { ...baseEnv(), DATA_DIR: path.join(scratch, "trial"), PORT: "0", BIND_ADDRESS: "127.0.0.1", npm_config_update_notifier: "false" },
      serverReady,
    );
    idlers.push(trial);

    const tierEnv = {
      ...baseEnv(),
      ...mallocEnv,
      NODE_ENV: "production",
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redis.prefix,
      PORT: "0",
      METRICS_PORT: "0",
      BIND_ADDRESS: "127.0.0.1",
      BOOTSTRAP_OWNER_PASSWORD: "bench-password",
    };
    // The API tier first: it applies the migrations and creates the first organization.
    const tiers: Idler[] = [];
    for (const role of ["api", "events", "worker"]) {
      const tier = await startIdler(`${role} tier`, process.execPath, docker.args, { ...tierEnv, ROLE: role }, serverReady);
      idlers.push(tier);
      tiers.push(tier);
    }

    await idleFor(bareNode);
    const bareNodeMib = mib(processRssBytes(bareNode.child.pid!));
    await idleFor(barePglite);
    const barePgliteMib = mib(processRssBytes(barePglite.child.pid!));
    await idleFor(trial);
    const treePids = processTree(trial.child.pid!);
    const perProcess = treePids.map((pid) => ({ pid, command: commandOf(pid), mib: mib(processRssBytes(pid)) }));
    const treeMib = perProcess.reduce((sum, p) => sum + p.mib, 0);
    const server = perProcess.find((p) => p.command.includes("dist/main.cjs"));
    if (!server) throw new Error(`no server process under npm start: ${perProcess.map((p) => p.command).join("; ")}`);
    const tierMib = new Map<string, number>();
    for (const tier of tiers) {
      await idleFor(tier);
      tierMib.set(tier.name, mib(processRssBytes(tier.child.pid!)));
    }

    const ceilings = [
      { name: "bare Node process (node -e, idle)", value: bareNodeMib },
      { name: "bare PGlite (plain Node, the server's settings, migrated, idle)", value: barePgliteMib },
    ];
    process.stdout.write(`processes under npm start: ${perProcess.map((p) => `${p.command} (${p.mib.toFixed(0)} MiB)`).join(", ")}\n`);
    let met = report({
      name: `embedded trial (npm start, fresh DATA_DIR), whole process tree after ${IDLE_SECONDS} s idle`,
      value: treeMib,
      unit: "MiB",
      ceilings,
      target: { limit: TREE_TARGET_MIB },
    });
    report({ name: `embedded trial, the server process alone (./teamchat: no npm)`, value: server.mib, unit: "MiB", ceilings, target: { limit: TREE_TARGET_MIB } });
    for (const [name, value] of tierMib) {
      met =
        report({
          name: `${name} (as the Docker image runs it, on Postgres and Redis, METRICS_PORT set) after ${IDLE_SECONDS} s idle`,
          value,
          unit: "MiB",
          ceilings: [ceilings[0]],
          target: { limit: TIER_TARGET_MIB },
        }) && met;
    }
    return met;
  } finally {
    for (const idler of idlers.reverse()) await stop(idler);
    await database.drop();
    await redis.clear();
    rmSync(scratch, { recursive: true, force: true });
  }
}
