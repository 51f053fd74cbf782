// An S3-compatible server for tests: s3rver in a child process (s3-server-process.cjs), listening on
// 127.0.0.1 on a free port, with its data in a temporary directory removed by stop().
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export interface S3Server {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** Where s3rver keeps its buckets (for tests that look behind the API). */
  directory: string;
  stop(): Promise<void>;
}

const SCRIPT = path.join(__dirname, "s3-server-process.cjs");
const START_TIMEOUT_MS = 30_000;

export async function startS3Server(): Promise<S3Server> {
  const directory = await mkdtemp(path.join(os.tmpdir(), "teamchat-s3rver-"));
  // 3 to 63 characters of lower-case letters, digits and hyphens, as S3 bucket names must be.
  const bucket = `test-${randomBytes(4).toString("hex")}`;
  // s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider.
  const child = spawn(process.execPath, ["--openssl-legacy-provider", SCRIPT, directory, bucket], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  if (process.env.S3RVER_VERBOSE === "1") {
    child.stdout.pipe(process.stderr);
    child.stderr.pipe(process.stderr);
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    await rm(directory, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`s3rver did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
      let stdout: string | null = "";
      child.stdout.on("data", (chunk: Buffer) => {
        if (stdout === null) return; // started: what follows is logging
        stdout += chunk.toString();
        const line = stdout.split("\n").find((l) => l.startsWith("{"));
        if (!line) return;
        clearTimeout(timer);
        stdout = null;
        resolve((JSON.parse(line) as { port: number }).port);
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited with ${code} before listening:\n${output}`));
      });
    });
    return {
      endpoint: `http://127.0.0.1:${port}`,
      bucket,
      // s3rver checks signatures against these fixed credentials.
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
      region: "us-east-1",
      directory,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
