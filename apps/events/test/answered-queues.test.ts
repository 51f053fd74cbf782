// Acknowledgments of polls that waited without reading their queue (answered-queues.ts): they wait
// out a delay and go together, one per queue with its latest event, and go at once on shutdown.
import { MemoryQueueStore, type QueueAck } from "@chat/bus";
import { AnsweredQueues } from "../src/answered-queues.ts";
import { LongPollWaiters } from "../src/waiters.ts";

/** The in-process store, recording each acknowledgment call. */
class RecordingStore extends MemoryQueueStore {
  readonly calls: QueueAck[][] = [];
  override acknowledge(acks: QueueAck[]): Promise<string[]> {
    this.calls.push(acks);
    return super.acknowledge(acks);
  }
}

const DELAY_MS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("AnsweredQueues", () => {
  let store: RecordingStore;
  beforeEach(() => {
    store = new RecordingStore();
  });
  afterEach(() => store.close());

  const newQueue = (userId: number) => store.create({ userId, realmId: 1, allPublicStreams: false, settings: {} });
  /** Appends `count` events; the queue's last id is count - 1. */
  const fill = (queueId: string, count: number) => store.append(`s-${queueId}`, [{ queueId, events: Array.from({ length: count }, (_, n) => ({ type: "message", n })) }]);

  it("sends acknowledgments after the delay, together, each queue once with its latest event", async () => {
    const answered = new AnsweredQueues(store, () => undefined, DELAY_MS);
    const [a, b] = [await newQueue(1), await newQueue(2)];
    await fill(a.id, 4);
    await fill(b.id, 1);
    answered.answeredFromAnnouncement(a.id, 1, 0);
    expect(answered.takeQuiet(a.id, 1, 0)).toBe(true);
    answered.answeredFromAnnouncement(b.id, 2, 0);
    expect(answered.takeQuiet(b.id, 2, 0)).toBe(true);
    // The same queue again before they go: only its latest is sent.
    answered.answeredFromAnnouncement(a.id, 1, 3);
    expect(answered.takeQuiet(a.id, 1, 3)).toBe(true);
    await sleep(DELAY_MS / 2);
    expect(store.calls).toEqual([]);
    await sleep(DELAY_MS);
    expect(store.calls).toHaveLength(1);
    expect(store.calls[0]).toEqual(
      expect.arrayContaining([
        { queueId: a.id, lastEventId: 3, ownerId: 1 },
        { queueId: b.id, lastEventId: 0, ownerId: 2 },
      ]),
    );
    expect(store.calls[0]).toHaveLength(2);
    // Acknowledged: what the clients had is gone.
    expect(await store.readJson(a.id, -1)).toEqual([]);
    expect(await store.readJson(b.id, -1)).toEqual([]);
  });

  it("never sends an earlier event after a later one of the same queue", async () => {
    const answered = new AnsweredQueues(store, () => undefined, DELAY_MS);
    const queue = await newQueue(1);
    await fill(queue.id, 6);
    answered.answeredFromAnnouncement(queue.id, 1, 5);
    expect(answered.takeQuiet(queue.id, 1, 5)).toBe(true);
    answered.answeredFromAnnouncement(queue.id, 1, 2);
    expect(answered.takeQuiet(queue.id, 1, 2)).toBe(true);
    answered.flush();
    expect(store.calls).toEqual([[{ queueId: queue.id, lastEventId: 5, ownerId: 1 }]]);
  });

  it("lets a poll wait unread only for the user and last event answered, and sends nothing otherwise", async () => {
    const answered = new AnsweredQueues(store, () => undefined, DELAY_MS);
    const queue = await newQueue(1);
    answered.answeredFromAnnouncement(queue.id, 1, 4);
    expect(answered.takeQuiet(queue.id, 2, 4)).toBe(false);
    answered.answeredFromAnnouncement(queue.id, 1, 4);
    expect(answered.takeQuiet(queue.id, 1, 3)).toBe(false);
    answered.answeredFromAnnouncement(queue.id, 1, 4);
    answered.announced(queue.id);
    expect(answered.takeQuiet(queue.id, 1, 4)).toBe(false);
    await sleep(DELAY_MS * 1.5);
    expect(store.calls).toEqual([]);
  });

  it("has the polls of a queue gone meanwhile read it, once the acknowledgment finds it missing", async () => {
    const rechecked: string[][] = [];
    const answered = new AnsweredQueues(store, (queueIds) => rechecked.push(queueIds), DELAY_MS);
    const queue = await newQueue(1);
    answered.answeredFromAnnouncement(queue.id, 1, 0);
    expect(answered.takeQuiet(queue.id, 1, 0)).toBe(true);
    await store.delete(queue.id);
    answered.flush();
    await sleep(20);
    expect(rechecked).toEqual([[queue.id]]);
  });

  it("sends what waits at once when the node drains", async () => {
    const waiters = await LongPollWaiters.attach(store, 60_000);
    const queue = await newQueue(1);
    waiters.answered!.answeredFromAnnouncement(queue.id, 1, 0);
    expect(waiters.answered!.takeQuiet(queue.id, 1, 0)).toBe(true);
    expect(store.calls).toEqual([]);
    waiters.drain();
    expect(store.calls).toEqual([[{ queueId: queue.id, lastEventId: 0, ownerId: 1 }]]);
  });
});
