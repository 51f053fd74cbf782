// Scheduled messages (Zulip's zerver/actions/scheduled_messages.py; feature levels 173-184). A
// message is checked as a send would check it when scheduled and again when sent: the sender's
// permissions, the stream, the people may all have changed meanwhile.
//
// Sending happens in the worker tier (apps/worker/src/scheduled-messages.ts). It is exactly once:
// the transaction that writes the message also marks the row delivered, after locking it and
// checking it is neither delivered nor failed, so a second run of the job (its worker died after
// the commit, a sweep beside the job) finds nothing to do. A refusal (the stream is gone, the
// sender may no longer post there) marks the row failed in a transaction of its own, which also
// announces it and tells the sender through Notification Bot, as Zulip does.
import { leanSql, Prisma, type Tx } from "@chat/db";
import { logger } from "@chat/logger";
import { ACTOR_COLUMNS, actorFromRow, type ActorRow } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { badRequest, JsonableError } from "../errors.ts";
import type { ActionRunner, EventRecorder } from "../events.ts";
import { realmHost } from "../lib/realm-hosts.ts";
import type { Actor } from "../models.ts";
import { isOutageError } from "../outage.ts";
import { SCHEDULED_MESSAGE_COLUMNS, scheduledMessageDict, type ScheduledMessageRow } from "../queries/scheduled-messages.ts";
import { checkMessage, checkTopic, sendMessage, type MessageDestination } from "./messages.ts";
import { sendNotification } from "./notification-bot.ts";

/** Zulip's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES: a message more late than this is not sent (it fails). */
export const SCHEDULED_MESSAGE_LATE_CUTOFF_SECONDS = 10 * 60;
/** Messages one user may have waiting (failed ones included); each is a row and a job. */
export const MAX_SCHEDULED_MESSAGES = 1000;

export type ScheduledMessageType = "stream" | "private";

/** The API's `type`: feature level 174 added `direct`, 248 `channel`. */
export function scheduledMessageType(type: "stream" | "channel" | "private" | "direct"): ScheduledMessageType {
  return type === "stream" || type === "channel" ? "stream" : "private";
}

/** Zulip's extract_stream_id: `to` of a stream message is the stream's id. */
export function parseScheduledStreamId(raw: string): number {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw badRequest("Invalid data type for channel ID");
  const id = Number(text);
  // No stream has an id beyond Postgres' integer: such a number names none.
  if (!Number.isSafeInteger(id) || id < 0 || id > 2_147_483_647) throw new JsonableError(`Stream with ID '${text}' does not exist`, { code: "STREAM_DOES_NOT_EXIST", extra: { stream_id: id } });
  return id;
}

/** Zulip's extract_direct_message_recipient_ids: a JSON list of user ids (duplicates dropped). */
export function parseScheduledRecipientIds(raw: string, maxItems: number): number[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  if (!Array.isArray(value)) throw badRequest("Invalid data type for recipients");
  if (value.length > maxItems) throw badRequest(`to has too many items (limit: ${maxItems})`);
  for (const id of value) {
    if (!Number.isSafeInteger(id)) throw badRequest("Recipient list may only contain user IDs");
    if ((id as number) < 0 || (id as number) > 2_147_483_647) throw badRequest(`Invalid user ID ${id}`);
  }
  return [...new Set(value as number[])];
}

function checkDeliverAt(at: number): void {
  if (at * 1000 <= Date.now()) throw badRequest("Scheduled delivery time must be in the future.");
}

export interface ScheduleRequest {
  type: ScheduledMessageType;
  /** The stream's id, or the people's. */
  to: number | number[];
  topic: string | undefined;
  content: string;
  /** Unix seconds. */
  deliverAt: number;
  readBySender?: boolean;
  client: string;
  realmHost?: string;
}

function destinationOf(type: ScheduledMessageType, to: number | number[], topic: string | undefined): MessageDestination {
  return type === "stream" ? { type: "stream", stream: to as number, topic } : { type: "private", to: to as number[] };
}

/** A private message's `to` as the API shows it: the others, or the sender alone for a note to self. */
function othersOf(participantIds: number[], senderId: number): number[] {
  const others = participantIds.filter((id) => id !== senderId).sort((a, b) => a - b);
  return others.length > 0 ? others : [senderId];
}

