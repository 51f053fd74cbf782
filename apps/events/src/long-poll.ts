// GET /events as Zulip's get_events: the events after last_event_id, at once if there are any or
// the client asked not to block, else when some arrive (the fan-out announces the queue), else a
// heartbeat after the heartbeat wait. Shared by the hot route (events-hot-route.ts) and Express's.
//
// A poll is one object stepping through its states by callbacks, not an async function: ten
// thousand are held at once, and each suspended async frame, its promises and their reactions
// showed in a held poll's memory (about 1 KiB of the 12 a poll cost), as did their garbage when a
// thousand are answered and come back at once.
import { randomBytes } from "node:crypto";
import type { EventEmitter } from "node:events";
import type { AnnouncedEvents, QueuedEvent, QueueStore } from "@chat/bus";
import type { LongPollWaiters, Waiter, Woken } from "./waiters.ts";

/** A poll woken within this long of starting to wait is on a busy queue. */
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

/** What a node's polls share. */
export interface PollServices {
  queues: QueueStore;
  waiters: LongPollWaiters;
  heartbeatMs: number;
}

/** The events to answer with; null if the queue is gone or not the user's; "closed" if the client went away. */
export type PollOutcome<E> = E[] | null | "closed";

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

/** What a poll's read is for. */
type Step = typeof WHILE_WAITING | typeof AFTER_WAKE | typeof FINAL;
/** Waiting already: events end the poll, none leave it waiting. */
const WHILE_WAITING = 0;
/** After a wake: events (or draining) end the poll, none make it wait again. */
const AFTER_WAKE = 1;
/** Whatever it reads is the answer. */
const FINAL = 2;

const POLL = Symbol("long poll");
type PollEmitter = EventEmitter & { [POLL]?: LongPoll<unknown> };

/** One listener for every poll's response ("close" comes once): no closure each. */
function onResponseClose(this: PollEmitter): void {
  this[POLL]?.close();
}

function endCoalescing(poll: LongPoll<unknown>): void {
  poll.coalesced();
}

/**
 * One poll. Subclasses say what to do with the outcome (settle); `start()` begins it, and the
 * response's "close" ends it early.
 */
export abstract class LongPoll<E> implements Waiter, PollRequest {
  waitTick = -1;
  nextWaiter: Waiter | null = null;
  private deadline = 0;
  private waitingSince = 0;
  private reading = false;
  /** An announcement that came while the read begun with the wait was under way. */
  private wokenWhileReading: Woken | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private closed = false;
  private ended = false;

  constructor(
    protected readonly services: PollServices,
    private readonly reader: PollRead<E>,
    readonly queueId: string,
    readonly lastEventId: number,
    readonly dontBlock: boolean,
    readonly userId: number,
  ) {}

  /** Called once: the outcome, or the error that ended the poll. */
  protected abstract settle(outcome: PollOutcome<E> | undefined, error: unknown): void;

  /** Called once, instead of settle, when the poll is answered with an announcement's events. */
  protected settleAnnounced(events: AnnouncedEvents): void {
    this.settle(this.reader.fromJson(events.json()), undefined);
  }

  /** Begins the poll; `response`'s "close" (the client went away, or the answer went) ends it. */
  start(response: EventEmitter | null): void {
    if (response !== null) {
      (response as PollEmitter)[POLL] = this;
      response.on("close", onResponseClose);
    }
    if (this.dontBlock || this.services.waiters.draining) {
      this.read(FINAL);
      return;
    }
    const now = Date.now();
    this.deadline = now + this.services.heartbeatMs;
    const { waiters } = this.services;
    if (waiters.answered?.takeQuiet(this.queueId, this.userId, this.lastEventId)) {
      // Nothing after the client's last event, as this node answered it: waiting is enough.
      this.waitingSince = now;
      waiters.wait(this, this.deadline);
      return;
    }
    this.waitAndRead();
  }

  /** The client went away: nothing more is read or answered. */
  close(): void {
    if (this.ended) return;
    this.closed = true;
    this.services.waiters.cancel(this);
    if (this.timer !== undefined) clearTimeout(this.timer);
    // A read or append under way ends the poll when it answers.
    if (!this.reading) this.end("closed");
  }

