// GET /events as Zulip's get_events: the events after last_event_id, at once if there are any or
// the client asked not to block, else when some arrive (the fan-out announces the queue), else a
// heartbeat after the heartbeat wait. Shared by the hot route (events-hot-route.ts) and Express's.
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { QueuedEvent, QueueStore } from "@chat/bus";
import { setTimeout as sleep } from "node:timers/promises";
import type { LongPollWaiters } from "./waiters.ts";

/** A poll woken within this long of starting to wait is on a busy queue (pollEvents). */
const BUSY_QUEUE_MS = 100;
/** How long a poll on a busy queue gathers events before it answers. */
const COALESCE_MS = 25;

export interface PollRequest {
  queueId: string;
  lastEventId: number;
  dontBlock: boolean;
  /** The user polling: another user's queue reads as no queue. */
  userId: number;
}

/** Whether the client went away, and what to stop then (a plain object: see waiters.ts). */
export interface PollConnection {
  closed: boolean;
  /** The wait to cancel then. */
  waiting: { cancel(): void } | null;
}

const CONNECTION = Symbol("poll connection");
type PollResponse = ServerResponse & { [CONNECTION]?: PollConnection };

/** One listener for every poll's response ("close" comes once): no closure or once-wrapper each. */
function onPollResponseClose(this: PollResponse): void {
  const connection = this[CONNECTION];
  if (connection === undefined) return;
  connection.closed = true;
  connection.waiting?.cancel();
}

/** The connection of a poll's response: closed when the client goes away (or once answered). */
export function pollConnection(res: ServerResponse): PollConnection {
  const connection: PollConnection = { closed: false, waiting: null };
  (res as PollResponse)[CONNECTION] = connection;
  res.on("close", onPollResponseClose);
  return connection;
}

/** The queue's events as objects (the ordinary route), or as JSON text (the hot route). */
export interface PollRead<E> {
  read(queues: QueueStore, poll: PollRequest): Promise<E[] | null>;
  /** Events as the queue keeps them (JSON text with their ids), in this form. */
  fromJson(texts: string[]): E[];
}
export const readEvents: PollRead<QueuedEvent> = {
  read: (queues, poll) => queues.read(poll.queueId, poll.lastEventId, poll.userId),
  fromJson: (texts) => texts.map((text) => JSON.parse(text) as QueuedEvent),
};
export const readEventsJson: PollRead<string> = {
  read: (queues, poll) => queues.readJson(poll.queueId, poll.lastEventId, poll.userId),
  fromJson: (texts) => texts,
};

/**
 * The events to answer with; null if the queue is gone or not the user's; "closed" if the client
 * went away while it waited, when there is nothing to answer.
 */
export async function pollEvents<E>(
  queues: QueueStore,
  waiters: LongPollWaiters,
  heartbeatMs: number,
  poll: PollRequest,
  connection: PollConnection,
  reader: PollRead<E>,
): Promise<E[] | null | "closed"> {
  const read = () => reader.read(queues, poll);
  if (poll.dontBlock || waiters.draining) return read();
  const deadline = Date.now() + heartbeatMs;
  while (!connection.closed) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      await queues.append(`heartbeat:${poll.queueId}:${randomBytes(8).toString("hex")}`, [{ queueId: poll.queueId, events: [{ type: "heartbeat" }] }]);
      return read();
    }
    // Waiting starts before the read, so an announcement between the two is not missed.
    const waitingSince = Date.now();
    const waiting = waiters.wait(poll.queueId, remaining);
    connection.waiting = waiting;
    let events = await read();
    if (events === null || events.length > 0) {
      waiting.cancel();
      connection.waiting = null;
      return events;
    }
    const woken = await waiting.announced;
    connection.waiting = null;
    if (woken !== false && Date.now() - waitingSince < BUSY_QUEUE_MS && !waiters.draining) {
      // Woken soon after it began waiting, the queue is getting events fast: what the next few
      // milliseconds bring goes in the same answer, rather than one answer (and poll) per event.
      await sleep(COALESCE_MS);
    } else if (typeof woken === "object" && woken.firstId === poll.lastEventId + 1) {
      // The announcement brought what follows the client's last event: no need to read it back.
      return reader.fromJson(woken.json());
    }
    events = await read();
    // Draining: an empty answer now, so the client polls another node (waiters.ts).
    if (events === null || events.length > 0 || waiters.draining) return events;
  }
  return "closed";
}
