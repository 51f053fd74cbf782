// The fan-out against both buses: a queue receives the batches published after it was created,
// and none published before, even when the fan-out handles those only after the queue exists
// (their changes are in the state /register read after creating the queue).
import { createMemoryBus, createRedisBus, type Bus, type QueuedEvent, type RoutedEvent } from "@chat/bus";
import { createReadFanout } from "@chat/app-events";
import { createRedisPrefix, REDIS_URL, type TestRedisPrefix } from "../support/services.ts";

const settings = {
  eventTypes: null,
  applyMarkdown: true,
  clientGravatar: false,
  slimPresence: false,
  narrow: [],
  notificationSettingsNull: false,
  bulkMessageDeletion: true,
  userSettingsObject: false,
  streamTypingNotifications: false,
  userAvatarUrlFieldOptional: false,
  includeDeactivatedGroups: false,
  modernClient: false,
};

function alertWords(word: string, users: number[], allPublicStreams = false): RoutedEvent {
  return { event: { type: "alert_words", alert_words: [word] }, users, allPublicStreams };
}

async function eventsWhen(bus: Bus, queueId: string, count: number): Promise<QueuedEvent[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const events = (await bus.queues.read(queueId, -1)) ?? [];
    if (events.length >= count || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(["memory", "redis"] as const)("fan-out (%s bus)", (kind) => {
  let bus: Bus;
  let redis: TestRedisPrefix | null = null;

  beforeEach(() => {
    redis = kind === "redis" ? createRedisPrefix() : null;
    bus = redis ? createRedisBus({ url: REDIS_URL, prefix: redis.prefix }) : createMemoryBus();
  });
  afterEach(async () => {
    await bus.close();
    await redis?.clear();
  });

  test("a queue gets only the batches published after it was created", async () => {
    const older = await bus.queues.create({ userId: 5, realmId: 1, allPublicStreams: false, settings });
    await bus.changes.publish([{ id: "before", realmId: 1, events: [alertWords("before", [5], true)] }]);
    const since = await bus.changes.position(1);
    const newer = await bus.queues.create({ userId: 5, realmId: 1, allPublicStreams: false, settings, since });
    const newerPublic = await bus.queues.create({ userId: 6, realmId: 1, allPublicStreams: true, settings, since });
    await bus.changes.publish([{ id: "after", realmId: 1, events: [alertWords("after", [5], true)] }]);

    // Both batches are handled now, after every queue exists.
    const consumer = bus.changes.consumeInOrder("fanout", createReadFanout(bus.queues));
    try {
      const words = (events: QueuedEvent[]) => events.map((event) => (event.alert_words as string[])[0]);
      expect(words(await eventsWhen(bus, older.id, 2))).toEqual(["before", "after"]);
      expect(await eventsWhen(bus, newer.id, 1)).toEqual([{ id: 0, type: "alert_words", alert_words: ["after"] }]);
      expect(words(await eventsWhen(bus, newerPublic.id, 1))).toEqual(["after"]);
      // Nothing later: the first batch was skipped, not delayed.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(words((await bus.queues.read(newer.id, -1)) ?? [])).toEqual(["after"]);
    } finally {
      await consumer.stop();
    }
  });
});
