// `npm run cluster`: nginx, N API processes, M events processes and a worker on this machine's
// Postgres and Redis (local-cluster.ts), supervised: a process that dies is logged and started
// again. Ctrl-C (or SIGTERM) stops them all. Its logs and state live under the data folder.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { redactUrl } from "./cluster-database.ts";
import { startLocalCluster, type ClusterEntry } from "./local-cluster.ts";

const USAGE = `usage: npm run cluster -- [--api N] [--events M] [--port P] [--metrics-port P|off] [--logs DIR] [--entry auto|bundle|typescript] [--quiet]

  --api N, --events M  API and events processes (1 to 16; 2 each by default), plus one worker
  --port P             nginx's port, where clients connect (9991)
  --metrics-port P     first metrics port: process i of the summary serves /metrics on P + i (9200);
                       0 gives each a free port; off turns metrics off
  --logs DIR           where the logs go (DATA_DIR/cluster/logs, DATA_DIR being ./data by default)
  --entry E            bundle: apps/server/dist/main.cjs (npm run build); typescript: the sources;
                       auto (the default): builds the bundle when it is older than the sources, then runs it
  --quiet              do not echo the processes' output (their log files have it)

DATABASE_URL (postgres://postgres@127.0.0.1:5432/chat, created if missing), REDIS_URL
(redis://127.0.0.1:6379) and EXTERNAL_HOST (localhost:P) are read from the environment.`;

class UsageError extends Error {}

function count(value: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      api: { type: "string" },
      events: { type: "string" },
      port: { type: "string" },
      "metrics-port": { type: "string" },
      logs: { type: "string" },
      entry: { type: "string" },
      quiet: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const api = count(values.api, 2, "api", 1, 16);
  const events = count(values.events, 2, "events", 1, 16);
  const port = count(values.port, 9991, "port", 1, 65535);
  const processes = api + events + 1;
  const metricsPort = values["metrics-port"] === "off" ? null : count(values["metrics-port"], 9200, "metrics-port", 0, 65535 - processes);
  const entry = (values.entry ?? "auto") as ClusterEntry;
  if (!["auto", "bundle", "typescript"].includes(entry)) throw new UsageError("--entry must be auto, bundle or typescript");
  // As `npm start` does: the bundle is brought up to date first, so auto runs what the sources say.
  if (entry === "auto") execFileSync(process.execPath, [path.join(__dirname, "../../../scripts/build-server.cjs"), "--if-stale"], { stdio: "inherit" });
  // The folder `npm run cli` uses too: it finds the cluster's settings there (cluster-state.ts).
  const dataDirSetting = process.env.DATA_DIR ?? "./data";
  if (dataDirSetting === "memory://") throw new UsageError("DATA_DIR=memory:// cannot hold the cluster's state and uploads: set DATA_DIR to a folder (./data by default)");
  const dataDir = path.resolve(dataDirSetting);
  const logsDir = path.resolve(values.logs ?? path.join(dataDir, "cluster", "logs"));

  const env: Record<string, string> = {
    DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/chat",
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    // Every process stores uploads in the same folder, whatever its working directory.
    DATA_DIR: dataDir,
    // A restarting node fails readiness and answers held polls at once, then stops accepting.
    SHUTDOWN_DELAY_SECONDS: process.env.SHUTDOWN_DELAY_SECONDS ?? "1",
    // Clients reach the organization through nginx.
    EXTERNAL_HOST: process.env.EXTERNAL_HOST ?? `localhost:${port}`,
  };
  const say = (name: string, text: string) => {
    for (const line of text.split("\n")) if (line.trim() !== "") process.stdout.write(`${name.padEnd(9)} ${line}\n`);
  };
  // A signal during the start stops what has started; after it, the cluster's own stop.
  const abort = new AbortController();
  let stopRunning: (() => void) | null = null;
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      if (stopRunning) stopRunning();
      else {
        process.stdout.write("stopping what has started...\n");
        abort.abort();
      }
    });
  }
  const cluster = await startLocalCluster({
    abort: abort.signal,
    api,
    events,
    port,
    env,
    metricsPort,
    logsDir,
    dataDir,
    entry,
    onOutput: values.quiet ? undefined : say,
    onSupervisorLog: (line) => say("cluster", line),
  });

  const relative = (file: string) => (path.relative(process.cwd(), file).startsWith("..") ? file : path.relative(process.cwd(), file) || ".");
  const rows = [
    ["process", "pid", "port", "metrics"],
    ...cluster.processes.map((p) => [p.name, String(p.child.pid), p.port === null ? "-" : String(p.port), p.metricsPort === null ? "-" : `http://127.0.0.1:${p.metricsPort}/metrics`]),
    ["nginx", String(cluster.nginxPid()), String(port), "-"],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const table = rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd()}`).join("\n");
  process.stdout.write(
    [
      "",
      `cluster ready: ${cluster.url} (nginx; EXTERNAL_HOST ${env.EXTERNAL_HOST})`,
      `  database   ${redactUrl(env.DATABASE_URL)}${cluster.database === "created" ? " (created now)" : ""}`,
      `  redis      ${env.REDIS_URL}`,
      `  server     ${relative(cluster.entry.file)} (${cluster.entry.reason})`,
      table,
      `  logs       ${relative(cluster.logsDir)}/: access.log, error.log (nginx), <process>.log, cluster.log (deaths and restarts)`,
      `  state      ${relative(cluster.stateFile!)}: npm run cli (same DATA_DIR) uses this cluster's database while it runs`,
      ...(cluster.prometheusTargetsFile ? [`  prometheus ${relative(cluster.prometheusTargetsFile)} (file_sd_configs targets; metrics listen on 127.0.0.1 only)`] : []),
      "Ctrl-C stops the cluster; a process that dies is started again.",
      "",
    ].join("\n"),
  );
  stopRunning = () => {
    process.stdout.write("stopping the cluster...\n");
    cluster.stop().then(
      () => {
        process.stdout.write(`cluster stopped; logs kept in ${relative(cluster.logsDir)}/\n`);
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`stopping failed: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  if (error instanceof UsageError) process.stderr.write(`${USAGE}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
