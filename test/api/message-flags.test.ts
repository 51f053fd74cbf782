// POST /messages/flags and the mark_*_as_read endpoints: which flags users may change, historical
// rows, the ids that actually changed, and `update_message_flags` to the user alone.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { waitForEvent } from "../support/events.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";

const READ = 1;
const STARRED = 2;
const HISTORICAL = 1024;

describe.each(MODES)("message flags (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  let streamId: number;

  const prisma = () => server.running.services.db.prisma;
  const flagsOf = async (user: TestUser, id: number) =>
    (await prisma().userMessage.findUnique({ where: { user_id_message_id: { user_id: user.id, message_id: id } } }))?.flags ?? null;
  const flags = (user: TestUser, params: Record<string, unknown>) => user.client.post("/messages/flags", params);

  beforeAll(async () => {
    server = await startTestServer(mode);
    [alice, bob, carol, guest] = await Promise.all([
      createTestUser(server, "Alice Flags"),
      createTestUser(server, "Bob Flags"),
      createTestUser(server, "Carol Flags"),
      createTestUser(server, "Gail Guest", "guest"),
    ]);
    await subscribeTo(alice.client, ["flagging"], { principals: [alice.email, bob.email] });
    streamId = (await prisma().stream.findFirstOrThrow({ where: { name: "flagging" } })).id;
  });
  afterAll(() => server.stop());

  test("starring returns the ids that changed and tells only the user", async () => {
    const [m1, m2] = [await sendStreamMessage(alice.client, "flagging", "t"), await sendStreamMessage(alice.client, "flagging", "t")];
    const bobQueue = await registerQueue(bob.client, ["update_message_flags"]);
    const aliceQueue = await registerQueue(alice.client, ["update_message_flags", "message"]);
    expect((await flags(bob, { messages: [m1], op: "add", flag: "starred" })).body).toEqual({ result: "success", msg: "", messages: [m1], ignored_because_not_subscribed_channels: [] });
    expect((await flags(bob, { messages: [m1, m2], op: "add", flag: "starred" })).body.messages).toEqual([m2]);
    expect(await flagsOf(bob, m1)).toBe(STARRED);
    expect(await waitForEvent(bob.client, bobQueue, (e) => e.type === "update_message_flags")).toEqual({
      type: "update_message_flags", op: "add", operation: "add", flag: "starred", messages: [m1], all: false, id: expect.any(Number),
    });
    expect((await flags(bob, { messages: [m1, m2], op: "remove", flag: "starred" })).body.messages).toEqual([m1, m2]);
    expect(await flagsOf(bob, m2)).toBe(0);
    await sendPrivateMessage(bob.client, [alice.id], "marker");
    expect((await eventsUntil(alice.client, aliceQueue, (e) => e.type === "message")).filter((e) => e.type === "update_message_flags")).toEqual([]);
  });

  test("only read, starred and collapsed may be changed, in Zulip's words", async () => {
    const id = await sendStreamMessage(alice.client, "flagging", "t");
    for (const flag of ["mentioned", "wildcard_mentioned", "has_alert_word", "historical"]) {
      expect((await flags(bob, { messages: [id], op: "add", flag })).body).toEqual({ result: "error", msg: `Flag not editable: '${flag}'`, code: "BAD_REQUEST" });
    }
    for (const flag of ["is_private", "bogus"]) {
      expect((await flags(bob, { messages: [id], op: "add", flag })).body.msg).toBe(`Invalid flag: '${flag}'`);
    }
    expect((await flags(bob, { messages: [id], op: "toggle", flag: "read" })).body.msg).toBe("Invalid message flag operation: 'toggle'");
    expect((await flags(bob, { messages: [id], flag: "read" })).body).toMatchObject({ msg: "Missing 'op' argument", code: "REQUEST_VARIABLE_MISSING" });
    expect((await flags(bob, { messages: ["x"], op: "add", flag: "read" })).body.msg).toBe("messages[0] is not an integer");
    expect((await flags(bob, { messages: [id], op: "add", flag: "collapsed" })).body.messages).toEqual([id]);
    expect((await flags(bob, { messages: [id], op: "add", flag: "read" })).body.messages).toEqual([id]);
    expect(await flagsOf(bob, id)).toBe(READ | 4);
  });

  test("starring a readable message without a row creates a historical one; unreadable ones are Invalid message(s)", async () => {
    const id = await sendStreamMessage(alice.client, "flagging", "t");
    expect(await flagsOf(carol, id)).toBeNull();
    expect((await flags(carol, { messages: [id], op: "add", flag: "starred" })).body.messages).toEqual([id]);
    expect(await flagsOf(carol, id)).toBe(READ | HISTORICAL | STARRED);
    // Marking read needs no row: nothing changes and no row appears.
    const other = await sendStreamMessage(alice.client, "flagging", "t");
    expect((await flags(carol, { messages: [other], op: "add", flag: "read" })).body.messages).toEqual([]);
    expect(await flagsOf(carol, other)).toBeNull();

    const invalid = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };
    const privateId = await sendPrivateMessage(alice.client, [bob.id]);
    expect((await flags(carol, { messages: [privateId], op: "add", flag: "starred" })).body).toEqual(invalid);
    expect((await flags(guest, { messages: [other], op: "add", flag: "starred" })).body).toEqual(invalid);
    expect((await flags(carol, { messages: [other, 2_000_000_000], op: "add", flag: "starred" })).body).toEqual(invalid);
    expect(await flagsOf(carol, other)).toBeNull(); // the whole request was refused
  });

  test("any flag on a message the user cannot read is Invalid message(s), and changes nothing", async () => {
    const invalid = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };
    const privateId = await sendPrivateMessage(alice.client, [bob.id], "between alice and bob");
    const readable = await sendStreamMessage(alice.client, "flagging", "t");
    const carolQueue = await registerQueue(carol.client, ["update_message_flags"]);
    await subscribeTo(alice.client, ["flags-secret"], { invite_only: true });
    const secret = await sendStreamMessage(alice.client, "flags-secret", "t");
    // Reading needs no row, yet a message one may not read is still refused (it was success).
    for (const [op, flag] of [["add", "read"], ["remove", "read"], ["add", "collapsed"], ["remove", "starred"]]) {
      expect((await flags(carol, { messages: [privateId], op, flag })).body).toEqual(invalid);
      expect((await flags(carol, { messages: [secret], op, flag })).body).toEqual(invalid);
      expect((await flags(carol, { messages: [2_000_000_000], op, flag })).body).toEqual(invalid);
    }
    expect((await flags(carol, { messages: [readable, secret], op: "add", flag: "starred" })).body).toEqual(invalid);
    expect((await flags(carol, { messages: [-1], op: "add", flag: "read" })).body).toEqual(invalid);
    expect((await flags(carol, { messages: [9_999_999_999], op: "add", flag: "read" })).body).toEqual(invalid);
    expect(await flagsOf(carol, readable)).toBeNull();
    // Refused requests sent no event; this one does, and is the first the queue holds.
    expect((await flags(carol, { messages: [readable], op: "add", flag: "read" })).body).toEqual({ result: "success", msg: "", messages: [], ignored_because_not_subscribed_channels: [] });
    expect(await waitForEvent(carol.client, carolQueue, (e) => e.type === "update_message_flags")).toMatchObject({ id: 0, messages: [] });
  });

  test("marking unread skips messages of streams the user is not subscribed to", async () => {
    const id = await sendStreamMessage(alice.client, "flagging", "t");
    await flags(carol, { messages: [id], op: "add", flag: "starred" }); // a historical, read row
    expect((await flags(carol, { messages: [id], op: "remove", flag: "read" })).body.messages).toEqual([]);
    expect(await flagsOf(carol, id)).toBe(READ | HISTORICAL | STARRED);
    const pm = await sendPrivateMessage(alice.client, [carol.id]);
    await flags(carol, { messages: [pm], op: "add", flag: "read" });
    expect((await flags(carol, { messages: [pm], op: "remove", flag: "read" })).body.messages).toEqual([pm]);
  });

  test("mark_all_as_read marks every unread row and sends all: true", async () => {
    const ids = [await sendStreamMessage(alice.client, "flagging", "a"), await sendPrivateMessage(alice.client, [bob.id])];
    const queue = await registerQueue(bob.client, ["update_message_flags"]);
    expect((await bob.client.post("/mark_all_as_read")).body).toEqual({ result: "success", msg: "", complete: true });
    expect(await prisma().userMessage.count({ where: { user_id: bob.id, flags: { in: [0, STARRED] } } })).toBe(0);
    for (const id of ids) expect((await flagsOf(bob, id))! & READ).toBe(READ);
    expect(await waitForEvent(bob.client, queue, (e) => e.type === "update_message_flags")).toEqual({
      type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [], all: true, id: expect.any(Number),
    });
  });

  test("mark_stream_as_read and mark_topic_as_read mark only that stream or topic", async () => {
    await subscribeTo(alice.client, ["flagging-other"], { principals: [alice.email, bob.email] });
    const inTopic = await sendStreamMessage(alice.client, "flagging", "Topic A");
    const otherTopic = await sendStreamMessage(alice.client, "flagging", "topic b");
    const otherStream = await sendStreamMessage(alice.client, "flagging-other", "topic a");
    const queue = await registerQueue(bob.client, ["update_message_flags"]);

    expect((await bob.client.post("/mark_topic_as_read", { stream_id: streamId, topic_name: "topic a" })).body).toEqual({ result: "success", msg: "" });
    expect([await flagsOf(bob, inTopic), await flagsOf(bob, otherTopic), await flagsOf(bob, otherStream)]).toEqual([READ, 0, 0]);
    expect(await waitForEvent(bob.client, queue, (e) => e.type === "update_message_flags")).toMatchObject({ flag: "read", op: "add", messages: [inTopic], all: false });

    expect((await bob.client.post("/mark_stream_as_read", { stream_id: streamId })).body.result).toBe("success");
    expect([await flagsOf(bob, otherTopic), await flagsOf(bob, otherStream)]).toEqual([READ, 0]);
    expect(await waitForEvent(bob.client, queue, (e) => e.type === "update_message_flags" && e.messages.includes(otherTopic))).toMatchObject({ all: false });

    expect((await bob.client.post("/mark_topic_as_read", { stream_id: streamId, topic_name: "nothing here" })).body).toEqual({
      result: "error", msg: "No such topic 'nothing here'", code: "BAD_REQUEST",
    });
    expect((await bob.client.post("/mark_stream_as_read", { stream_id: 987654 })).body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
    await subscribeTo(alice.client, ["flagging-secret"], { invite_only: true });
    const secretId = (await prisma().stream.findFirstOrThrow({ where: { name: "flagging-secret" } })).id;
    expect((await bob.client.post("/mark_stream_as_read", { stream_id: secretId })).body.msg).toBe("Invalid stream id");
    expect((await bob.client.post("/mark_topic_as_read", { stream_id: secretId, topic_name: "x" })).body.msg).toBe("Invalid stream id");
  });

  test("mark_all_as_read copes with many rows (in batches: mark-all-as-read.test.ts)", async () => {
    const { prisma: db } = server.running.services.db;
    const realmId = (await db.userProfile.findUniqueOrThrow({ where: { id: carol.id } })).realm_id;
    const recipient = (await db.stream.findFirstOrThrow({ where: { name: "flagging" } })).recipient_id!;
    await db.$executeRaw`
      WITH m AS (
        INSERT INTO message (realm_id, sender_id, recipient_id, subject, content)
        SELECT ${realmId}, ${alice.id}, ${recipient}, 'bulk', 'x' FROM generate_series(1, 5000) RETURNING id)
      INSERT INTO user_message (user_id, message_id, flags) SELECT ${carol.id}, id, 0 FROM m`;
    expect((await carol.client.post("/mark_all_as_read")).body.result).toBe("success");
    expect(await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM user_message WHERE user_id = ${carol.id} AND (flags & 1) = 0`).toEqual([{ n: 0 }]);
  });
});