async function readRow(tx: Tx, id: number): Promise<ScheduledMessageRow> {
  const rows = await leanSql(tx).query<ScheduledMessageRow>(Prisma.sql`SELECT ${SCHEDULED_MESSAGE_COLUMNS} FROM scheduled_message WHERE id = ${id}`);
  return rows[0];
}

/** POST /scheduled_messages (Zulip's check_schedule_message): returns the new row's id. */
export async function scheduleMessage(tx: Tx, events: EventRecorder, actor: Actor, request: ScheduleRequest): Promise<number> {
  checkDeliverAt(request.deliverAt);
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${actor.id} FOR UPDATE`;
  const [{ n }] = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM scheduled_message WHERE sender_id = ${actor.id} AND NOT delivered`;
  if (n >= MAX_SCHEDULED_MESSAGES) throw badRequest(`Too many scheduled messages (limit: ${MAX_SCHEDULED_MESSAGES})`);
  const checked = await checkMessage(tx, actor, { destination: destinationOf(request.type, request.to, request.topic), content: request.content, client: request.client, realmHost: request.realmHost });
  const toUserIds = checked.streamId === null ? othersOf(checked.participantIds, actor.id) : null;
  // Zulip's default: read for the sender, unless it is a note to self (which should stand out when it arrives).
  const readBySender = request.readBySender ?? !(toUserIds !== null && toUserIds.length === 1 && toUserIds[0] === actor.id);
  const rows = await tx.$queryRaw<{ id: number }[]>`
    INSERT INTO scheduled_message (realm_id, sender_id, stream_id, to_user_ids, subject, content, rendered_content, sending_client, scheduled_timestamp, read_by_sender)
    VALUES (${actor.realm_id}, ${actor.id}, ${checked.streamId}, ${toUserIds}::int[], ${checked.topic}, ${request.content}, ${checked.renderedContent}, ${request.client},
            to_timestamp(${request.deliverAt}::float8), ${readBySender})
    RETURNING id`;
  const id = rows[0].id;
  events.send({ type: "scheduled_messages", op: "add", scheduled_messages: [scheduledMessageDict(await readRow(tx, id))] }, [actor.id]);
  return id;
}

export interface ScheduleChanges {
  type?: ScheduledMessageType;
  /** `to` as sent: read as the (new or kept) type's. */
  to?: string;
  topic?: string;
  content?: string;
  deliverAt?: number;
  client: string;
  realmHost?: string;
  /** The most people `to` may name. */
  maxRecipients: number;
}

function notFound(): JsonableError {
  return new JsonableError("Scheduled message does not exist", { status: 404 });
}

async function lockOwnRow(tx: Tx, actor: Actor, id: number): Promise<ScheduledMessageRow> {
  const rows = await leanSql(tx).query<ScheduledMessageRow>(Prisma.sql`
    SELECT ${SCHEDULED_MESSAGE_COLUMNS} FROM scheduled_message WHERE id = ${id} AND sender_id = ${actor.id} FOR UPDATE`);
  if (!rows[0]) throw notFound();
  return rows[0];
}

/**
 * PATCH /scheduled_messages/{id} (Zulip's edit_scheduled_message): what changes is checked again
 * as a send would check it; a failed message needs a new time, and is waiting again after. Returns
 * the delivery time, for the job that sends it.
 */