  onWoken(woken: Woken): void {
    if (this.ended) return;
    if (this.reading) {
      this.wokenWhileReading = woken;
      return;
    }
    const { waiters } = this.services;
    if (woken === false) {
      this.heartbeat();
    } else if (Date.now() - this.waitingSince < BUSY_QUEUE_MS && !waiters.draining) {
      // Woken soon after it began waiting, the queue is getting events fast: what the next few
      // milliseconds bring goes in the same answer, rather than one answer (and poll) per event.
      this.timer = setTimeout(endCoalescing, COALESCE_MS, this);
    } else if (typeof woken === "object" && woken.firstId === this.lastEventId + 1) {
      // The announcement brought what follows the client's last event: no need to read it back,
      // nor, when the client polls again after these, to read the queue then (answered-queues.ts).
      waiters.answered?.answeredFromAnnouncement(this.queueId, this.userId, woken.firstId + woken.count - 1);
      this.ended = true;
      this.settleAnnounced(woken);
    } else {
      this.read(AFTER_WAKE);
    }
  }

  coalesced(): void {
    this.timer = undefined;
    if (!this.ended) this.read(AFTER_WAKE);
  }

  private waitAndRead(): void {
    const now = Date.now();
    if (now >= this.deadline) {
      this.heartbeat();
      return;
    }
    // Waiting starts before the read, so an announcement between the two is not missed.
    this.waitingSince = now;
    this.services.waiters.wait(this, this.deadline);
    this.read(WHILE_WAITING);
  }

  private read(step: Step): void {
    this.reading = true;
    this.reader.read(this.services.queues, this).then(
      (events) => this.afterRead(step, events),
      (error: unknown) => this.fail(error),
    );
  }

  private afterRead(step: Step, events: E[] | null): void {
    this.reading = false;
    if (this.ended) return;
    if (this.closed) {
      this.end("closed");
      return;
    }
    const { waiters } = this.services;
    if (step === FINAL || events === null || events.length > 0) {
      waiters.cancel(this);
      this.end(events);
      return;
    }
    if (step === AFTER_WAKE) {
      // Draining: an empty answer now, so the client polls another node.
      if (waiters.draining) this.end(events);
      else this.waitAndRead();
      return;
    }
    // Still waiting; an announcement that came meanwhile is acted on now.
    const woken = this.wokenWhileReading;
    if (woken !== undefined) {
      this.wokenWhileReading = undefined;
      this.onWoken(woken);
    }
  }

  private heartbeat(): void {
    this.reading = true;
    const { queues } = this.services;
    queues.append(`heartbeat:${this.queueId}:${randomBytes(8).toString("hex")}`, [{ queueId: this.queueId, events: [{ type: "heartbeat" }] }]).then(
      () => {
        this.reading = false;
        if (this.closed) this.end("closed");
        else if (!this.ended) this.read(FINAL);
      },
      (error: unknown) => this.fail(error),
    );
  }

  private end(outcome: PollOutcome<E>): void {
    if (this.ended) return;
    this.ended = true;
    this.settle(outcome, undefined);
  }

  private fail(error: unknown): void {
    this.reading = false;
    if (this.ended) return;
    this.ended = true;
    this.services.waiters.cancel(this);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.settle(undefined, error);
  }
}

/** A poll whose outcome a promise gives (the ordinary route, and tests). */
class PromisedPoll<E> extends LongPoll<E> {
  resolve!: (outcome: PollOutcome<E>) => void;
  reject!: (error: unknown) => void;

  protected settle(outcome: PollOutcome<E> | undefined, error: unknown): void {
    if (outcome === undefined) this.reject(error);
    else this.resolve(outcome);
  }
}

/** The poll's outcome; `response` (when given) ends it early on "close". */
export function pollEvents<E>(services: PollServices, poll: PollRequest, response: EventEmitter | null, reader: PollRead<E>): Promise<PollOutcome<E>> {
  const longPoll = new PromisedPoll(services, reader, poll.queueId, poll.lastEventId, poll.dontBlock, poll.userId);
  const outcome = new Promise<PollOutcome<E>>((resolve, reject) => {
    longPoll.resolve = resolve;
    longPoll.reject = reject;
  });
  longPoll.start(response);
  return outcome;
}
