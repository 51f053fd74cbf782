// Topic visibility policies as Zulip 9 has them (feature levels 134, 170, 213, 219, 265): POST
// /user_topics and the legacy muted_topics endpoint on one store, the `user_topic` and
// `muted_topics` events and /register sections for modern and 3.x-era clients, unread counts, and
// the `is:followed` narrow.
import { applyEvents, finishState, type State } from "@chat/core";
import { emptyRawUnread } from "../support/raw-unread.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { eventsUntil, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

const [INHERIT, MUTED, UNMUTED, FOLLOWED] = [0, 1, 2, 3];

function setPolicy(client: ApiClient, streamId: number, topic: string, policy: number | string) {
  return client.post("/user_topics", { stream_id: streamId, topic, visibility_policy: policy });
}

describe.each(MODES)("topic visibility policies (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const streamId = async (name: string) => (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name } })).id;
  const userTopics = async (user: TestUser) => (await user.client.post("/register", { event_types: ["user_topic"] })).body.user_topics as Array<Record<string, unknown>>;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Topics");
    bob = await createTestUser(server, "Bob Topics");
    await subscribeTo(alice.client, ["topics", "topics-muted"], { principals: [alice.email, bob.email] });
  });
  afterAll(() => server.stop());

  test("each policy: follow, mute, unmute and back to none, the registered state kept by the events", async () => {
    const id = await streamId("topics");
    const types = ["user_topic", "muted_topics"];
    const followed = await verifyAction(alice.client, types, async () => expect((await setPolicy(alice.client, id, "plans", FOLLOWED)).body).toEqual({ result: "success", msg: "" }));
    expect(followed.find((e) => e.type === "user_topic")).toEqual({ id: expect.any(Number), type: "user_topic", stream_id: id, topic_name: "plans", last_updated: expect.any(Number), visibility_policy: FOLLOWED });
    expect(Math.abs(followed.find((e) => e.type === "user_topic")!.last_updated - Date.now() / 1000)).toBeLessThan(60);
    // A policy changes in place; topics match without case, and keep the spelling they were set with.
    const muted = await verifyAction(alice.client, types, () => setPolicy(alice.client, id, "PLANS", MUTED));
    expect(muted.map((e) => e.type)).toEqual(["muted_topics", "user_topic"]);
    expect(muted[0].muted_topics).toEqual([["topics", "plans", expect.any(Number)]]);
    expect(muted[1]).toMatchObject({ topic_name: "plans", visibility_policy: MUTED });
    await verifyAction(alice.client, types, () => setPolicy(alice.client, id, "other", UNMUTED));
    expect((await userTopics(alice)).map((t) => [t.topic_name, t.visibility_policy])).toEqual([
      ["plans", MUTED],
      ["other", UNMUTED],
    ]);
    const cleared = await verifyAction(alice.client, types, () => setPolicy(alice.client, id, "plans", INHERIT));
    expect(cleared.map((e) => [e.type, e.muted_topics ?? e.visibility_policy])).toEqual([
      ["muted_topics", []],
      ["user_topic", INHERIT],
    ]);
    await verifyAction(alice.client, types, () => setPolicy(alice.client, id, "other", INHERIT));
    expect(await userTopics(alice)).toEqual([]);
    // Bob's policies are his own.
    expect(await userTopics(bob)).toEqual([]);
  });

  test("setting the policy a topic has, or removing none, succeeds and sends nothing", async () => {
    const id = await streamId("topics");
    const queue = (await alice.client.post("/register", { event_types: ["user_topic", "muted_topics"] })).body.queue_id;
    expect((await setPolicy(alice.client, id, "repeat", FOLLOWED)).body.result).toBe("success");
    expect((await setPolicy(alice.client, id, "Repeat", FOLLOWED)).body.result).toBe("success");
    expect((await setPolicy(alice.client, id, "never set", INHERIT)).body.result).toBe("success");
    expect((await setPolicy(alice.client, id, "marker", MUTED)).body.result).toBe("success");
    const events = await eventsUntil(alice.client, queue, (e) => e.type === "user_topic" && e.topic_name === "marker");
    expect(events.filter((e) => e.type === "user_topic").map((e) => [e.topic_name, e.visibility_policy])).toEqual([
      ["repeat", FOLLOWED],
      ["marker", MUTED],
    ]);
    await setPolicy(alice.client, id, "repeat", INHERIT);
    await setPolicy(alice.client, id, "marker", INHERIT);
  });

  test("a modern client (no event_types) gets user_topics and muted_topics, and both events", async () => {
    const id = await streamId("topics");
    await setPolicy(bob.client, id, "quiet", MUTED);
    await setPolicy(bob.client, id, "loud", FOLLOWED);
    const registered = await bob.client.post("/register", { client_capabilities: { notification_settings_null: true } });
    expect(registered.body.user_topics).toEqual([
      { stream_id: id, topic_name: "quiet", last_updated: expect.any(Number), visibility_policy: MUTED },
      { stream_id: id, topic_name: "loud", last_updated: expect.any(Number), visibility_policy: FOLLOWED },
    ]);
    // The legacy list holds muted topics only, as [stream name, topic, when].
    expect(registered.body.muted_topics).toEqual([["topics", "quiet", registered.body.user_topics[0].last_updated]]);

    await setPolicy(bob.client, id, "loud", UNMUTED);
    const event = await waitForEvent(bob.client, registered.body.queue_id, (e) => e.type === "user_topic", { acknowledge: false });
    expect(event).toMatchObject({ stream_id: id, topic_name: "loud", visibility_policy: UNMUTED });
    const events = await drainEvents(bob.client, registered.body.queue_id);
    expect(events.find((e) => e.type === "muted_topics")!.muted_topics).toEqual([["topics", "quiet", expect.any(Number)]]);
    await setPolicy(bob.client, id, "quiet", INHERIT);
    await setPolicy(bob.client, id, "loud", INHERIT);
  });

  test("a terminal-style client (event_types without user_topic) gets muted_topics only, kept current", async () => {
    const id = await streamId("topics");
    const types = ["muted_topics", "message"];
    const registered = await alice.client.post("/register", { event_types: types });
    expect(registered.body.muted_topics).toEqual([]);
    expect(registered.body).not.toHaveProperty("user_topics");
    // Any change sends the list again, a follow too (as Zulip); the queue never sees user_topic.
    await setPolicy(alice.client, id, "followed here", FOLLOWED);
    const events = await verifyAction(alice.client, types, () => alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "topics", topic: "muted here", op: "add" }));
    expect(events).toEqual([{ id: expect.any(Number), type: "muted_topics", muted_topics: [["topics", "muted here", expect.any(Number)]] }]);
    const all = await drainEvents(alice.client, registered.body.queue_id);
    expect(all.map((e) => e.type)).toEqual(["muted_topics", "muted_topics"]);
    // A client that asks for both by name gets user_topics alone (it knows the new form).
    const both = await alice.client.post("/register", { event_types: ["muted_topics", "user_topic"] });
    expect(both.body).not.toHaveProperty("muted_topics");
    expect(both.body.user_topics).toHaveLength(2);
    await setPolicy(alice.client, id, "followed here", INHERIT);
    await setPolicy(alice.client, id, "muted here", INHERIT);
  });

  test("the legacy endpoint works on the same policies", async () => {
    const id = await streamId("topics");
    const legacy = (topic: string, op: string) => alice.client.patch("/users/me/subscriptions/muted_topics", { stream_id: id, topic, op });
    expect((await legacy("shared", "add")).body.result).toBe("success");
    expect(await userTopics(alice)).toEqual([{ stream_id: id, topic_name: "shared", last_updated: expect.any(Number), visibility_policy: MUTED }]);
    expect((await legacy("SHARED", "add")).body).toEqual({ result: "error", msg: "Topic already muted", code: "BAD_REQUEST" });
    // A followed topic is muted by `add`, and any policy is dropped by `remove`.
    await setPolicy(alice.client, id, "shared", FOLLOWED);
    expect((await legacy("shared", "add")).body.result).toBe("success");
    await setPolicy(alice.client, id, "shared", FOLLOWED);
    expect((await legacy("shared", "remove")).body.result).toBe("success");
    expect(await userTopics(alice)).toEqual([]);
    expect((await legacy("shared", "remove")).body).toEqual({ result: "error", msg: "Topic is not muted", code: "BAD_REQUEST" });
  });

  test("access: a policy needs the stream's content; removing one does not", async () => {
    const admin = await createTestUser(server, "Admin Topics", "admin");
    const guest = await createTestUser(server, "Guest Topics", "guest");
    await subscribeTo(alice.client, ["topics-private"], { invite_only: true });
    const privateId = await streamId("topics-private");
    const publicId = await streamId("topics");
    const refused = { result: "error", msg: "Invalid channel ID", code: "BAD_REQUEST" };
    // Not subscribed to a private stream: refused, an administrator too; so is a guest outside a public one.
    expect((await setPolicy(bob.client, privateId, "t", MUTED)).body).toEqual(refused);
    expect((await setPolicy(admin.client, privateId, "t", FOLLOWED)).body).toEqual(refused);
    expect((await setPolicy(guest.client, publicId, "t", FOLLOWED)).body).toEqual(refused);
    expect((await setPolicy(bob.client, 987_654, "t", FOLLOWED)).body).toEqual(refused);
    expect((await setPolicy(bob.client, 987_654, "t", INHERIT)).body).toEqual(refused);
    // The legacy endpoint refuses the same, in its own words.
    expect((await bob.client.patch("/users/me/subscriptions/muted_topics", { stream_id: privateId, topic: "t", op: "add" })).body.msg).toBe("Invalid stream id");
    expect((await bob.client.patch("/users/me/subscriptions/muted_topics", { stream: "topics-private", topic: "t", op: "add" })).body.code).toBe("STREAM_DOES_NOT_EXIST");
    expect((await admin.client.patch("/users/me/subscriptions/muted_topics", { stream: "topics-private", topic: "t", op: "add" })).body.code).toBe("STREAM_DOES_NOT_EXIST");

    // Alice follows a topic there, then leaves the stream: she can no longer set, but can still remove.
    await setPolicy(alice.client, privateId, "secret", FOLLOWED);
    await subscribeTo(alice.client, ["topics-private"], { principals: [bob.email] });
    expect((await alice.client.delete("/users/me/subscriptions", { subscriptions: ["topics-private"] })).body.result).toBe("success");
    expect((await setPolicy(alice.client, privateId, "secret", MUTED)).body).toEqual(refused);
    const queue = (await alice.client.post("/register", { event_types: ["user_topic"] })).body.queue_id;
    expect((await setPolicy(alice.client, privateId, "secret", INHERIT)).body.result).toBe("success");
    expect(await waitForEvent(alice.client, queue, (e) => e.type === "user_topic")).toMatchObject({ stream_id: privateId, topic_name: "secret", visibility_policy: INHERIT });
  });

  test.each([
    [{ stream_id: 1, topic: "t", visibility_policy: 4 }, "Invalid visibility_policy"],
    [{ stream_id: 1, topic: "t", visibility_policy: -1 }, "Invalid visibility_policy"],
    [{ stream_id: 1, topic: "t", visibility_policy: "muted" }, "visibility_policy is not an integer"],
    [{ stream_id: "one", topic: "t", visibility_policy: 1 }, "stream_id is not an integer"],
    [{ stream_id: 1, topic: "x".repeat(61), visibility_policy: 1 }, "topic is too long (limit: 60 characters)"],
    [{ stream_id: 1, topic: "t\u0000", visibility_policy: 1 }, "topic contains NULL (0x00) characters."],
    [{ stream_id: 1, topic: "t" }, "Missing 'visibility_policy' argument"],
    [{ topic: "t", visibility_policy: 1 }, "Missing 'stream_id' argument"],
  ])("refuses %j", async (params, msg) => {
    const res = await alice.client.post("/user_topics", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
  });

  test("unread counts (feature level 213): muted topics count for nothing, unmuted and followed ones in a muted stream do", async () => {
    const [reader, writer] = [await createTestUser(server, "Reader Topics"), await createTestUser(server, "Writer Topics")];
    await subscribeTo(reader.client, ["unread-open", "unread-muted"], { principals: [reader.email, writer.email] });
    const [openId, mutedId] = [await streamId("unread-open"), await streamId("unread-muted")];
    await reader.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: mutedId, property: "is_muted", value: true }] });
    await setPolicy(reader.client, openId, "hushed", MUTED);
    await setPolicy(reader.client, mutedId, "let through", UNMUTED);
    await setPolicy(reader.client, mutedId, "watched", FOLLOWED);

    const plain = await sendStreamMessage(writer.client, "unread-open", "plain");
    const hushed = await sendStreamMessage(writer.client, "unread-open", "Hushed", "@**all** in a muted topic");
    const silent = await sendStreamMessage(writer.client, "unread-muted", "other", "@**all** in a muted stream");
    const through = await sendStreamMessage(writer.client, "unread-muted", "let through", "@**all** unmuted here");
    const watched = await sendStreamMessage(writer.client, "unread-muted", "watched");

    const unread = (await reader.client.post("/register", { event_types: ["message", "update_message_flags"] })).body.unread_msgs;
    expect(unread.streams.flatMap((s: { unread_message_ids: number[] }) => s.unread_message_ids).sort((a: number, b: number) => a - b)).toEqual([plain, hushed, silent, through, watched]);
    expect(unread.count).toBe(3); // plain, through, watched
    expect(unread.mentions).toEqual([through]);
  });

  test("is:followed narrows to the followed topics, without case", async () => {
    const [reader, writer] = [await createTestUser(server, "Follower Topics"), await createTestUser(server, "Poster Topics")];
    await subscribeTo(reader.client, ["follow-a", "follow-b"], { principals: [reader.email, writer.email] });
    await setPolicy(reader.client, await streamId("follow-a"), "Tracked", FOLLOWED);
    await setPolicy(reader.client, await streamId("follow-b"), "muted", MUTED);
    const tracked = await sendStreamMessage(writer.client, "follow-a", "tracked");
    const other = await sendStreamMessage(writer.client, "follow-a", "other");
    const sameNameElsewhere = await sendStreamMessage(writer.client, "follow-b", "Tracked");
    const muted = await sendStreamMessage(writer.client, "follow-b", "muted");
    const fetch = async (narrow: unknown) => {
      const res = await reader.client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow });
      expect(res.body.result).toBe("success");
      return (res.body.messages as Array<{ id: number }>).map((m) => m.id).filter((mid) => [tracked, other, sameNameElsewhere, muted].includes(mid));
    };
    expect(await fetch([{ operator: "is", operand: "followed" }])).toEqual([tracked]);
    expect(await fetch([["stream", "follow-a"], ["is", "followed"]])).toEqual([tracked]);
    expect(await fetch([{ operator: "is", operand: "followed", negated: true }])).toEqual([other, sameNameElsewhere, muted]);
    await setPolicy(reader.client, await streamId("follow-a"), "tracked", INHERIT);
    expect(await fetch([["is", "followed"]])).toEqual([]);
  });

  // Zulip 9's do_update_message: a whole-topic move carries each user's policy to the new topic.
  describe("moving a topic's messages", () => {
    let mover: TestUser;
    let outsider: TestUser;
    let fromId: number;
    let toId: number;
    const policies = async (user: TestUser) => (await userTopics(user)).map((t) => [t.stream_id, t.topic_name, t.visibility_policy]);
    const move = async (id: number, params: Record<string, unknown>) => expect((await mover.client.patch(`/messages/${id}`, params)).body.result).toBe("success");

    beforeAll(async () => {
      mover = await createTestUser(server, "Mover Topics", "admin");
      outsider = await createTestUser(server, "Outsider Topics", "guest");
      await subscribeTo(mover.client, ["move-from", "move-to"], { principals: [mover.email, alice.email, bob.email] });
      await subscribeTo(mover.client, ["move-from"], { principals: [outsider.email] });
      [fromId, toId] = [await streamId("move-from"), await streamId("move-to")];
    });

    test("change_all to a new topic, then to another stream, carries muted and followed policies with the events of POST /user_topics", async () => {
      const first = await sendStreamMessage(alice.client, "move-from", "carry");
      await sendStreamMessage(bob.client, "move-from", "carry");
      await setPolicy(alice.client, fromId, "carry", FOLLOWED);
      await setPolicy(bob.client, fromId, "Carry", MUTED);

      const types = ["user_topic", "muted_topics"];
      const renamed = await verifyAction(alice.client, types, () => move(first, { topic: "carried", propagate_mode: "change_all" }));
      expect(renamed.map((e) => [e.type, e.topic_name ?? null, e.visibility_policy ?? null])).toEqual([
        ["muted_topics", null, null],
        ["user_topic", "carry", INHERIT],
        ["muted_topics", null, null],
        ["user_topic", "carried", FOLLOWED],
      ]);
      expect(await policies(alice)).toEqual([[fromId, "carried", FOLLOWED]]);
      expect(await policies(bob)).toEqual([[fromId, "carried", MUTED]]);

      const bobEvents = await verifyAction(bob.client, types, () => move(first, { stream_id: toId, propagate_mode: "change_all" }));
      expect(bobEvents.filter((e) => e.type === "muted_topics").map((e) => e.muted_topics)).toEqual([[], [["move-to", "carried", expect.any(Number)]]]);
      expect(bobEvents.filter((e) => e.type === "user_topic")).toEqual([
        expect.objectContaining({ stream_id: fromId, topic_name: "carried", visibility_policy: INHERIT }),
        expect.objectContaining({ stream_id: toId, topic_name: "carried", visibility_policy: MUTED }),
      ]);
      expect(await policies(alice)).toEqual([[toId, "carried", FOLLOWED]]);
      expect(await policies(bob)).toEqual([[toId, "carried", MUTED]]);
      await setPolicy(alice.client, toId, "carried", INHERIT);
      await setPolicy(bob.client, toId, "carried", INHERIT);
    });

    test("a partial move leaves the policy; change_later that takes the rest of the topic carries it", async () => {
      const first = await sendStreamMessage(alice.client, "move-from", "stay");
      const second = await sendStreamMessage(alice.client, "move-from", "stay");
      await setPolicy(alice.client, fromId, "stay", FOLLOWED);
      await move(second, { topic: "split", propagate_mode: "change_one" });
      expect(await policies(alice)).toEqual([[fromId, "stay", FOLLOWED]]);
      await move(first, { stream_id: toId, propagate_mode: "change_later" });
      expect(await policies(alice)).toEqual([[toId, "stay", FOLLOWED]]);
      await setPolicy(alice.client, toId, "stay", INHERIT);
    });

    test("into a topic with messages the policies merge as Zulip 9 merges them", async () => {
      const moved = await sendStreamMessage(alice.client, "move-from", "merge in");
      await sendStreamMessage(alice.client, "move-from", "merge target");
      await setPolicy(alice.client, fromId, "merge in", MUTED);
      await setPolicy(alice.client, fromId, "merge target", UNMUTED);
      await setPolicy(bob.client, fromId, "merge in", FOLLOWED);
      await setPolicy(bob.client, fromId, "merge target", FOLLOWED);
      await move(moved, { topic: "merge target", propagate_mode: "change_all" });
      expect(await policies(alice)).toEqual([[fromId, "merge target", UNMUTED]]);
      expect(await policies(bob)).toEqual([[fromId, "merge target", FOLLOWED]]);
      await setPolicy(alice.client, fromId, "merge target", INHERIT);
      await setPolicy(bob.client, fromId, "merge target", INHERIT);
    });

    test("a user who cannot read the destination stream loses the policy", async () => {
      const id = await sendStreamMessage(outsider.client, "move-from", "guarded");
      await setPolicy(outsider.client, fromId, "guarded", MUTED);
      await setPolicy(alice.client, fromId, "guarded", MUTED);
      const queue = (await outsider.client.post("/register", { event_types: ["user_topic", "muted_topics", "delete_message"] })).body.queue_id;
      await move(id, { stream_id: toId, propagate_mode: "change_all" });
      const events = await eventsUntil(outsider.client, queue, (e) => e.type === "delete_message");
      expect(events.filter((e) => e.type === "user_topic")).toEqual([expect.objectContaining({ stream_id: fromId, topic_name: "guarded", visibility_policy: INHERIT })]);
      expect(events.find((e) => e.type === "muted_topics")!.muted_topics).toEqual([]);
      expect(await policies(outsider)).toEqual([]);
      expect(await policies(alice)).toEqual([[toId, "guarded", MUTED]]);
      await setPolicy(alice.client, toId, "guarded", INHERIT);
    });
  });
});

