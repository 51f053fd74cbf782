// Service bots in the worker tier. A message that triggers one (a mention, a private message)
// names it on its committed change; this tier reads the change stream as its own consumer group
// and queues the calls of each read of it, each call (message, bot) once whichever read carries
// it (JobQueue.addEach), so a change read twice queues nothing twice. A call goes to the bot's
// service (outgoing webhook) or runs the bot here (embedded), then sends the bot's reply, or tells
// the conversation and the bot's owner why there is none. A call that may succeed later (the
// service was down, slow, or answered 5xx) gets a job of its own, `<message>:<bot>:retry`,
// retried with backoff.
//
// Many calls per job rather than one: BullMQ spends about 85 µs of the worker's CPU on a job,
// five times what undici spends on a post. Jobs of up to CALLS_PER_JOB calls, from reads of up
// to 100 changes (each holding the messages of one statement), cut that to a few µs a call.
import type { ChangeReadHandler, JobItem, JobQueue, ServiceTrigger, Stoppable } from "@chat/bus";
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
import pLimit from "p-limit";
import { runEmbeddedBot } from "./embedded-bots.ts";
import type { ServiceBotCache } from "./service-bot-cache.ts";
import { WebhookClient, WebhookRequestError } from "./webhook-client.ts";

export const SERVICE_BOT_JOB = "service-bot";

/** A finished job, and a call's claim, are kept this long: longer than a change can take to be read again. */
const KEEP_COMPLETED_SECONDS = 600;

/** Runs of a job of first calls when queueing their retries failed (Redis trouble). */
const CALLS_JOB_ATTEMPTS = 5;

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
}

function callId(call: ServiceBotCall): string {
  return `${call.message.id}:${call.botId}`;
}

/** The worker group's read handler: each service bot call its changes carry, queued once. */
export function queueServiceBotJobs(jobs: JobQueue): ChangeReadHandler {
  return async (batches) => {
    const items: JobItem[] = [];
    for (const batch of batches) {
      for (const routed of batch.events) {
        if (routed.services === undefined || routed.event.type !== "message") continue;
        const message = routed.event.message as WireMessage;
        for (const { botId, trigger } of routed.services) {
          const call: ServiceBotCall = batch.requestIds === undefined ? { botId, trigger, message } : { botId, trigger, message, requestIds: batch.requestIds };
          items.push({ key: callId(call), data: call as unknown as Record<string, unknown> });
        }
      }
    }
    if (items.length === 0) return;
    // The read is acknowledged only once its calls are queued; a failure reads it again.
    await jobs.addEach(SERVICE_BOT_JOB, items, { perJob: CALLS_PER_JOB, attempts: CALLS_JOB_ATTEMPTS, keepCompletedSeconds: KEEP_COMPLETED_SECONDS });
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

/** Runs service bot jobs on this node, at most `concurrency` calls at once. */
export function processServiceBotJobs(jobs: JobQueue, delivery: ServiceBotDelivery, settings: ServiceBotSettings): Stoppable {
  const limit = pLimit(settings.concurrency);
  return jobs.process(
    SERVICE_BOT_JOB,
    async (data, { attempt, attempts }) => {
      const job = data as unknown as ServiceBotJob;
      if (job.attemptsBefore === undefined) {
        // First attempts; the calls to try again get jobs of their own.
        const outcomes = await Promise.all(job.items.map((call) => limit(() => runServiceBotCall(delivery, call, 1, settings.attempts))));
        await Promise.all(job.items.filter((_, i) => outcomes[i] === "retry").map((call) => queueRetry(jobs, call, settings)));
        return;
      }
      const outcome = await limit(() => runServiceBotCall(delivery, job.items[0], job.attemptsBefore! + attempt, job.attemptsBefore! + attempts));
      if (outcome === "retry") throw new Error(`service bot call ${callId(job.items[0])} will be tried again`);
    },
    // Jobs wait on the call limit, not on BullMQ's: a job may hold many calls.
    settings.concurrency,
  );
}

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
      // A refused destination reads as one that does not answer: told apart, a bot's owner could
      // map which names resolve to internal addresses. The log has the difference.
      case "refused-address":
        if (error.kind === "refused-address") logger.warn("outgoing webhook destination refused", { botId: bot.id, reason: error.message });
        throw new CallUnavailable(new CallFailed("Bot is unavailable", { reason: "A connection error occurred. Is my bot server down?" }));
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
