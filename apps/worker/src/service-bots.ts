// Service bots in the worker tier. A message that triggers one (a mention, a private message)
// names it on its committed change; this tier reads the change stream as its own consumer group
// and queues the calls of each read of it, each call (message, bot) once whichever read carries
// it (JobQueue.addEach), so a change read twice queues nothing twice. A call goes to the bot's
// service (outgoing webhook) or runs the bot here (embedded), then sends the bot's reply, or tells
// the conversation and the bot's owner why there is none. A call that may succeed later (the
// service was down, slow, or answered 5xx) gets a job of its own, `<message>:<bot>:retry`,
// retried with backoff.
//
// One message calls at most OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE bots, and each organization has
// its own share of a worker's calls (RealmCallLimiter): jobs hold one organization's calls only,
// and a job whose organization already holds its share is put off rather than waiting in a slot.
//
// Many calls per job rather than one: BullMQ spends about 85 µs of the worker's CPU on a job,
// five times what undici spends on a post. Jobs of up to CALLS_PER_JOB calls, from reads of up
// to 100 changes (each holding the messages of one statement), cut that to a few µs a call.
import type { ChangeReadHandler, JobDeferral, JobItem, JobQueue, ServiceTrigger, Stoppable } from "@chat/bus";
import type { PrismaClient } from "@chat/db";
import {
  ActionRunner,
  BOT_TYPE_EMBEDDED,
  buildWebhookRequest,
  isOutageError,
  isServiceBotType,
  JsonableError,
  ownerNotice,
  readWebhookAnswer,
  sendServiceBotMessage,
  type Actor,
  type ServiceBot,
  type WebhookFailure,
  type WireMessage,
} from "@chat/core";
import { logger } from "@chat/logger";
import { jobRuns } from "@chat/metrics";
import { runEmbeddedBot } from "./embedded-bots.ts";
import { RealmCallLimiter } from "./realm-call-limiter.ts";
import type { ServiceBotCache } from "./service-bot-cache.ts";
import { WebhookClient, WebhookRequestError } from "./webhook-client.ts";

export const SERVICE_BOT_JOB = "service-bot";

/** A finished job, and a call's claim, are kept this long: longer than a change can take to be read again. */
const KEEP_COMPLETED_SECONDS = 600;

/** Runs of a job of first calls when queueing their retries failed (Redis trouble). */
const CALLS_JOB_ATTEMPTS = 5;

/**
 * A job put off (its organization holding its share of the worker) whose calls' message is older
 * than this is dropped: an answer that late is no answer, and an organization that keeps its bots
 * this busy would otherwise grow its backlog in Redis for as long as it sends.
 */
const MAX_CALL_WAIT_MS = 10 * 60_000;

/**
 * The most calls one job carries. BullMQ's cost per job is about 85 µs of the worker's CPU plus
 * 3.5 µs per call of data; measured through one worker, 50 calls a job cost 71-76 µs of CPU per
 * call in all and 200 cost 64-66. More saves little, and a killed worker's job, run again
 * elsewhere, repeats up to this many calls (their replies are not repeated).
 */
export const CALLS_PER_JOB = 200;

/** One service bot called about one message. */
export interface ServiceBotCall {
  botId: number;
  trigger: ServiceTrigger["trigger"];
  /** The message as the change carried it, both contents included. */
  message: WireMessage;
  /** The X-Request-Id of the requests its change came from, for the log lines about the call. */
  requestIds?: string[];
  /** The organization, whose share of the worker the call takes (absent in jobs queued before it was recorded). */
  realmId?: number;
}

/** A job's data: first attempts of calls (JobQueue.addEach's items), or a retry of one call. */
export interface ServiceBotJob {
  items: ServiceBotCall[];
  /** A retry job (one call): the attempts made before it. */
  attemptsBefore?: number;
}

export interface ServiceBotSettings {
  attempts: number;
  backoffMs: number;
  /** Calls under way at once in this process. */
  concurrency: number;
  /** Calls under way at once, and jobs held, for one organization in this process. */
  concurrencyPerRealm: number;
}

