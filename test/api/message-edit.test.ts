// PATCH /messages/{message_id} and GET /messages/{message_id}: Zulip 9.0's editing rules (the
// policies themselves, role by role, in realm-policies.test.ts), the
// propagate modes, moves between streams, the update_message event and who receives it.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import type { ApiClient } from "../support/client.ts";

const DEFAULT_SETTINGS = { allow_message_editing: true, message_content_edit_limit_seconds: 600, allow_community_topic_editing: true, mandatory_topics: false };

describe.each(MODES)("message editing (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let guest: TestUser;
  let charlie: TestUser;
  let editsId: number;
  let otherId: number;

  async function send(client: ApiClient, topic: string, content: string, stream = "edits"): Promise<number> {
    const res = await client.post("/messages", { type: "stream", to: stream, topic, content });
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    return res.body.id;
  }

  async function stored(id: number) {
    return server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id } });
  }

  async function backdate(id: number, seconds: number) {
    await server.running.services.db.prisma.message.update({ where: { id }, data: { date_sent: new Date(Date.now() - seconds * 1000) } });
  }

  async function register(client: ApiClient): Promise<string> {
    const res = await client.post("/register", { event_types: ["update_message", "delete_message"] });
    return res.body.queue_id;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Edit");
    bob = await createTestUser(server, "Bob Edit");
    admin = await createTestUser(server, "Ada Admin", "admin");
    guest = await createTestUser(server, "Gus Guest", "guest");
    charlie = await createTestUser(server, "Charlie Outside");
    const members = [alice.email, bob.email, admin.email, guest.email];
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "edits" }, { name: "other" }], principals: members });
    const { prisma } = server.running.services.db;
    editsId = (await prisma.stream.findFirstOrThrow({ where: { name: "edits" } })).id;
    otherId = (await prisma.stream.findFirstOrThrow({ where: { name: "other" } })).id;
  });
  afterEach(async () => {
    const res = await server.owner.patch("/realm", DEFAULT_SETTINGS);
    expect(res.body.result).toBe("success");
  });
  afterAll(() => server.stop());

  describe("content", () => {
    test("the sender edits content: re-rendered, last_edit_time set, one message_edit row with the previous state", async () => {
      const id = await send(alice.client, "content", "first *draft*");
      const before = await stored(id);
      const res = await alice.client.patch(`/messages/${id}`, { content: "second **draft**" });
      // Feature level 285: the uploads the edit left only in the history (none here).
      expect(res.body).toEqual({ result: "success", msg: "", detached_uploads: [] });
      const after = await stored(id);
      expect(after).toMatchObject({ content: "second **draft**", rendered_content: "<p>second <strong>draft</strong></p>", subject: "content" });
      expect(after.last_edit_time).not.toBeNull();
      const edits = await server.running.services.db.prisma.messageEdit.findMany({ where: { message_id: id } });
      expect(edits).toEqual([
        expect.objectContaining({
          user_id: alice.id,
          prev_content: "first *draft*",
          prev_rendered_content: before.rendered_content,
          prev_rendered_content_version: before.rendered_content_version,
          prev_topic: null,
          prev_stream_id: null,
        }),
      ]);
      // raw_content, and (feature level 120, additive) the message itself.
      const fetched = (await alice.client.get(`/messages/${id}`)).body;
      expect(fetched).toMatchObject({ result: "success", msg: "", raw_content: "second **draft**", message: { id, content: "<p>second <strong>draft</strong></p>" } });
    });

    test("edited content is rendered with the send path's context: mentions resolve", async () => {
      const id = await send(alice.client, "content", "no mention yet");
      expect((await alice.client.patch(`/messages/${id}`, { content: "hi @**Bob Edit**" })).body.result).toBe("success");
      expect((await stored(id)).rendered_content).toContain(`data-user-id="${bob.id}"`);
    });

    test("emptied content becomes (deleted), as in Zulip", async () => {
      const id = await send(alice.client, "content", "to be emptied");
      expect((await alice.client.patch(`/messages/${id}`, { content: "   " })).body.result).toBe("success");
      expect((await stored(id)).content).toBe("(deleted)");
    });

    test("content is limited to 10000 bytes", async () => {
      const id = await send(alice.client, "content", "short");
      const res = await alice.client.patch(`/messages/${id}`, { content: "é".repeat(5001) });
      expect(res.body).toEqual({ result: "error", msg: "Message too long (limit: 10000 bytes)", code: "BAD_REQUEST" });
      expect((await alice.client.patch(`/messages/${id}`, { content: "é".repeat(5000) })).body.result).toBe("success");
    });

    test("only the sender may edit content: other members, admins and guests may not", async () => {
      const id = await send(alice.client, "content", "mine");
      for (const other of [bob, admin, guest]) {
        const res = await other.client.patch(`/messages/${id}`, { content: "theirs" });
        expect(res.body).toEqual({ result: "error", msg: "You don't have permission to edit this message", code: "BAD_REQUEST" });
      }
      expect((await stored(id)).content).toBe("mine");
    });

    test("a guest may edit their own message", async () => {
      const id = await send(guest.client, "content", "guest words");
      expect((await guest.client.patch(`/messages/${id}`, { content: "guest edit" })).body.result).toBe("success");
      expect((await stored(id)).content).toBe("guest edit");
    });

    test("the content edit time limit, and 0 meaning no limit", async () => {
      const id = await send(alice.client, "content", "old message");
      await backdate(id, 600 + 60);
      const res = await alice.client.patch(`/messages/${id}`, { content: "late" });
      expect(res.body).toEqual({ result: "error", msg: "The time limit for editing this message has passed", code: "BAD_REQUEST" });
      // Within the limit plus Zulip's 20 s grace.
      await backdate(id, 600 + 10);
      expect((await alice.client.patch(`/messages/${id}`, { content: "just in time" })).body.result).toBe("success");
      await backdate(id, 10 * 86_400);
      await server.owner.patch("/realm", { message_content_edit_limit_seconds: 0 });
      expect((await alice.client.patch(`/messages/${id}`, { content: "no limit" })).body.result).toBe("success");
    });

    test("a private message's content can be edited, but it has no topic or stream", async () => {
      const res = await alice.client.post("/messages", { type: "private", to: [bob.id], content: "psst" });
      const id = res.body.id;
      expect((await alice.client.patch(`/messages/${id}`, { content: "psst!" })).body.result).toBe("success");
      expect((await alice.client.patch(`/messages/${id}`, { topic: "nope" })).body).toMatchObject({ result: "error", msg: "Private messages cannot have topics." });
      expect((await alice.client.patch(`/messages/${id}`, { stream_id: editsId })).body).toMatchObject({ result: "error" });
      expect((await bob.client.patch(`/messages/${id}`, { content: "mine now" })).body.msg).toBe("You don't have permission to edit this message");
    });
  });

  describe("errors", () => {
    test("editing turned off in the organization", async () => {
      const id = await send(alice.client, "errors", "x");
      await server.owner.patch("/realm", { allow_message_editing: false });
      const res = await alice.client.patch(`/messages/${id}`, { content: "y" });
      expect(res.body).toEqual({ result: "error", msg: "Your organization has turned off message editing", code: "BAD_REQUEST" });
    });

    test("Nothing to change: no parameters, or the same topic", async () => {
      const id = await send(alice.client, "errors", "x");
      expect((await alice.client.patch(`/messages/${id}`, {})).body).toEqual({ result: "error", msg: "Nothing to change", code: "BAD_REQUEST" });
      expect((await alice.client.patch(`/messages/${id}`, { topic: "errors" })).body.msg).toBe("Nothing to change");
      expect(await server.running.services.db.prisma.messageEdit.count({ where: { message_id: id } })).toBe(0);
    });

    test("under mandatory topics no message moves to the empty topic (feature level 334); topics are limited to 60 characters", async () => {
      const id = await send(alice.client, "errors", "x");
      await server.owner.patch("/realm", { mandatory_topics: true });
      for (const topic of ["", "   ", "(no topic)", "general chat"]) {
        expect((await alice.client.patch(`/messages/${id}`, { topic })).body).toEqual({ result: "error", msg: "Topics are required in this organization.", code: "BAD_REQUEST" });
      }
      expect((await alice.client.patch(`/messages/${id}`, { topic: "t".repeat(61) })).body.msg).toBe("Topic too long (limit: 60 characters)");
      expect((await alice.client.patch(`/messages/${id}`, { topic: "🐙".repeat(60) })).body.result).toBe("success");
    });

    test("Invalid message(s): unknown ids, and messages the user cannot read", async () => {
      const invalid = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };
      expect((await alice.client.patch("/messages/987654", { content: "x" })).body).toEqual(invalid);
      expect((await alice.client.get("/messages/987654")).body).toEqual(invalid);
      const pm = (await alice.client.post("/messages", { type: "private", to: [bob.id], content: "between us" })).body.id;
      expect((await charlie.client.patch(`/messages/${pm}`, { content: "x" })).body).toEqual(invalid);
      expect((await charlie.client.get(`/messages/${pm}`)).body).toEqual(invalid);
      expect((await bob.client.get(`/messages/${pm}`)).body.raw_content).toBe("between us");
      // A public stream's history is readable without a row; a guest needs a subscription.
      const streamMessage = await send(alice.client, "errors", "public words");
      expect((await charlie.client.get(`/messages/${streamMessage}`)).body.raw_content).toBe("public words");
      await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "guestless" }] });
      const unseen = await send(server.owner, "errors", "not for guests", "guestless");
      expect((await guest.client.get(`/messages/${unseen}`)).body).toEqual(invalid);
      expect((await guest.client.patch(`/messages/${unseen}`, { topic: "x" })).body).toEqual(invalid);
      expect((await charlie.client.get(`/messages/${unseen}`)).body.raw_content).toBe("not for guests");
    });

    test("an unknown propagate_mode, and a propagate_mode without a topic", async () => {
      const id = await send(alice.client, "errors", "x");
      expect((await alice.client.patch(`/messages/${id}`, { topic: "t2", propagate_mode: "change_some" })).body).toMatchObject({ result: "error", msg: "Invalid propagate_mode" });
      expect((await alice.client.patch(`/messages/${id}`, { content: "y", propagate_mode: "change_all" })).body.msg).toBe("Invalid propagate_mode without topic edit");
    });
  });

  describe("topics", () => {
    test("the legacy subject parameter renames too", async () => {
      const id = await send(alice.client, "legacy topic", "x");
      expect((await alice.client.patch(`/messages/${id}`, { subject: "renamed legacy" })).body.result).toBe("success");
      expect((await stored(id)).subject).toBe("renamed legacy");
    });

    test("change_one, change_later and change_all move exactly the right messages", async () => {
      for (const [mode, expected] of [
        ["change_one", [false, true, false, false]],
        ["change_later", [false, true, true, true]],
        ["change_all", [true, true, true, true]],
      ] as const) {
        const topic = `prop ${mode}`;
        const ids = [];
        for (let i = 0; i < 4; i++) ids.push(await send(i % 2 ? bob.client : alice.client, i === 3 ? topic.toUpperCase() : topic, `m${i}`));
        const elsewhere = await send(alice.client, `${topic} other`, "not in the topic");
        const inOtherStream = await send(alice.client, topic, "same topic, other stream", "other");
        const res = await alice.client.patch(`/messages/${ids[1]}`, { topic: `${topic} new`, propagate_mode: mode });
        expect(res.body.result).toBe("success");
        const topics = await Promise.all(ids.map(async (id) => (await stored(id)).subject === `${topic} new`));
        expect(topics).toEqual(expected);
        expect((await stored(elsewhere)).subject).toBe(`${topic} other`);
        expect((await stored(inOtherStream)).subject).toBe(topic);
        // One message_edit row for every changed message, each with its previous topic.
        const edits = await server.running.services.db.prisma.messageEdit.findMany({ where: { message_id: { in: ids } }, orderBy: { message_id: "asc" } });
        expect(edits.map((e) => e.message_id)).toEqual(ids.filter((_, i) => expected[i]));
        expect(edits.every((e) => e.prev_topic!.toLowerCase() === topic.toLowerCase() && e.prev_content === null && e.user_id === alice.id)).toBe(true);
      }
    });

    test("with community topic editing (edit_topic_policy everyone) anyone retitles, within 3 days but for admins (Zulip 9.0)", async () => {
      const id = await send(alice.client, "community", "x");
      expect((await bob.client.patch(`/messages/${id}`, { topic: "community 2" })).body.result).toBe("success");
      await backdate(id, 259_200 + 60);
      // Zulip 9.0's move_messages_within_stream_limit_seconds holds the sender too.
      for (const user of [bob, alice]) {
        expect((await user.client.patch(`/messages/${id}`, { topic: "community 3" })).body.msg).toBe("The time limit for editing this message's topic has passed.");
      }
      expect((await admin.client.patch(`/messages/${id}`, { topic: "community 4" })).body.result).toBe("success");
      const recent = await send(alice.client, "community", "y");
      expect((await guest.client.patch(`/messages/${recent}`, { topic: "by a guest" })).body.result).toBe("success");
    });

    test("without community topic editing (edit_topic_policy administrators) only admins retitle, the sender neither, but anyone names a message in the empty topic", async () => {
      await server.owner.patch("/realm", { allow_community_topic_editing: false });
      const id = await send(alice.client, "restricted", "x");
      for (const other of [bob, guest, alice]) {
        expect((await other.client.patch(`/messages/${id}`, { topic: "nope" })).body.msg).toBe("You don't have permission to edit this message");
      }
      expect((await admin.client.patch(`/messages/${id}`, { topic: "by admin" })).body.result).toBe("success");
      const untitled = await send(alice.client, "", "no topic given");
      expect((await stored(untitled)).subject).toBe("");
      expect((await bob.client.patch(`/messages/${untitled}`, { topic: "named by bob" })).body.result).toBe("success");
    });
  });

  describe("the update_message event", () => {
    test("a content and topic edit: the contract's fields, per-user flags, to exactly those who have the message", async () => {
      const id = await send(alice.client, "event topic", "before *edit*");
      const others = await send(alice.client, "event topic", "later one");
      const [aliceQueue, bobQueue, charlieQueue] = await Promise.all([alice, bob, charlie].map((u) => register(u.client)));
      const res = await alice.client.patch(`/messages/${id}`, { content: "after **edit**", topic: "event topic 2", propagate_mode: "change_later" });
      expect(res.body.result).toBe("success");
      const edited = await stored(id);
      const forBob = await waitForEvent(bob.client, bobQueue, (e) => e.type === "update_message");
      expect(forBob).toEqual({
        id: expect.any(Number),
        type: "update_message",
        user_id: alice.id,
        message_id: id,
        // Feature level 114's, for every client (additive).
        rendering_only: false,
        edit_timestamp: Math.floor(edited.last_edit_time!.getTime() / 1000),
        stream_name: "edits",
        stream_id: editsId,
        orig_content: "before *edit*",
        orig_rendered_content: "<p>before <em>edit</em></p>",
        prev_rendered_content_version: 1,
        content: "after **edit**",
        rendered_content: "<p>after <strong>edit</strong></p>",
        is_me_message: false,
        propagate_mode: "change_later",
        orig_subject: "event topic",
        subject: "event topic 2",
        topic_links: [],
        message_ids: [id, others],
        flags: [],
      });
      const forAlice = await waitForEvent(alice.client, aliceQueue, (e) => e.type === "update_message");
      expect(forAlice.flags).toEqual(["read"]);
      expect(await drainEvents(charlie.client, charlieQueue)).toEqual([]);
    });

    test("edited content sets and clears mentioned, wildcard_mentioned and has_alert_word, and the event carries the new flags", async () => {
      expect((await bob.client.post("/users/me/alert_words", { alert_words: JSON.stringify(["deploy"]) })).body.result).toBe("success");
      const id = await send(alice.client, "flags after edit", "nothing for anyone");
      const flagsOf = async (userId: number) =>
        (await server.running.services.db.prisma.userMessage.findUniqueOrThrow({ where: { user_id_message_id: { user_id: userId, message_id: id } } })).flags;
      expect((await flagsOf(bob.id)) & (8 | 16 | 512)).toBe(0);

      const bobQueue = await register(bob.client);
      expect((await alice.client.patch(`/messages/${id}`, { content: "@**Bob Edit** please deploy" })).body.result).toBe("success");
      expect((await flagsOf(bob.id)) & (8 | 512)).toBe(8 | 512);
      const mentioned = await waitForEvent(bob.client, bobQueue, (e) => e.type === "update_message" && e.message_id === id);
      expect(mentioned.flags).toEqual(["mentioned", "has_alert_word"]);

      expect((await alice.client.patch(`/messages/${id}`, { content: "@**all** heads up" })).body.result).toBe("success");
      expect((await flagsOf(bob.id)) & (8 | 16 | 512)).toBe(16);
      expect((await flagsOf(admin.id)) & (8 | 16 | 512)).toBe(16);

      expect((await alice.client.patch(`/messages/${id}`, { content: "never mind" })).body.result).toBe("success");
      expect((await flagsOf(bob.id)) & (8 | 16 | 512)).toBe(0);
      // Flags content does not decide stay as they were (Alice's own message is read).
      expect((await flagsOf(alice.id)) & 1).toBe(1);
    });

    test("a private message edit reaches only its participants", async () => {
      const id = (await alice.client.post("/messages", { type: "private", to: [bob.id], content: "pm" })).body.id;
      const [bobQueue, adminQueue] = await Promise.all([bob, admin].map((u) => register(u.client)));
      await alice.client.patch(`/messages/${id}`, { content: "pm edited" });
      const event = await waitForEvent(bob.client, bobQueue, (e) => e.type === "update_message");
      expect(event).toMatchObject({ message_id: id, content: "pm edited", message_ids: [id], propagate_mode: "change_one" });
      expect(event).not.toHaveProperty("stream_id");
      expect(event).not.toHaveProperty("subject");
      expect(await drainEvents(admin.client, adminQueue)).toEqual([]);
    });

    test("a topic-only edit carries no content fields", async () => {
      const id = await send(alice.client, "topic only", "x");
      const bobQueue = await register(bob.client);
      await bob.client.patch(`/messages/${id}`, { topic: "topic only 2" });
      const event = await waitForEvent(bob.client, bobQueue, (e) => e.type === "update_message");
      expect(event).toMatchObject({ user_id: bob.id, orig_subject: "topic only", subject: "topic only 2", message_ids: [id] });
      expect(event).not.toHaveProperty("content");
      expect(event).not.toHaveProperty("orig_content");
    });
  });

  describe("moving to another stream", () => {
    test("only administrators may move, and not while changing content", async () => {
      // Zulip 10.0's default is role:members (feature level 310): administrators only, as 3.x's policy 2 says.
      expect((await server.owner.patch("/realm", { move_messages_between_streams_policy: 2 })).body.result).toBe("success");
      const id = await send(alice.client, "move", "x");
      expect((await alice.client.patch(`/messages/${id}`, { stream_id: otherId })).body.msg).toBe("You don't have permission to move this message");
      expect((await admin.client.patch(`/messages/${id}`, { stream_id: otherId, content: "y" })).body.msg).toBe("You don't have permission to edit this message");
      expect((await stored(id)).recipient_id).not.toBe((await server.running.services.db.prisma.stream.findUniqueOrThrow({ where: { id: otherId } })).recipient_id);
      const own = await send(admin.client, "move", "admin's own");
      expect((await admin.client.patch(`/messages/${own}`, { stream_id: otherId, content: "y" })).body.msg).toBe("Cannot change message content while changing channel");
      expect((await admin.client.patch(`/messages/${own}`, { stream_id: 987654 })).body.msg).toBe("Invalid stream id");
    });

    test("an admin moves a topic with change_all; subscribers who are not in the new stream lose their rows", async () => {
      const { prisma } = server.running.services.db;
      const other = await prisma.stream.findUniqueOrThrow({ where: { id: otherId } });
      // Bob leaves the target stream: he keeps reading public history, but loses his rows.
      await bob.client.delete("/users/me/subscriptions", { subscriptions: ["other"] });
      await guest.client.delete("/users/me/subscriptions", { subscriptions: ["other"] });
      const ids = [await send(alice.client, "moving", "a"), await send(alice.client, "moving", "b")];
      const staying = await send(alice.client, "staying", "c");
      const [aliceQueue, charlieQueue, guestQueue] = await Promise.all([alice, charlie, guest].map((u) => register(u.client)));
      const res = await admin.client.patch(`/messages/${ids[0]}`, { stream_id: otherId, propagate_mode: "change_all" });
      expect(res.body.result).toBe("success");
      for (const id of ids) expect((await stored(id)).recipient_id).toBe(other.recipient_id);
      expect((await stored(staying)).recipient_id).not.toBe(other.recipient_id);
      expect(await prisma.userMessage.count({ where: { message_id: { in: ids }, user_id: bob.id } })).toBe(0);
      expect(await prisma.userMessage.count({ where: { message_id: { in: ids }, user_id: alice.id } })).toBe(2);
      const event = await waitForEvent(alice.client, aliceQueue, (e) => e.type === "update_message");
      expect(event).toMatchObject({ stream_id: editsId, new_stream_id: otherId, orig_subject: "moving", propagate_mode: "change_all", message_ids: ids });
      expect(await drainEvents(charlie.client, charlieQueue)).toEqual([]);
      // A guest outside the new stream can no longer see the messages: for them they are deleted.
      // (One event per message: this client did not register with bulk_message_deletion.)
      await waitForEvent(guest.client, guestQueue, (e) => e.type === "delete_message" && e.message_id === ids[1]);
      expect((await drainEvents(guest.client, guestQueue)).map(({ id: _id, ...e }) => e)).toEqual(
        ids.map((id) => ({ type: "delete_message", message_id: id, message_type: "stream", stream_id: editsId, topic: "moving" })),
      );
      expect((await guest.client.get(`/messages/${ids[0]}`)).body.msg).toBe("Invalid message(s)");
      const edits = await prisma.messageEdit.findMany({ where: { message_id: { in: ids } } });
      expect(edits.map((e) => e.prev_stream_id)).toEqual([editsId, editsId]);
      await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "other" }], principals: [bob.email, guest.email] });
    });
  });
});
