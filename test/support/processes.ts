// Starts the server as real OS processes, the way operators run it (`npm start` with a ROLE).
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { TYPESCRIPT_NODE_ARGS } from "../../apps/server/src/local-cluster.ts";

const ROOT = path.resolve(__dirname, "../..");
const MAIN = path.join(ROOT, "apps/server/src/main.ts");

export interface ServerProcess {
  child: ChildProcess;
  port: number | null;
  /** Its METRICS_PORT server's port, when it runs one. */
  metricsPort: number | null;
  output(): string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash, no cleanup. */
  kill(): Promise<void>;
}

export interface StartOptions {
  timeoutMs?: number;
  /** Extra node flags (the benchmark's profiling flags, which NODE_OPTIONS does not accept). */
  nodeArgs?: string[];
}

export function startProcess(env: Record<string, string>, { timeoutMs = 60_000, nodeArgs = [] }: StartOptions = {}): Promise<ServerProcess> {
  // One process, as `npm start` runs it (a loader, not a wrapper), so signals reach the server itself.
  const child = spawn(process.execPath, [...nodeArgs, ...TYPESCRIPT_NODE_ARGS, MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NODE_ENV: "production", LOG_LEVEL: "info", RATE_LIMITING: "false", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stopWith = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${env.ROLE} did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = output.split("\n").find((line) => line.includes("tier") && line.includes("ready"));
      if (!ready) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
      const { port, metricsPort } = JSON.parse(ready) as { port: number | null; metricsPort?: number | null };
      resolve({ child, port, metricsPort: metricsPort ?? null, output: () => output, stop: () => stopWith("SIGTERM"), kill: () => stopWith("SIGKILL") });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${env.ROLE} exited with ${code} before it was ready:\n${output}`));
    });
  });
}
