import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { startRedisCluster, type TestRedisCluster } from "../../../test/support/redis-cluster.ts";
import { BusKeys, createRedisBus, createRedisClient, type RedisBusOptions, type RedisClient, type RedisTarget } from "../src";
import { DEDUPE_WINDOW_MS } from "../src/defaults";
import { defineQueueScripts } from "../src/redis/queue-scripts";
import { busContract } from "./bus-contract";
import { batch, collectingLog, sleep, waitFor } from "./helpers";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** Every key this file creates on the shared Redis starts with it (or with `{` and it); each test gets a space below it. */
const filePrefix = `test:bus:${randomBytes(6).toString("hex")}:`;

/** Where a block's buses run, and a client of it for looking at their keys. */
interface Backend {
  target: RedisTarget;
  redis: RedisClient;
}

/** The suites of this file on one Redis server, then on a Redis Cluster of three masters. */
const backends: Array<{ name: string; open(): Promise<Backend>; close(backend: Backend): Promise<void> }> = [
  {
    name: "redis",
    async open() {
      return { target: { url }, redis: new Redis(url) };
    },
    async close({ redis }) {
      const single = redis as Redis;
      const keysOfThisFile = async () => {
        const keys: string[] = [];
        for (const match of [`${filePrefix}*`, `{${filePrefix}*`]) {
          for await (const page of single.scanStream({ match, count: 1000 })) keys.push(...(page as string[]));
        }
        return keys;
      };
      const keys = await keysOfThisFile();
      if (keys.length > 0) await single.unlink(...keys);
      expect(await keysOfThisFile()).toEqual([]);
      await single.quit();
    },
  },
  {
    name: "redis cluster",
    async open() {
      cluster = await startRedisCluster();
      const target = { clusterNodes: cluster.nodes };
      return { target, redis: createRedisClient(target, {}) };
    },
    async close({ redis }) {
      redis.disconnect();
      await cluster?.stop();
    },
  },
];
let cluster: TestRedisCluster | undefined;

for (const { name, open, close } of backends) {
  describe(name, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await open();
    }, 60_000);
    afterAll(async () => {
      if (backend) await close(backend);
    });
    const bus = (options: Omit<RedisBusOptions, "url" | "clusterNodes">) => createRedisBus({ ...backend.target, ...options } as RedisBusOptions);
    redisBusTests(() => backend.redis, bus);
  });
}

