// A consumer's shard leases (packages/bus/src/redis/shard-leases.ts) against a redis-server of this
// file's own, paused to make Redis unreachable: a consumer that cannot renew stops reading its
// shards once the leases may have lapsed, since another consumer may hold them by then.
import { setTimeout as sleep } from "node:timers/promises";
import Redis from "ioredis";
import { ShardLeases } from "../../packages/bus/src/redis/shard-leases.ts";
import { startPrivateRedis, type PrivateRedis } from "../support/private-services.ts";

let redis: PrivateRedis;
let connection: Redis;

beforeAll(async () => {
  redis = await startPrivateRedis();
  connection = new Redis(redis.url, { commandTimeout: 300, maxRetriesPerRequest: 1 });
  connection.on("error", () => undefined);
});
afterAll(async () => {
  redis.resume();
  connection.disconnect();
  await redis.stop();
});

test("leases kept by renewal, and given up for reading once they may have lapsed unrenewed", async () => {
  const leases = new ShardLeases({
    redis: connection,
    streamKeys: ["changes:0", "changes:1"],
    membersKey: "consumers",
    group: "events",
    consumer: "a",
    leaseMs: 1000,
    stuck: () => false,
    log: () => undefined,
  });
  try {
    expect(await leases.rebalance()).toEqual(["changes:0", "changes:1"]);
    // Renewed every second: still held well past one lease.
    await sleep(2500);
    expect(leases.owned()).toEqual(["changes:0", "changes:1"]);
    expect(await connection.get("changes:0:lease:events")).toBe("a");
    redis.pause();
    await sleep(1500);
    // Unrenewed for a lease's length: another consumer may own them now.
    expect(leases.owned()).toEqual([]);
    redis.resume();
    await sleep(1200);
    // Back: taken again like any free shard.
    expect((await leases.rebalance()).sort()).toEqual(["changes:0", "changes:1"]);
    expect(leases.owned()).toEqual(["changes:0", "changes:1"]);
  } finally {
    redis.resume();
    await leases.releaseAll();
  }
});
