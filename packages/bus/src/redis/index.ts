import type { BusLog } from "../log";
import type { RedisTarget } from "./connection";
import type { Bus, QueueLimits } from "../types";
import { RedisChangeStream } from "./change-stream";
import { RedisJobQueue } from "./job-queue";
import { RedisQueueStore } from "./queue-store";

export { RedisChangeStream, type RedisChangeStreamOptions } from "./change-stream";
export { RedisJobQueue, type RedisJobQueueOptions } from "./job-queue";
export { RedisQueueStore, type RedisQueueStoreOptions } from "./queue-store";
export { createRedisClient, isCluster, REDIS_COMMAND_TIMEOUT_MS, type RedisClient, type RedisTarget } from "./connection";
export { BusKeys, queueOwner } from "./keys";

/** One Redis server (`url`) or a Redis Cluster (`clusterNodes`, its seed nodes). */
export type RedisBusOptions = QueueLimits & RedisTarget & {
  /** Namespaces every key, channel and BullMQ queue, e.g. "chat:" (no braces: keys.ts puts them). */
  prefix: string;
  /** Change stream shards (realmId % shards); every node must agree. */
  shards?: number;
  claimIdleMs?: number;
  /** RedisChangeStreamOptions.maxEntries */
  maxEntries?: number;
  /** How soon a job whose worker died runs again elsewhere (RedisJobQueueOptions.stallMs). */
  jobStallMs?: number;
  /** How long JobQueue.addEach leaves an item to a claimer whose job is not there (RedisJobQueueOptions). */
  itemClaimGraceMs?: number;
  log?: BusLog;
};

/** The production bus: any number of nodes sharing one Redis server or one Redis Cluster. */
export function createRedisBus(options: RedisBusOptions): Bus {
  const changes = new RedisChangeStream(options);
  const queues = new RedisQueueStore(options);
  const jobs = new RedisJobQueue({ ...options, stallMs: options.jobStallMs });
  // A batch the fan-out will never read: the queues it should have reached are invalidated, so
  // their clients register again rather than go on without its events.
  changes.onDropped(async ({ group, realms }) => {
    if (group !== "events") return;
    for (const [realmId, through] of realms) await queues.invalidateRealm(realmId, through);
  });
  return {
    changes,
    queues,
    jobs,
    async ping() {
      await queues.ping();
    },
    async close() {
      await Promise.all([changes.close(), queues.close(), jobs.close()]);
    },
  };
}
