// The worker's fair share of calls between organizations: a realm's calls under way and jobs held
// are capped, the process's total is capped, and waiting calls start one organization after another.
import { RealmCallLimiter } from "../src/realm-call-limiter.ts";

/** A call the test ends when it likes. */
function gate(): { call: () => Promise<void>; started: boolean; end: () => void } {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const g = {
    started: false,
    end: () => end(),
    call: async () => {
      g.started = true;
      await ended;
    },
  };
  return g;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("RealmCallLimiter", () => {
  test("one organization has at most its share under way; another's call starts at once beside it", async () => {
    const limiter = new RealmCallLimiter(4, 2);
    const hanging = [gate(), gate(), gate()];
    const runs = hanging.map((g) => limiter.run(1, g.call));
    await tick();
    expect(hanging.map((g) => g.started)).toEqual([true, true, false]);
    const other = gate();
    const run = limiter.run(2, other.call);
    await tick();
    expect(other.started).toBe(true);
    expect([limiter.inFlight(), limiter.inFlight(1), limiter.inFlight(2)]).toEqual([3, 2, 1]);
    // The waiting call of the first organization starts when one of its own ends.
    other.end();
    await run;
    await tick();
    expect(hanging[2].started).toBe(false);
    hanging[0].end();
    await tick();
    expect(hanging[2].started).toBe(true);
    hanging[1].end();
    hanging[2].end();
    await Promise.all(runs);
    expect(limiter.inFlight()).toBe(0);
  });

  test("when the process is full, freed slots go to the organizations in turn, each in its order", async () => {
    const limiter = new RealmCallLimiter(2, 2);
    const first = [gate(), gate()];
    const firstRuns = first.map((g) => limiter.run(1, g.call));
    const order: string[] = [];
    const queued = [
      limiter.run(1, async () => void order.push("1a")),
      limiter.run(1, async () => void order.push("1b")),
      limiter.run(2, async () => void order.push("2a")),
      limiter.run(3, async () => void order.push("3a")),
      limiter.run(2, async () => void order.push("2b")),
    ];
    await tick();
    expect(order).toEqual([]);
    first[0].end();
    first[1].end();
    await Promise.all([...firstRuns, ...queued]);
    expect(order).toEqual(["1a", "2a", "3a", "1b", "2b"]);
  });

  test("an organization holds at most its share of jobs; a place given back can be taken again", () => {
    const limiter = new RealmCallLimiter(64, 2);
    expect([limiter.hold(1), limiter.hold(1), limiter.hold(1), limiter.hold(2)]).toEqual([true, true, false, true]);
    limiter.release(1);
    expect(limiter.hold(1)).toBe(true);
  });

  test("a share larger than the total is the total", async () => {
    const limiter = new RealmCallLimiter(2, 10);
    expect(limiter.perRealm).toBe(2);
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((g) => limiter.run(1, g.call));
    await tick();
    expect(gates.map((g) => g.started)).toEqual([true, true, false]);
    for (const g of gates) g.end();
    await Promise.all(runs);
  });

  test("a job is put off until about when the first of the organization's jobs ends, within bounds", async () => {
    const limiter = new RealmCallLimiter(64, 2);
    expect(limiter.deferMs(9)).toBe(100);
    limiter.hold(1);
    const hanging = [gate(), gate(), gate(), gate()];
    const runs = hanging.map((g) => limiter.run(1, g.call));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // One job's four calls in hand at two at once, the oldest 200 ms along: about 400 ms.
    expect(limiter.deferMs(1)).toBeGreaterThanOrEqual(390);
    expect(limiter.deferMs(1)).toBeLessThan(2000);
    // The same calls in two jobs: the first ends after about half of them.
    limiter.hold(1);
    expect(limiter.deferMs(1)).toBeGreaterThanOrEqual(195);
    expect(limiter.deferMs(1)).toBeLessThan(1000);
    limiter.release(1);
    for (const g of hanging) g.end();
    await Promise.all(runs);
    // Fast calls: the least delay.
    await Promise.all(Array.from({ length: 10 }, () => limiter.run(1, async () => undefined)));
    expect(limiter.deferMs(1)).toBe(100);
    limiter.release(1);
  });
});
