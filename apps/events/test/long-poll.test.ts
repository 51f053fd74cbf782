// A held long poll on both queue stores: it reads its queue once as it starts to wait, and, woken
// by an announcement that carries the events after its last one, answers with them without
// reading the queue again; anything else (an announcement without events, or events that do not
// follow the client's last one) it reads.
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import Redis from "ioredis";
import { MemoryQueueStore, ReadyEvents, RedisQueueStore, type QueueStore } from "@chat/bus";
import { pollEvents, readEventsJson, type PollRead } from "../src/long-poll.ts";
import { LongPollWaiters } from "../src/waiters.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `test:long-poll:${randomBytes(6).toString("hex")}:`;

const stores: Array<[string, () => QueueStore]> = [
  ["in-process", () => new MemoryQueueStore()],
  ["Redis", () => new RedisQueueStore({ url: REDIS_URL, prefix })],
];

afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  const keys: string[] = [];
  // Queue keys carry their organization's hash tag: "{" and then the prefix.
  for (const match of [`${prefix}*`, `{${prefix}*`]) for await (const page of redis.scanStream({ match, count: 1000 })) keys.push(...(page as string[]));
  if (keys.length > 0) await redis.unlink(...keys);
  await redis.quit();
});

describe.each(stores)("a held poll on the %s queue store", (_name, createStore) => {
  let queues: QueueStore;
  let waiters: LongPollWaiters;
  let reads: number;
  const counting: PollRead<string> = {
    read: (store, poll) => {
      reads++;
      return readEventsJson.read(store, poll);
    },
    fromJson: readEventsJson.fromJson,
  };
  const services = () => ({ queues, waiters, heartbeatMs: 10_000 });

  beforeEach(async () => {
    queues = createStore();
    waiters = await LongPollWaiters.attach(queues);
    reads = 0;
  });
  afterEach(() => queues.close());

  const newQueue = () => queues.create({ userId: 1, realmId: 1, allPublicStreams: false, settings: {} });
  /** Until the poll waits (it registers before its one read). */
  const held = async () => {
    for (let i = 0; i < 200 && (waiters.size === 0 || reads === 0); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    // Its read has answered (empty) by the time a turn or two pass.
    await new Promise((resolve) => setTimeout(resolve, 20));
  };

  it("answers from the announcement, reading its queue only as it starts to wait", async () => {
    const queue = await newQueue();
    await queues.append("s0", [{ queueId: queue.id, events: [{ type: "message", n: 0 }] }]);
    // Its announcement has come and gone before the poll.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const poll = pollEvents(services(), { queueId: queue.id, lastEventId: 0, dontBlock: false, userId: 1 }, null, counting);
    await held();
    // Past the busy-queue window, so the poll answers rather than gathering more.
    await new Promise((resolve) => setTimeout(resolve, 120));
    await queues.append("s1", [{ queueId: queue.id, events: [{ type: "message", n: 1 }, { type: "typing", op: "start" }] }]);
    const answer = await poll;
    expect(answer).toEqual(await queues.readJson(queue.id, 0));
    expect((answer as string[]).map((text) => JSON.parse(text) as unknown)).toEqual([
      { type: "message", n: 1, id: 1 },
      { type: "typing", op: "start", id: 2 },
    ]);
    expect(reads).toBe(1);
  });

  it("reads its queue when the announced events do not follow its last one", async () => {
    const queue = await newQueue();
    const poll = pollEvents(services(), { queueId: queue.id, lastEventId: -1, dontBlock: false, userId: 1 }, null, counting);
    await held();
    await new Promise((resolve) => setTimeout(resolve, 120));
    // Events from 7 on, to a client whose last is -1: it lacks 0 to 6, so these are not its answer.
    waiters.wake(queue.id, new ReadyEvents(7, ['{"type":"not-this","id":7}']));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await queues.append("s1", [{ queueId: queue.id, events: [{ type: "message", n: 0 }] }]);
    expect(((await poll) as string[]).map((text) => JSON.parse(text) as unknown)).toEqual([{ type: "message", n: 0, id: 0 }]);
    expect(reads).toBeGreaterThanOrEqual(2);
  });

  it("reads its queue when woken by an announcement without events", async () => {
    const queue = await newQueue();
    const poll = pollEvents(services(), { queueId: queue.id, lastEventId: -1, dontBlock: false, userId: 1 }, null, counting);
    await held();
    await new Promise((resolve) => setTimeout(resolve, 120));
    // As after a lost subscription: every waiting poll reads again.
    waiters.wakeAll();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await queues.append("s1", [{ queueId: queue.id, events: [{ type: "message", n: 0 }] }]);
    expect(((await poll) as string[]).map((text) => JSON.parse(text) as unknown)).toEqual([{ type: "message", n: 0, id: 0 }]);
    expect(reads).toBeGreaterThanOrEqual(2);
  });

  it("acts on an announcement that came while its first read was under way", async () => {
    const queue = await newQueue();
    let releaseRead!: () => void;
    const readGate = new Promise<void>((resolve) => (releaseRead = resolve));
    const gated: PollRead<string> = {
      read: async (store, poll) => {
        reads++;
        // The first read answers only once the announcement has come and gone.
        if (reads === 1) {
          const events = await readEventsJson.read(store, poll);
          await readGate;
          return events;
        }
        return readEventsJson.read(store, poll);
      },
      fromJson: readEventsJson.fromJson,
    };
    const poll = pollEvents(services(), { queueId: queue.id, lastEventId: -1, dontBlock: false, userId: 1 }, null, gated);
    for (let i = 0; i < 200 && reads === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    // Appended (and announced) after the read took its empty snapshot.
    await queues.append("s0", [{ queueId: queue.id, events: [{ type: "message", n: 0 }] }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    releaseRead();
    expect(((await poll) as string[]).map((text) => JSON.parse(text) as unknown)).toEqual([{ type: "message", n: 0, id: 0 }]);
    expect(waiters.size).toBe(0);
  });

  it("stops waiting the moment its client goes away, and leaves nothing waiting", async () => {
    const queue = await newQueue();
    // What a poll needs of a response: its "close" event.
    const response = new EventEmitter();
    const poll = pollEvents(services(), { queueId: queue.id, lastEventId: -1, dontBlock: false, userId: 1 }, response, counting);
    await held();
    expect(waiters.size).toBe(1);
    response.emit("close");
    expect(await poll).toBe("closed");
    expect(waiters.size).toBe(0);
  });

  it("answers a heartbeat when nothing comes within the wait, and leaves nothing waiting", async () => {
    const queue = await newQueue();
    const answer = await pollEvents({ ...services(), heartbeatMs: 300 }, { queueId: queue.id, lastEventId: -1, dontBlock: false, userId: 1 }, null, counting);
    expect((answer as string[]).map((text) => JSON.parse(text) as unknown)).toEqual([{ type: "heartbeat", id: 0 }]);
    expect(waiters.size).toBe(0);
  });

  describe("the next poll after an answer from an announcement", () => {
    const ids = (answer: unknown) => (answer as string[]).map((text) => (JSON.parse(text) as { id: number }).id);
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const poll = (queueId: string, lastEventId: number, userId = 1) => pollEvents(services(), { queueId, lastEventId, dontBlock: false, userId }, null, counting);
    /** A queue whose poll was answered (event 0) from its announcement; reads counted from 0 after. */
    async function answeredFromAnnouncement() {
      const queue = await newQueue();
      const first = poll(queue.id, -1);
      await held();
      await wait(120);
      await queues.append("s0", [{ queueId: queue.id, events: [{ type: "message", n: 0 }] }]);
      expect(ids(await first)).toEqual([0]);
      reads = 0;
      return queue;
    }

    it("waits without reading its queue, answers the next announcement, and the acknowledgment drops what it got and records the poll", async () => {
      const queue = await answeredFromAnnouncement();
      const before = Date.now();
      const next = poll(queue.id, 0);
      await wait(150);
      expect(reads).toBe(0);
      expect(waiters.size).toBe(1);
      // The acknowledgment goes after its delay (answered-queues.ts): event 0 is gone, the poll recorded.
      for (let i = 0; i < 60 && (await queues.get(queue.id))!.lastPollMs < before; i++) await wait(50);
      expect((await queues.get(queue.id))!.lastPollMs).toBeGreaterThanOrEqual(before);
      await queues.append("s1", [{ queueId: queue.id, events: [{ type: "message", n: 1 }] }]);
      expect(ids(await next)).toEqual([1]);
      expect(reads).toBe(0);
      expect(ids(await queues.readJson(queue.id, -1))).toEqual([1]);
    });

    it("reads its queue if the queue was announced since, and answers at once with what came", async () => {
      const queue = await answeredFromAnnouncement();
      await queues.append("s1", [{ queueId: queue.id, events: [{ type: "message", n: 1 }] }]);
      await wait(50);
      expect(ids(await poll(queue.id, 0))).toEqual([1]);
      expect(reads).toBe(1);
    });

    it("reads its queue if announcements may have been missed", async () => {
      const queue = await answeredFromAnnouncement();
      waiters.wakeAll();
      const next = poll(queue.id, 0);
      await held();
      expect(reads).toBe(1);
      await queues.append("s1", [{ queueId: queue.id, events: [{ type: "message", n: 1 }] }]);
      expect(ids(await next)).toEqual([1]);
    });

    it("reads its queue if the client comes back with another last event", async () => {
      const queue = await answeredFromAnnouncement();
      // A client that did not get the answer asks again from before it.
      expect(ids(await poll(queue.id, -1))).toEqual([0]);
      expect(reads).toBe(1);
    });

    it("is another user's no more than any poll: it reads, and gets nothing", async () => {
      const queue = await answeredFromAnnouncement();
      expect(await poll(queue.id, 0, 2)).toBeNull();
      expect(reads).toBe(1);
    });

    it("answers at once, not at its heartbeat, if the queue went meanwhile without an announcement", async () => {
      const queue = await answeredFromAnnouncement();
      await queues.delete(queue.id);
      const started = Date.now();
      expect(await poll(queue.id, 0)).toBeNull();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(reads).toBe(1);
    });
  });
});
