// What a process loads is memory it keeps (issue 32): the packages only some processes need are
// loaded on first use. An embedded trial (no Redis, no bucket, no outgoing webhook called, no image
// resized) never loads BullMQ, ioredis, undici, sharp or the AWS SDK; a worker on Redis does load
// BullMQ and ioredis, which shows the check sees what a process loads.
import { existsSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "../support/services.ts";

jest.setTimeout(120_000);

const PRELOAD = path.join(__dirname, "../support/loaded-modules.cjs");
const LAZY_PACKAGES = ["bullmq", "ioredis", "undici", "sharp", "@aws-sdk/client-s3"];

/** The npm packages among the modules `server` has loaded (it writes them on SIGUSR2). */
async function loadedPackages(server: ServerProcess, file: string): Promise<Set<string>> {
  rmSync(file, { force: true });
  server.child.kill("SIGUSR2");
  for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(50);
  const names = readFileSync(file, "utf8")
    .split("\n")
    .map((module) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module)?.[1])
    .filter((name): name is string => name !== undefined);
  return new Set(names);
}

describe("packages loaded at startup", () => {
  const file = path.join(os.tmpdir(), `loaded-modules-${process.pid}.txt`);
  let database: TestDatabase;
  let redis: TestRedisPrefix;
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisPrefix();
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    rmSync(file, { force: true });
    await database.drop();
    await redis.clear();
  });

  test("the embedded trial, every tier in one process, loads none of the packages only Redis, S3, webhooks or images need", async () => {
    const trial = await startProcess({ ROLE: "all", DATA_DIR: "memory://", PORT: "0", BIND_ADDRESS: "127.0.0.1", LOADED_MODULES_FILE: file }, { nodeArgs: ["--require", PRELOAD] });
    processes.push(trial);
    // The worker's periodic jobs have had their first run.
    await sleep(2000);
    const loaded = await loadedPackages(trial, file);
    expect(loaded.has("express")).toBe(true);
    expect(LAZY_PACKAGES.filter((name) => loaded.has(name))).toEqual([]);
  });

  test("a worker on Redis loads BullMQ and ioredis", async () => {
    const worker = await startProcess(
      { ROLE: "worker", DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redis.prefix, PORT: "0", BIND_ADDRESS: "127.0.0.1", LOADED_MODULES_FILE: file },
      { nodeArgs: ["--require", PRELOAD] },
    );
    processes.push(worker);
    const loaded = await loadedPackages(worker, file);
    expect(["bullmq", "ioredis"].filter((name) => loaded.has(name))).toEqual(["bullmq", "ioredis"]);
  });
});