function callId(call: ServiceBotCall): string {
  return `${call.message.id}:${call.botId}`;
}

/**
 * The worker group's read handler: each service bot call its changes carry, queued once, in jobs
 * of one organization each; at most `maxBotsPerMessage` calls a message.
 */
export function queueServiceBotJobs(jobs: JobQueue, maxBotsPerMessage: number): ChangeReadHandler {
  return async (batches) => {
    const byRealm = new Map<number, JobItem[]>();
    for (const batch of batches) {
      for (const routed of batch.events) {
        if (routed.services === undefined || routed.event.type !== "message") continue;
        const message = routed.event.message as WireMessage;
        let services = routed.services;
        if (services.length > maxBotsPerMessage) {
          // The first, in the order RoutedEvent.services promises: those named first, then by id.
          logger.info("message triggers more service bots than one message may call", { messageId: message.id, realmId: batch.realmId, bots: services.length, called: maxBotsPerMessage });
          services = services.slice(0, maxBotsPerMessage);
        }
        let items = byRealm.get(batch.realmId);
        if (!items) byRealm.set(batch.realmId, (items = []));
        for (const { botId, trigger } of services) {
          const call: ServiceBotCall = { botId, trigger, message, realmId: batch.realmId };
          if (batch.requestIds !== undefined) call.requestIds = batch.requestIds;
          items.push({ key: callId(call), data: call as unknown as Record<string, unknown> });
        }
      }
    }
    // The read is acknowledged only once its calls are queued; a failure reads it again.
    await Promise.all(
      [...byRealm.values()].map((items) => jobs.addEach(SERVICE_BOT_JOB, items, { perJob: CALLS_PER_JOB, attempts: CALLS_JOB_ATTEMPTS, keepCompletedSeconds: KEEP_COMPLETED_SECONDS })),
    );
  };
}

export interface ServiceBotDelivery {
  prisma: PrismaClient;
  bots: ServiceBotCache;
  actions: ActionRunner;
  client: WebhookClient;
  /** The client's answer limit, for the owner's notice. */
  maxResponseBytes: number;
}

/**
 * Runs service bot jobs on this node: at most `concurrency` calls at once, and for one organization
 * at most `concurrencyPerRealm` calls and as many jobs; its jobs beyond that are put off.
 */
export function processServiceBotJobs(jobs: JobQueue, delivery: ServiceBotDelivery, settings: ServiceBotSettings): Stoppable {
  const limiter = new RealmCallLimiter(settings.concurrency, settings.concurrencyPerRealm);
  return jobs.process(
    SERVICE_BOT_JOB,
    async (data, { attempt, attempts }) => {
      const job = data as unknown as ServiceBotJob;
      const realmId = job.items[0]?.realmId ?? 0;
      if (!limiter.hold(realmId)) return putOff(limiter, realmId, job);
      try {
        if (job.attemptsBefore === undefined) {
          // First attempts; a call to try again gets a job of its own as soon as its attempt ends.
          const runs = await Promise.allSettled(
            job.items.map(async (call) => {
              if ((await limiter.run(realmId, () => runServiceBotCall(delivery, call, 1, settings.attempts))) === "retry") await queueRetry(jobs, call, settings);
            }),
          );
          // A retry not queued (Redis trouble): the job runs again, its replies are not repeated.
          const failed = runs.find((run) => run.status === "rejected");
          if (failed) throw failed.reason;
          return;
        }
        const outcome = await limiter.run(realmId, () => runServiceBotCall(delivery, job.items[0], job.attemptsBefore! + attempt, job.attemptsBefore! + attempts));
        if (outcome === "retry") throw new Error(`service bot call ${callId(job.items[0])} will be tried again`);
      } finally {
        limiter.release(realmId);
      }
    },
    // A job holds a slot only while its calls run or wait their turn, and one organization holds
    // at most its share of them: the rest of its jobs are put off, not held.
    settings.concurrency,
  );
}