export async function editScheduledMessage(tx: Tx, events: EventRecorder, actor: Actor, id: number, changes: ScheduleChanges): Promise<{ realmId: number; at: number }> {
  if (changes.deliverAt !== undefined) checkDeliverAt(changes.deliverAt);
  const row = await lockOwnRow(tx, actor, id);
  if (row.delivered) throw badRequest("Scheduled message was already sent");
  if (row.failed && changes.deliverAt === undefined) throw badRequest("Scheduled delivery time must be in the future.");
  const existingType: ScheduledMessageType = row.stream_id !== null ? "stream" : "private";
  let streamId = row.stream_id;
  let toUserIds = row.to_user_ids;
  let subject = row.subject;
  let content = row.content;
  let rendered = row.rendered_content;
  if (changes.type !== undefined || changes.to !== undefined || changes.content !== undefined) {
    const type = changes.type ?? existingType;
    const to =
      changes.to === undefined
        ? existingType === "stream"
          ? row.stream_id!
          : (row.to_user_ids ?? [])
        : type === "stream"
          ? parseScheduledStreamId(changes.to)
          : parseScheduledRecipientIds(changes.to, changes.maxRecipients);
    const newContent = changes.content ?? row.content;
    const checked = await checkMessage(tx, actor, { destination: destinationOf(type, to, changes.topic ?? row.subject), content: newContent, client: changes.client, realmHost: changes.realmHost });
    if (changes.type !== undefined || changes.to !== undefined) {
      streamId = checked.streamId;
      toUserIds = checked.streamId === null ? othersOf(checked.participantIds, actor.id) : null;
      subject = checked.topic;
    } else if (changes.topic !== undefined && existingType === "stream") {
      subject = checked.topic;
    }
    if (changes.content !== undefined) {
      content = newContent;
      rendered = checked.renderedContent;
    }
  } else if (changes.topic !== undefined && existingType === "stream") {
    // A new topic alone; a direct message's is ignored, as in Zulip.
    subject = checkTopic(changes.topic, actor.realm.mandatory_topics);
  }
  const at = changes.deliverAt ?? row.at;
  await tx.$executeRaw`
    UPDATE scheduled_message SET stream_id = ${streamId}, to_user_ids = ${toUserIds}::int[], subject = ${subject}, content = ${content}, rendered_content = ${rendered},
      sending_client = ${changes.client}, scheduled_timestamp = to_timestamp(${at}::float8), failed = false, failure_message = NULL
    WHERE id = ${id}`;
  events.send({ type: "scheduled_messages", op: "update", scheduled_message: scheduledMessageDict(await readRow(tx, id)) }, [actor.id]);
  return { realmId: row.realm_id, at: Math.floor(at) };
}

/** DELETE /scheduled_messages/{id} (Zulip's delete_scheduled_message). */
export async function deleteScheduledMessage(tx: Tx, events: EventRecorder, actor: Actor, id: number): Promise<void> {
  await lockOwnRow(tx, actor, id);
  await tx.$executeRaw`DELETE FROM scheduled_message WHERE id = ${id}`;
  events.send({ type: "scheduled_messages", op: "remove", scheduled_message_id: id }, [actor.id]);
}

/** Which message a delivery is for: `at`, the time its job was queued for (none for the sweep's). */
export interface ScheduledDelivery {
  id: number;
  realmId: number;
  at?: number;
}

/**
 * What a delivery did: sent it; recorded its failure; found nothing to do (sent, failed or deleted
 * already, or another worker holds it: "gone"); found its time changed since the job was queued
 * ("stale": the job of the new time sends it); or found it due only later (a job run early).
 */
export type DeliveryOutcome = "sent" | "failed" | "gone" | "stale" | { notDueMs: number };

/** The row if it is still to send, locked (not waiting for another worker's lock when `skipLocked`). */
async function lockPending(tx: Tx, id: number, skipLocked: boolean): Promise<ScheduledMessageRow | null> {
  const lock = skipLocked ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.sql`FOR UPDATE`;
  const rows = await leanSql(tx).query<ScheduledMessageRow>(Prisma.sql`
    SELECT ${SCHEDULED_MESSAGE_COLUMNS} FROM scheduled_message WHERE id = ${id} AND NOT delivered AND NOT failed ${lock}`);
  return rows[0] ?? null;
}

async function loadSender(tx: Tx, userId: number): Promise<Actor> {
  const rows = await leanSql(tx).query<ActorRow>(Prisma.sql`SELECT ${ACTOR_COLUMNS} FROM user_profile u JOIN realm r ON r.id = u.realm_id WHERE u.id = ${userId}`);
  return actorFromRow(rows[0]);
}

/** A failure the sender is not told of (nobody is there to read it), as Zulip's RealmDeactivatedError / UserDeactivatedError. */
class SilentFailure extends Error {}

