// The node's registry of waiting polls: waits end at their queue's announcement or after their
// deadline (never before it), several waiters on one queue are each told once, and a cancelled
// wait is forgotten wherever it stood in its queue's chain.
import { ReadyEvents } from "@chat/bus";
import { LongPollWaiters, type Waiter, type Woken } from "../src/waiters.ts";

class Recorder implements Waiter {
  waitTick = -1;
  nextWaiter: Waiter | null = null;
  readonly told: Array<{ woken: Woken; at: number }> = [];
  constructor(readonly queueId: string) {}
  onWoken(woken: Woken): void {
    this.told.push({ woken, at: Date.now() });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("LongPollWaiters", () => {
  let waiters: LongPollWaiters;
  beforeEach(() => {
    waiters = new LongPollWaiters();
  });
  afterEach(() => waiters.wakeAll());

  it("tells every waiter on the announced queue once, and no other", () => {
    const [a, b, c] = [new Recorder("q1"), new Recorder("q1"), new Recorder("q2")];
    for (const waiter of [a, b, c]) waiters.wait(waiter, Date.now() + 60_000);
    expect(waiters.size).toBe(3);
    const events = new ReadyEvents(3, ['{"id":3}']);
    waiters.wake("q1", events);
    waiters.wake("q1", events);
    expect(a.told.map((t) => t.woken)).toEqual([events]);
    expect(b.told.map((t) => t.woken)).toEqual([events]);
    expect(c.told).toEqual([]);
    expect(waiters.size).toBe(1);
  });

  it("forgets a cancelled waiter at the head, middle or tail of its queue's chain", () => {
    const chain = [new Recorder("q"), new Recorder("q"), new Recorder("q"), new Recorder("q")];
    for (const waiter of chain) waiters.wait(waiter, Date.now() + 60_000);
    // The chain is newest first: cancel its head (the last to wait), a middle one and its tail.
    waiters.cancel(chain[3]);
    waiters.cancel(chain[1]);
    waiters.cancel(chain[0]);
    waiters.cancel(chain[0]);
    expect(waiters.size).toBe(1);
    waiters.wake("q");
    expect(chain.map((waiter) => waiter.told.length)).toEqual([0, 0, 1, 0]);
    expect(waiters.size).toBe(0);
  });

  it("ends a wait once its deadline has passed, not before, and leaves nothing behind", async () => {
    const start = Date.now();
    const soon = new Recorder("soon");
    const later = new Recorder("later");
    waiters.wait(soon, start + 120);
    waiters.wait(later, start + 60_000);
    await sleep(60);
    expect(soon.told).toEqual([]);
    await sleep(200);
    expect(soon.told).toHaveLength(1);
    expect(soon.told[0].woken).toBe(false);
    expect(soon.told[0].at).toBeGreaterThanOrEqual(start + 120);
    expect(later.told).toEqual([]);
    expect(waiters.size).toBe(1);
    // An announcement after the deadline tells nobody again.
    waiters.wake("soon");
    expect(soon.told).toHaveLength(1);
  });

  it("lets a waiter told of its announcement wait again at once, in a chain of its own", () => {
    const waiter = new Recorder("q");
    const again: Waiter = {
      queueId: "q",
      waitTick: -1,
      nextWaiter: null,
      onWoken: () => waiters.wait(waiter, Date.now() + 60_000),
    };
    waiters.wait(again, Date.now() + 60_000);
    waiters.wake("q");
    expect(waiters.size).toBe(1);
    waiters.wake("q");
    expect(waiter.told).toHaveLength(1);
    expect(waiters.size).toBe(0);
  });

  it("wakes every waiter when draining", () => {
    const all = [new Recorder("a"), new Recorder("b"), new Recorder("b")];
    for (const waiter of all) waiters.wait(waiter, Date.now() + 60_000);
    waiters.drain();
    expect(all.map((waiter) => waiter.told.map((t) => t.woken))).toEqual([[true], [true], [true]]);
    expect(waiters.draining).toBe(true);
    expect(waiters.size).toBe(0);
  });
});
