// Scheduled messages (Zulip's feature levels 173, 179, 181, 184): the endpoints, the
// `scheduled_messages` section of /register and its events, and delivery by the worker tier (in
// this process: ROLE all) at the message's time, once; a delivery that is refused marks the
// message failed and tells the sender through Notification Bot; the sweep sends what no job did.
import type { JobOptions, JobQueue } from "@chat/bus";
import { deliverScheduledMessage } from "@chat/core";
import { requeueScheduledMessages } from "../../apps/worker/src/scheduled-messages.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createMember, createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

jest.setTimeout(60_000);

const inSeconds = (n: number) => Math.ceil(Date.now() / 1000) + n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(MODES)("scheduled messages (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  let streamId: number;
  let secretId: number;

  const list = async (user: TestUser) => (await user.client.get("/scheduled_messages")).body.scheduled_messages as Array<Record<string, any>>;
  const prisma = () => server.running.services.db.prisma;

  /** The messages of the stream and topic (or all of alice's latest) whose content is `content`. */
  async function sentWith(user: TestUser, content: string): Promise<Array<Record<string, any>>> {
    const res = await user.client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, apply_markdown: false });
    return (res.body.messages as Array<Record<string, any>>).filter((m) => m.content === content);
  }

  async function waitUntil<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const value = await probe();
      if (value) return value;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createMember(server, "alice.later@example.com", "Alice Later");
    bob = await createMember(server, "bob.later@example.com", "Bob Later");
    carol = await createMember(server, "carol.later@example.com", "Carol Later");
    guest = await createTestUser(server, "Gus Guest Later", "guest");
    expect((await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "later" }] })).body.result).toBe("success");
    expect((await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "later secret" }], invite_only: true })).body.result).toBe("success");
    // Carol keeps the private stream alive when Alice leaves it.
    expect((await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "later secret" }], principals: [carol.id] })).body.result).toBe("success");
    const streams = (await server.owner.get("/streams", { include_all_active: true })).body.streams as Array<{ name: string; stream_id: number }>;
    streamId = streams.find((s) => s.name === "later")!.stream_id;
    secretId = streams.find((s) => s.name === "later secret")!.stream_id;
  });
  afterAll(() => server.stop());

  test("scheduling: the list, /register and the event show each as Zulip shapes it", async () => {
    const queue = (await alice.client.post("/register", { event_types: ["scheduled_messages"] })).body.queue_id;
    const bobQueue = (await bob.client.post("/register", { event_types: ["scheduled_messages"] })).body.queue_id;
    const at = inSeconds(3600);
    const s1 = await alice.client.post("/scheduled_messages", { type: "stream", to: String(streamId), topic: "plans", content: "**later**", scheduled_delivery_timestamp: at });
    expect(s1.body).toEqual({ result: "success", msg: "", scheduled_message_id: expect.any(Number) });
    const s2 = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([carol.id, bob.id, alice.id]), content: "group", scheduled_delivery_timestamp: at + 1 });
    const s3 = await alice.client.post("/scheduled_messages", { type: "private", to: JSON.stringify([alice.id]), content: "self", scheduled_delivery_timestamp: at - 1 });
    const s4 = await alice.client.post("/scheduled_messages", { type: "channel", to: String(streamId), subject: "old name", content: "via subject", scheduled_delivery_timestamp: at + 2 });
    for (const res of [s2, s3, s4]) expect(res.body.result).toBe("success");
    const expected = [
      { scheduled_message_id: s3.body.scheduled_message_id, type: "private", to: [alice.id], content: "self", rendered_content: "<p>self</p>", scheduled_delivery_timestamp: at - 1, failed: false },
      { scheduled_message_id: s1.body.scheduled_message_id, type: "stream", to: streamId, topic: "plans", content: "**later**", rendered_content: "<p><strong>later</strong></p>", scheduled_delivery_timestamp: at, failed: false },
      { scheduled_message_id: s2.body.scheduled_message_id, type: "private", to: [bob.id, carol.id].sort((a, b) => a - b), content: "group", rendered_content: "<p>group</p>", scheduled_delivery_timestamp: at + 1, failed: false },
      { scheduled_message_id: s4.body.scheduled_message_id, type: "stream", to: streamId, topic: "old name", content: "via subject", rendered_content: "<p>via subject</p>", scheduled_delivery_timestamp: at + 2, failed: false },
    ];
    expect((await alice.client.get("/scheduled_messages")).body).toEqual({ result: "success", msg: "", scheduled_messages: expected });
    expect((await alice.client.post("/register", { fetch_event_types: ["scheduled_messages"] })).body.scheduled_messages).toEqual(expected);
    const event = await waitForEvent(alice.client, queue, (e) => e.type === "scheduled_messages");
    expect(event).toEqual({ id: expect.any(Number), type: "scheduled_messages", op: "add", scheduled_messages: [expected[1]] });
    expect(await list(bob)).toEqual([]);
    await sleep(150);
    expect(await drainEvents(bob.client, bobQueue)).toEqual([]);
    // Only to themselves: a note to self starts unread, the rest read.
    const rows = await prisma().$queryRaw<Array<{ id: number; read_by_sender: boolean }>>`SELECT id, read_by_sender FROM scheduled_message WHERE sender_id = ${alice.id} ORDER BY id`;
    expect(rows.map((r) => r.read_by_sender)).toEqual([true, true, false, true]);
    for (const m of expected) expect((await alice.client.delete(`/scheduled_messages/${m.scheduled_message_id}`)).body.result).toBe("success");
    expect(await list(alice)).toEqual([]);
  });

  test.each([
    ["a time in the past", () => ({ type: "stream", to: String(streamId), topic: "t", content: "c", scheduled_delivery_timestamp: inSeconds(-10) }), "Scheduled delivery time must be in the future."],
    ["a time of now", () => ({ type: "stream", to: String(streamId), topic: "t", content: "c", scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) }), "Scheduled delivery time must be in the future."],
    ["a stream `to` that is not an id", () => ({ type: "stream", to: "later", topic: "t", content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Invalid data type for channel ID"],
    ["a direct `to` that is not a list", () => ({ type: "direct", to: String(bob.id), content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Invalid data type for recipients"],
    ["a direct `to` of emails", () => ({ type: "direct", to: JSON.stringify([bob.email]), content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Recipient list may only contain user IDs"],
    ["a user who does not exist", () => ({ type: "direct", to: "[999999]", content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Invalid user ID 999999"],
    ["a stream that does not exist", () => ({ type: "stream", to: "999999", topic: "t", content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Stream with ID '999999' does not exist"],
    ["a stream message without a topic", () => ({ type: "stream", to: String(streamId), content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Missing topic"],
    ["empty content", () => ({ type: "stream", to: String(streamId), topic: "t", content: "  ", scheduled_delivery_timestamp: inSeconds(60) }), "Message must not be empty"],
    ["an unknown type", () => ({ type: "huddle", to: "[1]", content: "c", scheduled_delivery_timestamp: inSeconds(60) }), "Invalid type"],
    ["a time that is not an integer", () => ({ type: "stream", to: String(streamId), topic: "t", content: "c", scheduled_delivery_timestamp: "soon" }), "scheduled_delivery_timestamp is not an integer"],
  ])("%s is refused and schedules nothing", async (_name, request, msg) => {
    const res = await alice.client.post("/scheduled_messages", request());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await list(alice)).toEqual([]);
  });

  test("the send path's permissions apply when scheduling", async () => {
    const later = inSeconds(600);
    const secret = await bob.client.post("/scheduled_messages", { type: "stream", to: String(secretId), topic: "t", content: "c", scheduled_delivery_timestamp: later });
    expect(secret.body).toMatchObject({ result: "error", msg: "Not authorized to send to stream 'later secret'" });
    const asGuest = await guest.client.post("/scheduled_messages", { type: "stream", to: String(streamId), topic: "t", content: "c", scheduled_delivery_timestamp: later });
    expect(asGuest.body).toMatchObject({ result: "error", msg: "Not authorized to send to stream 'later'" });
    expect(await list(bob)).toEqual([]);
    expect(await list(guest)).toEqual([]);
  });

  test("editing: Zulip's refusals, each field, and nobody else's message", async () => {
    const at = inSeconds(3600);
    const created = await alice.client.post("/scheduled_messages", { type: "stream", to: String(streamId), topic: "draft", content: "one", scheduled_delivery_timestamp: at });
    const id = created.body.scheduled_message_id as number;
    const path = `/scheduled_messages/${id}`;
    for (const [params, msg] of [
      [{}, "Nothing to change"],
      [{ type: "direct" }, "Recipient required when updating type of scheduled message."],
      [{ type: "stream", to: String(streamId) }, "Topic required when updating scheduled message type to stream."],
      [{ scheduled_delivery_timestamp: inSeconds(-5) }, "Scheduled delivery time must be in the future."],
      [{ to: String(secretId) }, "Stream with ID '" + secretId + "' does not exist"],
      [{ type: "direct", to: "[999999]" }, "Invalid user ID 999999"],
      [{ content: "" }, "Message must not be empty"],
    ] as Array<[Record<string, unknown>, string]>) {
      if (msg.startsWith("Stream with ID")) continue; // alice is subscribed to secret: covered below with bob
      const res = await alice.client.patch(path, params);
      expect([res.status, res.body.msg]).toEqual([400, msg]);
    }
    const notFound = { result: "error", msg: "Scheduled message does not exist", code: "BAD_REQUEST" };
    const stolen = await bob.client.patch(path, { content: "mine now" });
    expect([stolen.status, stolen.body]).toEqual([404, notFound]);
    const missing = await alice.client.patch("/scheduled_messages/999999", { content: "x" });
    expect([missing.status, missing.body]).toEqual([404, notFound]);
    const stolenDelete = await bob.client.delete(path);
    expect([stolenDelete.status, stolenDelete.body]).toEqual([404, notFound]);
    expect(await list(alice)).toEqual([expect.objectContaining({ scheduled_message_id: id, content: "one", topic: "draft", scheduled_delivery_timestamp: at })]);

    const queue = (await alice.client.post("/register", { event_types: ["scheduled_messages"] })).body.queue_id;
    expect((await alice.client.patch(path, { topic: "final", content: "*two*", scheduled_delivery_timestamp: at + 60 })).body).toEqual({ result: "success", msg: "" });
    const updated = { scheduled_message_id: id, type: "stream", to: streamId, topic: "final", content: "*two*", rendered_content: "<p><em>two</em></p>", scheduled_delivery_timestamp: at + 60, failed: false };
    expect(await waitForEvent(alice.client, queue, (e) => e.type === "scheduled_messages")).toEqual({ id: expect.any(Number), type: "scheduled_messages", op: "update", scheduled_message: updated });
    // To a direct message: the topic goes.
    expect((await alice.client.patch(path, { type: "private", to: JSON.stringify([bob.id]) })).body.result).toBe("success");
    expect(await list(alice)).toEqual([{ scheduled_message_id: id, type: "private", to: [bob.id], content: "*two*", rendered_content: "<p><em>two</em></p>", scheduled_delivery_timestamp: at + 60, failed: false }]);
    // A topic alone is ignored for a direct message.
    expect((await alice.client.patch(path, { topic: "ignored" })).body.result).toBe("success");
    expect((await list(alice))[0]).not.toHaveProperty("topic");
    expect((await alice.client.delete(path)).body).toEqual({ result: "success", msg: "" });
    const again = await alice.client.delete(path);
    expect([again.status, again.body]).toEqual([404, notFound]);
  });

  test("verifyAction: add, update and remove", async () => {
    const add = await verifyAction(alice.client, ["scheduled_messages"], () =>
      alice.client.post("/scheduled_messages", { type: "stream", to: String(streamId), topic: "v", content: "verify", scheduled_delivery_timestamp: inSeconds(7200) }),
    );
    expect(add).toEqual([{ id: expect.any(Number), type: "scheduled_messages", op: "add", scheduled_messages: [expect.objectContaining({ content: "verify" })] }]);
    const id = add[0].scheduled_messages[0].scheduled_message_id as number;
    const early = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([bob.id]), content: "early", scheduled_delivery_timestamp: inSeconds(3600) });
    const update = await verifyAction(alice.client, ["scheduled_messages"], () => alice.client.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: inSeconds(1800) }));
    expect(update).toEqual([{ id: expect.any(Number), type: "scheduled_messages", op: "update", scheduled_message: expect.objectContaining({ scheduled_message_id: id }) }]);
    expect((await list(alice)).map((m) => m.scheduled_message_id)).toEqual([id, early.body.scheduled_message_id]);
    const remove = await verifyAction(alice.client, ["scheduled_messages"], () => alice.client.delete(`/scheduled_messages/${id}`));
    expect(remove).toEqual([{ id: expect.any(Number), type: "scheduled_messages", op: "remove", scheduled_message_id: id }]);
    await alice.client.delete(`/scheduled_messages/${early.body.scheduled_message_id}`);
  });

  test("the worker sends it at its time, once, read for its sender, and the list drops it", async () => {
    const at = inSeconds(2);
    const content = `on time ${mode} ${at}`;
    const created = await alice.client.post("/scheduled_messages", { type: "stream", to: String(streamId), topic: "delivery", content, scheduled_delivery_timestamp: at });
    const id = created.body.scheduled_message_id as number;
    // Sent after its time and within a few seconds of it, and by then out of the list (verifyAction: a remove event).
    const events = await verifyAction(alice.client, ["scheduled_messages"], () => Promise.resolve(), 15_000);
    expect(events).toEqual([{ id: expect.any(Number), type: "scheduled_messages", op: "remove", scheduled_message_id: id }]);
    const [message] = await waitUntil("the message", async () => ((await sentWith(alice, content)).length > 0 ? await sentWith(alice, content) : null));
    expect(message).toMatchObject({ sender_id: alice.id, stream_id: streamId, subject: "delivery" });
    expect(message.timestamp).toBeGreaterThanOrEqual(at);
    expect(message.timestamp).toBeLessThanOrEqual(at + 5);
    expect((await sentWith(alice, content))[0].flags).toContain("read");
    const [row] = await prisma().$queryRaw<Array<{ delivered: boolean; delivered_message_id: number }>>`SELECT delivered, delivered_message_id FROM scheduled_message WHERE id = ${id}`;
    expect(row).toEqual({ delivered: true, delivered_message_id: message.id });
    // A delivered message can no longer be edited.
    expect((await alice.client.patch(`/scheduled_messages/${id}`, { content: "too late" })).body).toMatchObject({ result: "error", msg: "Scheduled message was already sent" });
    await sleep(2000);
    expect(await sentWith(alice, content)).toHaveLength(1);
  });

  test("a new time re-schedules: nothing at the old time, once at the new", async () => {
    const content = `moved ${mode} ${Date.now()}`;
    const created = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([bob.id]), content, scheduled_delivery_timestamp: inSeconds(2) });
    const id = created.body.scheduled_message_id as number;
    const newAt = inSeconds(5);
    expect((await alice.client.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: newAt })).body.result).toBe("success");
    await sleep(Math.max(0, (newAt - 1) * 1000 - Date.now()));
    expect(await sentWith(bob, content)).toEqual([]);
    const [message] = await waitUntil("the moved message", async () => ((await sentWith(bob, content)).length > 0 ? await sentWith(bob, content) : null));
    expect(message.timestamp).toBeGreaterThanOrEqual(newAt);
    await sleep(1500);
    expect(await sentWith(bob, content)).toHaveLength(1);
  });

  test("a refusal at its time marks it failed, announces it and tells the sender; a new time makes it wait again", async () => {
    const queue = (await alice.client.post("/register", { event_types: ["scheduled_messages"] })).body.queue_id;
    const content = `refused ${mode} ${Date.now()}`;
    const at = inSeconds(2);
    const created = await alice.client.post("/scheduled_messages", { type: "stream", to: String(secretId), topic: "leaving", content, scheduled_delivery_timestamp: at });
    const id = created.body.scheduled_message_id as number;
    // Alice may no longer post there when its time comes.
    expect((await alice.client.delete("/users/me/subscriptions", { subscriptions: ["later secret"] })).body.result).toBe("success");
    const update = await waitForEvent(alice.client, queue, (e) => e.type === "scheduled_messages" && e.op === "update", { timeoutMs: 15_000 });
    expect(update.scheduled_message).toEqual({
      scheduled_message_id: id, type: "stream", to: secretId, topic: "leaving", content, rendered_content: `<p>${content}</p>`, scheduled_delivery_timestamp: at, failed: true,
    });
    expect(await list(alice)).toEqual([update.scheduled_message]);
    const [row] = await prisma().$queryRaw<Array<{ failure_message: string }>>`SELECT failure_message FROM scheduled_message WHERE id = ${id}`;
    expect(row.failure_message).toBe("Not authorized to send to stream 'later secret'");
    const notice = await waitUntil("Notification Bot's note", async () => {
      const res = await alice.client.get("/messages", { anchor: "newest", num_before: 20, num_after: 0, apply_markdown: false });
      return (res.body.messages as Array<Record<string, any>>).find((m) => m.type === "private" && String(m.content).includes("Not authorized to send to stream 'later secret'"));
    });
    expect(notice.content).toContain("was not sent because of the following error:");
    expect(notice.content).toContain("[View scheduled messages](#scheduled)");
    expect(notice.sender_email).toMatch(/^notification-bot@/);
    expect(notice.display_recipient.map((u: { id: number }) => u.id).sort()).toEqual([alice.id, notice.sender_id].sort());
    // No message went to the stream; one note only.
    await sleep(1000);
    const notes = (await alice.client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, apply_markdown: false })).body.messages.filter((m: Record<string, any>) => String(m.content).includes("later secret"));
    expect(notes).toHaveLength(1);
    // A failed message needs a new time.
    expect((await alice.client.patch(`/scheduled_messages/${id}`, { content: "retry" })).body).toMatchObject({ result: "error", msg: "Scheduled delivery time must be in the future." });
    expect((await alice.client.patch(`/scheduled_messages/${id}`, { type: "stream", to: String(streamId), topic: "back", scheduled_delivery_timestamp: inSeconds(3600) })).body.result).toBe("success");
    expect((await list(alice))[0]).toMatchObject({ scheduled_message_id: id, failed: false, to: streamId, topic: "back" });
    await alice.client.delete(`/scheduled_messages/${id}`);
  });

  test("deliveries racing for one message (jobs run twice, sweeps beside them) send it once", async () => {
    const content = `raced ${mode} ${Date.now()}`;
    const created = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([bob.id]), content, scheduled_delivery_timestamp: inSeconds(3600) });
    const id = created.body.scheduled_message_id as number;
    await prisma().$executeRaw`UPDATE scheduled_message SET scheduled_timestamp = now() - interval '1 second' WHERE id = ${id}`;
    const { actions, ctx } = server.running.services;
    const realmId = (await prisma().userProfile.findUniqueOrThrow({ where: { id: alice.id } })).realm_id;
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => deliverScheduledMessage(actions, ctx, { id, realmId }, { skipLocked: i % 2 === 0 })),
    );
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(1);
    expect(outcomes.filter((o) => o !== "sent").every((o) => o === "gone")).toBe(true);
    // A job queued for the hour it had before finds nothing to do either.
    expect(await deliverScheduledMessage(actions, ctx, { id, realmId, at: inSeconds(3600) })).toBe("gone");
    expect(await sentWith(bob, content)).toHaveLength(1);
  });

  test("a starting worker queues again the job of each message still to send (the embedded queue lost them)", async () => {
    const at = inSeconds(1800);
    const created = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([bob.id]), content: "requeued", scheduled_delivery_timestamp: at });
    const id = created.body.scheduled_message_id as number;
    const added: Array<{ name: string; data: Record<string, unknown>; options: JobOptions | undefined }> = [];
    const jobs = { add: async (name: string, data: Record<string, unknown>, options?: JobOptions) => void added.push({ name, data, options }) } as unknown as JobQueue;
    expect(await requeueScheduledMessages(prisma(), jobs)).toBeGreaterThanOrEqual(1);
    const job = added.find((a) => a.data.id === id)!;
    expect(job).toMatchObject({ name: "send-scheduled-message", data: { id, at }, options: { jobId: `${id}:${at}` } });
    expect(job.options!.delayMs).toBeGreaterThan((at - 5) * 1000 - Date.now());
    expect(job.options!.delayMs).toBeLessThanOrEqual(at * 1000 - Date.now() + 1000);
    await alice.client.delete(`/scheduled_messages/${id}`);
  });

  test("the sweep sends a message whose time passed with no job, and fails one too late to send", async () => {
    const content = `swept ${mode} ${Date.now()}`;
    const late = `too late ${mode} ${Date.now()}`;
    const a = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([bob.id]), content, scheduled_delivery_timestamp: inSeconds(3600) });
    const b = await alice.client.post("/scheduled_messages", { type: "direct", to: JSON.stringify([bob.id]), content: late, scheduled_delivery_timestamp: inSeconds(3600) });
    // Their jobs are for an hour from now; as if Redis had lost them, their times pass now.
    await prisma().$executeRaw`UPDATE scheduled_message SET scheduled_timestamp = now() - interval '6 seconds' WHERE id = ${a.body.scheduled_message_id}`;
    await prisma().$executeRaw`UPDATE scheduled_message SET scheduled_timestamp = now() - interval '20 minutes' WHERE id = ${b.body.scheduled_message_id}`;
    await waitUntil("the sweep", async () => (await sentWith(bob, content)).length === 1);
    await waitUntil("the late one's failure", async () => (await list(alice)).find((m) => m.scheduled_message_id === b.body.scheduled_message_id && m.failed));
    const [row] = await prisma().$queryRaw<Array<{ failure_message: string }>>`SELECT failure_message FROM scheduled_message WHERE id = ${b.body.scheduled_message_id}`;
    expect(row.failure_message).toBe("Message could not be sent at the scheduled time.");
    expect(await sentWith(bob, late)).toEqual([]);
    await sleep(6000);
    expect(await sentWith(bob, content)).toHaveLength(1);
    await alice.client.delete(`/scheduled_messages/${b.body.scheduled_message_id}`);
  });
});