/**
 * Sends scheduled message `delivery.id` if it is due and still to send (the worker's job and
 * sweep). Throws only when the database is away (the job tries again); a refusal is recorded.
 */
export async function deliverScheduledMessage(actions: ActionRunner, ctx: ServerContext, delivery: ScheduledDelivery, options: { skipLocked?: boolean } = {}): Promise<DeliveryOutcome> {
  let failure: { message: string; silent: boolean };
  try {
    return await actions.run(delivery.realmId, async (tx, events): Promise<DeliveryOutcome> => {
      const row = await lockPending(tx, delivery.id, options.skipLocked ?? false);
      if (!row) return "gone";
      if (delivery.at !== undefined && Math.floor(row.at) !== delivery.at) return "stale";
      const dueInMs = row.at * 1000 - Date.now();
      if (dueInMs > 0) return { notDueMs: Math.ceil(dueInMs) };
      const sender = await loadSender(tx, row.sender_id);
      // Zulip's checks of validate_account_and_subdomain, as the state is now.
      if (sender.realm.deactivated) throw new SilentFailure("This organization has been deactivated");
      if (!sender.is_active) throw new SilentFailure("Account is deactivated");
      if (Date.now() / 1000 > row.at + SCHEDULED_MESSAGE_LATE_CUTOFF_SECONDS) throw badRequest("Message could not be sent at the scheduled time.");
      const destination = destinationOf(row.stream_id !== null ? "stream" : "private", row.stream_id ?? row.to_user_ids ?? [], row.subject);
      const sent = await sendMessage(tx, events, sender, {
        destination,
        content: row.content,
        client: row.sending_client,
        readBySender: row.read_by_sender,
        realmHost: realmHost(sender.realm.string_id, ctx.externalHost),
      });
      await tx.$executeRaw`UPDATE scheduled_message SET delivered = true, delivered_message_id = ${sent.id} WHERE id = ${row.id}`;
      events.send({ type: "scheduled_messages", op: "remove", scheduled_message_id: row.id }, [row.sender_id]);
      return "sent";
    });
  } catch (error) {
    if (isOutageError(error)) throw error;
    if (error instanceof SilentFailure) failure = { message: error.message, silent: true };
    else if (error instanceof JsonableError) failure = { message: error.message, silent: false };
    else {
      logger.error("unexpected error sending a scheduled message", { scheduledMessageId: delivery.id, error: String(error), stack: (error as Error)?.stack });
      failure = { message: "Internal server error", silent: false };
    }
  }
  return recordFailure(actions, ctx, delivery, failure);
}

/**
 * Marks the row failed (if it is still to send at the time it was tried for), and unless silent
 * announces it and tells the sender (Zulip's send_failed_scheduled_message_notification), all in
 * one transaction: the notice is sent once.
 */
async function recordFailure(actions: ActionRunner, ctx: ServerContext, delivery: ScheduledDelivery, failure: { message: string; silent: boolean }): Promise<DeliveryOutcome> {
  return actions.run(delivery.realmId, async (tx, events): Promise<DeliveryOutcome> => {
    const row = await lockPending(tx, delivery.id, false);
    if (!row) return "gone";
    if (delivery.at !== undefined && Math.floor(row.at) !== delivery.at) return "stale";
    await tx.$executeRaw`UPDATE scheduled_message SET failed = true, failure_message = ${failure.message} WHERE id = ${row.id}`;
    logger.info("a scheduled message could not be sent", { scheduledMessageId: row.id, reason: failure.message });
    if (failure.silent) return "failed";
    events.send({ type: "scheduled_messages", op: "update", scheduled_message: scheduledMessageDict(await readRow(tx, row.id)) }, [row.sender_id]);
    const sender = await loadSender(tx, row.sender_id);
    const when = new Date(Math.floor(row.at) * 1000).toISOString().replace(".000Z", "+00:00");
    const content = `The message you scheduled for <time:${when}> was not sent because of the following error:\n\n> ${failure.message}\n\n[View scheduled messages](#scheduled)\n\n`;
    await sendNotification(tx, events, ctx, sender.realm, { type: "private", to: [sender.id] }, content);
    return "failed";
  });
}
