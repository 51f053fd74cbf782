import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { createRedisBus } from "../src";
import { busContract } from "./bus-contract";
import { batch, collectingLog, waitFor } from "./helpers";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** Every key this file creates starts with it; each test gets a space below it. */
const filePrefix = `test:bus:${randomBytes(6).toString("hex")}:`;
const redis = new Redis(url);

async function keysOfThisFile(): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of redis.scanStream({ match: `${filePrefix}*`, count: 1000 })) keys.push(...(page as string[]));
  return keys;
}

afterAll(async () => {
  const keys = await keysOfThisFile();
  if (keys.length > 0) await redis.unlink(...keys);
  expect(await keysOfThisFile()).toEqual([]);
  await redis.quit();
});

describe("redis bus", () => {
  busContract({
    createBus: (space, options) => createRedisBus({ url, prefix: `${filePrefix}${space}:`, ...options }),
    multiNode: true,
  });
});

describe("redis change stream", () => {
  it("writes one entry per batch to the realm's shard stream", async () => {
    const prefix = `${filePrefix}shards:`;
    const bus = createRedisBus({ url, prefix, shards: 3 });
    try {
      await bus.changes.publish([batch("a", 4), batch("b", 4), batch("c", 2)]);
      expect(await redis.xlen(`${prefix}changes:0`)).toBe(0);
      expect(await redis.xlen(`${prefix}changes:1`)).toBe(2);
      expect(await redis.xlen(`${prefix}changes:2`)).toBe(1);
      const [[, fields]] = await redis.xrange(`${prefix}changes:1`, "-", "+", "COUNT", 1);
      expect(fields).toEqual(["b", JSON.stringify(batch("a", 4))]);
    } finally {
      await bus.close();
    }
  });

  it("redelivers entries a dead consumer left pending", async () => {
    const prefix = `${filePrefix}dead:`;
    const bus = createRedisBus({ url, prefix, shards: 1, claimIdleMs: 200, log: collectingLog() });
    try {
      await bus.changes.publish([batch("orphan", 1)]);
      // A consumer that read the entry and died before acknowledging it.
      await redis.xreadgroup("GROUP", "events", "dead", "COUNT", 10, "STREAMS", `${prefix}changes:0`, ">");
      const seen: string[] = [];
      bus.changes.consume("alive", async (b) => {
        seen.push(b.id);
      });
      await waitFor("the orphaned batch", () => seen.includes("orphan"));
      await waitFor("no pending entries", async () => {
        const [count] = (await redis.xpending(`${prefix}changes:0`, "events")) as [number];
        return count === 0;
      });
      expect(seen).toEqual(["orphan"]);
    } finally {
      await bus.close();
    }
  });

  it("logs and acknowledges a malformed entry instead of wedging the stream", async () => {
    const prefix = `${filePrefix}malformed:`;
    const log = collectingLog();
    const bus = createRedisBus({ url, prefix, shards: 1, claimIdleMs: 200, log });
    try {
      const seen: string[] = [];
      await bus.changes.publish([batch("first", 1)]);
      await redis.xadd(`${prefix}changes:0`, "*", "b", "{not json");
      await redis.xadd(`${prefix}changes:0`, "*", "other", "field");
      await redis.xadd(`${prefix}changes:0`, "*", "b", JSON.stringify({ id: 5 }));
      await bus.changes.publish([batch("last", 1)]);
      bus.changes.consume("c1", async (b) => {
        seen.push(b.id);
      });
      await waitFor("the batch after the malformed ones", () => seen.includes("last"));
      expect(seen).toEqual(["first", "last"]);
      expect(log.messages.filter((m) => m.includes("malformed"))).toHaveLength(3);
      await waitFor("no pending entries", async () => {
        const [count] = (await redis.xpending(`${prefix}changes:0`, "events")) as [number];
        return count === 0;
      });
    } finally {
      await bus.close();
    }
  });
});
