// The worker tier: background work that must never run in a request. Each job is safe to run on
// several workers at once (outbox rows are locked with SKIP LOCKED; queue expiry is idempotent).
import type { Bus } from "@chat/bus";
import type { PrismaClient } from "@chat/db";
import { sweepOutbox } from "@chat/core";
import { logger } from "@chat/logger";
import { every } from "./periodic.ts";

export interface WorkerServices {
  prisma: PrismaClient;
  bus: Bus;
  /** Outbox rows older than this were left by a publisher that died. */
  outboxSweepAfterSeconds: number;
  /** Event queues not polled for this long are deleted. */
  queueIdleSeconds: number;
}

export interface WorkerTier {
  stop(): Promise<void>;
}

export function startWorker(services: WorkerServices): WorkerTier {
  const { prisma, bus } = services;
  const jobs = [
    every("outbox sweep", 1000, async () => {
      const published = await sweepOutbox(prisma, bus.changes, services.outboxSweepAfterSeconds);
      if (published > 0) logger.info("outbox sweeper published left-behind events", { batches: published });
    }),
    every("idle queue expiry", 30_000, async () => {
      const deleted = await bus.queues.deleteIdle(services.queueIdleSeconds * 1000);
      if (deleted > 0) logger.info("deleted idle event queues", { queues: deleted });
    }),
  ];
  return {
    async stop() {
      await Promise.all(jobs.map((job) => job.stop()));
    },
  };
}
