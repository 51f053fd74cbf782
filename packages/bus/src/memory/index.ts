import type { BusLog } from "../log";
import type { Bus, QueueLimits } from "../types";
import { MemoryChangeStream } from "./change-stream";
import { MemoryJobQueue } from "./job-queue";
import { MemoryQueueStore } from "./queue-store";

export { MemoryChangeStream, type MemoryChangeStreamOptions } from "./change-stream";
export { MemoryJobQueue, type MemoryJobQueueOptions } from "./job-queue";
export { MemoryQueueStore, type MemoryQueueStoreOptions } from "./queue-store";

export interface MemoryBusOptions extends QueueLimits {
  claimIdleMs?: number;
  /** MemoryChangeStreamOptions.maxEntries */
  maxEntries?: number;
  log?: BusLog;
}

/** The embedded bus: everything in this process, for running as a single node without Redis. */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const changes = new MemoryChangeStream(options);
  const queues = new MemoryQueueStore(options);
  const jobs = new MemoryJobQueue(options);
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
      // In this process: nothing to reach.
    },
    async close() {
      await Promise.all([changes.close(), queues.close(), jobs.close()]);
    },
  };
}
