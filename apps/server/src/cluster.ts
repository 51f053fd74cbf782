// PROCESSES=N: N server processes sharing one port through node:cluster, so that one machine's
// cores all serve requests (a Node process uses one core for JavaScript). The processes share
// state only through Postgres and Redis, as separate nodes do, so nothing else changes. The
// primary process serves nothing: it starts the processes, replaces one that dies, announces
// readiness once all listen, and passes SIGTERM/SIGINT on.
import cluster, { type Worker } from "node:cluster";
import type { Config } from "@chat/config";
import { logger } from "@chat/logger";

/** What a server process tells the primary once it listens. */
export interface ReadyMessage {
  type: "ready";
  port: number | null;
}

const RESTART_DELAY_MS = 1000;

export function runPrimary(config: Config): void {
  const ready = new Set<number>();
  let announced = false;
  let stopping = false;
  let exitCode = 0;

  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.on("message", (message: ReadyMessage) => {
      if (message?.type !== "ready") return;
      ready.add(worker.id);
      if (!announced && ready.size === config.processes) {
        announced = true;
        logger.info(`team chat ${config.role} tier${config.role === "all" ? "s" : ""} ready`, { port: message.port, processes: config.processes });
      }
    });
    return worker;
  };

  cluster.on("exit", (worker, code, signal) => {
    const wasReady = ready.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    if (!announced && !wasReady) {
      // A process that cannot start (database unreachable, port taken) would fail again.
      logger.error("a server process failed to start; stopping", { code, signal });
      stopAll("startup failure", 1);
      return;
    }
    logger.error("a server process exited; starting another", { pid: worker.process.pid, code, signal });
    setTimeout(() => {
      if (!stopping) fork();
    }, RESTART_DELAY_MS);
  });

  function stopAll(reason: string, code = 0): void {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    logger.info(`${reason}: stopping ${config.processes} server processes`);
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker?.process.kill("SIGTERM");
  }

  process.on("SIGTERM", () => stopAll("SIGTERM"));
  process.on("SIGINT", () => stopAll("SIGINT"));
  for (let i = 0; i < config.processes; i++) fork();
}

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}
