// The one behaviour both adapters must have. Each adapter's test file runs it with a harness.
import { serializedChangeBatch } from "../src/batch-json";
import type { BusLog } from "../src/log";
import { isAfterPosition, STREAM_START, type AnnouncedEvents, type DroppedChanges, type QueueInfo, type QueueLimits, type Bus, type ChangeBatch, type EventPayload, type QueueOptions, type QueueTarget } from "../src/types";
import { batch, collectingLog, gate, sleep, waitFor } from "./helpers";

export interface BusHarness {
  /**
   * A bus in `space`. Redis: every call is another node, and buses in one space share state.
   * Memory: every call is a world of its own, so only one bus per test is meaningful.
   */
  createBus(space: string, options: { claimIdleMs?: number; maxEntries?: number; log: BusLog } & QueueLimits): Bus;
  /** Whether two buses of one space see each other (several nodes). */
  multiNode: boolean;
}

const CLAIM_IDLE_MS = 200;

export function busContract(harness: BusHarness): void {
  let spaces = 0;
  let open: Bus[] = [];
  let space = "";
  let log = collectingLog();
  let gates: ReturnType<typeof gate>[] = [];
  /** Opened after each test at the latest, so a failed test cannot hang in close(). */
  function held() {
    const g = gate();
    gates.push(g);
    return g;
  }

  beforeEach(() => {
    space = `t${spaces++}`;
    log = collectingLog();
  });
  afterEach(async () => {
    for (const g of gates) g.open();
    gates = [];
    await Promise.all(open.map((bus) => bus.close()));
    open = [];
  });

  function newBus(options: { claimIdleMs?: number; maxEntries?: number } & QueueLimits = {}): Bus {
    const bus = harness.createBus(space, { claimIdleMs: CLAIM_IDLE_MS, log, ...options });
    open.push(bus);
    return bus;
  }

  describe("change stream", () => {
    it("delivers batches to one consumer in publish order per realm, including those published before it joined", async () => {
      const { changes } = newBus();
      const early = [1, 2, 3].map((n) => batch(`early-${n}`, 7));
      await changes.publish([...early, batch("other-realm", 8)]);
      const seen: ChangeBatch[] = [];
      changes.consume("c1", async (b) => {
        seen.push(b);
      });
      const late = [4, 5, 6].map((n) => batch(`late-${n}`, 7));
      await changes.publish(late.slice(0, 1));
      await changes.publish(late.slice(1));
      await waitFor("all batches", () => seen.length === 7);
      expect(seen.filter((b) => b.realmId === 7)).toEqual([...early, ...late]);
      expect(seen.find((b) => b.realmId === 8)).toEqual(batch("other-realm", 8));
    });

    it("gives each batch a position: a realm's grow in publishing order, and position() is its last", async () => {
      const { changes } = newBus();
      expect(await changes.position(7)).toEqual(STREAM_START);
      await changes.publish([batch("first", 7)]);
      const afterFirst = await changes.position(7);
      expect(isAfterPosition(afterFirst, STREAM_START)).toBe(true);
      await changes.publish([batch("second", 7), batch("third", 7)]);
      const afterThird = await changes.position(7);
      expect(isAfterPosition(afterThird, afterFirst)).toBe(true);

      const seen: Array<[string, string]> = [];
      changes.consume("c1", async (b, position) => {
        seen.push([b.id, position]);
      });
      await waitFor("three batches", () => seen.length === 3);
      const positions = seen.map(([, position]) => position);
      expect(seen.map(([id]) => id)).toEqual(["first", "second", "third"]);
      expect([positions[0], positions[2]]).toEqual([afterFirst, afterThird]);
      expect(isAfterPosition(positions[1], positions[0]) && isAfterPosition(positions[2], positions[1])).toBe(true);
      expect(isAfterPosition(positions[0], positions[0])).toBe(false);
    });

    it("delivers a batch published as JSON text (serializedChangeBatch) as the same batch", async () => {
      const { changes } = newBus();
      const seen: ChangeBatch[] = [];
      changes.consume("c1", async (b) => {
        seen.push(b);
      });
      const expected = batch("as-text", 3);
      await changes.publish([serializedChangeBatch("as-text", 3, JSON.stringify(expected.events)), batch("as-object", 3)]);
      await waitFor("both batches", () => seen.length === 2);
      expect(seen).toEqual([expected, batch("as-object", 3)]);
    });

    it("keeps every batch a group has not acknowledged, however often it is trimmed", async () => {
      const { changes } = newBus({ maxEntries: 1000 });
      const slow = held();
      const seen: string[] = [];
      changes.consume("c1", async (b) => {
        await slow.wait;
        seen.push(b.id);
      });
      const published = Array.from({ length: 250 }, (_, i) => batch(`b${i}`, 5));
      for (let i = 0; i < published.length; i += 50) {
        await changes.publish(published.slice(i, i + 50));
        await changes.trim();
      }
      slow.open();
      await waitFor("every batch", () => seen.length === published.length);
      expect(seen).toEqual(published.map((b) => b.id));
      // The other group has read none of them: they are all still there for it.
      const workers: string[] = [];
      await changes.trim();
      changes.consume("w1", async (b) => void workers.push(b.id), { group: "workers" });
      await waitFor("every batch for the workers", () => workers.length === published.length);
    });

    it("past maxEntries drops the oldest unread batches and invalidates the queues of their realms that may miss them", async () => {
      const { changes, queues } = newBus({ maxEntries: 10 });
      const dropped: DroppedChanges[] = [];
      changes.onDropped((d) => void dropped.push(d));
      const queue = (realmId: number, since?: string) => queues.create({ userId: 1, realmId, allPublicStreams: false, settings: {}, since });
      const missing = await queue(1);
      const otherRealm = await queue(2);
      const announced: string[] = [];
      await queues.onReady((id) => announced.push(id));
      const published = Array.from({ length: 15 }, (_, i) => batch(`b${i}`, 1));
      await changes.publish(published);
      await changes.trim();
      const events = dropped.find((d) => d.group === "events");
      expect(events).toEqual({ group: "events", count: 5, realms: new Map([[1, expect.any(String)]]) });
      // A queue that may lack those batches' events is gone, and a poll waiting on it hears so.
      expect(await queues.read(missing.id, -1)).toBeNull();
      await waitFor("the invalidated queue announced", () => announced.includes(missing.id));
      expect(await queues.get(otherRealm.id)).not.toBeNull();
      // A queue registered now starts after them, and the fan-out reads the ten kept.
      const later = await queue(1, await changes.position(1));
      const seen: string[] = [];
      changes.consume("c1", async (b) => void seen.push(b.id));
      await waitFor("the kept batches", () => seen.length === 10);
      expect(seen).toEqual(published.slice(5).map((b) => b.id));
      expect(await queues.get(later.id)).not.toBeNull();
    });

    it("drops a batch whose id was already handled, as when the outbox sweeper republishes it", async () => {
      const { changes } = newBus();
      const seen: string[] = [];
      changes.consume("c1", async (b) => {
        seen.push(b.id);
      });
      await changes.publish([batch("once", 1)]);
      await waitFor("first delivery", () => seen.length === 1);
      await changes.publish([batch("once", 1), batch("after", 1)]);
      await waitFor("the next batch", () => seen.includes("after"));
      expect(seen).toEqual(["once", "after"]);
    });

    it("acknowledges a batch only after its handler resolves", async () => {
      const { changes } = newBus();
      const hold = held();
      const deliveries: string[] = [];
      changes.consume("slow", async (b) => {
        deliveries.push(`slow:${b.id}`);
        await hold.wait;
      });
      await changes.publish([batch("b1", 1)]);
      await waitFor("first delivery", () => deliveries.length === 1);
      // Unacknowledged while the handler runs, so another consumer takes it over after claimIdleMs.
      changes.consume("fast", async (b) => {
        deliveries.push(`fast:${b.id}`);
      });
      await waitFor("redelivery to the other consumer", () => deliveries.includes("fast:b1"));
      hold.open();
      // Both handlers resolved, so nobody gets it again, however long we wait past claimIdleMs.
      await sleep(CLAIM_IDLE_MS * 3);
      expect(deliveries).toEqual(["slow:b1", "fast:b1"]);
    });

    it("delivers a batch again after its handler threw, without holding up the others", async () => {
      const { changes } = newBus();
      const attempts: string[] = [];
      const done: string[] = [];
      changes.consume("c1", async (b) => {
        attempts.push(b.id);
        if (b.id === "bad" && attempts.filter((id) => id === "bad").length === 1) throw new Error("first try fails");
        done.push(b.id);
      });
      await changes.publish([batch("bad", 3), batch("good", 3)]);
      await waitFor("the good batch", () => done.includes("good"));
      await waitFor("the failed batch, redelivered", () => done.includes("bad"));
      expect(attempts).toEqual(["bad", "good", "bad"]);
      expect(log.messages.some((m) => m.includes("bad"))).toBe(true);
    });

    it.each(["consume", "consumeInOrder"] as const)("several consumers of a group (%s): every batch once, and a realm's batches one at a time in publish order", async (way) => {
      const { changes } = newBus({ claimIdleMs: 30_000 });
      const handled: Array<{ consumer: string; id: string; realmId: number }> = [];
      const inFlight = new Set<number>();
      const overlaps: number[] = [];
      for (const name of ["a", "b", "c"]) {
        const handle = async (batches: ChangeBatch[]) => {
          const realms = new Set(batches.map((b) => b.realmId));
          for (const realmId of realms) if (inFlight.has(realmId)) overlaps.push(realmId);
          for (const realmId of realms) inFlight.add(realmId);
          await sleep(Math.random() * 3);
          for (const b of batches) handled.push({ consumer: name, id: b.id, realmId: b.realmId });
          for (const realmId of realms) inFlight.delete(realmId);
        };
        if (way === "consume") changes.consume(name, (b) => handle([b]));
        else changes.consumeInOrder(name, (items) => handle(items.map(({ batch }) => batch)));
      }
      const published = Array.from({ length: 80 }, (_, i) => batch(`b${i}`, i % 8));
      for (let i = 0; i < published.length; i += 10) {
        await changes.publish(published.slice(i, i + 10));
        await sleep(5);
      }
      await waitFor("all batches", () => handled.length === published.length, 15_000);
      expect(overlaps).toEqual([]);
      expect(handled.map((h) => h.id).sort()).toEqual(published.map((b) => b.id).sort());
      for (let realmId = 0; realmId < 8; realmId++) {
        expect(handled.filter((h) => h.realmId === realmId).map((h) => h.id)).toEqual(published.filter((b) => b.realmId === realmId).map((b) => b.id));
      }
    });

    it("each group reads every batch once, on its own cursor, and drops its own republished copies", async () => {
      const { changes } = newBus();
      const events: string[] = [];
      const workers: string[] = [];
      const slowWorker = held();
      changes.consume("fanout", async (b) => {
        events.push(b.id);
      });
      changes.consume("worker", async (b) => {
        workers.push(b.id);
        if (b.id === "first") await slowWorker.wait;
      }, { group: "workers" });
      await changes.publish([batch("first", 1), batch("second", 2)]);
      // A slow worker holds up nothing of the event tier's (the worker's group reads on its own
      // time: on a loaded machine the event tier may have both before the worker has the first).
      await waitFor("the event tier, while the worker is busy", () => events.length === 2 && workers.length === 1);
      expect(workers).toEqual(["first"]);
      slowWorker.open();
      await waitFor("the worker group", () => workers.length === 2);
      // The sweeper's republished copy: each group drops it.
      await changes.publish([batch("first", 1), batch("third", 1)]);
      await waitFor("both groups to read on", () => events.includes("third") && workers.includes("third"));
      await sleep(50);
      expect(events).toEqual(["first", "second", "third"]);
      expect(workers).toEqual(["first", "second", "third"]);
    });

    it("consumeInOrder: a read's new batches at once, in order, with their positions; handled copies dropped; a failed read comes again whole", async () => {
      const { changes } = newBus();
      const reads: Array<Array<{ id: string; position: string }>> = [];
      let failNext = true;
      changes.consumeInOrder("c1", async (items) => {
        reads.push(items.map(({ batch, position }) => ({ id: batch.id, position })));
        if (failNext) {
          failNext = false;
          throw new Error("the first read fails");
        }
      });
      await changes.publish([batch("b1", 2), batch("b2", 2), batch("b1", 2), batch("b3", 2)]);
      await waitFor("the read again, after its failure", () => reads.length === 2, 5000);
      // The republished copy of b1 in the same read is dropped; the failed read comes again whole.
      expect(reads[0].map((r) => r.id)).toEqual(["b1", "b2", "b3"]);
      expect(reads[1]).toEqual(reads[0]);
      const positions = reads[1].map((r) => r.position);
      expect(isAfterPosition(positions[1], positions[0]) && isAfterPosition(positions[2], positions[1])).toBe(true);
      expect(positions[2]).toEqual(await changes.position(2));
      // Handled now: a copy published later is dropped, and nothing comes again.
      await changes.publish([batch("b2", 2), batch("b4", 2)]);
      await waitFor("the next read", () => reads.length === 3);
      await sleep(CLAIM_IDLE_MS * 3);
      expect(reads.map((read) => read.map((r) => r.id))).toEqual([["b1", "b2", "b3"], ["b1", "b2", "b3"], ["b4"]]);
      expect(log.messages.some((m) => m.includes("failed"))).toBe(true);
    });

    it("consumeReads: a read's batches come at once and are acknowledged together; a failed read comes again whole", async () => {
      const { changes } = newBus();
      await changes.publish([batch("a", 1), batch("b", 1), batch("c", 1)]);
      const reads: string[][] = [];
      changes.consumeReads("worker", async (batches) => {
        reads.push(batches.map((b) => b.id));
        if (reads.length === 1) throw new Error("the first read fails");
      }, { group: "workers" });
      await waitFor("the read again", () => reads.length === 2);
      expect(reads).toEqual([["a", "b", "c"], ["a", "b", "c"]]);
      expect(log.messages.some((m) => m.includes("redelivered"))).toBe(true);
      // Acknowledged: not delivered a third time.
      await sleep(CLAIM_IDLE_MS * 3);
      expect(reads).toHaveLength(2);
      // No handled marks: a republished batch is handed over again (the handler dedupes by itself).
      await changes.publish([batch("a", 1)]);
      await waitFor("the republished batch", () => reads.length === 3);
      expect(reads[2]).toEqual(["a"]);
    });

    it("consumeReads: a slow read holds up neither the other group nor an ordered consumer of its own group", async () => {
      const { changes } = newBus();
      const slow = held();
      const reads: string[][] = [];
      const events: string[] = [];
      changes.consumeReads("worker", async (batches) => {
        reads.push(batches.map((b) => b.id));
        await slow.wait;
      }, { group: "workers" });
      changes.consume("fanout", async (b) => {
        events.push(b.id);
      });
      await changes.publish([batch("x", 1)]);
      await waitFor("the event group", () => events.includes("x"));
      expect(reads).toEqual([["x"]]);
      slow.open();
    });

    it("a group's consumer that joins late reads what was published before it joined", async () => {
      const { changes } = newBus();
      const events: string[] = [];
      changes.consume("fanout", async (b) => {
        events.push(b.id);
      });
      await changes.publish([batch("before", 4)]);
      await waitFor("the event tier", () => events.length === 1);
      const workers: string[] = [];
      changes.consume("worker", async (b) => {
        workers.push(b.id);
      }, { group: "workers" });
      await waitFor("the worker group", () => workers.length === 1);
      expect(workers).toEqual(["before"]);
    });

    it("stop() returns promptly while the consumer waits for batches, and the consumer takes no more", async () => {
      const { changes } = newBus({ claimIdleMs: 30_000 });
      const seen: string[] = [];
      const consumer = changes.consume("c1", async (b) => {
        seen.push(b.id);
      });
      await changes.publish([batch("before", 1)]);
      await waitFor("the first batch", () => seen.length === 1);
      await sleep(50); // let it block on the next read
      const started = Date.now();
      await consumer.stop();
      expect(Date.now() - started).toBeLessThan(1000);
      await changes.publish([batch("after", 1)]);
      const later: string[] = [];
      changes.consume("c2", async (b) => {
        later.push(b.id);
      });
      await waitFor("the batch published after stop, at the next consumer", () => later.length === 1);
      expect(later).toEqual(["after"]);
      expect(seen).toEqual(["before"]);
    });

    it("stop() handles the batches it read, in order, before it stops; none waits for another consumer's claim", async () => {
      const { changes } = newBus({ claimIdleMs: 30_000 });
      const hold = held();
      const first: string[] = [];
      await changes.publish([batch("b1", 1), batch("b2", 1), batch("b3", 1)]);
      const consumer = changes.consume("c1", async (b) => {
        first.push(b.id);
        await hold.wait;
      });
      await waitFor("the first batch", () => first.length === 1);
      const stopping = consumer.stop();
      hold.open();
      await stopping;
      expect(first).toEqual(["b1", "b2", "b3"]);
      await changes.publish([batch("b4", 1)]);
      const second: string[] = [];
      changes.consume("c2", async (b) => {
        second.push(b.id);
      });
      await waitFor("the batch published after", () => second.length === 1);
      await sleep(CLAIM_IDLE_MS);
      expect(second).toEqual(["b4"]);
    });

    it("stop() after a handler failed hands that batch and those read after it to the next consumer at once, in order", async () => {
      const { changes } = newBus({ claimIdleMs: 30_000 });
      const hold = held();
      const first: string[] = [];
      await changes.publish([batch("b1", 1), batch("b2", 1), batch("b3", 1)]);
      const consumer = changes.consume("c1", async (b) => {
        first.push(b.id);
        await hold.wait;
        throw new Error("failing while stopping");
      });
      await waitFor("the first batch", () => first.length === 1);
      const stopping = consumer.stop();
      hold.open();
      await stopping;
      expect(first).toEqual(["b1"]);
      const second: string[] = [];
      changes.consume("c2", async (b) => {
        second.push(b.id);
      });
      // Well before claimIdleMs (30s), and in order: the failed b1 first.
      await waitFor("the batches c1 did not handle", () => second.length === 3);
      expect(second).toEqual(["b1", "b2", "b3"]);
    });

    it("stop() lets a running handler finish and acknowledges its batch", async () => {
      const { changes } = newBus();
      const hold = held();
      const seen: string[] = [];
      const consumer = changes.consume("c1", async (b) => {
        seen.push(b.id);
        await hold.wait;
      });
      await changes.publish([batch("b1", 1)]);
      await waitFor("delivery", () => seen.length === 1);
      let stopped = false;
      const stopping = consumer.stop().then(() => (stopped = true));
      await sleep(20);
      expect(stopped).toBe(false);
      hold.open();
      await stopping;
      const again: string[] = [];
      changes.consume("c2", async (b) => {
        again.push(b.id);
      });
      await sleep(CLAIM_IDLE_MS * 3);
      expect(again).toEqual([]);
    });
  });

  describe("queue store", () => {
    const options = (userId: number, extra: Partial<QueueOptions> = {}): QueueOptions => ({
      userId,
      realmId: 1,
      allPublicStreams: false,
      settings: { event_types: ["message"], narrow: [["stream", "Denmark"]], apply_markdown: true },
      ...extra,
    });
    const event = (n: number): EventPayload => ({ type: "message", n });

    it("creates queues with distinct ids and gets them back", async () => {
      const { queues } = newBus();
      const before = Date.now();
      const q1 = await queues.create(options(10, { allPublicStreams: true }));
      const q2 = await queues.create(options(10));
      expect(q1.id).not.toEqual(q2.id);
      expect(q1).toEqual({ id: q1.id, ...options(10, { allPublicStreams: true }), since: STREAM_START, lastPollMs: expect.any(Number) });
      expect(q1.lastPollMs).toBeGreaterThanOrEqual(before);
      expect(await queues.get(q1.id)).toEqual(q1);
      expect(await queues.get(q2.id)).toEqual(q2);
      expect(await queues.get("no-such-queue")).toBeNull();
    });

    it("keeps the change stream position a queue was created at", async () => {
      const { queues } = newBus();
      const queue = await queues.create(options(4, { since: "1700000000000-3", allPublicStreams: true }));
      expect(queue.since).toEqual("1700000000000-3");
      expect((await queues.get(queue.id))?.since).toEqual("1700000000000-3");
      expect((await queues.queuesOfUsers(1, [4]))[0].since).toEqual("1700000000000-3");
      expect((await queues.allPublicStreamsQueues(1))[0].since).toEqual("1700000000000-3");
    });

    it("finds the queues of users and the all_public_streams queues of a realm", async () => {
      const { queues } = newBus();
      const a1 = await queues.create(options(1));
      const a2 = await queues.create(options(1, { allPublicStreams: true }));
      const b = await queues.create(options(2));
      await queues.create(options(3));
      const otherRealm = await queues.create(options(1, { realmId: 2, allPublicStreams: true }));
      const ids = (list: { id: string }[]) => list.map((q) => q.id).sort();

      expect(ids(await queues.queuesOfUsers(1, [1, 2, 1, 99]))).toEqual([a1.id, a2.id, b.id].sort());
      const { lastPollMs: _lastPollMs, ...bTarget } = b;
      expect(await queues.queuesOfUsers(1, [2])).toEqual([bTarget]);
      expect(await queues.queuesOfUsers(1, [])).toEqual([]);
      expect(ids(await queues.queuesOfUsers(2, [1]))).toEqual([otherRealm.id]);
      expect(ids(await queues.allPublicStreamsQueues(1))).toEqual([a2.id]);
      expect(ids(await queues.allPublicStreamsQueues(2))).toEqual([otherRealm.id]);
      expect(await queues.allPublicStreamsQueues(3)).toEqual([]);

      await queues.delete(a2.id);
      expect(ids(await queues.queuesOfUsers(1, [1]))).toEqual([a1.id]);
      expect(await queues.allPublicStreamsQueues(1)).toEqual([]);
    });

    it("lists every live queue of every realm, with what it was made with", async () => {
      const { queues } = newBus();
      // The pages, each queue once (a page may repeat one).
      const listed = async () => {
        const byId = new Map<string, QueueTarget>();
        for await (const page of queues.allQueues()) for (const queue of page) byId.set(queue.id, queue);
        return [...byId.values()];
      };
      expect(await listed()).toEqual([]);
      const a = await queues.create(options(1, { idleTimeoutMs: 60_000 }));
      const b = await queues.create(options(2, { realmId: 2, allPublicStreams: true, since: "1700000000000-3" }));
      const gone = await queues.create(options(3));
      await queues.delete(gone.id);
      const target = ({ lastPollMs: _lastPollMs, ...rest }: QueueInfo) => rest;
      const sorted = (list: Array<{ id: string }>) => [...list].sort((x, y) => (x.id < y.id ? -1 : 1));
      expect(sorted(await listed())).toEqual(sorted([target(a), target(b)]));
    });

    it("numbers appended events from 0, consecutively across appends, and keeps their content", async () => {
      const { queues } = newBus();
      const q = await queues.create(options(1));
      expect(await queues.lastEventId(q.id)).toBe(-1);
      const rich: EventPayload = {
        type: "message",
        id: 999, // the queue's id wins over one in the payload
        flags: [],
        message: { content: "héllo ✓ \"quoted\" \\ {}", big: 2 ** 53 - 1, fraction: 0.1, nested: { empty: {}, list: [1, "2", null] } },
      };
      await queues.append("s1", [{ queueId: q.id, events: [event(0), rich] }]);
      await queues.append("s2", [{ queueId: q.id, events: [event(2)] }]);
      await queues.append("s3", [{ queueId: q.id, events: [] }]);
      expect(await queues.lastEventId(q.id)).toBe(2);
      const events = await queues.read(q.id, -1);
      expect(events).toEqual([{ ...event(0), id: 0 }, { ...rich, id: 1 }, { ...event(2), id: 2 }]);
    });

    it("appends one event object to many queues, each numbering it as its own, past one call's share", async () => {
      const { queues } = newBus({ maxQueuesPerUser: 1000 });
      // Created in rounds: 620 creations pipelined at once (each checking its user's queue count)
      // held Redis past the client's 1 s command timeout on a loaded CI machine.
      const many: QueueInfo[] = [];
      for (let round = 0; round < 10; round++) many.push(...(await Promise.all(Array.from({ length: 62 }, (_, i) => queues.create(options(1 + ((round * 62 + i) % 7)))))));
      const shared = event(1);
      const own = event(2);
      // Some queues are ahead of the others, so the same event gets different ids.
      await queues.append("s0", many.filter((_, i) => i % 3 === 0).map((q) => ({ queueId: q.id, events: [event(0)] })));
      await queues.append("s1", many.map((q, i) => ({ queueId: q.id, events: i === 5 ? [shared, own, shared] : [shared] })));
      for (const [i, q] of many.entries()) {
        const expected = [...(i % 3 === 0 ? [event(0)] : []), ...(i === 5 ? [shared, own, shared] : [shared])];
        expect((await queues.read(q.id, -1))!).toEqual(expected.map((e, id) => ({ ...e, id })));
      }
    });

    it("appends called one after another, without waiting, apply in call order", async () => {
      const { queues } = newBus();
      const q = await queues.create(options(1));
      await Promise.all(Array.from({ length: 20 }, (_, i) => queues.append(`s${i}`, [{ queueId: q.id, events: [event(i)] }])));
      expect((await queues.read(q.id, -1))!.map((e) => [e.id, e.n])).toEqual(Array.from({ length: 20 }, (_, i) => [i, i]));
    });

    it("appends each source id to a queue at most once", async () => {
      const { queues } = newBus();
      const q1 = await queues.create(options(1));
      const q2 = await queues.create(options(2));
      await queues.append("s1", [{ queueId: q1.id, events: [event(1), event(2)] }]);
      await queues.append("s1", [
        { queueId: q1.id, events: [event(1), event(2)] },
        { queueId: q2.id, events: [event(1)] },
      ]);
      await queues.append("s2", [{ queueId: q1.id, events: [event(3)] }]);
      // One event of one source, as a fan-out appends to each queue, again: nothing added.
      await queues.append("s2", [{ queueId: q1.id, events: [event(4)] }]);
      await queues.append("s1", [{ queueId: q2.id, events: [event(5)] }]);
      expect((await queues.read(q1.id, -1))!.map((e) => [e.id, e.n])).toEqual([[0, 1], [1, 2], [2, 3]]);
      expect((await queues.read(q2.id, -1))!.map((e) => [e.id, e.n])).toEqual([[0, 1]]);
    });

    it("ignores appends to a queue that no longer exists", async () => {
      const { queues } = newBus();
      const gone = await queues.create(options(1));
      const live = await queues.create(options(1));
      expect(await queues.delete(gone.id)).toBe(true);
      await queues.append("s1", [
        { queueId: gone.id, events: [event(1)] },
        { queueId: "never-existed", events: [event(1)] },
        { queueId: live.id, events: [event(1)] },
      ]);
      expect(await queues.get(gone.id)).toBeNull();
      expect(await queues.lastEventId(gone.id)).toBeNull();
      expect(await queues.read(gone.id, -1)).toBeNull();
      expect(await queues.read("never-existed", -1)).toBeNull();
      expect(await queues.queuesOfUsers(1, [1])).toEqual([expect.objectContaining({ id: live.id })]);
      expect((await queues.read(live.id, -1))!.map((e) => e.id)).toEqual([0]);
    });

    it("appends made together apply in the order they were made, each source once per queue, those already applied skipped", async () => {
      const { queues } = newBus({ maxEventsPerQueue: 8 });
      const q = await queues.create(options(1));
      const other = await queues.create(options(2));
      const full = await queues.create(options(3));
      await queues.append("s1", [{ queueId: q.id, events: [event(0)] }, { queueId: full.id, events: [event(0), event(1), event(2), event(3), event(4), event(5)] }]);
      // Not awaited one by one: a fan-out issues a read's batches at once.
      await Promise.all([
        queues.append("s2", [{ queueId: q.id, events: [event(1), event(2)] }, { queueId: other.id, events: [event(1)] }]),
        queues.append("s1", [{ queueId: q.id, events: [event(99)] }, { queueId: other.id, events: [event(0)] }]),
        queues.append("s3", [{ queueId: q.id, events: [event(3)] }, { queueId: full.id, events: [event(6)] }]),
        queues.append("s2", [{ queueId: q.id, events: [event(98)] }]),
        // Together past the limit: the queue goes, as the second of them alone would make it.
        queues.append("s4", [{ queueId: full.id, events: [event(7), event(8)] }]),
      ]);
      expect(await queues.read(q.id, -1)).toEqual([0, 1, 2, 3].map((n) => ({ ...event(n), id: n })));
      // s1 first reached `other` in this turn, after s2.
      expect(await queues.read(other.id, -1)).toEqual([{ ...event(1), id: 0 }, { ...event(0), id: 1 }]);
      expect(await queues.get(full.id)).toBeNull();
    });

    it("drops a queue that would hold more than its limit of events, announcing it; other queues keep theirs", async () => {
      const { queues } = newBus({ maxEventsPerQueue: 5 });
      const full = await queues.create(options(1));
      const polled = await queues.create(options(2));
      const announced: string[] = [];
      await queues.onReady((id) => announced.push(id));
      await queues.append("s1", [{ queueId: full.id, events: [event(0), event(1), event(2)] }, { queueId: polled.id, events: [event(0), event(1), event(2)] }]);
      expect((await queues.read(polled.id, 2))!).toEqual([]);
      await queues.append("s2", [{ queueId: full.id, events: [event(3), event(4)] }, { queueId: polled.id, events: [event(3), event(4)] }]);
      expect((await queues.read(full.id, -1))!.map((e) => e.id)).toEqual([0, 1, 2, 3, 4]);
      announced.length = 0;
      // One more than the client left unacknowledged room for: the queue goes, whole.
      await queues.append("s3", [{ queueId: full.id, events: [event(5)] }, { queueId: polled.id, events: [event(5)] }]);
      expect(await queues.read(full.id, -1)).toBeNull();
      expect(await queues.get(full.id)).toBeNull();
      expect(await queues.queuesOfUsers(1, [1])).toEqual([]);
      expect((await queues.read(polled.id, 2))!.map((e) => e.id)).toEqual([3, 4, 5]);
      await waitFor("the dropped queue announced", () => announced.includes(full.id));
      // Appends to it afterwards are no-ops, as to any queue that is gone.
      await queues.append("s4", [{ queueId: full.id, events: [event(6)] }]);
      expect(await queues.get(full.id)).toBeNull();
    });

    it("keeps at most maxQueuesPerUser queues per user, evicting the least recently polled and announcing it", async () => {
      const { queues } = newBus({ maxQueuesPerUser: 3 });
      const announced: string[] = [];
      await queues.onReady((id) => announced.push(id));
      const first = await queues.create(options(1, { allPublicStreams: true }));
      await sleep(3);
      const second = await queues.create(options(1));
      await sleep(3);
      const third = await queues.create(options(1));
      const otherUser = await queues.create(options(2));
      await sleep(3);
      // The first is polled now, so the second is the least recently polled.
      await queues.read(first.id, -1);
      const fourth = await queues.create(options(1));
      const ids = (list: { id: string }[]) => list.map((q) => q.id).sort();
      expect(ids(await queues.queuesOfUsers(1, [1]))).toEqual([first.id, third.id, fourth.id].sort());
      expect(await queues.read(second.id, -1)).toBeNull();
      await waitFor("the evicted queue announced", () => announced.includes(second.id));
      expect(await queues.get(otherUser.id)).not.toBeNull();
      await sleep(3);
      await queues.read(fourth.id, -1);
      await queues.read(third.id, -1);
      await queues.create(options(1));
      expect(await queues.get(first.id)).toBeNull();
      expect(await queues.allPublicStreamsQueues(1)).toEqual([]);
    });

    it("read drops acknowledged events, records the poll, and keeps numbering", async () => {
      const { queues } = newBus();
      const q = await queues.create(options(1));
      await queues.append("s1", [{ queueId: q.id, events: [event(0), event(1), event(2), event(3)] }]);
      expect((await queues.read(q.id, -1))!.map((e) => e.id)).toEqual([0, 1, 2, 3]);
      expect((await queues.read(q.id, 1))!.map((e) => e.id)).toEqual([2, 3]);
      // Acknowledged events are gone for good, even if a client sends an older id again.
      expect((await queues.read(q.id, -1))!.map((e) => e.id)).toEqual([2, 3]);
      await sleep(5);
      const polledAfter = Date.now();
      expect(await queues.read(q.id, 3)).toEqual([]);
      expect((await queues.get(q.id))!.lastPollMs).toBeGreaterThanOrEqual(polledAfter);
      await queues.append("s2", [{ queueId: q.id, events: [event(4)] }]);
      expect(await queues.read(q.id, 3)).toEqual([{ ...event(4), id: 4 }]);
      expect(await queues.lastEventId(q.id)).toBe(4);
    });

    it("read with an owner reads only that user's queue, and leaves another's as it was", async () => {
      const { queues } = newBus();
      const q = await queues.create(options(7));
      await queues.append("s1", [{ queueId: q.id, events: [event(0), event(1)] }]);
      const polled = (await queues.get(q.id))!.lastPollMs;
      await sleep(5);
      expect(await queues.read(q.id, 0, 8)).toBeNull();
      expect((await queues.get(q.id))!.lastPollMs).toBe(polled);
      expect((await queues.read(q.id, -1, 7))!.map((e) => e.id)).toEqual([0, 1]);
      expect((await queues.read(q.id, 0, 7))!.map((e) => e.id)).toEqual([1]);
      expect(await queues.read("never-existed", -1, 7)).toBeNull();
      // As JSON text, the same events, ids included.
      expect((await queues.readJson(q.id, 0, 7))!.map((json) => JSON.parse(json))).toEqual([{ ...event(1), id: 1 }]);
      expect(await queues.readJson(q.id, 0, 8)).toBeNull();
    });

    it("acknowledge records what read does for many queues at once, across realms and past one call's share, and names those missing or another's", async () => {
      const { queues } = newBus({ maxQueuesPerUser: 1000 });
      const many = await Promise.all(Array.from({ length: 130 }, (_, i) => queues.create(options(1 + (i % 5)))));
      const elsewhere = await queues.create(options(1, { realmId: 2 }));
      // Its own timeout, long beside the steps between its polls: a loaded machine (a cluster of
      // its own, other suites) took more than 80 ms over them, and the queue expired.
      const timedCreated = Date.now();
      const timed = await queues.create({ ...options(6), idleTimeoutMs: 1000 });
      const another = await queues.create(options(7));
      const all = [...many, elsewhere, timed, another];
      await queues.append("s1", all.map((q) => ({ queueId: q.id, events: [event(0), event(1), event(2)] })));
      const anotherPolled = (await queues.get(another.id))!.lastPollMs;
      await sleep(600);
      const before = Date.now();
      const missing = await queues.acknowledge([
        ...[...many, elsewhere, timed].map((q) => ({ queueId: q.id, lastEventId: 1, ownerId: q.userId })),
        { queueId: another.id, lastEventId: 2, ownerId: 8 },
        { queueId: "never-existed", lastEventId: 0, ownerId: 1 },
      ]);
      expect(missing.sort()).toEqual([another.id, "never-existed"].sort());
      // Polled: the timed queue's own second starts again, and the default counts from now. Past
      // the second it had when made, it is kept: idle by its last poll, not by that.
      expect((await queues.get(many[0].id))!.lastPollMs).toBeGreaterThanOrEqual(before);
      expect((await queues.get(timed.id))!.lastPollMs).toBeGreaterThanOrEqual(before);
      await sleep(Math.max(0, timedCreated + 1100 - Date.now()));
      expect(await queues.deleteIdle(60_000)).toBe(0);
      expect(await queues.get(timed.id)).not.toBeNull();
      for (const q of [...many, elsewhere, timed]) {
        expect((await queues.readJson(q.id, -1, q.userId))!.map((json) => (JSON.parse(json) as { id: number }).id)).toEqual([2]);
      }
      // Another's queue is left as it was.
      expect((await queues.get(another.id))!.lastPollMs).toBe(anotherPolled);
      expect((await queues.read(another.id, -1, 7))!.map((e) => e.id)).toEqual([0, 1, 2]);
      expect(await queues.acknowledge([])).toEqual([]);
    });

    it("deletes a queue and everything about it", async () => {
      const { queues } = newBus();
      const q = await queues.create(options(1, { allPublicStreams: true }));
      await queues.append("s1", [{ queueId: q.id, events: [event(0)] }]);
      expect(await queues.delete(q.id)).toBe(true);
      expect(await queues.delete(q.id)).toBe(false);
      expect(await queues.get(q.id)).toBeNull();
      expect(await queues.read(q.id, -1)).toBeNull();
      expect(await queues.lastEventId(q.id)).toBeNull();
      expect(await queues.queuesOfUsers(1, [1])).toEqual([]);
      expect(await queues.allPublicStreamsQueues(1)).toEqual([]);
      expect(await queues.deleteIdle(0)).toBe(0);
    });

    it("invalidates queues: each deleted and announced, unknown ids ignored, later appends no-ops", async () => {
      const { queues } = newBus();
      const announced: string[] = [];
      await queues.onReady((id) => announced.push(id));
      const everywhere = await queues.create(options(1, { allPublicStreams: true }));
      const plain = await queues.create(options(1));
      const elsewhere = await queues.create(options(2, { realmId: 2, allPublicStreams: true }));
      const kept = await queues.create(options(3));
      await queues.append("s1", [everywhere, plain, elsewhere, kept].map((q) => ({ queueId: q.id, events: [event(0)] })));
      await waitFor("the append announced", () => announced.length === 4);
      announced.length = 0;

      expect(await queues.invalidate([everywhere.id, elsewhere.id, everywhere.id, "never-existed", "1:1:1:nothing"])).toBe(2);
      for (const q of [everywhere, elsewhere]) {
        expect(await queues.get(q.id)).toBeNull();
        expect(await queues.read(q.id, -1)).toBeNull();
      }
      expect((await queues.queuesOfUsers(1, [1])).map((q) => q.id)).toEqual([plain.id]);
      expect(await queues.allPublicStreamsQueues(1)).toEqual([]);
      expect(await queues.allPublicStreamsQueues(2)).toEqual([]);
      expect((await queues.read(kept.id, -1))!.map((e) => e.id)).toEqual([0]);
      await waitFor("the invalidated queues announced", () => announced.includes(everywhere.id) && announced.includes(elsewhere.id));
      expect(announced.filter((id) => id !== everywhere.id && id !== elsewhere.id)).toEqual([]);

      await queues.append("s2", [{ queueId: everywhere.id, events: [event(1)] }, { queueId: plain.id, events: [event(1)] }]);
      expect(await queues.get(everywhere.id)).toBeNull();
      expect((await queues.read(plain.id, -1))!.map((e) => e.id)).toEqual([0, 1]);
      expect(await queues.invalidate([everywhere.id])).toBe(0);
      expect(await queues.invalidate([])).toBe(0);
    });

    it("deleteIdle removes only the queues not polled for idleMs", async () => {
      const { queues } = newBus();
      const idle = await queues.create(options(1, { allPublicStreams: true }));
      const polled = await queues.create(options(1));
      await sleep(150);
      await queues.read(polled.id, -1);
      expect(await queues.deleteIdle(100)).toBe(1);
      expect(await queues.get(idle.id)).toBeNull();
      expect(await queues.allPublicStreamsQueues(1)).toEqual([]);
      expect(await queues.get(polled.id)).not.toBeNull();
      expect(await queues.deleteIdle(60_000)).toBe(0);
      expect(await queues.queuesOfUsers(1, [1])).toEqual([expect.objectContaining({ id: polled.id })]);
    });

    it("a queue with its own idle timeout expires by it, not by the default, and a poll renews it", async () => {
      const { queues } = newBus();
      const longLived = await queues.create({ ...options(1), idleTimeoutMs: 60_000 });
      const shortLived = await queues.create({ ...options(1, { allPublicStreams: true }), idleTimeoutMs: 100 });
      const ordinary = await queues.create(options(1));
      expect(await queues.get(longLived.id)).toMatchObject({ idleTimeoutMs: 60_000 });
      expect((await queues.get(ordinary.id))?.idleTimeoutMs).toBeUndefined();
      await sleep(150);
      // A default of ten seconds keeps the ordinary queue; the short-lived one is past its own 100 ms.
      expect(await queues.deleteIdle(10_000)).toBe(1);
      expect(await queues.get(shortLived.id)).toBeNull();
      expect(await queues.allPublicStreamsQueues(1)).toEqual([]);
      // A default of zero takes the ordinary queue, never the one with a minute of its own.
      expect(await queues.deleteIdle(0)).toBe(1);
      expect(await queues.get(ordinary.id)).toBeNull();
      expect(await queues.get(longLived.id)).not.toBeNull();

      const renewed = await queues.create({ ...options(2), idleTimeoutMs: 200 });
      await sleep(120);
      await queues.read(renewed.id, -1);
      await sleep(120);
      expect(await queues.deleteIdle(0)).toBe(0);
      expect(await queues.get(renewed.id)).not.toBeNull();
      await sleep(120);
      expect(await queues.deleteIdle(0)).toBe(1);
      expect(await queues.queuesOfUsers(2, [2])).toEqual([]);
    });

    it("counts its queues, those with an idle timeout of their own included", async () => {
      const { queues } = newBus();
      expect(await queues.count()).toBe(0);
      const a = await queues.create(options(1));
      await queues.create(options(2));
      await queues.create(options(2, { idleTimeoutMs: 60_000 }));
      expect(await queues.count()).toBe(3);
      await queues.delete(a.id);
      expect(await queues.count()).toBe(2);
    });

    it("announces queues that received events to every onReady listener", async () => {
      const { queues } = newBus();
      const q1 = await queues.create(options(1));
      const q2 = await queues.create(options(2));
      const empty = await queues.create(options(3));
      const first: string[] = [];
      const second: string[] = [];
      await queues.onReady((id) => first.push(id));
      await queues.onReady((id) => second.push(id));
      await queues.append("s1", [
        { queueId: q1.id, events: [event(0)] },
        { queueId: q2.id, events: [event(0)] },
        { queueId: empty.id, events: [] },
        { queueId: "gone", events: [event(0)] },
      ]);
      await waitFor("both listeners, both queues", () => first.length >= 2 && second.length >= 2);
      await queues.append("s2", [{ queueId: q1.id, events: [event(1)] }]);
      await waitFor("the second append", () => first.length >= 3 && second.length >= 3);
      expect(first).toEqual([q1.id, q2.id, q1.id]);
      expect(second).toEqual(first);
    });

    it("sends a small batch's events along with its announcement, as a read after the event before them returns them", async () => {
      const { queues } = newBus();
      const q1 = await queues.create(options(1));
      const q2 = await queues.create(options(2));
      const heard: Array<[string, AnnouncedEvents | undefined]> = [];
      await queues.onReady((id, events) => heard.push([id, events]));
      await queues.append("s0", [{ queueId: q1.id, events: [event(0)] }]);
      await waitFor("the first append", () => heard.length === 1);
      // One object shared by both queues (as the fan-out shares them), text that JSON escapes, and
      // values a JSON rewrite would change.
      const shared: EventPayload = { type: "message", content: "é \"quoted\" \u2028 😀", flags: [], empty: {}, n: 1.5e300, list: [1, [2, {}]] };
      const own: EventPayload = { type: "update_message_flags", op: "add", messages: [7] };
      await queues.append("s1", [
        { queueId: q1.id, events: [shared, own] },
        { queueId: q2.id, events: [shared] },
      ]);
      await waitFor("the second append", () => heard.length === 3);
      const announced = heard.slice(1);
      expect(announced.map(([id, events]) => [id, events?.firstId])).toEqual([
        [q1.id, 1],
        [q2.id, 0],
      ]);
      for (const [id, events] of announced) {
        expect(events!.json()).toEqual(await queues.readJson(id, events!.firstId - 1));
        expect(events!.count).toBe(events!.json().length);
        // As bytes (how the hot route answers): the same texts joined, as UTF-8, at the offset given.
        const bytes = Buffer.alloc(events!.jsonByteLength() + 4, "_");
        expect(events!.writeJson(bytes, 2)).toBe(events!.jsonByteLength());
        expect(bytes.toString("utf8")).toBe(`__${events!.json().join(",")}__`);
      }
      expect(JSON.parse(announced[0][1]!.json()[0])).toEqual({ ...shared, id: 1 });

      // A source id applied already: announced again, with nothing to send along.
      await queues.append("s1", [{ queueId: q2.id, events: [shared] }]);
      await waitFor("the replay", () => heard.length === 4);
      expect(heard[3]).toEqual([q2.id, undefined]);
    });

    it("announces a batch too big to send along without its events, or with all of them", async () => {
      const { queues } = newBus();
      const q = await queues.create(options(1));
      const heard: Array<AnnouncedEvents | undefined> = [];
      await queues.onReady((_id, events) => heard.push(events));
      const big = Array.from({ length: 40 }, (_, i) => ({ type: "message", content: `${i}${"x".repeat(4000)}` }));
      await queues.append("s1", [{ queueId: q.id, events: big }]);
      await waitFor("the announcement", () => heard.length === 1);
      const read = await queues.readJson(q.id, -1);
      expect(read).toHaveLength(40);
      if (heard[0] !== undefined) expect(heard[0].json()).toEqual(read);
    });

    if (harness.multiNode) {
      it("announces appended queues on every node", async () => {
        const nodeA = newBus();
        const nodeB = newBus();
        const q = await nodeA.queues.create(options(1));
        const heardA: string[] = [];
        const heardB: string[] = [];
        await nodeA.queues.onReady((id) => heardA.push(id));
        await nodeB.queues.onReady((id) => heardB.push(id));
        await nodeB.queues.append("s1", [{ queueId: q.id, events: [event(0)] }]);
        await waitFor("both nodes", () => heardA.length === 1 && heardB.length === 1);
        expect([heardA, heardB]).toEqual([[q.id], [q.id]]);
        expect(await nodeA.queues.read(q.id, -1)).toEqual([{ ...event(0), id: 0 }]);
      });

      it("a node's lookups see every queue another node created or deleted since its last lookup", async () => {
        const fanout = newBus({ maxEventsPerQueue: 2, maxQueuesPerUser: 2 });
        const other = newBus({ maxEventsPerQueue: 2, maxQueuesPerUser: 2 });
        const ids = (list: { id: string }[]) => list.map((q) => q.id).sort();
        const kept = await other.queues.create(options(1));
        const overflowing = await other.queues.create(options(2, { allPublicStreams: true }));
        const deleted = await other.queues.create(options(3));
        expect(ids(await fanout.queues.queuesOfUsers(1, [1, 2, 3]))).toEqual([kept.id, overflowing.id, deleted.id].sort());
        expect(ids(await fanout.queues.allPublicStreamsQueues(1))).toEqual([overflowing.id]);

        // Created, deleted, dropped for overflowing, evicted by the user's newer queues, expired.
        const created = await other.queues.create(options(4, { allPublicStreams: true, settings: { narrow: [["stream", "x"]] } }));
        await other.queues.delete(deleted.id);
        await other.queues.append("s1", [{ queueId: overflowing.id, events: [event(0), event(1), event(2)] }]);
        const newer = [await other.queues.create(options(1)), await other.queues.create(options(1))];
        const expiring = await other.queues.create(options(5, { idleTimeoutMs: 1 }));
        expect(ids(await fanout.queues.queuesOfUsers(1, [1, 2, 3, 4, 5]))).toEqual([...newer.map((q) => q.id), created.id, expiring.id].sort());
        await sleep(5);
        await other.queues.deleteIdle(60_000);
        const found = await fanout.queues.queuesOfUsers(1, [1, 2, 3, 4, 5]);
        expect(ids(found)).toEqual([...newer.map((q) => q.id), created.id].sort());
        expect(found.find((q) => q.id === created.id)).toEqual({ id: created.id, ...options(4, { allPublicStreams: true, settings: { narrow: [["stream", "x"]] } }), since: STREAM_START });
        expect(ids(await fanout.queues.allPublicStreamsQueues(1))).toEqual([created.id]);
        // Invalidated by another node, too.
        await other.queues.invalidate([created.id]);
        expect(ids(await fanout.queues.queuesOfUsers(1, [4]))).toEqual([]);
        expect(await fanout.queues.allPublicStreamsQueues(1)).toEqual([]);
      });
    }
  });

  describe("jobs", () => {
    it("runs jobs with their data, up to `concurrency` at once", async () => {
      const { jobs } = newBus();
      const hold = held();
      const running: unknown[] = [];
      const done: unknown[] = [];
      for (const n of [1, 2, 3, 4]) await jobs.add("work", { n, nested: { list: [n] } });
      jobs.process(
        "work",
        async (data) => {
          running.push(data.n);
          await hold.wait;
          done.push(data);
        },
        3,
      );
      await waitFor("three jobs at once", () => running.length === 3);
      await sleep(50);
      expect(running).toHaveLength(3);
      hold.open();
      await waitFor("all jobs", () => done.length === 4);
      expect(done).toEqual(expect.arrayContaining([1, 2, 3, 4].map((n) => ({ n, nested: { list: [n] } }))));
    });

    it("retries a failing job with exponential backoff until it succeeds or attempts run out", async () => {
      const { jobs } = newBus();
      const calls = new Map<string, number[]>();
      jobs.process("flaky", async (data) => {
        const name = String(data.name);
        const times = calls.get(name) ?? [];
        calls.set(name, [...times, Date.now()]);
        if (name === "always" || times.length < 2) throw new Error(`${name} fails`);
      });
      await jobs.add("flaky", { name: "twice" }, { attempts: 4, backoffMs: 100 });
      await jobs.add("flaky", { name: "always" }, { attempts: 2, backoffMs: 50 });
      await waitFor("the third attempt", () => calls.get("twice")?.length === 3);
      const [t0, t1, t2] = calls.get("twice")!;
      expect(t1 - t0).toBeGreaterThanOrEqual(95);
      expect(t2 - t1).toBeGreaterThanOrEqual(195);
      await waitFor("the second attempt", () => calls.get("always")?.length === 2);
      // Succeeded, resp. out of attempts: neither runs again.
      await sleep(400);
      expect(calls.get("twice")).toHaveLength(3);
      expect(calls.get("always")).toHaveLength(2);
      expect(log.messages.filter((m) => m.includes("flaky"))).toHaveLength(4);
    });

    it("tells the handler which attempt it runs, of how many", async () => {
      const { jobs } = newBus();
      const seen: Array<[number, number]> = [];
      jobs.process("counted", async (_data, { attempt, attempts }) => {
        seen.push([attempt, attempts]);
        if (attempt < 3) throw new Error("not yet");
      });
      await jobs.add("counted", {}, { attempts: 3, backoffMs: 10 });
      await waitFor("the third attempt", () => seen.length === 3);
      expect(seen).toEqual([[1, 3], [2, 3], [3, 3]]);
    });

    it("runs a delayed job no sooner than its delay", async () => {
      const { jobs } = newBus();
      const ran: Array<[string, number]> = [];
      jobs.process("delayed", async (data) => {
        ran.push([String(data.name), Date.now()]);
      });
      const added = Date.now();
      await jobs.add("delayed", { name: "later" }, { delayMs: 300 });
      await jobs.add("delayed", { name: "now" });
      await waitFor("both jobs", () => ran.length === 2);
      expect(ran.map(([name]) => name)).toEqual(["now", "later"]);
      expect(ran[1][1] - added).toBeGreaterThanOrEqual(295);
    });

    it("a job put off leaves its slot at once, runs again after its delay, and the run is no attempt", async () => {
      const { jobs } = newBus();
      const ran: Array<[string, number, number]> = [];
      let putOff = false;
      jobs.process(
        "deferred",
        async (data, { attempt }) => {
          ran.push([String(data.name), attempt, Date.now()]);
          if (data.name === "busy" && !putOff) {
            putOff = true;
            return { deferMs: 300 };
          }
        },
        1,
      );
      const added = Date.now();
      // One attempt only: were the put-off run counted, the job would never run again.
      await jobs.add("deferred", { name: "busy" }, { jobId: "busy:1", attempts: 1 });
      await jobs.add("deferred", { name: "next" });
      await waitFor("the job again", () => ran.length === 3);
      expect(ran.map(([name, attempt]) => [name, attempt])).toEqual([["busy", 1], ["next", 1], ["busy", 1]]);
      expect(ran[2][2] - added).toBeGreaterThanOrEqual(295);
      // Still the same job: its id dedupes as a job's does.
      await jobs.add("deferred", { name: "busy" }, { jobId: "busy:1" });
      await jobs.add("deferred", { name: "sentinel" });
      await waitFor("the sentinel", () => ran.some(([name]) => name === "sentinel"));
      expect(ran.filter(([name]) => name === "busy")).toHaveLength(2);
      expect(log.messages.filter((m) => m.includes("deferred"))).toEqual([]);
    });

    it("forgets a completed job's id after keepCompletedSeconds, so the id runs again", async () => {
      const { jobs } = newBus();
      const ran: string[] = [];
      jobs.process("kept", async (data) => {
        ran.push(String(data.name));
      });
      await jobs.add("kept", { name: "first" }, { jobId: "k", keepCompletedSeconds: 1 });
      await waitFor("the first run", () => ran.length === 1);
      await jobs.add("kept", { name: "deduped" }, { jobId: "k", keepCompletedSeconds: 1 });
      await sleep(1200);
      // BullMQ drops expired completed jobs when another job of the queue completes.
      await jobs.add("kept", { name: "other" }, { keepCompletedSeconds: 1 });
      await waitFor("the other job", () => ran.includes("other"));
      await jobs.add("kept", { name: "again" }, { jobId: "k", keepCompletedSeconds: 1 });
      await waitFor("the id to run again", () => ran.includes("again"));
      expect(ran).toEqual(["first", "other", "again"]);
    });

    it("runs a job added twice with the same jobId once", async () => {
      const { jobs } = newBus();
      const ran: string[] = [];
      await jobs.add("dedupe", { name: "x1" }, { jobId: "webhook:42" });
      await jobs.add("dedupe", { name: "x2" }, { jobId: "webhook:42" });
      await jobs.add("dedupe", { name: "plain" }, { jobId: "43" });
      jobs.process("dedupe", async (data) => {
        ran.push(String(data.name));
      });
      await waitFor("the first jobs", () => ran.length === 2);
      // Also after it completed; the sentinel runs after anything added before it.
      await jobs.add("dedupe", { name: "x3" }, { jobId: "webhook:42" });
      await jobs.add("dedupe", { name: "sentinel" });
      await waitFor("the sentinel", () => ran.includes("sentinel"));
      expect(ran).toEqual(["x1", "plain", "sentinel"]);
    });

    const item = (key: string) => ({ key, data: { key } });
    /** The items of each job run, as lists of keys. */
    function collectItems(jobs: Bus["jobs"], name: string): string[][] {
      const ran: string[][] = [];
      jobs.process(name, async (data) => {
        ran.push((data.items as Array<{ key: string }>).map((i) => i.key));
      });
      return ran;
    }

    it("addEach queues items in jobs of at most perJob, in order", async () => {
      const { jobs } = newBus();
      expect(await jobs.addEach("each", ["m1:1", "m1:2", "m2:1", "m3:1", "m3:2"].map(item), { perJob: 2 })).toBe(5);
      const ran = collectItems(jobs, "each");
      await waitFor("three jobs", () => ran.length === 3);
      expect(ran.sort()).toEqual([["m1:1", "m1:2"], ["m2:1", "m3:1"], ["m3:2"]]);
    });

    it("addEach queues each item once, however the items are grouped when offered again", async () => {
      const { jobs } = newBus();
      expect(await jobs.addEach("once", ["1:9", "2:9", "3:9"].map(item), { perJob: 10 })).toBe(3);
      // Waiting: an overlapping offer queues only what is new, in a job named after its first new item.
      expect(await jobs.addEach("once", ["2:9", "3:9", "4:9"].map(item), { perJob: 10 })).toBe(1);
      expect(await jobs.addEach("once", ["3:9", "1:9"].map(item), { perJob: 1 })).toBe(0);
      const ran = collectItems(jobs, "once");
      await waitFor("two jobs", () => ran.length === 2);
      // Finished and kept: offered again, nothing runs; a new item among them does.
      expect(await jobs.addEach("once", ["4:9", "5:9", "1:9"].map(item), { perJob: 10 })).toBe(1);
      await jobs.add("once", { items: [{ key: "sentinel" }] });
      await waitFor("the sentinel", () => ran.some((keys) => keys.includes("sentinel")));
      expect(ran.flat().sort()).toEqual(["1:9", "2:9", "3:9", "4:9", "5:9", "sentinel"]);
      // The job that carries 5:9 is named after it: that id is taken.
      await jobs.add("once", { items: [{ key: "not run" }] }, { jobId: "5:9" });
      await jobs.add("once", { items: [{ key: "sentinel 2" }] });
      await waitFor("the second sentinel", () => ran.some((keys) => keys.includes("sentinel 2")));
      expect(ran.flat()).not.toContain("not run");
    });

    it("addEach: an item whose claim expired before its job finished stays out while the job is kept", async () => {
      const { jobs } = newBus();
      const slow = held();
      const ran: string[][] = [];
      jobs.process("slow", async (data) => {
        ran.push((data.items as Array<{ key: string }>).map((i) => i.key));
        await slow.wait;
      });
      // Claims last keepCompletedSeconds from the offer; the job is kept that long from its end.
      expect(await jobs.addEach("slow", ["k:1", "k:2"].map(item), { perJob: 5, keepCompletedSeconds: 1 })).toBe(2);
      await waitFor("the job to start", () => ran.length === 1);
      await sleep(1100);
      slow.open();
      await sleep(100);
      // k:1 names the job, which is kept: it stays out.
      expect(await jobs.addEach("slow", ["k:1", "k:3"].map(item), { perJob: 5, keepCompletedSeconds: 1 })).toBe(1);
      await waitFor("the second job", () => ran.length === 2);
      expect(ran).toEqual([["k:1", "k:2"], ["k:3"]]);
    });

    it("addEach hands a job's items to every attempt", async () => {
      const { jobs } = newBus();
      const seen: Array<[number, string[]]> = [];
      jobs.process("retried", async (data, { attempt }) => {
        seen.push([attempt, (data.items as Array<{ key: string }>).map((i) => i.key)]);
        if (attempt === 1) throw new Error("first attempt fails");
      });
      await jobs.addEach("retried", ["a", "b"].map(item), { perJob: 5, attempts: 2, backoffMs: 10 });
      await waitFor("the second attempt", () => seen.length === 2);
      expect(seen).toEqual([[1, ["a", "b"]], [2, ["a", "b"]]]);
      // Retrying does not free the items.
      expect(await jobs.addEach("retried", ["b", "a"].map(item), { perJob: 5 })).toBe(0);
    });
  });
}
