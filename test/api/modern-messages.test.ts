// Messages as zulip-flutter and zulip-terminal HEAD send and read them (spec modern-clients.md
// §2.5, §2.7, §3.4, §3.9): send types and local echo, read_by_sender, GET /messages/{id} with the
// full message, include_anchor, POST /messages/flags/narrow, edit history with moves, wildcard
// mention flags of Zulip 8, and typing in channels.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const MODERN = JSON.stringify({ stream_typing_notifications: true, notification_settings_null: true });

describe.each(MODES)("messages for today's clients (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let generalId: number;

  const sent = async (user: TestUser, params: Record<string, unknown>): Promise<number> => {
    const res = await user.client.post("/messages", params);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    return res.body.id as number;
  };
  const flagsOf = async (user: TestUser, id: number): Promise<string[]> => {
    const res = await user.client.get(`/messages/${id}`, {});
    expect(res.body.result).toBe("success");
    return res.body.message.flags as string[];
  };

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Modern");
    bob = await createTestUser(server, "Bob Modern");
    carol = await createTestUser(server, "Carol Modern");
    const streams = (await alice.client.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
    generalId = streams.find((s) => s.name === "general")!.stream_id;
  });
  afterAll(() => server.stop());

  describe("POST /messages", () => {
    test("type channel with a stream id and a topic, and type direct with user ids", async () => {
      const id = await sent(alice, { type: "channel", to: generalId, topic: "flutter", content: "to a channel" });
      const message = (await bob.client.get(`/messages/${id}`)).body.message;
      expect(message).toMatchObject({ type: "stream", stream_id: generalId, display_recipient: "general", subject: "flutter" });
      const dm = await sent(alice, { type: "direct", to: [bob.id], content: "direct" });
      const dmMessage = (await bob.client.get(`/messages/${dm}`)).body.message;
      expect(dmMessage.type).toBe("private");
      expect(dmMessage.display_recipient.map((u: { id: number }) => u.id).sort()).toEqual([alice.id, bob.id].sort());
    });

    test("zulip-terminal's form: type stream with the stream's name and `subject`; private with emails", async () => {
      const id = await sent(alice, { type: "stream", to: "general", subject: "terminal", content: "legacy" });
      expect((await bob.client.get(`/messages/${id}`)).body.message.subject).toBe("terminal");
      const dm = await sent(alice, { type: "private", to: JSON.stringify([bob.email]), content: "by email" });
      expect((await bob.client.get(`/messages/${dm}`)).body.message.type).toBe("private");
    });

    test("an unknown type is refused", async () => {
      const res = await alice.client.post("/messages", { type: "broadcast", to: "general", topic: "x", content: "no" });
      expect(res.status).toBe(400);
      expect(res.body.result).toBe("error");
    });

    test("queue_id and local_id come back as local_message_id on that queue's event only", async () => {
      const own = (await alice.client.post("/register", { event_types: ["message"] })).body.queue_id as string;
      const other = (await alice.client.post("/register", { event_types: ["message"] })).body.queue_id as string;
      const bobs = (await bob.client.post("/register", { event_types: ["message"] })).body.queue_id as string;
      const id = await sent(alice, { type: "direct", to: [bob.id], content: "echo", queue_id: own, local_id: "17.01" });
      const echoed = await waitForEvent(alice.client, own, (e) => e.type === "message" && e.message.id === id);
      expect(echoed.local_message_id).toBe("17.01");
      const elsewhere = await waitForEvent(alice.client, other, (e) => e.type === "message" && e.message.id === id);
      expect(elsewhere).not.toHaveProperty("local_message_id");
      const received = await waitForEvent(bob.client, bobs, (e) => e.type === "message" && e.message.id === id);
      expect(received).not.toHaveProperty("local_message_id");
      expect(received.message).not.toHaveProperty("local_id");
      expect(received.message).not.toHaveProperty("sender_queue_id");
    });

    test("read_by_sender: false leaves the message unread for its sender; true or absent marks it read", async () => {
      const unread = await sent(alice, { type: "channel", to: generalId, topic: "rbs", content: "not read", read_by_sender: false });
      expect(await flagsOf(alice, unread)).not.toContain("read");
      const read = await sent(alice, { type: "channel", to: generalId, topic: "rbs", content: "read", read_by_sender: true });
      expect(await flagsOf(alice, read)).toContain("read");
      const plain = await sent(alice, { type: "channel", to: generalId, topic: "rbs", content: "plain" });
      expect(await flagsOf(alice, plain)).toContain("read");
      expect(await flagsOf(bob, unread)).not.toContain("read");
    });
  });

  describe("GET /messages/{id}", () => {
    test("the full message (feature level 120) and raw_content", async () => {
      const id = await sent(alice, { type: "channel", to: generalId, topic: "quote", content: "some **bold**" });
      const res = await bob.client.get(`/messages/${id}`, { apply_markdown: true, allow_empty_topic_name: true });
      expect(res.body.raw_content).toBe("some **bold**");
      expect(res.body.message).toMatchObject({
        id,
        sender_id: alice.id,
        content: "<p>some <strong>bold</strong></p>",
        content_type: "text/html",
        is_me_message: false,
        client: expect.any(String),
        sender_realm_str: expect.any(String),
        reactions: [],
        flags: [],
      });
    });

    test("apply_markdown=false gives the Markdown in message.content", async () => {
      const id = await sent(alice, { type: "channel", to: generalId, topic: "quote", content: "plain *text*" });
      const res = await bob.client.get(`/messages/${id}`, { apply_markdown: false });
      expect(res.body.message).toMatchObject({ content: "plain *text*", content_type: "text/x-markdown" });
    });

    test("a public stream's message the user never received reads as historical", async () => {
      await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "modern-history" }] });
      const id = await sent(alice, { type: "stream", to: "modern-history", topic: "t", content: "before bob" });
      const res = await bob.client.get(`/messages/${id}`, { apply_markdown: false });
      expect(res.body.message.flags).toEqual(["read", "historical"]);
      expect(res.body.raw_content).toBe("before bob");
    });

    test("a direct message of others is Invalid message(s)", async () => {
      const id = await sent(alice, { type: "direct", to: [bob.id], content: "secret" });
      const res = await carol.client.get(`/messages/${id}`);
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe("Invalid message(s)");
    });
  });

  describe("include_anchor and POST /messages/flags/narrow", () => {
    let topicIds: number[];
    const narrow = () => [{ operator: "channel", operand: generalId }, { operator: "topic", operand: "bulk" }];

    beforeAll(async () => {
      topicIds = [];
      for (let i = 0; i < 5; i++) topicIds.push(await sent(alice, { type: "channel", to: generalId, topic: "bulk", content: `bulk ${i}` }));
    });

    test("GET /messages with include_anchor=false leaves the anchor out", async () => {
      const res = await bob.client.get("/messages", { anchor: topicIds[2], include_anchor: false, num_before: 0, num_after: 10, narrow: JSON.stringify(narrow()) });
      expect(res.body.messages.map((m: { id: number }) => m.id)).toEqual(topicIds.slice(3));
      expect(res.body.found_anchor).toBe(false);
      const both = await bob.client.get("/messages", { anchor: topicIds[2], include_anchor: false, num_before: 1, num_after: 1, narrow: JSON.stringify(narrow()) });
      expect(both.status).toBe(400);
      expect(both.body.msg).toBe("The anchor can only be excluded at an end of the range");
    });

    test("marks a narrow's range read, as zulip-flutter's mark-as-read loop does, with its event", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["update_message_flags"] })).body.queue_id as string;
      const first = await bob.client.post("/messages/flags/narrow", {
        anchor: "oldest",
        include_anchor: false,
        num_before: 0,
        num_after: 3,
        narrow: JSON.stringify([...narrow(), { operator: "is", operand: "unread" }]),
        op: "add",
        flag: "read",
      });
      expect(first.body).toMatchObject({ processed_count: 3, updated_count: 3, first_processed_id: topicIds[0], last_processed_id: topicIds[2], found_oldest: true, found_newest: false });
      const event = await waitForEvent(bob.client, queue, (e) => e.type === "update_message_flags");
      expect(event).toMatchObject({ op: "add", flag: "read", messages: topicIds.slice(0, 3) });
      const rest = await bob.client.post("/messages/flags/narrow", {
        anchor: String(topicIds[2]),
        include_anchor: false,
        num_before: 0,
        num_after: 1000,
        narrow: JSON.stringify(narrow()),
        op: "add",
        flag: "read",
      });
      expect(rest.body).toMatchObject({ processed_count: 2, updated_count: 2, first_processed_id: topicIds[3], last_processed_id: topicIds[4], found_newest: true });
      for (const id of topicIds) expect(await flagsOf(bob, id)).toContain("read");
      const none = await bob.client.post("/messages/flags/narrow", {
        anchor: "newest",
        num_before: 0,
        num_after: 0,
        narrow: JSON.stringify([...narrow(), { operator: "is", operand: "unread" }]),
        op: "add",
        flag: "read",
      });
      expect(none.body).toMatchObject({ processed_count: 0, updated_count: 0, first_processed_id: null, last_processed_id: null });
    });

    test("a flag users cannot change, and a bad narrow, are errors", async () => {
      const base = { anchor: "newest", num_before: 10, num_after: 0, narrow: "[]", op: "add" };
      expect((await bob.client.post("/messages/flags/narrow", { ...base, flag: "mentioned" })).body.msg).toBe("Flag not editable: 'mentioned'");
      const bad = await bob.client.post("/messages/flags/narrow", { ...base, flag: "starred", narrow: JSON.stringify([{ operator: "bogus", operand: "x" }]) });
      expect(bad.body.code).toBe("BAD_NARROW");
      expect((await bob.client.post("/messages/flags/narrow", { ...base, flag: "starred", anchor: "sideways" })).status).toBe(400);
    });
  });

  test("a move's edit history entry has stream and prev_stream (feature level 118)", async () => {
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "moved-to" }] });
    const streams = (await server.owner.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
    const movedTo = streams.find((s) => s.name === "moved-to")!.stream_id;
    const id = await sent(alice, { type: "channel", to: generalId, topic: "moving", content: "to be moved" });
    const moved = await server.owner.patch(`/messages/${id}`, { stream_id: movedTo, propagate_mode: "change_one" });
    expect(moved.body.result).toBe("success");
    const history = (await server.owner.get(`/messages/${id}/history`)).body.message_history;
    expect(history).toHaveLength(2);
    expect(history[1]).toMatchObject({ stream: movedTo, prev_stream: generalId, topic: "moving", content: "to be moved", timestamp: expect.any(Number) });
    expect(history[0]).not.toHaveProperty("prev_stream");
  });

  describe("wildcard mention flags (Zulip 8 names beside the deprecated one)", () => {
    test("@**channel** is a stream wildcard: stream_wildcard_mentioned and wildcard_mentioned", async () => {
      const id = await sent(alice, { type: "channel", to: generalId, topic: "wild", content: "@**channel** hello" });
      expect(await flagsOf(bob, id)).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
      const mentions = await bob.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([["is", "mentioned"]]) });
      expect(mentions.body.messages.map((m: { id: number }) => m.id)).toContain(id);
    });

    test("@**topic** flags the topic's participants only", async () => {
      await sent(carol, { type: "channel", to: generalId, topic: "participants", content: "I was here" });
      const id = await sent(alice, { type: "channel", to: generalId, topic: "participants", content: "@**topic** gather" });
      expect(await flagsOf(carol, id)).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
      expect(await flagsOf(bob, id)).toEqual([]);
      const html = (await bob.client.get(`/messages/${id}`)).body.message.content;
      expect(html).toContain('<span class="topic-mention">@topic</span>');
    });

    test("an edit that adds @**topic** flags the participants; one that drops it clears the flag", async () => {
      await sent(carol, { type: "channel", to: generalId, topic: "edited wildcard", content: "me too" });
      const id = await sent(alice, { type: "channel", to: generalId, topic: "edited wildcard", content: "plain" });
      expect(await flagsOf(carol, id)).toEqual([]);
      expect((await alice.client.patch(`/messages/${id}`, { content: "now @**topic**" })).body.result).toBe("success");
      expect(await flagsOf(carol, id)).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
      expect(await flagsOf(bob, id)).toEqual([]);
      expect((await alice.client.patch(`/messages/${id}`, { content: "plain again" })).body.result).toBe("success");
      expect(await flagsOf(carol, id)).toEqual([]);
    });
  });

  describe("typing", () => {
    test("in a channel (stream_id and topic): to subscribers whose queues declared stream_typing_notifications", async () => {
      const modern = (await bob.client.post("/register", { event_types: ["typing"], client_capabilities: MODERN })).body.queue_id as string;
      const legacy = (await carol.client.post("/register", { event_types: ["typing"] })).body.queue_id as string;
      const res = await alice.client.post("/typing", { op: "start", type: "channel", stream_id: generalId, topic: "flutter" });
      expect(res.body.result).toBe("success");
      const event = await waitForEvent(bob.client, modern, (e) => e.type === "typing");
      expect(event).toEqual({ id: expect.any(Number), type: "typing", op: "start", message_type: "stream", sender: { user_id: alice.id, email: alice.email }, stream_id: generalId, topic: "flutter" });
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(carol.client, legacy)).toEqual([]);
    });

    test("in a stream the old way (type stream, to = [stream id])", async () => {
      const modern = (await bob.client.post("/register", { event_types: ["typing"], client_capabilities: MODERN })).body.queue_id as string;
      expect((await alice.client.post("/typing", { op: "stop", type: "stream", to: JSON.stringify([generalId]), topic: "old" })).body.result).toBe("success");
      expect(await waitForEvent(bob.client, modern, (e) => e.type === "typing")).toMatchObject({ op: "stop", stream_id: generalId, topic: "old" });
      expect((await alice.client.post("/typing", { op: "start", type: "stream", topic: "old" })).body.msg).toBe("Missing stream_id");
      expect((await alice.client.post("/typing", { op: "start", type: "channel", stream_id: generalId })).body.msg).toBe("Missing topic");
    });

    test("direct: message_type direct for today's clients, the 3.x shape for others (zulip-terminal's type-less form)", async () => {
      const modern = (await bob.client.post("/register", { event_types: ["typing"], client_capabilities: MODERN })).body.queue_id as string;
      const legacy = (await bob.client.post("/register", { event_types: ["typing"] })).body.queue_id as string;
      expect((await alice.client.post("/typing", { op: "start", type: "direct", to: JSON.stringify([bob.id]) })).body.result).toBe("success");
      const modernEvent = await waitForEvent(bob.client, modern, (e) => e.type === "typing");
      expect(modernEvent).toMatchObject({ message_type: "direct", sender: { user_id: alice.id }, recipients: expect.arrayContaining([{ user_id: bob.id, email: bob.email }]) });
      const legacyEvent = await waitForEvent(bob.client, legacy, (e) => e.type === "typing");
      expect(legacyEvent).not.toHaveProperty("message_type");
      expect((await alice.client.post("/typing", { op: "stop", to: JSON.stringify([bob.id]) })).body.result).toBe("success");
      expect(await waitForEvent(bob.client, modern, (e) => e.type === "typing" && e.op === "stop")).toMatchObject({ message_type: "direct" });
    });

    test("a user who turned typing notifications off for streams cannot send them", async () => {
      expect((await carol.client.patch("/settings", { send_stream_typing_notifications: false })).body.result).toBe("success");
      const res = await carol.client.post("/typing", { op: "start", type: "channel", stream_id: generalId, topic: "quiet" });
      expect(res.body.msg).toBe("User has disabled typing notifications for channel messages");
    });
  });
});
