// Scheduled messages travel to the worker tier as delayed jobs on the bus's job queue (BullMQ's
// delayed jobs with Redis, which outlive any worker; the in-process queue in the embedded mode).
// A job only says "this row may be due at this time": the row decides (actions/scheduled-messages.ts),
// so a job that runs twice, late, or for a time since edited sends nothing twice. A job that never
// got queued (Redis away at the time) or was lost is found by the worker's sweep.
import type { JobQueue } from "@chat/bus";
import { logger } from "@chat/logger";

/** The job name the worker sends scheduled messages under. */
export const SCHEDULED_MESSAGE_JOB = "send-scheduled-message";
/** A job that fails (the database away) is tried again this often, the waits doubling from the backoff. */
export const SCHEDULED_MESSAGE_ATTEMPTS = 10;
export const SCHEDULED_MESSAGE_BACKOFF_MS = 2000;
/** A finished job is kept this long, so the same (message, time) is not queued again meanwhile. */
const KEEP_DONE_SECONDS = 3600;
/** The longest delay a timer takes (2^31 - 1 ms, about 24.8 days); a job due later runs then and puts itself off. */
export const MAX_JOB_DELAY_MS = 2_147_483_647;
/** How long a request waits for the job queue to take the job; the sweep sends the message anyway. */
const QUEUE_TIMEOUT_MS = 2000;

export interface ScheduledMessageJob {
  id: number;
  realmId: number;
  /** The delivery time the job was queued for, Unix seconds. */
  at: number;
}

/**
 * Queues the job that sends message `id` at `at` (once per message and time: an edit of the time
 * queues a new one, and the old one finds the row's time changed and does nothing). Never throws:
 * a queue that does not answer leaves the message to the sweep, which sends it a few seconds late.
 */
export async function queueScheduledMessage(jobs: JobQueue, job: ScheduledMessageJob, now = Date.now()): Promise<void> {
  const delayMs = Math.min(MAX_JOB_DELAY_MS, Math.max(0, job.at * 1000 - now));
  let timer: NodeJS.Timeout | undefined;
  const added = jobs.add(SCHEDULED_MESSAGE_JOB, { ...job }, {
    jobId: `${job.id}:${job.at}`,
    delayMs,
    attempts: SCHEDULED_MESSAGE_ATTEMPTS,
    backoffMs: SCHEDULED_MESSAGE_BACKOFF_MS,
    keepCompletedSeconds: KEEP_DONE_SECONDS,
  });
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), QUEUE_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([added, timeout]);
    if (outcome === "timeout") logger.warn("the job queue did not take a scheduled message in time; the sweep will send it", { scheduledMessageId: job.id });
  } catch (error) {
    logger.warn("could not queue a scheduled message; the sweep will send it", { scheduledMessageId: job.id, error: String(error) });
  } finally {
    clearTimeout(timer);
  }
}

/** A job's data, or null if it is not a scheduled message's. */
export function readScheduledMessageJob(data: Record<string, unknown>): ScheduledMessageJob | null {
  const { id, realmId, at } = data;
  if (!Number.isSafeInteger(id) || !Number.isSafeInteger(realmId) || typeof at !== "number" || !Number.isFinite(at)) return null;
  return { id: id as number, realmId: realmId as number, at };
}