/** A job whose organization holds its share: put off for about as long as that work will take, or dropped once too old. */
function putOff(limiter: RealmCallLimiter, realmId: number, job: ServiceBotJob): JobDeferral | undefined {
  const newest = Math.max(...job.items.map((call) => call.message.timestamp)) * 1000;
  if (Date.now() - newest > MAX_CALL_WAIT_MS) {
    logger.warn("service bot calls given up: their organization's calls kept the worker busy too long", { realmId, calls: job.items.length, messageIds: [...new Set(job.items.map((call) => call.message.id))] });
    jobRuns.inc({ kind: "service bot call", outcome: "gave_up" }, job.items.length);
    return undefined;
  }
  jobRuns.inc({ kind: "service bot job", outcome: "deferred" });
  return { deferMs: limiter.deferMs(realmId) };
}

/** What the conversation and the owner are told of a service that could not be reached (Zulip's words). */
const connectionFailure = () => new CallFailed("Bot is unavailable", { reason: "A connection error occurred. Is my bot server down?" });

/** The second attempt after `backoffMs`, and BullMQ's backoff doubling from there. */
function queueRetry(jobs: JobQueue, call: ServiceBotCall, settings: ServiceBotSettings): Promise<void> {
  const job: ServiceBotJob = { items: [call], attemptsBefore: 1 };
  return jobs.add(SERVICE_BOT_JOB, job as unknown as Record<string, unknown>, {
    jobId: `${callId(call)}:retry`,
    attempts: settings.attempts - 1,
    delayMs: settings.backoffMs,
    backoffMs: settings.backoffMs * 2,
    keepCompletedSeconds: KEEP_COMPLETED_SECONDS,
  });
}

/** A call that failed: what the conversation is told, and what the owner is told. */
class CallFailed extends Error {
  constructor(
    readonly conversation: string,
    readonly owner: WebhookFailure,
  ) {
    super(conversation);
  }
}

/** A failure worth another attempt (the service was down or slow); on the last attempt it is a CallFailed. */
class CallUnavailable extends Error {
  constructor(readonly failure: CallFailed) {
    super(failure.owner.reason ?? failure.conversation);
  }
}

/**
 * One attempt of a call: "done" (replied, nothing to say, or failed for good, which the
 * conversation and the owner were told), or "retry" (not the last attempt, and it may work later).
 */
export async function runServiceBotCall(delivery: ServiceBotDelivery, call: ServiceBotCall, attempt: number, attempts: number): Promise<"done" | "retry"> {
  const outcome = await attemptServiceBotCall(delivery, call, attempt, attempts);
  jobRuns.inc({ kind: "service bot call", outcome });
  logger.http("service bot call", { call: callId(call), attempt, outcome, requestIds: call.requestIds });
  return outcome === "retry" ? "retry" : "done";
}

/** runServiceBotCall's attempt: "ok" (replied, or nothing to do), "failed" (the conversation and owner were told), or "retry". */
async function attemptServiceBotCall(delivery: ServiceBotDelivery, call: ServiceBotCall, attempt: number, attempts: number): Promise<"ok" | "failed" | "retry"> {
  const last = attempt >= attempts;
  try {
    const found = await delivery.bots.get(call.botId);
    // Deactivated, or no longer a service bot, since the message was sent: nobody to call.
    if (found === null || !found.bot.is_active || found.bot.realm.deactivated || !isServiceBotType(found.bot.bot_type)) return "ok";
    const { bot, service } = found;
    let reply: string | null;
    try {
      if (bot.bot_type === BOT_TYPE_EMBEDDED) reply = await runEmbeddedBot(delivery, bot, service?.name ?? "", call.message);
      else if (service === null) return "ok";
      else reply = await callService(delivery, bot, service, call);
    } catch (error) {
      if (error instanceof CallUnavailable) {
        if (!last) return "retry";
        await fail(delivery, bot, call.message, error.failure);
        return "failed";
      }
      if (error instanceof CallFailed) {
        await fail(delivery, bot, call.message, error);
        return "failed";
      }
      throw error;
    }
    if (reply !== null) await send(delivery, bot, call.message, "reply", reply);
    return "ok";
  } catch (error) {
    // The database or Redis failing under us: the call may work later.
    logger.warn("service bot call failed unexpectedly", { call: callId(call), attempt, requestIds: call.requestIds, error: error instanceof Error ? error.message : String(error) });
    if (!last) return "retry";
    return "failed";
  }
}

