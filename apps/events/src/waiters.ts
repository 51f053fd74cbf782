// Long polls waiting on this node. Fan-out (on any node) announces queues that got events through
// one subscription per node; we wake only our own waiting requests. No Redis connection per client.
import type { AnnouncedEvents, QueueStore } from "@chat/bus";

/**
 * One poll's wait: a single object with its promise, rather than a closure for each way it can
 * end (a thousand polls wait at once, and each closure and its context showed in their memory).
 */
class Wait {
  private resolve!: (woken: Woken) => void;
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  readonly announced: Promise<Woken>;

  constructor(
    private readonly owner: LongPollWaiters,
    readonly queueId: string,
    timeoutMs: number,
  ) {
    this.announced = new Promise<Woken>((resolve) => (this.resolve = resolve));
    this.timer = setTimeout(Wait.expire, timeoutMs, this);
  }

  private static expire(wait: Wait): void {
    wait.timer = undefined;
    wait.finish(false);
  }

  finish(woken: Woken): void {
    if (this.done) return;
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.owner.forget(this);
    this.resolve(woken);
  }

  /** The client went away, or the poll read events: stop waiting, as a timeout would. */
  cancel(): void {
    this.finish(false);
  }
}

/** How a wait ended: false on timeout or cancel, true when announced, or the events announced. */
export type Woken = boolean | AnnouncedEvents;

export class LongPollWaiters {
  private readonly waiting = new Map<string, Set<Wait>>();
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
  wait(queueId: string, timeoutMs: number): { readonly announced: Promise<Woken>; cancel(): void } {
    const wait = new Wait(this, queueId, timeoutMs);
    let set = this.waiting.get(queueId);
    if (set === undefined) this.waiting.set(queueId, (set = new Set<Wait>()));
    set.add(wait);
    return wait;
  }

  /** A wait that ended (Wait.finish). */
  forget(wait: Wait): void {
    const set = this.waiting.get(wait.queueId);
    if (set === undefined) return;
    set.delete(wait);
    if (set.size === 0) this.waiting.delete(wait.queueId);
  }

  wake(queueId: string, events?: AnnouncedEvents): void {
    const waiting = this.waiting.get(queueId);
    if (waiting === undefined) return;
    for (const wait of [...waiting]) wait.finish(events ?? true);
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
