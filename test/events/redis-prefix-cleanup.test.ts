// The tests' Redis prefixes are cleared whole: an organization's queue keys carry a hash tag, so
// they begin with "{" and the prefix, and a clear that matched only keys beginning with the prefix
// left every test's queues in the shared Redis (160,000 keys, 800 MB after a day of runs).
import Redis from "ioredis";
import { RedisQueueStore } from "@chat/bus";
import { createRedisPrefix, REDIS_URL } from "../support/services.ts";

it("clears every key of a test's prefix, hash-tagged ones included", async () => {
  const prefix = createRedisPrefix();
  const queues = new RedisQueueStore({ url: REDIS_URL, prefix: prefix.prefix });
  const redis = new Redis(REDIS_URL);
  const keysOfPrefix = async () => {
    const found: string[] = [];
    for (const pattern of [`${prefix.prefix}*`, `{${prefix.prefix}*`]) {
      for await (const page of redis.scanStream({ match: pattern, count: 1000 })) found.push(...(page as string[]));
    }
    return found;
  };
  try {
    const queue = await queues.create({ userId: 1, realmId: 1, allPublicStreams: false, settings: {} });
    await queues.append("s0", [{ queueId: queue.id, events: [{ type: "message" }] }]);
    expect((await keysOfPrefix()).some((key) => key.startsWith("{"))).toBe(true);
    await prefix.clear();
    expect(await keysOfPrefix()).toEqual([]);
  } finally {
    await queues.close();
    await redis.quit();
  }
});
