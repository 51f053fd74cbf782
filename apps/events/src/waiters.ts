// Long polls waiting on this node. Fan-out (on any node) announces queues that got events through
// one subscription per node; we wake only our own waiting requests. No Redis connection per client.
import type { QueueStore } from "@chat/bus";

type Wake = () => void;

export class LongPollWaiters {
  private readonly waiting = new Map<string, Set<Wake>>();

  static async attach(queues: QueueStore): Promise<LongPollWaiters> {
    const waiters = new LongPollWaiters();
    await queues.onReady((queueId) => waiters.wake(queueId));
    // Each poll reads its queue again when woken, and waits again if nothing is there.
    queues.onAnnouncementsMissed(() => waiters.wakeAll());
    return waiters;
  }

  /**
   * Starts waiting at once (so an announcement right after this call is not missed); the promise
   * resolves true when the queue is announced, false on timeout or when `signal` aborts.
   */
  wait(queueId: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const set = this.waiting.get(queueId) ?? new Set<Wake>();
      this.waiting.set(queueId, set);
      const finish = (announced: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(queueId) === set) this.waiting.delete(queueId);
        resolve(announced);
      };
      const wake = () => finish(true);
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      set.add(wake);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  wake(queueId: string): void {
    for (const wake of [...(this.waiting.get(queueId) ?? [])]) wake();
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
