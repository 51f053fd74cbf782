// A Redis server and a Postgres cluster of a test's own, on spare loopback ports, for tests that
// stop, pause and restart them: the shared services the rest of the suite uses are never touched.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../../apps/server/src/local-cluster.ts";

/** A port nothing listens on now (the kernel's choice for port 0). */
export const sparePort = freePort;

/** Whether something accepts TCP connections on the port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(50);
  }
}

export interface PrivateRedis {
  url: string;
  /** SIGSTOP: connections stay open but nothing answers; the data is kept. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL: connections drop and, without persistence, the data is gone. */
  kill(): Promise<void>;
  /** Starts a fresh redis-server on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await sparePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    const started = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], { stdio: "ignore" });
    child = started;
    exited = new Promise((resolve) => started.once("exit", () => resolve()));
    await waitFor(`redis-server on port ${port}`, () => accepts(port));
  };
  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
    await exited;
    child = null;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
    kill,
    start,
    stop: kill,
  };
}

/** The newest Postgres server binaries: Debian keeps them out of PATH, under /usr/lib/postgresql. */
function postgresBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, "bin", name))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], "bin", name) : name;
}

export interface PrivatePostgres {
  /** The cluster's `postgres` database. */
  url: string;
  /** pg_ctl stop: `fast` terminates sessions (57P01), `immediate` drops them without a word. */
  stop(mode: "fast" | "immediate"): void;
  start(): void;
  /** Stops the cluster, if running, and deletes its files. */
  remove(): void;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await sparePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "outage-pg-"));
  // Postgres refuses to run as root: as root, run its programs as the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (program: string, args: string[]) => {
    const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", postgresBin(program), ...args]] : [postgresBin(program), args];
    execFileSync(file, argv, { stdio: "ignore" });
  };
  const data = path.join(dir, "data");
  let running = false;
  const start = () => {
    // The socket in the cluster's own directory, not /var/run/postgresql beside the shared server's.
    run("pg_ctl", ["-D", data, "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-l", path.join(dir, "log"), "-w", "start"]);
    running = true;
  };
  const stop = (mode: "fast" | "immediate") => {
    run("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]);
    running = false;
  };
  try {
    run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync"]);
    start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    remove() {
      try {
        if (running) stop("immediate");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
