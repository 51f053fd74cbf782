// Runs `npm run cli -- ...` as operators do: a process of its own, with its own environment.
import { spawn } from "node:child_process";
import path from "node:path";
import { TYPESCRIPT_NODE_ARGS } from "../../apps/server/src/local-cluster.ts";

const ROOT = path.resolve(__dirname, "../..");
const ENTRIES = { cli: path.join(ROOT, "apps/server/src/cli.ts"), migrate: path.join(ROOT, "apps/server/src/migrate.ts") };

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCliProcess(args: string[], env: Record<string, string>, options: { stdin?: string; timeoutMs?: number; entry?: keyof typeof ENTRIES } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [...TYPESCRIPT_NODE_ARGS, ENTRIES[options.entry ?? "cli"], ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NODE_ENV: "production", LOG_LEVEL: "warn", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? "");
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`cli ${args.join(" ")} did not finish:\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
