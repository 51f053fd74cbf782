// Shared by both adapters so the embedded mode behaves exactly like the Redis one.
import { randomBytes } from "node:crypto";

export const DEFAULT_SHARDS = 4;
export const DEFAULT_CLAIM_IDLE_MS = 30_000;
/** A redelivered batch is recognised by its source id for this long. */
export const DEDUPE_WINDOW_MS = 60 * 60 * 1000;
export const DEFAULT_BACKOFF_MS = 1000;
/**
 * Events a queue holds before it is dropped (its next poll: BAD_EVENT_QUEUE_ID). A client gone
 * quiet without deleting its queue would otherwise hold every event of a busy realm until expiry.
 */
export const DEFAULT_MAX_EVENTS_PER_QUEUE = 20_000;
/** Queues one user may hold; a new one evicts the least recently polled. */
export const DEFAULT_MAX_QUEUES_PER_USER = 50;
/** Finished jobs are kept (and so their jobId still dedupes) for this long. */
export const KEEP_COMPLETED_JOBS_S = 24 * 3600;
export const KEEP_FAILED_JOBS_S = 7 * 24 * 3600;
/**
 * JobQueue.addEach: an item claimed for a job that is not there is left to its claimer this long,
 * then taken over (its claimer died between claim and add). Far more than a claim and an add take,
 * and less than DEFAULT_CLAIM_IDLE_MS, after which a dead consumer's read is delivered again.
 */
export const ITEM_CLAIM_GRACE_MS = 10_000;

/** `items` cut into runs of at most `size`, in order. */
export function chunked<T>(items: T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new Error(`chunk size must be a positive integer, got ${size}`);
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Opaque to clients, unique across nodes: `<realm id>:<user id>:<seconds>:<random hex>`. The Redis
 * store finds a queue's keys from its id alone (their hash tag is the realm's: redis/keys.ts);
 * the time part keeps ids roughly sortable for operators.
 */
export function newQueueId(realmId: number, userId: number): string {
  return `${realmId}:${userId}:${Math.floor(Date.now() / 1000)}:${randomBytes(8).toString("hex")}`;
}

/** BullMQ's exponential backoff: the delay before attempt n+1 after n attempts. */
export function backoffDelay(baseMs: number, attemptsMade: number): number {
  return Math.round(2 ** (attemptsMade - 1) * baseMs);
}
