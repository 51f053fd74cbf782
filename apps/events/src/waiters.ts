// Long polls waiting on this node. Fan-out (on any node) announces queues that got events through
// one subscription per node; we wake only our own waiting requests. No Redis connection per client.
import type { AnnouncedEvents, QueueStore } from "@chat/bus";

type Wake = (events?: AnnouncedEvents) => void;

/** How a wait ended: false on timeout or cancel, true when announced, or the events announced. */
export type Woken = boolean | AnnouncedEvents;

export class LongPollWaiters {
  private readonly waiting = new Map<string, Set<Wake>>();
  /**
   * Set when the node shuts down: every poll answers at once with what its queue holds (perhaps
   * nothing) instead of waiting, and its client polls again, through the load balancer, elsewhere.
   */
  draining = false;

  static async attach(queues: QueueStore): Promise<LongPollWaiters> {
    const waiters = new LongPollWaiters();
    await queues.onReady((queueId, events) => waiters.wake(queueId, events));
    // Each poll reads its queue again when woken, and waits again if nothing is there.
    queues.onAnnouncementsMissed(() => waiters.wakeAll());
    return waiters;
  }

  /**
   * Starts waiting at once (so an announcement right after this call is not missed); `announced`
   * resolves with the announced events when the announcement carried them, true when it did not,
   * false on timeout or `cancel()`. No AbortSignal: a thousand polls wait and wake at once, and
   * each signal's events and DOMException showed.
   */
  wait(queueId: string, timeoutMs: number): { announced: Promise<Woken>; cancel: () => void } {
    let finish!: (announced: Woken) => void;
    const announced = new Promise<Woken>((resolve) => {
      let set = this.waiting.get(queueId);
      if (set === undefined) this.waiting.set(queueId, (set = new Set<Wake>()));
      const waiters = set;
      let done = false;
      finish = (woken: Woken) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.waiting.get(queueId) === waiters) this.waiting.delete(queueId);
        resolve(woken);
      };
      const wake = (events?: AnnouncedEvents) => finish(events ?? true);
      const timer = setTimeout(() => finish(false), timeoutMs);
      waiters.add(wake);
    });
    return { announced, cancel: () => finish(false) };
  }

  wake(queueId: string, events?: AnnouncedEvents): void {
    const waiting = this.waiting.get(queueId);
    if (waiting === undefined) return;
    for (const wake of [...waiting]) wake(events);
  }

  /** Answers every held poll now, and every later one at once (shutdown). */
  drain(): void {
    this.draining = true;
    this.wakeAll();
  }

  /** Wakes every waiting poll (shutdown, or announcements missed), so each reads its queue again. */
  wakeAll(): void {
    for (const queueId of [...this.waiting.keys()]) this.wake(queueId);
  }

  get size(): number {
    let total = 0;
    for (const set of this.waiting.values()) total += set.size;
    return total;
  }
}
