// A Redis Cluster of a test's own: three masters (redis-server --cluster-enabled yes) on spare
// loopback ports, joined with `redis-cli --cluster create`, without persistence, in a temporary
// directory that goes with them. For the bus's contract tests and the tier tests that run the
// bus on a cluster (REDIS_CLUSTER_NODES).
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "../../apps/server/src/local-cluster.ts";
import { accepts } from "./private-services.ts";

const run = promisify(execFile);
const START_TIMEOUT_MS = 30_000;

export interface TestRedisCluster {
  /** `127.0.0.1:<port>` of each master: REDIS_CLUSTER_NODES's value, comma-joined. */
  nodes: string[];
  stop(): Promise<void>;
}

/** One line of `redis-cli -p <port> <command...>`'s answer text. */
async function cli(port: number, ...command: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...command]);
  return stdout;
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${START_TIMEOUT_MS} ms`);
    await sleep(50);
  }
}

export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "redis-cluster-"));
  const children: ChildProcess[] = [];
  const exits: Promise<void>[] = [];
  const stop = async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await Promise.all(exits);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < masters; i++) {
      // The cluster bus's port chosen too: the default (port + 10000) may be past 65535 or taken.
      const [port, busPort] = [await freePort(), await freePort()];
      ports.push(port);
      const child = spawn(
        "redis-server",
        [
          "--port", String(port), "--cluster-port", String(busPort), "--bind", "127.0.0.1",
          "--cluster-enabled", "yes", "--cluster-config-file", path.join(dir, `nodes-${port}.conf`),
          "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
        ],
        { stdio: "ignore" },
      );
      children.push(child);
      exits.push(new Promise((resolve) => child.once("exit", () => resolve())));
    }
    for (const port of ports) await waitFor(`redis-server on port ${port}`, () => accepts(port));
    await run("redis-cli", ["--cluster", "create", ...ports.map((port) => `127.0.0.1:${port}`), "--cluster-replicas", "0", "--cluster-yes"]);
    for (const port of ports) await waitFor(`cluster_state:ok on port ${port}`, async () => (await cli(port, "cluster", "info")).includes("cluster_state:ok"));
    // Every master knows every other one and its slots (what clients are told in CLUSTER SLOTS).
    for (const port of ports) {
      await waitFor(`the slots seen from port ${port}`, async () => {
        const slots = await cli(port, "cluster", "slots");
        return ports.every((other) => slots.split("\n").includes(String(other)));
      });
    }
    return { nodes: ports.map((port) => `127.0.0.1:${port}`), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
