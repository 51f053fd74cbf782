// Sends scheduled messages at their time (actions/scheduled-messages.ts decides, under the row's
// lock, whether there is anything to send). Each message has a delayed job queued by the API tier
// when it is scheduled or its time edited; a job whose worker dies runs again on another worker
// (BullMQ's stalled jobs), and the row's `delivered` makes that second run send nothing. A sweep
// sends what is overdue with no job to send it (Redis lost its data, or was away when the message
// was scheduled), skipping rows another worker is sending.
import type { JobQueue, Stoppable } from "@chat/bus";
import {
  deliverScheduledMessage,
  MAX_JOB_DELAY_MS,
  overdueScheduledMessages,
  pendingScheduledMessages,
  queueScheduledMessage,
  readScheduledMessageJob,
  SCHEDULED_MESSAGE_JOB,
  type ActionRunner,
  type ServerContext,
} from "@chat/core";
import type { PrismaClient } from "@chat/db";
import { logger } from "@chat/logger";
import { jobRuns } from "@chat/metrics";

/** Scheduled messages one worker process sends at once. */
const CONCURRENCY = 4;
/** The sweep sends messages this overdue: their jobs, on time, normally send them first. */
export const SWEEP_GRACE_SECONDS = 5;
/** The most messages one sweep sends; the next sweep takes the rest. */
const SWEEP_BATCH = 100;
/** The most jobs a starting worker queues again (the soonest); any later ones are the sweep's. */
const REQUEUE_LIMIT = 10_000;
/** Jobs queued at once while requeueing. */
const REQUEUE_CHUNK = 100;

export interface ScheduledMessageDeps {
  prisma: PrismaClient;
  actions: ActionRunner;
  ctx: ServerContext;
}

/** Runs the scheduled-message jobs on this worker. */
export function processScheduledMessageJobs(jobs: JobQueue, deps: ScheduledMessageDeps): Stoppable {
  return jobs.process(
    SCHEDULED_MESSAGE_JOB,
    async (data) => {
      const job = readScheduledMessageJob(data);
      if (!job) {
        logger.error("dropped a scheduled-message job that names no message", { fields: Object.keys(data) });
        jobRuns.inc({ kind: "scheduled_message", outcome: "failed" });
        return;
      }
      const outcome = await deliverScheduledMessage(deps.actions, deps.ctx, job);
      if (typeof outcome === "object") {
        // Run early (a delay longer than a timer takes, or clocks apart): put off until it is due.
        return { deferMs: Math.min(MAX_JOB_DELAY_MS, outcome.notDueMs) };
      }
      if (outcome === "sent") logger.info("sent a scheduled message", { scheduledMessageId: job.id });
      jobRuns.inc({ kind: "scheduled_message", outcome });
    },
    CONCURRENCY,
  );
}

/** One sweep: sends the overdue messages no job sent. Resolves to how many it sent or failed. */
export async function sweepScheduledMessages(deps: ScheduledMessageDeps): Promise<number> {
  const due = await overdueScheduledMessages(deps.prisma, SWEEP_GRACE_SECONDS, SWEEP_BATCH);
  let handled = 0;
  for (const row of due) {
    const outcome = await deliverScheduledMessage(deps.actions, deps.ctx, { id: row.id, realmId: row.realm_id }, { skipLocked: true });
    if (outcome === "sent" || outcome === "failed") {
      handled++;
      logger.info("the sweep handled a scheduled message its job had not", { scheduledMessageId: row.id, outcome });
    }
  }
  return handled;
}

/**
 * At start: queues the job of every message still to send (the soonest REQUEUE_LIMIT). The
 * embedded mode's in-process queue lost them when its process stopped, and without this they
 * would go out with the sweep, seconds late; on Redis the same job ids queue nothing new.
 */
export async function requeueScheduledMessages(prisma: PrismaClient, jobs: JobQueue): Promise<number> {
  const pending = await pendingScheduledMessages(prisma, REQUEUE_LIMIT);
  for (let i = 0; i < pending.length; i += REQUEUE_CHUNK) {
    await Promise.all(pending.slice(i, i + REQUEUE_CHUNK).map((row) => queueScheduledMessage(jobs, { id: row.id, realmId: row.realm_id, at: row.at })));
  }
  return pending.length;
}