async function callService(delivery: ServiceBotDelivery, bot: Actor, service: NonNullable<ServiceBot["service"]>, call: ServiceBotCall): Promise<string | null> {
  const request = buildWebhookRequest(service, bot, call.trigger, call.message);
  if ("refused" in request) throw new CallFailed(request.refused, { reason: request.refused });
  let response: Awaited<ReturnType<WebhookClient["post"]>>;
  try {
    response = await delivery.client.post(service.base_url, request);
  } catch (error) {
    if (!(error instanceof WebhookRequestError)) throw error;
    switch (error.kind) {
      case "timeout":
        throw new CallUnavailable(new CallFailed("Bot is unavailable", { reason: "A timeout occurred." }));
      case "connection":
        throw new CallUnavailable(connectionFailure());
      // A refused destination will be refused again: it fails at once, and so does a name that
      // does not exist, so that the two look alike. Either reads to the owner as a connection
      // error: told apart, a bot's owner could map which names resolve to internal addresses. The
      // log has the difference.
      case "refused-address":
      case "not-found":
        if (error.kind === "refused-address") logger.warn("outgoing webhook destination refused", { botId: bot.id, reason: error.message });
        throw connectionFailure();
      case "too-large":
        throw new CallFailed("The response was too large.", { reason: `The response was larger than ${Math.round(delivery.maxResponseBytes / 1024)} KiB.` });
      case "bad-url":
        throw new CallFailed("Bot is unavailable", { reason: `The webhook URL cannot be called: ${error.message}` });
      default:
        throw new CallUnavailable(new CallFailed("Bot is unavailable", { reason: "The request to the webhook service failed." }));
    }
  }
  const body = response.body.toString("utf8");
  if (response.status < 200 || response.status >= 300) {
    const failed = new CallFailed(`Third party responded with ${response.status}`, { status: response.status, payload: body });
    // A server error or a rate limit may pass; anything else will answer the same again.
    if (response.status >= 500 || response.status === 429) throw new CallUnavailable(failed);
    throw failed;
  }
  const answer = readWebhookAnswer(service.interface, body);
  if ("invalid" in answer) throw new CallFailed(answer.invalid, { reason: "The response was not valid JSON.", payload: body });
  return "reply" in answer ? answer.reply : null;
}

/** Zulip's fail_with_message and notify_bot_owner. */
async function fail(delivery: ServiceBotDelivery, bot: Actor, message: WireMessage, failure: CallFailed): Promise<void> {
  logger.info("service bot call failed", { botId: bot.id, messageId: message.id, reason: failure.owner.reason ?? failure.conversation, status: failure.owner.status });
  await send(delivery, bot, message, "reply", `Failure! ${failure.conversation}`);
  await send(delivery, bot, message, "owner", ownerNotice(message, failure.owner));
}

async function send(delivery: ServiceBotDelivery, bot: Actor, message: WireMessage, kind: "reply" | "owner", content: string): Promise<void> {
  try {
    await sendServiceBotMessage(delivery.actions, bot, message, kind, content);
  } catch (error) {
    // The bot may not post there (any more): another attempt would be refused the same way.
    if (error instanceof JsonableError && !isOutageError(error)) {
      logger.info("service bot message refused", { botId: bot.id, messageId: message.id, kind, reason: error.message });
      return;
    }
    throw error;
  }
}
