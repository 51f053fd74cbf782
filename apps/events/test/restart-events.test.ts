// `restart` events when an event node starts speaking another API version than a queue's /register
// reported (Zulip's send_restart_events), on the in-process store (the contract suite checks
// allQueues on Redis too).
import { MemoryQueueStore, type QueueOptions } from "@chat/bus";
import { zulipVersionFields } from "@chat/core";
import { apiVersionKey, sendRestartEvents } from "../src/restart-events.ts";

const queueOf = (userId: number, settings: Record<string, unknown>): QueueOptions => ({
  userId,
  realmId: 1,
  allPublicStreams: false,
  settings: { eventTypes: null, modernClient: true, ...settings },
});

describe("restart events", () => {
  const current = zulipVersionFields();
  const newer = { zulip_version: `${current.zulip_version}.1`, zulip_feature_level: current.zulip_feature_level + 1, zulip_merge_base: `${current.zulip_merge_base}.1` };

  test("reach each queue of another version once, those of this version and those not asking for them never", async () => {
    const queues = new MemoryQueueStore();
    const old = await queues.create(queueOf(1, { apiVersion: apiVersionKey(current) }));
    // A queue stored before versions were recorded.
    const unrecorded = await queues.create(queueOf(2, {}));
    const same = await queues.create(queueOf(3, { apiVersion: apiVersionKey(newer) }));
    const filtered = await queues.create(queueOf(4, { apiVersion: apiVersionKey(current), eventTypes: ["message"] }));

    expect(await sendRestartEvents(queues, newer)).toBe(2);
    // Without `immediate` since feature level 240.
    const restart = { type: "restart", ...newer, server_generation: expect.any(Number), id: 0 };
    expect(await queues.read(old.id, -1)).toEqual([restart]);
    expect(await queues.read(unrecorded.id, -1)).toEqual([restart]);
    expect(await queues.read(same.id, -1)).toEqual([]);
    expect(await queues.read(filtered.id, -1)).toEqual([]);

    // Another node starting with the same version adds nothing twice.
    await sendRestartEvents(queues, newer);
    expect(await queues.read(old.id, -1)).toEqual([restart]);
    await queues.close();
  });

  test("a node of the version every queue reported sends none", async () => {
    const queues = new MemoryQueueStore();
    const queue = await queues.create(queueOf(1, { apiVersion: apiVersionKey() }));
    expect(await sendRestartEvents(queues)).toBe(0);
    expect(await queues.read(queue.id, -1)).toEqual([]);
    await queues.close();
  });
});