/** This file's tests on the backend `raw` shows; `createBus` makes a bus on it (another node each call). */
function redisBusTests(raw: () => RedisClient, createBus: (options: Omit<RedisBusOptions, "url" | "clusterNodes">) => ReturnType<typeof createRedisBus>): void {
  /** A shard's stream under a test's prefix. */
  const shardKey = (prefix: string, shard: number) => new BusKeys(prefix).changeStream(shard);

  describe("bus contract", () => {
    busContract({
      createBus: (space, options) => createBus({ prefix: `${filePrefix}${space}:`, ...options }),
      multiNode: true,
    });
  });

  describe("redis change stream", () => {
    it("writes one entry per batch to the realm's shard stream", async () => {
      const prefix = `${filePrefix}shards:`;
      const bus = createBus({ prefix, shards: 3 });
      try {
        await bus.changes.publish([batch("a", 4), batch("b", 4), batch("c", 2)]);
        expect(await raw().xlen(shardKey(prefix, 0))).toBe(0);
        expect(await raw().xlen(shardKey(prefix, 1))).toBe(2);
        expect(await raw().xlen(shardKey(prefix, 2))).toBe(1);
        const [[, fields]] = await raw().xrange(shardKey(prefix, 1), "-", "+", "COUNT", 1);
        expect(fields).toEqual(["b", JSON.stringify(batch("a", 4))]);
      } finally {
        await bus.close();
      }
    });

    it("redelivers entries a dead consumer left pending", async () => {
      const prefix = `${filePrefix}dead:`;
      const bus = createBus({ prefix, shards: 1, claimIdleMs: 200, log: collectingLog() });
      try {
        await bus.changes.publish([batch("orphan", 1)]);
        // A consumer that read the entry and died before acknowledging it.
        await raw().xreadgroup("GROUP", "events", "dead", "COUNT", 10, "STREAMS", shardKey(prefix, 0), ">");
        const seen: string[] = [];
        bus.changes.consume("alive", async (b) => {
          seen.push(b.id);
        });
        await waitFor("the orphaned batch", () => seen.includes("orphan"));
        await waitFor("no pending entries", async () => {
          const [count] = (await raw().xpending(shardKey(prefix, 0), "events")) as [number];
          return count === 0;
        });
        expect(seen).toEqual(["orphan"]);
      } finally {
        await bus.close();
      }
    });

    it("consumers of a group share the shards: each reads its own, and a new consumer gets its share", async () => {
      const prefix = `${filePrefix}share:`;
      const bus = createBus({ prefix, shards: 4, log: collectingLog() });
      try {
        const got = new Map<string, Set<number>>([["a", new Set()], ["b", new Set()]]);
        bus.changes.consume("a", async (b) => void got.get("a")!.add(b.realmId % 4));
        await bus.changes.publish([0, 1, 2, 3].map((realmId) => batch(`first-${realmId}`, realmId)));
        await waitFor("the first consumer, on every shard", () => got.get("a")!.size === 4);
        bus.changes.consume("b", async (b) => void got.get("b")!.add(b.realmId % 4));
        // Within a few lease renewals the first gives up half its shards, and the second takes them.
        await waitFor("the second consumer's share", async () => {
          got.get("a")!.clear();
          got.get("b")!.clear();
          await bus.changes.publish([0, 1, 2, 3].map((realmId) => batch(`later-${realmId}-${Date.now()}`, realmId)));
          await sleep(200);
          return got.get("a")!.size === 2 && got.get("b")!.size === 2;
        }, 15_000);
        expect([...got.get("a")!].filter((shard) => got.get("b")!.has(shard))).toEqual([]);
      } finally {
        await bus.close();
      }
    });

    it("a consumer that died holding a shard: after its lease lapses another takes the shard over, its pending entries first, in order", async () => {
      const prefix = `${filePrefix}takeover:`;
      const bus = createBus({ prefix, shards: 1, claimIdleMs: 60_000, log: collectingLog() });
      try {
        await bus.changes.publish([batch("b0", 1), batch("b1", 1), batch("b2", 1)]);
        // A consumer that read them all and died, with its lease still running.
        await raw().xreadgroup("GROUP", "events", "dead", "COUNT", 2, "STREAMS", shardKey(prefix, 0), ">");
        await raw().set(`${shardKey(prefix, 0)}:lease:events`, "dead", "PX", 1500);
        const seen: string[] = [];
        const started = Date.now();
        bus.changes.consume("alive", async (b) => void seen.push(b.id));
        await bus.changes.publish([batch("b3", 1)]);
        await sleep(800);
        // Nothing while the dead consumer's lease runs: b2 and b3 would pass b0 and b1.
        expect(seen).toEqual([]);
        await waitFor("all four", () => seen.length === 4, 10_000);
        expect(seen).toEqual(["b0", "b1", "b2", "b3"]);
        // Well before claimIdleMs: the takeover itself recovers what the dead one held.
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await bus.close();
      }
    });

    it("trims what every group has acknowledged, keeping the last entry for position()", async () => {
      const prefix = `${filePrefix}trim:`;
      const bus = createBus({ prefix, shards: 1, log: collectingLog() });
      try {
        await bus.changes.publish(Array.from({ length: 30 }, (_, i) => batch(`b${i}`, 1)));
        const last = await bus.changes.position(1);
        const read = { events: 0, workers: 0 };
        bus.changes.consume("e", async () => void read.events++);
        bus.changes.consume("w", async () => void read.workers++, { group: "workers" });
        await waitFor("both groups", () => read.events === 30 && read.workers === 30);
        await waitFor("both acknowledged", async () => {
          const pending = await Promise.all(["events", "workers"].map(async (group) => ((await raw().xpending(shardKey(prefix, 0), group)) as [number])[0]));
          return pending.every((count) => count === 0);
        });
        await bus.changes.trim();
        expect(await raw().xlen(shardKey(prefix, 0))).toBe(1);
        expect(await bus.changes.position(1)).toEqual(last);
      } finally {
        await bus.close();
      }
    });

    it("an entry dropped past the cap while a dead consumer held it is counted lost, and the claim goes on without it", async () => {
      const prefix = `${filePrefix}dropped-pending:`;
      const bus = createBus({ prefix, shards: 1, claimIdleMs: 200, maxEntries: 10, log: collectingLog() });
      try {
        const lost: number[] = [];
        bus.changes.onDropped((d) => void (d.group === "events" && lost.push(d.count)));
        await bus.changes.publish(Array.from({ length: 15 }, (_, i) => batch(`b${i}`, 1)));
        // A consumer that read them all and died.
        await raw().xreadgroup("GROUP", "events", "dead", "COUNT", 100, "STREAMS", shardKey(prefix, 0), ">");
        await bus.changes.trim();
        expect(lost).toEqual([5]);
        const seen: string[] = [];
        bus.changes.consume("alive", async (b) => void seen.push(b.id));
        await waitFor("the kept ones, claimed", () => seen.length === 10);
        expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `b${i + 5}`));
        await waitFor("nothing pending", async () => ((await raw().xpending(shardKey(prefix, 0), "events")) as [number])[0] === 0);
      } finally {
        await bus.close();
      }
    });

    it("logs and acknowledges a malformed entry instead of wedging the stream", async () => {
      const prefix = `${filePrefix}malformed:`;
      const log = collectingLog();
      const bus = createBus({ prefix, shards: 1, claimIdleMs: 200, log });
      try {
        const seen: string[] = [];
        await bus.changes.publish([batch("first", 1)]);
        await raw().xadd(shardKey(prefix, 0), "*", "b", "{not json");
        await raw().xadd(shardKey(prefix, 0), "*", "other", "field");
        await raw().xadd(shardKey(prefix, 0), "*", "b", JSON.stringify({ id: 5 }));
        await bus.changes.publish([batch("last", 1)]);
        bus.changes.consume("c1", async (b) => {
          seen.push(b.id);
        });
        await waitFor("the batch after the malformed ones", () => seen.includes("last"));
        expect(seen).toEqual(["first", "last"]);
        expect(log.messages.filter((m) => m.includes("malformed"))).toHaveLength(3);
        await waitFor("no pending entries", async () => {
          const [count] = (await raw().xpending(shardKey(prefix, 0), "events")) as [number];
          return count === 0;
        });
      } finally {
        await bus.close();
      }
    });
  });

  describe("redis job queue: addEach's claims", () => {
    const item = (key: string) => ({ key, data: { key } });
    /** The claim addEach keeps for an item (BullMQ's id form: ':' escaped). */
    const claimKey = (prefix: string, name: string, key: string) => `${new BusKeys(prefix).jobs()}:${name}:once:j-${key.replaceAll(":", "%3A")}`;

    it("an item claimed for a job that never came is the claimer's for the grace, then taken over", async () => {
      const prefix = `${filePrefix}claims:`;
      const bus = createBus({ prefix, itemClaimGraceMs: 300, log: collectingLog() });
      try {
        // A queuer that claimed 7:1 (and so 7:2 with it) and died before adding its job.
        const [seconds, micros] = await raw().time();
        const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        await raw().set(claimKey(prefix, "calls", "7:1"), `j-7%3A1 ${now}`, "EX", 600);
        await expect(bus.jobs.addEach("calls", [item("7:1"), item("7:2")], { perJob: 10 })).rejects.toThrow(/BUSY item j-7%3A1 is being queued/);
        // Nothing was claimed by the refused call: 7:2 is free for anyone.
        expect(await raw().exists(claimKey(prefix, "calls", "7:2"))).toBe(0);
        await sleep(350);
        expect(await bus.jobs.addEach("calls", [item("7:1"), item("7:2")], { perJob: 10 })).toBe(2);
        const ran: string[][] = [];
        bus.jobs.process("calls", async (data) => {
          ran.push((data.items as Array<{ key: string }>).map((i) => i.key));
        });
        await waitFor("the job", () => ran.length === 1);
        expect(ran).toEqual([["7:1", "7:2"]]);
      } finally {
        await bus.close();
      }
    });

    it("an item whose claim is gone is still not queued again while the job named after it is kept", async () => {
      const prefix = `${filePrefix}claims-expired:`;
      const bus = createBus({ prefix, log: collectingLog() });
      try {
        expect(await bus.jobs.addEach("calls", [item("8:1"), item("8:2")], { perJob: 10 })).toBe(2);
        // Claims live as long as a finished job is kept, which counts from the end: the claims can go first.
        await raw().del(claimKey(prefix, "calls", "8:1"), claimKey(prefix, "calls", "8:2"));
        // 8:1 names the kept job, so it stays out even without its claim.
        expect(await bus.jobs.addEach("calls", [item("8:1"), item("9:1")], { perJob: 10 })).toBe(1);
        const ran: string[][] = [];
        bus.jobs.process("calls", async (data) => {
          ran.push((data.items as Array<{ key: string }>).map((i) => i.key));
        });
        await waitFor("two jobs", () => ran.length === 2);
        expect(ran.sort()).toEqual([["8:1", "8:2"], ["9:1"]]);
      } finally {
        await bus.close();
      }
    });
  });

  describe("redis queue store: a node's copy of a realm's queues", () => {
    it("reads the realm's queues afresh when the log no longer reaches back to its copy", async () => {
      const prefix = `${filePrefix}realm-copy:`;
      const fanout = createBus({ prefix, log: collectingLog() });
      const other = createBus({ prefix, log: collectingLog() });
      const options = (userId: number) => ({ userId, realmId: 1, allPublicStreams: false, settings: {} });
      try {
        const first = await other.queues.create(options(1));
        expect((await fanout.queues.queuesOfUsers(1, [1, 2, 3])).map((q) => q.id)).toEqual([first.id]);
        // Created while the fan-out node looked away, their log entries then trimmed away (as ten
        // thousand later changes would), and one more after.
        const unseen = await other.queues.create(options(2));
        await raw().xtrim(new BusKeys(prefix).queueLog(1), "MAXLEN", 0);
        const last = await other.queues.create(options(3));
        expect((await fanout.queues.queuesOfUsers(1, [1, 2, 3])).map((q) => q.id).sort()).toEqual([first.id, unseen.id, last.id].sort());
      } finally {
        await Promise.all([fanout.close(), other.close()]);
      }
    });

    // A queue remembers each source it applied (so a batch delivered twice adds nothing twice) for
    // the dedupe window, and forgets older ones as it grows: its set of sources stays bounded. The
    // append script has a path for one event of one source per queue (a fan-out's) and one for
    // any other line; both are held to it, the store's clock moved past the window in between.
    it("a queue forgets the sources it applied once they are past the dedupe window, on either append path", async () => {
      const prefix = `${filePrefix}sources-window:`;
      const keys = new BusKeys(prefix);
      const { queues, close } = createBus({ prefix, log: collectingLog() });
      const clock = jest.spyOn(Date, "now");
      const event = (n: number) => ({ type: "test", n });
      try {
        const single = await queues.create({ userId: 1, realmId: 1, allPublicStreams: false, settings: {} });
        const pairs = await queues.create({ userId: 2, realmId: 1, allPublicStreams: false, settings: {} });
        const sources = (queueId: string) => raw().zcard(keys.queueSources(1, queueId));
        const start = Date.now();
        clock.mockReturnValue(start);
        for (let i = 0; i < 20; i++) {
          await queues.append(`old${i}`, [{ queueId: single.id, events: [event(i)] }]);
          await queues.append(`old${i}`, [{ queueId: pairs.id, events: [event(i), event(i)] }]);
        }
        expect(await sources(single.id)).toBe(20);
        expect(await sources(pairs.id)).toBe(20);
        clock.mockReturnValue(start + DEDUPE_WINDOW_MS + 1000);
        for (let i = 0; i < 16; i++) {
          await queues.append(`new${i}`, [{ queueId: single.id, events: [event(i)] }]);
          await queues.append(`new${i}`, [{ queueId: pairs.id, events: [event(i), event(i)] }]);
        }
        // Only sources within the window are left: each queue crossed a multiple of 16 events.
        expect(await sources(single.id)).toBeLessThanOrEqual(16);
        expect(await sources(pairs.id)).toBeLessThanOrEqual(16);
        expect(await queues.lastEventId(single.id)).toBe(35);
        expect(await queues.lastEventId(pairs.id)).toBe(71);
      } finally {
        clock.mockRestore();
        await close();
      }
    });

    // The idle sweep scans the realm's sets, then deletes with a script that checks again: a queue
    // polled in between must survive. The contract tests cannot put a poll in that gap, so the
    // script is called here as the sweep calls it, with the scan's time.
    it("the sweep's delete keeps a queue polled since the scan, by its deadline or by its last poll", async () => {
      const prefix = `${filePrefix}idle-recheck:`;
      const keys = new BusKeys(prefix);
      const { queues, close } = createBus({ prefix, log: collectingLog() });
      const redis = raw();
      defineQueueScripts(redis);
      const deleteIfIdle = (queueId: string, userId: number, now: number, defaultIdleMs: number) =>
        redis.busQueueDelete(
          keys.queue(1, queueId), keys.queueEvents(1, queueId), keys.queueSources(1, queueId), keys.queueInfo(1),
          keys.queuesByPoll(1), keys.queuesByDeadline(1), keys.userQueues(1, userId), keys.queueLog(1),
          queueId, now, defaultIdleMs,
        );
      try {
        const ordinary = await queues.create({ userId: 1, realmId: 1, allPublicStreams: false, settings: {} });
        const ownTimeout = await queues.create({ userId: 2, realmId: 1, allPublicStreams: false, settings: {}, idleTimeoutMs: 60_000 });
        // The scan's time: both were made before it. Polled 20 ms or more after it, each is idle at
        // 10 ms past its idle time counted from the scan, but not counted from the poll.
        const scannedAt = Date.now();
        await sleep(20);
        await queues.acknowledge([
          { queueId: ordinary.id, lastEventId: -1, ownerId: 1 },
          { queueId: ownTimeout.id, lastEventId: -1, ownerId: 2 },
        ]);
        expect(await deleteIfIdle(ordinary.id, 1, scannedAt + 30_010, 30_000)).toBe(0);
        expect(await deleteIfIdle(ownTimeout.id, 2, scannedAt + 60_010, 0)).toBe(0);
        expect(await queues.get(ordinary.id)).not.toBeNull();
        expect(await queues.get(ownTimeout.id)).not.toBeNull();
        // Past them, both go.
        expect(await deleteIfIdle(ordinary.id, 1, Date.now() + 30_001, 30_000)).toBe(1);
        expect(await deleteIfIdle(ownTimeout.id, 2, Date.now() + 60_001, 0)).toBe(1);
        expect(await queues.get(ordinary.id)).toBeNull();
        expect(await queues.get(ownTimeout.id)).toBeNull();
      } finally {
        await close();
      }
    });
  });
}