describe("the user_topic event in /register's unread state", () => {
  const STREAM = 10;
  const MUTED_STREAM = 20;

  function rawState(): State {
    return { raw_unread_msgs: emptyRawUnread({ mutedStreamIds: [MUTED_STREAM] }), user_topics: [] };
  }
  const message = (id: number, streamId: number, topic: string, flags: string[] = []) => ({
    type: "message",
    message: { id, type: "stream", stream_id: streamId, subject: topic, sender_id: 2, display_recipient: "s" },
    flags,
  });
  const policy = (streamId: number, topic: string, visibility_policy: number) => ({ type: "user_topic", stream_id: streamId, topic_name: topic, last_updated: 1, visibility_policy });

  test("a policy arriving while /register reads the state reclassifies the topic's unread messages", () => {
    const state = applyEvents(rawState(), [message(1, STREAM, "Lunch"), message(2, MUTED_STREAM, "t", ["wildcard_mentioned"]), message(3, STREAM, "other")], 1);
    applyEvents(state, [policy(STREAM, "lunch", 1), policy(MUTED_STREAM, "T", 3)], 1);
    const unread = finishState(structuredClone(state)).unread_msgs as { count: number; mentions: number[] };
    expect(unread).toMatchObject({ count: 2, mentions: [2] });
    expect(state.user_topics).toEqual([
      { stream_id: STREAM, topic_name: "lunch", last_updated: 1, visibility_policy: 1 },
      { stream_id: MUTED_STREAM, topic_name: "T", last_updated: 1, visibility_policy: 3 },
    ]);
    applyEvents(state, [policy(STREAM, "LUNCH", 0), policy(MUTED_STREAM, "t", 2)], 1);
    expect(finishState(structuredClone(state)).unread_msgs).toMatchObject({ count: 3, mentions: [2] });
    expect(state.user_topics).toEqual([{ stream_id: MUTED_STREAM, topic_name: "t", last_updated: 1, visibility_policy: 2 }]);
  });
});
