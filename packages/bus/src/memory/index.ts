import type { BusLog } from "../log";
import type { Bus } from "../types";
import { MemoryChangeStream } from "./change-stream";
import { MemoryJobQueue } from "./job-queue";
import { MemoryQueueStore } from "./queue-store";

export { MemoryChangeStream, type MemoryChangeStreamOptions } from "./change-stream";
export { MemoryJobQueue, type MemoryJobQueueOptions } from "./job-queue";
export { MemoryQueueStore, type MemoryQueueStoreOptions } from "./queue-store";

export interface MemoryBusOptions {
  claimIdleMs?: number;
  log?: BusLog;
}

/** The embedded bus: everything in this process, for running as a single node without Redis. */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const changes = new MemoryChangeStream(options);
  const queues = new MemoryQueueStore(options);
  const jobs = new MemoryJobQueue(options);
  return {
    changes,
    queues,
    jobs,
    async close() {
      await Promise.all([changes.close(), queues.close(), jobs.close()]);
    },
  };
}
