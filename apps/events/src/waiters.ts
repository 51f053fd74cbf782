// Long polls waiting on this node. Fan-out (on any node) announces queues that got events through
// one subscription per node; we wake only our own waiting requests. No Redis connection per client.
//
// Ten thousand polls may be held at once, each costing what its wait keeps alive, so a wait is no
// promise, closure or timer of its own: the waiter (long-poll.ts) is registered as it is, chained to
// any other waiter on its queue, and its deadline is one entry in a set of waiters whose deadlines
// fall in the same tick, swept by one timer for the node.
import type { AnnouncedEvents, QueueStore } from "@chat/bus";
import { AnsweredQueues } from "./answered-queues.ts";

/** How a wait ended: false when its deadline passed, true when announced, or the events announced. */
export type Woken = boolean | AnnouncedEvents;

/** Deadlines are kept to this granularity: a wait ends within a tick after its deadline, never before. */
const TICK_MS = 50;

/** What waits: told once how its wait ended, unless cancelled first. */
export interface Waiter {
  readonly queueId: string;
  /** Bookkeeping of LongPollWaiters: the tick of the deadline while waiting, else -1. */
  waitTick: number;
  /** Bookkeeping of LongPollWaiters: the next waiter on the same queue. */
  nextWaiter: Waiter | null;
  onWoken(woken: Woken): void;
}

export class LongPollWaiters {
  /** Each queue's waiters, chained by nextWaiter (a queue nearly always has one). */
  private readonly byQueue = new Map<string, Waiter>();
  private readonly byTick = new Map<number, Set<Waiter>>();
  private sweeper: NodeJS.Timeout | undefined;
  private count = 0;
  /**
   * Set when the node shuts down: every poll answers at once with what its queue holds (perhaps
   * nothing) instead of waiting, and its client polls again, through the load balancer, elsewhere.
   */
  draining = false;
  /** The queues whose polls may wait without reading them (answered-queues.ts); none without a store. */
  answered: AnsweredQueues | null = null;

  static async attach(queues: QueueStore, ackDelayMs?: number): Promise<LongPollWaiters> {
    const waiters = new LongPollWaiters();
    waiters.answered = new AnsweredQueues(
      queues,
      (queueIds) => {
        for (const queueId of queueIds) waiters.wake(queueId);
      },
      ackDelayMs,
    );
    await queues.onReady((queueId, events) => waiters.wake(queueId, events));
    // Each poll reads its queue again when woken, and waits again if nothing is there.
    queues.onAnnouncementsMissed(() => waiters.wakeAll());
    return waiters;
  }

  /**
   * Starts waiting at once (so an announcement right after this call is not missed): the waiter
   * is told how the wait ended, at the first announcement of its queue or once `deadlineMs`
   * (a Date.now() time) has passed, unless cancelled first.
   */
  wait(waiter: Waiter, deadlineMs: number): void {
    if (waiter.waitTick !== -1) this.cancel(waiter);
    const tick = Math.ceil(deadlineMs / TICK_MS);
    waiter.waitTick = tick;
    let due = this.byTick.get(tick);
    if (due === undefined) this.byTick.set(tick, (due = new Set()));
    due.add(waiter);
    waiter.nextWaiter = this.byQueue.get(waiter.queueId) ?? null;
    this.byQueue.set(waiter.queueId, waiter);
    this.count++;
    this.sweeper ??= setInterval(() => this.sweep(), TICK_MS).unref();
  }

  /** Stops a wait without telling the waiter (it answered, or its client went away). */
  cancel(waiter: Waiter): void {
    if (waiter.waitTick === -1) return;
    this.unlistDeadline(waiter);
    const first = this.byQueue.get(waiter.queueId);
    if (first === waiter) {
      if (waiter.nextWaiter === null) this.byQueue.delete(waiter.queueId);
      else this.byQueue.set(waiter.queueId, waiter.nextWaiter);
    } else {
      for (let at: Waiter | null = first ?? null; at !== null; at = at.nextWaiter) {
        if (at.nextWaiter === waiter) {
          at.nextWaiter = waiter.nextWaiter;
          break;
        }
      }
    }
    waiter.nextWaiter = null;
  }

  /** Ends the waits on the queue: each waiter is told, with the announced events if they came along. */
  wake(queueId: string, events?: AnnouncedEvents): void {
    this.answered?.announced(queueId);
    let waiter: Waiter | null = this.byQueue.get(queueId) ?? null;
    if (waiter === null) return;
    // The whole chain is taken first: a waiter told may wait again, in a chain of its own.
    this.byQueue.delete(queueId);
    while (waiter !== null) {
      const next: Waiter | null = waiter.nextWaiter;
      waiter.nextWaiter = null;
      this.unlistDeadline(waiter);
      waiter.onWoken(events ?? true);
      waiter = next;
    }
  }

  /** Answers every held poll now, and every later one at once (shutdown); waiting acknowledgments go too. */
  drain(): void {
    this.draining = true;
    this.wakeAll();
    this.answered?.flush();
  }

  /** Wakes every waiting poll (shutdown, or announcements missed), so each reads its queue again. */
  wakeAll(): void {
    this.answered?.forgetAll();
    for (const queueId of [...this.byQueue.keys()]) this.wake(queueId);
  }

  get size(): number {
    return this.count;
  }

  private unlistDeadline(waiter: Waiter): void {
    const due = this.byTick.get(waiter.waitTick);
    if (due !== undefined) {
      due.delete(waiter);
      if (due.size === 0) this.byTick.delete(waiter.waitTick);
    }
    waiter.waitTick = -1;
    if (--this.count === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Ends the waits whose deadline has passed. */
  private sweep(): void {
    const now = Math.floor(Date.now() / TICK_MS);
    for (const [tick, due] of this.byTick) {
      if (tick > now) continue;
      for (const waiter of due) {
        this.cancel(waiter);
        waiter.onWoken(false);
      }
    }
  }
}
