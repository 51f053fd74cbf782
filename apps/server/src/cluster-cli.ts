// `npm run cluster -- [--api N] [--events M] [--port P]`: nginx, N API processes, M events
// processes and a worker on this machine's Postgres and Redis (local-cluster.ts). Ctrl-C stops them.
import { parseArgs } from "node:util";
import { startLocalCluster } from "./local-cluster.ts";

const USAGE = "usage: npm run cluster -- [--api N] [--events M] [--port P]   (N, M: 1 to 16; P: nginx's port, 9991 by default)";

function count(value: string | undefined, fallback: number, name: string, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${name} must be a whole number from 1 to ${max}\n${USAGE}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { api: { type: "string" }, events: { type: "string" }, port: { type: "string" }, help: { type: "boolean" } } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const env: Record<string, string> = {
    DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/chat",
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    // A restarting node fails readiness and answers held polls at once, then stops accepting.
    SHUTDOWN_DELAY_SECONDS: process.env.SHUTDOWN_DELAY_SECONDS ?? "1",
  };
  const port = count(values.port, 9991, "port", 65535);
  // Clients reach the organization through nginx.
  env.EXTERNAL_HOST = process.env.EXTERNAL_HOST ?? `localhost:${port}`;
  const cluster = await startLocalCluster({
    api: count(values.api, 2, "api", 16),
    events: count(values.events, 2, "events", 16),
    port,
    env,
    onOutput: (name, text) => {
      for (const line of text.split("\n")) if (line.trim() !== "") process.stdout.write(`${name.padEnd(9)} ${line}\n`);
    },
  });
  process.stdout.write(`\ncluster ready: ${cluster.url} (nginx) in front of ${cluster.processes.map((p) => (p.port ? `${p.name} :${p.port}` : p.name)).join(", ")}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    cluster.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
