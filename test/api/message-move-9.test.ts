// Zulip 9.0's moves (PATCH /messages/{id} with a topic or stream): the Notification Bot's
// breadcrumbs (feature levels 9 and 152) and resolve notices, the whole-topic time limit
// (feature level 172, MOVE_MESSAGES_TIME_LIMIT_EXCEEDED), moves to and from private streams, and
// topic wildcard mentions held to wildcard_mention_policy (feature level 229).
import { waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import type { ApiClient } from "../support/client.ts";

describe.each(MODES)("moving messages, Zulip 9.0 (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let outsider: TestUser;
  let streamIds: Record<string, number>;
  let counter = 0;

  const fresh = (label: string): string => `${label} ${++counter}`;
  const names = new Map<number, string>();
  const mention = (user: TestUser): string => `@_**${names.get(user.id)}|${user.id}**`;

  async function send(client: ApiClient, stream: string, topic: string, content = "words"): Promise<number> {
    const res = await client.post("/messages", { type: "stream", to: stream, topic, content });
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    return res.body.id;
  }

  /** A topic's messages, oldest first: who sent them (the Notification Bot as "bot") and what they say. */
  async function topicMessages(stream: string, topic: string): Promise<Array<{ id: number; bot: boolean; content: string }>> {
    const { prisma } = server.running.services.db;
    const s = await prisma.stream.findFirstOrThrow({ where: { id: streamIds[stream] } });
    const rows = await prisma.message.findMany({ where: { recipient_id: s.recipient_id!, subject: topic }, orderBy: { id: "asc" }, include: { sender: true } });
    return rows.map((m) => ({ id: m.id, bot: m.sender.delivery_email.startsWith("notification-bot@"), content: m.content }));
  }
  const notices = async (stream: string, topic: string): Promise<string[]> => (await topicMessages(stream, topic)).filter((m) => m.bot).map((m) => m.content);

  async function backdate(id: number, seconds: number): Promise<void> {
    await server.running.services.db.prisma.message.update({ where: { id }, data: { date_sent: new Date(Date.now() - seconds * 1000) } });
  }
  const setRealm = async (changes: Record<string, unknown>) => expect((await server.owner.patch("/realm", changes)).body.result).toBe("success");
  const subscribe = async (name: string, users: TestUser[], extra: Record<string, unknown> = {}) =>
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }], principals: users.map((u) => u.email), ...extra })).body.result).toBe("success");

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Mover");
    bob = await createTestUser(server, "Bob Mover");
    admin = await createTestUser(server, "Ada Mover", "admin");
    outsider = await createTestUser(server, "Olive Outside");
    names.set(alice.id, "Alice Mover");
    await subscribe("moves", [alice, bob, admin, outsider]);
    await subscribe("landing", [alice, bob, admin, outsider]);
    // Private, with shared history: alice and admin only.
    await subscribe("hideout", [alice, admin], { invite_only: true });
    // Private, without shared history: alice and bob.
    await subscribe("vault", [alice, bob], { invite_only: true, history_public_to_subscribers: false });
    const { prisma } = server.running.services.db;
    streamIds = {};
    for (const name of ["moves", "landing", "hideout", "vault"]) streamIds[name] = (await prisma.stream.findFirstOrThrow({ where: { name } })).id;
    await setRealm({ edit_topic_policy: 1, move_messages_between_streams_policy: 1, move_messages_within_stream_limit_seconds: "unlimited", move_messages_between_streams_limit_seconds: "unlimited" });
  });
  afterAll(() => server.stop());

  describe("breadcrumbs (feature levels 9 and 152)", () => {
    test("a whole topic moved to another stream: a note in the new topic by default, none in the old", async () => {
      const topic = fresh("whole");
      await send(alice.client, "moves", topic);
      const id = await send(bob.client, "moves", topic);
      const res = await alice.client.patch(`/messages/${id}`, { stream_id: streamIds.landing, propagate_mode: "change_all" });
      expect(res.body).toEqual({ result: "success", msg: "", detached_uploads: [] });
      expect(await notices("landing", topic)).toEqual([`This topic was moved here from #**moves>${topic}** by ${mention(alice)}.`]);
      expect(await topicMessages("moves", topic)).toEqual([]);
      // The note comes after the moved messages, read for the mover only.
      const landed = await topicMessages("landing", topic);
      expect(landed.map((m) => m.bot)).toEqual([false, false, true]);
      const rows = await server.running.services.db.prisma.userMessage.findMany({ where: { message_id: landed[2].id, user_id: { in: [alice.id, bob.id] } } });
      const read = new Map(rows.map((r) => [r.user_id, (r.flags & 1) === 1]));
      expect([read.get(alice.id), read.get(bob.id)]).toEqual([true, false]);
    });

    test("send_notification_to_old_thread: the old topic says where it went; both off: no notes at all", async () => {
      const topic = fresh("both");
      const id = await send(alice.client, "moves", topic);
      const renamed = fresh("renamed");
      const res = await alice.client.patch(`/messages/${id}`, { topic: renamed, propagate_mode: "change_all", send_notification_to_old_thread: true, send_notification_to_new_thread: true });
      expect(res.body.result).toBe("success");
      expect(await notices("moves", topic)).toEqual([`This topic was moved to #**moves>${renamed}** by ${mention(alice)}.`]);
      expect(await notices("moves", renamed)).toEqual([`This topic was moved here from #**moves>${topic}** by ${mention(alice)}.`]);

      const quiet = fresh("quiet");
      const id2 = await send(alice.client, "moves", quiet);
      const res2 = await alice.client.patch(`/messages/${id2}`, { stream_id: streamIds.landing, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false });
      expect(res2.body.result).toBe("success");
      expect(await notices("landing", quiet)).toEqual([]);
      expect(await notices("moves", quiet)).toEqual([]);
    });

    test("part of a topic: one message, then several, counted", async () => {
      const topic = fresh("part");
      await send(alice.client, "moves", topic);
      const second = await send(alice.client, "moves", topic);
      const third = await send(alice.client, "moves", topic);
      await send(alice.client, "moves", topic);
      const target = fresh("split");
      const one = await alice.client.patch(`/messages/${second}`, { topic: target, propagate_mode: "change_one", send_notification_to_old_thread: true });
      expect(one.body.result).toBe("success");
      const [newNote] = await notices("moves", target);
      expect(newNote).toMatch(new RegExp(`^\\[A message\\]\\(http[^)]*/#narrow/stream/${streamIds.moves}-moves/topic/split\\.20\\d+/near/${second}\\) was moved here from #\\*\\*moves>${topic}\\*\\* by `));
      expect(newNote.endsWith(`by ${mention(alice)}.`)).toBe(true);
      expect(await notices("moves", topic)).toEqual([`A message was moved from this topic to #**moves>${target}** by ${mention(alice)}.`]);

      // change_later from the third: it, the fourth and the note after them move; the first stays.
      const other = fresh("later");
      const res = await alice.client.patch(`/messages/${third}`, { stream_id: streamIds.landing, topic: other, propagate_mode: "change_later", send_notification_to_old_thread: true });
      expect(res.body.result).toBe("success");
      expect(await notices("landing", other)).toEqual([
        `A message was moved from this topic to #**moves>${target}** by ${mention(alice)}.`,
        `3 messages were moved here from #**moves>${topic}** by ${mention(alice)}.`,
      ]);
      expect(await notices("moves", topic)).toEqual([`3 messages were moved from this topic to #**landing>${other}** by ${mention(alice)}.`]);
    });

    test("into a topic that already has messages: counted, not 'this topic'", async () => {
      const existing = fresh("existing");
      await send(bob.client, "moves", existing);
      const topic = fresh("merging");
      const id = await send(alice.client, "moves", topic);
      await send(alice.client, "moves", topic);
      const res = await alice.client.patch(`/messages/${id}`, { topic: existing, propagate_mode: "change_all" });
      expect(res.body.result).toBe("success");
      expect(await notices("moves", existing)).toEqual([`2 messages were moved here from #**moves>${topic}** by ${mention(alice)}.`]);
    });

    test("resolving and unresolving: the resolve notice in the topic, no breadcrumb", async () => {
      const topic = fresh("issue");
      const id = await send(bob.client, "moves", topic);
      const resolved = `✔ ${topic}`;
      const res = await alice.client.patch(`/messages/${id}`, { topic: resolved, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: true });
      expect(res.body.result).toBe("success");
      const [notice] = (await topicMessages("moves", resolved)).filter((m) => m.bot);
      expect(notice.content).toBe(`${mention(alice)} has marked this topic as resolved.`);
      // Past the minute in which undoing deletes the notice.
      await backdate(notice.id, 120);
      const back = await alice.client.patch(`/messages/${id}`, { topic, propagate_mode: "change_all" });
      expect(back.body.result).toBe("success");
      // The resolve notice moved back with the topic; then the unresolve notice.
      expect(await notices("moves", topic)).toEqual([`${mention(alice)} has marked this topic as resolved.`, `${mention(alice)} has marked this topic as unresolved.`]);
      expect(await notices("moves", resolved)).toEqual([]);
    });

    test("resolving undone within a minute: the notice goes, none is added", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["delete_message"] })).body.queue_id;
      const topic = fresh("oops");
      const id = await send(bob.client, "moves", topic);
      expect((await alice.client.patch(`/messages/${id}`, { topic: `✔ ${topic}`, propagate_mode: "change_all" })).body.result).toBe("success");
      const [notice] = (await topicMessages("moves", `✔ ${topic}`)).filter((m) => m.bot);
      expect((await alice.client.patch(`/messages/${id}`, { topic, propagate_mode: "change_all" })).body.result).toBe("success");
      expect(await topicMessages("moves", topic)).toEqual([expect.objectContaining({ id, bot: false })]);
      const deleted = await waitForEvent(bob.client, queue, (e) => e.type === "delete_message");
      expect(deleted.message_ids ?? [deleted.message_id]).toEqual([notice.id]);
    });

    test("a content edit alone sends nothing; a refused move sends nothing", async () => {
      const topic = fresh("content");
      const id = await send(alice.client, "moves", topic);
      expect((await alice.client.patch(`/messages/${id}`, { content: "changed" })).body.result).toBe("success");
      expect(await notices("moves", topic)).toEqual([]);
      const refused = await outsider.client.patch(`/messages/${id}`, { stream_id: streamIds.hideout, propagate_mode: "change_all" });
      expect(refused.body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
      expect(await notices("moves", topic)).toEqual([]);
    });

    test("the notes reach subscribers as messages from the Notification Bot", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["message"] })).body.queue_id;
      const topic = fresh("evented");
      const id = await send(alice.client, "moves", topic);
      expect((await alice.client.patch(`/messages/${id}`, { stream_id: streamIds.landing, propagate_mode: "change_all" })).body.result).toBe("success");
      const event = await waitForEvent(bob.client, queue, (e) => e.type === "message" && e.message.subject === topic && e.message.sender_email.startsWith("notification-bot@"));
      expect(event.message.content).toContain("This topic was moved here from");
    });
  });

  describe("MOVE_MESSAGES_TIME_LIMIT_EXCEEDED (feature level 172)", () => {
    afterEach(() => setRealm({ move_messages_within_stream_limit_seconds: "unlimited", move_messages_between_streams_limit_seconds: "unlimited" }));

    test("change_all with old messages: refused with the counts; change_later from the first allowed works; administrators exempt", async () => {
      await setRealm({ move_messages_within_stream_limit_seconds: 3600, move_messages_between_streams_limit_seconds: 7200 });
      const topic = fresh("aged");
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await send(bob.client, "moves", topic));
      await backdate(ids[0], 10_000);
      await backdate(ids[1], 5000);
      // Topic limit (3600) refuses 2 messages.
      const res = await alice.client.patch(`/messages/${ids[4]}`, { topic: fresh("new"), propagate_mode: "change_all", send_notification_to_new_thread: false });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: "error",
        msg: "You only have permission to move the 3/5 most recent messages in this topic.",
        code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
        first_message_id_allowed_to_move: ids[2],
        total_messages_in_topic: 5,
        total_messages_allowed_to_move: 3,
      });
      expect((await topicMessages("moves", topic)).length).toBe(5);
      // A stream move alone: the stream's limit (7200) refuses only the oldest.
      const stream = await alice.client.patch(`/messages/${ids[4]}`, { stream_id: streamIds.landing, propagate_mode: "change_all", send_notification_to_new_thread: false });
      expect(stream.body).toMatchObject({ code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", msg: "You only have permission to move the 4/5 most recent messages in this topic.", first_message_id_allowed_to_move: ids[1] });
      // Both: the stricter limit.
      const both = await alice.client.patch(`/messages/${ids[4]}`, { stream_id: streamIds.landing, topic: fresh("both"), propagate_mode: "change_all" });
      expect(both.body).toMatchObject({ code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", total_messages_allowed_to_move: 3 });

      const later = fresh("later");
      expect((await alice.client.patch(`/messages/${ids[2]}`, { topic: later, propagate_mode: "change_later", send_notification_to_new_thread: false })).body.result).toBe("success");
      expect((await topicMessages("moves", later)).map((m) => m.id)).toEqual(ids.slice(2));

      // An administrator moves the rest whole.
      expect((await admin.client.patch(`/messages/${ids[0]}`, { topic: later, propagate_mode: "change_all", send_notification_to_new_thread: false })).body.result).toBe("success");
      expect((await topicMessages("moves", later)).map((m) => m.id)).toEqual(ids);
    });

    test("no limit, or only new messages: change_all goes through", async () => {
      const topic = fresh("young");
      const id = await send(bob.client, "moves", topic);
      await backdate(id, 100_000);
      const id2 = await send(bob.client, "moves", topic);
      expect((await alice.client.patch(`/messages/${id2}`, { topic: fresh("moved"), propagate_mode: "change_all" })).body.result).toBe("success");
      await setRealm({ move_messages_within_stream_limit_seconds: 3600 });
      const t2 = fresh("fresh");
      await send(bob.client, "moves", t2);
      const id3 = await send(bob.client, "moves", t2);
      expect((await alice.client.patch(`/messages/${id3}`, { topic: fresh("moved"), propagate_mode: "change_all" })).body.result).toBe("success");
    });
  });

  describe("private streams", () => {
    test("public to private with shared history: moves; subscribers of the old stream who cannot read the new one get delete_message", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["delete_message", "update_message"] })).body.queue_id;
      const topic = fresh("secret");
      const id = await send(alice.client, "moves", topic);
      const res = await alice.client.patch(`/messages/${id}`, { stream_id: streamIds.hideout, propagate_mode: "change_all" });
      expect(res.body).toEqual({ result: "success", msg: "", detached_uploads: [] });
      expect((await topicMessages("hideout", topic)).filter((m) => !m.bot).map((m) => m.id)).toEqual([id]);
      const deleted = await waitForEvent(bob.client, queue, (e) => e.type === "delete_message");
      expect(deleted).toMatchObject({ stream_id: streamIds.moves, topic });
      expect(deleted.message_ids ?? [deleted.message_id]).toEqual([id]);
      // Bob can no longer read it.
      expect((await bob.client.get(`/messages/${id}`)).body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
      expect((await admin.client.get(`/messages/${id}`)).body.result).toBe("success");
      // And back to a public stream.
      expect((await alice.client.patch(`/messages/${id}`, { stream_id: streamIds.moves, propagate_mode: "change_all" })).body.result).toBe("success");
      expect((await bob.client.get(`/messages/${id}`)).body.result).toBe("success");
    });

    test("into a stream without shared history: its subscribers get the messages, read", async () => {
      const topic = fresh("vaulted");
      const id = await send(outsider.client, "moves", topic);
      const res = await alice.client.patch(`/messages/${id}`, { stream_id: streamIds.vault, propagate_mode: "change_all", send_notification_to_new_thread: false });
      expect(res.body.result).toBe("success");
      const rows = await server.running.services.db.prisma.userMessage.findMany({ where: { message_id: id }, orderBy: { user_id: "asc" } });
      expect(rows.map((r) => r.user_id).sort((a, b) => a - b)).toEqual([alice.id, bob.id].sort((a, b) => a - b));
      expect((await bob.client.get(`/messages/${id}`)).body.result).toBe("success");
      expect((await outsider.client.get(`/messages/${id}`)).body).toMatchObject({ result: "error" });
    });

    test("only into a private stream one is subscribed to (not even an administrator otherwise)", async () => {
      const topic = fresh("denied");
      const id = await send(bob.client, "moves", topic);
      for (const [user, stream] of [[bob, "hideout"], [admin, "vault"]] as const) {
        const res = await user.client.patch(`/messages/${id}`, { stream_id: streamIds[stream], propagate_mode: "change_all" });
        expect(res.body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
      }
      expect((await topicMessages("moves", topic)).length).toBe(1);
    });
  });

  describe("topic wildcard mentions (feature level 229)", () => {
    let crowd: TestUser[];
    beforeAll(async () => {
      crowd = await Promise.all(Array.from({ length: 14 }, (_, i) => createTestUser(server, `Topic Crowd ${i}`)));
      await subscribe("crowded", [alice, bob, ...crowd]);
      const { prisma } = server.running.services.db;
      streamIds.crowded = (await prisma.stream.findFirstOrThrow({ where: { name: "crowded" } })).id;
    });
    afterEach(() => setRealm({ wildcard_mention_policy: 1 }));
    const REFUSED = { result: "error", msg: "You do not have permission to use topic wildcard mentions in this topic.", code: "TOPIC_WILDCARD_MENTION_NOT_ALLOWED" };

    test("more than 15 participants: refused to whom the policy does not name, on send and on edit", async () => {
      const topic = fresh("busy");
      // 15 senders: still allowed.
      for (const user of [alice, ...crowd]) await send(user.client, "crowded", topic);
      await setRealm({ wildcard_mention_policy: 6 });
      expect((await bob.client.post("/messages", { type: "stream", to: "crowded", topic, content: "@**topic** ok" })).body.result).toBe("success");
      // Bob made 16.
      const refused = await alice.client.post("/messages", { type: "stream", to: "crowded", topic, content: "@**topic** now" });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(REFUSED);
      const mine = await send(alice.client, "crowded", topic, "plain");
      const edit = await alice.client.patch(`/messages/${mine}`, { content: "@**topic** edited" });
      expect(edit.body).toEqual(REFUSED);
      expect((await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: mine } })).content).toBe("plain");
      // A silent topic mention is no mention; another topic is small.
      expect((await alice.client.post("/messages", { type: "stream", to: "crowded", topic, content: "@_**topic** quiet" })).body.result).toBe("success");
      expect((await alice.client.post("/messages", { type: "stream", to: "crowded", topic: fresh("small"), content: "@**topic** hi" })).body.result).toBe("success");
      // Policy everyone: allowed.
      await setRealm({ wildcard_mention_policy: 1 });
      expect((await alice.client.post("/messages", { type: "stream", to: "crowded", topic, content: "@**topic** everyone may" })).body.result).toBe("success");
    });

    test("reactions make participants too", async () => {
      const topic = fresh("reacted");
      const id = await send(alice.client, "crowded", topic);
      for (const user of [bob, ...crowd]) expect((await user.client.post(`/messages/${id}/reactions`, { emoji_name: "smile" })).body.result).toBe("success");
      await setRealm({ wildcard_mention_policy: 6 });
      expect((await alice.client.post("/messages", { type: "stream", to: "crowded", topic, content: "@**topic** all" })).body).toEqual(REFUSED);
    });

    test("a stream wildcard has its own code", async () => {
      await setRealm({ wildcard_mention_policy: 6 });
      const res = await alice.client.post("/messages", { type: "stream", to: "crowded", topic: fresh("all"), content: "@**all** hi" });
      expect(res.body).toEqual({ result: "error", msg: "You do not have permission to use channel wildcard mentions in this channel.", code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });
    });
  });
});
