import { STREAM_START } from "@chat/bus";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";

describe.each(MODES)("event queues (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;
  let memberId: number;

  beforeAll(async () => {
    server = await startTestServer(mode, { EVENT_HEARTBEAT_SECONDS: "1", OUTBOX_SWEEP_AFTER_SECONDS: "1" });
    const created = await server.owner.post("/users", { email: "ev@example.com", password: "events-pass", full_name: "Eve Events", short_name: "eve" });
    memberId = created.body.user_id;
    const key = (await server.anonymous.post("/fetch_api_key", { username: "ev@example.com", password: "events-pass" })).body.api_key;
    member = server.client("ev@example.com", key);
  });
  afterAll(() => server.stop());

  const send = (client: ApiClient, content: string, topic = "events") => client.post("/messages", { type: "stream", to: "general", topic, content });

  describe("POST /register", () => {
    test("returns a queue, last_event_id -1, the version, and the state asked for", async () => {
      const res = await member.post("/register", { event_types: ["message", "realm_user"] });
      expect(res.body).toMatchObject({ result: "success", msg: "", last_event_id: -1, zulip_version: "10.0", zulip_feature_level: 371, zulip_merge_base: "10.0" });
      expect(typeof res.body.queue_id).toBe("string");
      expect(res.body.max_message_id).toEqual(expect.any(Number));
      expect(res.body.realm_users.map((u: { email: string }) => u.email)).toContain("ev@example.com");
      expect(res.body).not.toHaveProperty("subscriptions");
    });

    test("records where the change stream stood, so changes already in its state do not come again as events", async () => {
      // A send returns after its batch is published: the stream is past it when /register starts.
      await send(server.owner, "before the queue");
      const queueId = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      const { bus } = server.running.services;
      const queue = await bus.queues.get(queueId);
      expect(queue?.since).not.toEqual(STREAM_START);
      expect(queue?.since).toEqual(await bus.changes.position(queue!.realmId));
    });

    test("without event_types returns every section", async () => {
      const res = await member.post("/register");
      for (const key of ["max_message_id", "realm_users", "subscriptions", "streams", "realm_name", "enable_sounds", "twenty_four_hour_time"]) {
        expect(res.body).toHaveProperty(key);
      }
      expect(res.body.subscriptions.map((s: { name: string }) => s.name)).toEqual(["general"]);
    });

    test("include_subscribers lists subscriber ids", async () => {
      const res = await member.post("/register", { event_types: ["subscription"], include_subscribers: true });
      expect(res.body.subscriptions[0].subscribers).toContain(memberId);
    });

    test("rejects malformed options", async () => {
      expect((await member.post("/register", { event_types: "message" })).body.msg).toBe('Argument "event_types" is not valid JSON.');
      expect((await member.post("/register", { event_types: [1] })).body.msg).toBe("event_types[0] is not a string");
      expect((await member.post("/register", { narrow: [["stream"]] })).body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
      // An operator the event system cannot filter by is an error, not a queue that gets everything.
      expect((await member.post("/register", { narrow: [["pm_with", "ev@example.com"]] })).body).toEqual({ result: "error", msg: "Operator pm_with not supported.", code: "BAD_REQUEST" });
      expect((await member.post("/register", { narrow: [["color", "red"]] })).body).toEqual({ result: "error", msg: "Operator color not supported.", code: "BAD_REQUEST" });
      expect((await member.post("/register", { narrow: [["is", "happy"]] })).body).toMatchObject({ result: "error", code: "BAD_NARROW" });
      expect((await member.post("/register", { queue_lifespan_secs: -1 })).body).toEqual({ result: "error", msg: "Invalid queue_lifespan_secs", code: "BAD_REQUEST", var_name: "queue_lifespan_secs" });
    });
  });

  describe("GET /events", () => {
    test("dont_block returns at once, empty when nothing happened", async () => {
      const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      const res = await member.get("/events", { queue_id: queue, last_event_id: -1, dont_block: true });
      expect(res.body).toEqual({ result: "success", msg: "", events: [], queue_id: queue });
    });

    test("a blocking poll answers as soon as an event arrives", async () => {
      const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      const poll = member.get("/events", { queue_id: queue, last_event_id: -1 });
      await new Promise((r) => setTimeout(r, 150));
      const started = Date.now();
      await send(server.owner, "wake up");
      const res = await poll;
      expect(Date.now() - started).toBeLessThan(1000);
      expect(res.body.events).toHaveLength(1);
      expect(res.body.events[0]).toMatchObject({ id: 0, type: "message", flags: [] });
      // The deprecated fields Zulip's message events carry (this server sends no email or push).
      expect(res.body.events[0]).toMatchObject({ email_notified: false, push_notified: false, stream_push_notify: false, stream_email_notify: false, wildcard_mention_notify: false });
      expect(res.body.events[0].message).toMatchObject({ content: "wake up", content_type: "text/x-markdown", display_recipient: "general", subject: "events", type: "stream" });
    });

    test("a blocking poll with nothing to report ends with a heartbeat", async () => {
      const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      const started = Date.now();
      const res = await member.get("/events", { queue_id: queue, last_event_id: -1 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(res.body.events).toEqual([{ type: "heartbeat", id: 0 }]);
    });

    test("last_event_id acknowledges: acknowledged events are not returned again", async () => {
      const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      await send(server.owner, "one");
      await send(server.owner, "two");
      // Polled from the start each time: a poll past "one" would acknowledge it.
      await waitForEvent(member, queue, (e) => e.message?.content === "two", { acknowledge: false });
      const all = await drainEvents(member, queue, -1);
      expect(all.map((e) => e.id)).toEqual([0, 1]);
      expect((await drainEvents(member, queue, 0)).map((e) => e.message.content)).toEqual(["two"]);
      expect(await drainEvents(member, queue, 1)).toEqual([]);
      // Once acknowledged, an event is gone even for a poll that asks from the start again.
      expect(await drainEvents(member, queue, -1)).toEqual([]);
    });

    test("a narrowed queue gets only matching messages, `is:mentioned` by the recipient's flags", async () => {
      const queue = (await member.post("/register", { event_types: ["message"], narrow: [["stream", "General"], ["is", "mentioned"]] })).body.queue_id;
      await send(server.owner, "no mention here");
      await send(server.owner, "hey @**Eve Events**");
      const event = await waitForEvent(member, queue, (e) => e.type === "message", { acknowledge: false });
      expect(event.message.content).toBe("hey @**Eve Events**");
      expect(event.flags).toContain("mentioned");
      await send(server.owner, "@**Eve Events** again");
      await waitForEvent(member, queue, (e) => e.message?.content === "@**Eve Events** again", { acknowledge: false });
      expect((await drainEvents(member, queue)).map((e) => e.message.content)).toEqual(["hey @**Eve Events**", "@**Eve Events** again"]);
    });

    test("queue_lifespan_secs: a queue may outlive the default idle time, up to Zulip's week", async () => {
      const long = (await member.post("/register", { event_types: ["message"], queue_lifespan_secs: 3600 })).body.queue_id;
      const capped = (await member.post("/register", { event_types: ["message"], queue_lifespan_secs: 30 * 24 * 3600 })).body.queue_id;
      const plain = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      const { queues } = server.running.services.bus;
      expect((await queues.get(long))?.idleTimeoutMs).toBe(3600_000);
      expect((await queues.get(capped))?.idleTimeoutMs).toBe(7 * 24 * 3600_000);
      expect((await queues.get(plain))?.idleTimeoutMs).toBeUndefined();
      // Expiry with a default idle time of zero: only queues with their own, longer lifespan stay.
      await queues.deleteIdle(0);
      expect(await queues.get(plain)).toBeNull();
      expect(await queues.get(long)).not.toBeNull();
      expect((await member.get("/events", { queue_id: long, dont_block: true })).body.result).toBe("success");
    });

    test("event_types filters what a queue receives", async () => {
      const queue = (await member.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      await send(server.owner, "not for this queue");
      await server.owner.patch(`/users/${memberId}`, { full_name: "Eve Renamed" });
      const event = await waitForEvent(member, queue, (e) => e.type === "realm_user");
      expect(event.person.full_name).toBe("Eve Renamed");
      expect((await drainEvents(member, queue)).filter((e) => e.type === "message")).toEqual([]);
    });

    test("apply_markdown and client_gravatar shape message events per queue", async () => {
      const html = (await member.post("/register", { event_types: ["message"], apply_markdown: true, client_gravatar: true })).body.queue_id;
      const raw = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      await send(server.owner, "some **bold** text");
      const rendered = await waitForEvent(member, html, (e) => e.type === "message");
      expect(rendered.message).toMatchObject({ content: "<p>some <strong>bold</strong> text</p>", content_type: "text/html", avatar_url: null });
      const plain = await waitForEvent(member, raw, (e) => e.type === "message");
      expect(plain.message).toMatchObject({ content: "some **bold** text", content_type: "text/x-markdown" });
      expect(plain.message.avatar_url).toMatch(/^https:/);
      expect(plain.message).not.toHaveProperty("raw_content");
      expect(plain.message).not.toHaveProperty("rendered_content");
    });

    test("the sender's own message arrives flagged read", async () => {
      const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
      await send(member, "my own");
      const event = await waitForEvent(member, queue, (e) => e.type === "message");
      expect(event.flags).toEqual(["read"]);
    });

    test("an unknown queue is BAD_EVENT_QUEUE_ID with queue_id", async () => {
      const res = await member.get("/events", { queue_id: "123:nope", last_event_id: -1, dont_block: true });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Bad event queue id: 123:nope", code: "BAD_EVENT_QUEUE_ID", queue_id: "123:nope" });
    });

    test("another user's queue is BAD_EVENT_QUEUE_ID", async () => {
      const queue = (await server.owner.post("/register", {})).body.queue_id;
      const res = await member.get("/events", { queue_id: queue, dont_block: true });
      expect(res.body.code).toBe("BAD_EVENT_QUEUE_ID");
    });

    test("queue_id is required; last_event_id must be an integer", async () => {
      expect((await member.get("/events", {})).body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "queue_id" });
      expect((await member.get("/events", { queue_id: "x", last_event_id: "abc" })).body.msg).toBe("last_event_id is not an integer");
    });
  });

  describe("DELETE /events", () => {
    test("deletes the queue; later polls get BAD_EVENT_QUEUE_ID", async () => {
      const queue = (await member.post("/register", {})).body.queue_id;
      expect((await member.delete("/events", { queue_id: queue })).body).toEqual({ result: "success", msg: "" });
      expect((await member.get("/events", { queue_id: queue, dont_block: true })).body.code).toBe("BAD_EVENT_QUEUE_ID");
      const again = await member.delete("/events", { queue_id: queue });
      expect(again.body).toEqual({ result: "error", msg: `Bad event queue id: ${queue}`, code: "BAD_EVENT_QUEUE_ID", queue_id: queue });
    });

    test("requires queue_id", async () => {
      expect((await member.delete("/events", {})).body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "queue_id" });
    });
  });

  test("an event committed but not published (the node died) is published by the outbox sweeper", async () => {
    const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
    const changes = server.running.services.bus.changes;
    const publish = changes.publish.bind(changes);
    let failures = 0;
    changes.publish = async (batches) => {
      // The API node's own publish fails; the worker's sweeper (which runs later) gets through.
      if (failures === 0) {
        failures++;
        throw new Error("simulated crash between commit and publish");
      }
      return publish(batches);
    };
    try {
      const sent = await send(server.owner, "survives a lost publish");
      expect(sent.body.result).toBe("success");
      expect(failures).toBe(1);
      const event = await waitForEvent(member, queue, (e) => e.type === "message", { timeoutMs: 8000 });
      expect(event.message.id).toBe(sent.body.id);
      // The sweeper publishes before its delete commits: the event can arrive first.
      const outbox = server.running.services.db.prisma.eventOutbox;
      for (let i = 0; i < 100 && (await outbox.count()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await outbox.count()).toBe(0);
    } finally {
      changes.publish = publish;
    }
  });

  test("a rolled-back action publishes no event", async () => {
    const queue = (await member.post("/register", { event_types: ["realm_user"] })).body.queue_id;
    const res = await server.owner.post("/users", { email: "ev@example.com", password: "events-pass", full_name: "Dup", short_name: "d" });
    expect(res.body.result).toBe("error");
    await new Promise((r) => setTimeout(r, 200));
    expect(await drainEvents(member, queue)).toEqual([]);
  });
});

describe.each(MODES)("bounded event queues (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;

  beforeAll(async () => {
    // A heartbeat far off: a poll answered soon was answered because its queue went.
    server = await startTestServer(mode, { EVENT_HEARTBEAT_SECONDS: "30", EVENT_QUEUE_MAX_EVENTS: "10", EVENT_QUEUES_PER_USER: "2" });
    await server.owner.post("/users", { email: "bounded@example.com", password: "bounded-pass", full_name: "Bo Bounded", short_name: "bo" });
    const key = (await server.anonymous.post("/fetch_api_key", { username: "bounded@example.com", password: "bounded-pass" })).body.api_key;
    member = server.client("bounded@example.com", key);
  });
  afterAll(() => server.stop());

  const send = (content: string) => server.owner.post("/messages", { type: "stream", to: "general", topic: "bounded", content });

  test("a queue its client lets pass the event limit is dropped: its next poll is BAD_EVENT_QUEUE_ID, and registering again works", async () => {
    const queue = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
    for (let i = 0; i < 10; i++) await send(`filling ${i}`);
    // The fan-out appends after the send answers (on the tiers): wait, acknowledging nothing.
    await waitForEvent(member, queue, (e) => e.type === "message" && e.message.content.includes("filling 9"), { acknowledge: false });
    const full = await member.get("/events", { queue_id: queue, last_event_id: -1, dont_block: true });
    expect(full.body.events).toHaveLength(10);
    // Acknowledging (the next poll's last_event_id) frees room: ten more fit.
    expect((await member.get("/events", { queue_id: queue, last_event_id: 9, dont_block: true })).body.events).toEqual([]);
    for (let i = 0; i < 10; i++) await send(`after the acknowledgement ${i}`);
    await waitForEvent(member, queue, (e) => e.type === "message" && e.message.content.includes("acknowledgement 9"), { acknowledge: false });
    await send("one too many");
    await waitForGone(queue);
    const again = await member.post("/register", { event_types: ["message"] });
    await send("to the new queue");
    const event = await waitForEvent(member, again.body.queue_id, (e) => e.type === "message");
    expect(event.message.content).toContain("to the new queue");
  });

  test("a user's third queue evicts the least recently polled, and a poll held on it answers BAD_EVENT_QUEUE_ID at once", async () => {
    const first = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
    const held = member.get("/events", { queue_id: first, last_event_id: -1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
    const started = Date.now();
    const third = (await member.post("/register", { event_types: ["message"] })).body.queue_id;
    const res = await held;
    expect(res.body).toEqual({ result: "error", msg: `Bad event queue id: ${first}`, code: "BAD_EVENT_QUEUE_ID", queue_id: first });
    expect(Date.now() - started).toBeLessThan(10_000);
    for (const kept of [second, third]) expect((await member.get("/events", { queue_id: kept, dont_block: true })).body.result).toBe("success");
  });

  async function waitForGone(queue: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const res = await member.get("/events", { queue_id: queue, last_event_id: 9, dont_block: true });
      if (res.body.code === "BAD_EVENT_QUEUE_ID") return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`queue ${queue} was not dropped`);
  }
});
