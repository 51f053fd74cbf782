// The worker tier: background work that must never run in a request. Each job is safe to run on
// several workers at once (outbox rows are locked with SKIP LOCKED; queue expiry is idempotent).
import { hostname } from "node:os";
import type { Bus } from "@chat/bus";
import type { MailConfig, OutgoingWebhookConfig } from "@chat/config";
import type { PrismaClient } from "@chat/db";
import { promoteNewFullMembers, refreshStreamRecentActivity, refreshStreamWeeklyTraffic, sweepBrowserSessions, sweepDeactivatedRealms, sweepOutbox, sweepPasswordResetTokens, sweepStaleTusUploads, sweepUnclaimedUploads, type ActionRunner, type ServerContext } from "@chat/core";
import type { FileStorage } from "@chat/storage";
import { logger } from "@chat/logger";
import { every } from "./periodic.ts";
import { createMailSender, processEmailJobs } from "./mail.ts";
import { processScheduledMessageJobs, requeueScheduledMessages, sweepScheduledMessages } from "./scheduled-messages.ts";
import { processServiceBotJobs, queueServiceBotJobs } from "./service-bots.ts";
import { WebhookClient } from "./webhook-client.ts";
import { processRealmExportJobs } from "./realm-export.ts";
import { ServiceBotCache } from "./service-bot-cache.ts";

/** How long a worker uses what it read of a service bot (its service, whether it is active). */
const SERVICE_BOT_TTL_MS = 2000;

export interface WorkerServices {
  prisma: PrismaClient;
  bus: Bus;
  /** Outbox rows older than this were left by a publisher that died. */
  outboxSweepAfterSeconds: number;
  /** Event queues not polled for this long are deleted. */
  queueIdleSeconds: number;
  storage: FileStorage;
  /** Uploads no message links are deleted once this old. */
  unclaimedUploadGraceHours: number;
  /** Sends the replies of service bots. */
  actions: ActionRunner;
  outgoingWebhooks: OutgoingWebhookConfig;
  /** Development: outgoing webhooks may call loopback addresses. */
  devMode: boolean;
  /** Where the emails the API tier queues go (SMTP, or the log without EMAIL_HOST). */
  mail: MailConfig;
  /** Organization exports' events and notifications (realm-export.ts). */
  ctx: ServerContext;
}

export interface WorkerTier {
  stop(): Promise<void>;
}

export function startWorker(services: WorkerServices): WorkerTier {
  const { prisma, bus } = services;
  const scheduledDeps = { prisma, actions: services.actions, ctx: services.ctx };
  const jobs = [
    every("outbox sweep", 1000, async () => {
      const published = await sweepOutbox(prisma, bus.changes, services.outboxSweepAfterSeconds);
      if (published > 0) logger.info("outbox sweeper published left-behind events", { batches: published });
    }),
    every("idle queue expiry", 30_000, async () => {
      const deleted = await bus.queues.deleteIdle(services.queueIdleSeconds * 1000);
      if (deleted > 0) logger.info("deleted idle event queues", { queues: deleted });
    }),
    every("unclaimed upload sweep", 10 * 60_000, async () => {
      const deleted = await sweepUnclaimedUploads(prisma, services.storage, services.unclaimedUploadGraceHours);
      if (deleted > 0) logger.info("deleted uploads no message links", { files: deleted });
    }),
    // Resumable uploads (tus) nobody continued for a day: rows and pieces (tus-uploads.ts).
    every("stale resumable upload sweep", 10 * 60_000, async () => {
      const deleted = await sweepStaleTusUploads(prisma, services.storage);
      if (deleted > 0) logger.info("deleted unfinished resumable uploads", { uploads: deleted });
    }),
    // Organizations deactivated with a deletion date now past (POST /realm/deactivate, feature level 332).
    every("deactivated organization deletion", 60 * 60_000, async () => {
      const deleted = await sweepDeactivatedRealms(prisma, services.storage);
      if (deleted > 0) logger.info("deleted deactivated organizations' data", { realms: deleted });
    }),
    every("password reset link sweep", 60 * 60_000, () => sweepPasswordResetTokens(prisma)),
    every("browser session sweep", 60 * 60_000, () => sweepBrowserSessions(prisma)),
    // Streams' stream_weekly_traffic (feature level 199), which changes slowly: hourly.
    every("stream weekly traffic", 60 * 60_000, () => refreshStreamWeeklyTraffic(prisma)),
    // Streams' is_recently_active (feature level 323): Zulip's daily pass, and a stream that got a
    // message again, hourly (stream-activity.ts).
    every("stream recent activity", 60 * 60_000, () => refreshStreamRecentActivity(prisma, services.actions)),
    // Members past their realm's waiting period join role:fullmembers (Zulip's daily
    // promote_new_full_members; hourly here, so a member waits at most an hour past it).
    every("full member promotion", 60 * 60_000, async () => {
      const changed = await promoteNewFullMembers(prisma, services.actions);
      if (changed > 0) logger.info("full members group brought up to date", { users: changed });
    }),
    // Scheduled messages whose job was lost (scheduled-messages.ts).
    every("scheduled message sweep", 5000, () => sweepScheduledMessages(scheduledDeps)),
  ];
  const mailSender = createMailSender(services.mail);
  if (mailSender.destination === "log") logger.info("EMAIL_HOST is not set: emails (password resets, invitations) are written to this log, not sent");
  const emails = processEmailJobs(bus.jobs, mailSender);
  const scheduledMessages = processScheduledMessageJobs(bus.jobs, scheduledDeps);
  requeueScheduledMessages(prisma, bus.jobs).catch((error: unknown) => logger.warn("could not queue the scheduled messages again; the sweep will send them", { error: String(error) }));
  const realmExports = processRealmExportJobs(bus.jobs, { prisma, storage: services.storage, actions: services.actions, ctx: services.ctx });
  const webhooks = services.outgoingWebhooks;
  const client = new WebhookClient({
    timeoutMs: webhooks.timeoutMs,
    maxResponseBytes: webhooks.maxResponseBytes,
    allowedHosts: webhooks.allowedHosts,
    allowLoopback: services.devMode,
    // Zulip's, with the version this server speaks.
    userAgent: "ZulipOutgoingWebhook/3.0",
  });
  const settings = { attempts: webhooks.attempts, backoffMs: webhooks.backoffMs, concurrency: webhooks.concurrency, concurrencyPerRealm: webhooks.concurrencyPerRealm };
  // The worker tier's own consumer group of the change stream: every worker shares its batches.
  const changes = bus.changes.consumeReads(`worker-${hostname()}-${process.pid}`, queueServiceBotJobs(bus.jobs, webhooks.maxBotsPerMessage), {
    group: "workers",
    // Only changes that call a service bot (RoutedEvent.services) concern this tier.
    containing: '"services":',
  });
  const serviceBots = processServiceBotJobs(
    bus.jobs,
    { prisma, bots: new ServiceBotCache(prisma, SERVICE_BOT_TTL_MS), actions: services.actions, client, maxResponseBytes: webhooks.maxResponseBytes },
    settings,
  );
  return {
    async stop() {
      // Running jobs finish (BullMQ's close waits for them); their replies still need the database.
      await Promise.all([changes.stop(), serviceBots.stop(), emails.stop(), realmExports.stop(), scheduledMessages.stop(), ...jobs.map((job) => job.stop())]);
      client.close();
      mailSender.close();
    },
  };
}
