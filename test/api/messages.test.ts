// The slice of messaging this foundation carries: POST /messages to a stream or privately, stored
// with a row per recipient and an outbox record in the same transaction.
import { bulkAddSubscriptions, createStream } from "@chat/core";
import { forEachEventRecipient, type EventRecipient } from "@chat/bus";
import { waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";

describe.each(MODES)("POST /messages (%s)", (mode) => {
  let server: TestServer;
  let alice: ApiClient;
  let aliceId: number;
  let bobId: number;
  let generalId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    for (const [email, name] of [["alice@example.com", "Alice A"], ["bob@example.com", "Bob B"]]) {
      await server.owner.post("/users", { email, password: "message-pass", full_name: name, short_name: name.split(" ")[0] });
    }
    const key = (await server.anonymous.post("/fetch_api_key", { username: "alice@example.com", password: "message-pass" })).body.api_key;
    alice = server.client("alice@example.com", key);
    aliceId = (await alice.get("/users/me")).body.user_id;
    bobId = (await server.owner.get("/users")).body.members.find((u: { email: string }) => u.email === "bob@example.com").user_id;
    generalId = (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name: "general" } })).id;
  });
  afterAll(() => server.stop());

  test("to a stream by name stores the message with a row for every subscriber", async () => {
    const res = await alice.post("/messages", { type: "stream", to: "general", topic: "greetings", content: "hello *all*" });
    // Alice starts the topic, which follows it for her (by default; topic-auto-follow.test.ts).
    expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number), automatic_new_visibility_policy: 3 });
    const { prisma } = server.running.services.db;
    const message = await prisma.message.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(message).toMatchObject({ sender_id: aliceId, subject: "greetings", content: "hello *all*", rendered_content: "<p>hello <em>all</em></p>" });
    const rows = await prisma.userMessage.findMany({ where: { message_id: res.body.id }, orderBy: { user_id: "asc" } });
    const subscribers = await prisma.subscription.findMany({ where: { recipient_id: message.recipient_id, active: true }, orderBy: { user_id: "asc" } });
    expect(rows.map((r) => r.user_id)).toEqual(subscribers.map((s) => s.user_id));
    expect(rows.find((r) => r.user_id === aliceId)!.flags & 1).toBe(1);
    expect(rows.find((r) => r.user_id === bobId)!.flags).toBe(0);
  });

  test("a sender not subscribed to a public stream gets a row too, once, marked read", async () => {
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "bob only" }], principals: ["bob@example.com"] });
    const res = await alice.post("/messages", { type: "stream", to: "bob only", topic: "t", content: "from outside" });
    expect(res.body.result).toBe("success");
    const rows = await server.running.services.db.prisma.userMessage.findMany({ where: { message_id: res.body.id }, orderBy: { user_id: "asc" } });
    expect(rows.map((r) => [r.user_id, r.flags & 1])).toEqual(
      [[aliceId, 1], [bobId, 0]].sort((a, b) => a[0] - b[0]),
    );
  });

  test("to a stream by id, and by the legacy JSON list form", async () => {
    for (const to of [generalId, JSON.stringify([generalId]), JSON.stringify(["general"])]) {
      const res = await alice.post("/messages", { type: "stream", to, topic: "by id", content: "x" });
      expect(res.body.result).toBe("success");
    }
  });

  test("an unknown stream name is STREAM_DOES_NOT_EXIST with stream", async () => {
    const res = await alice.post("/messages", { type: "stream", to: "nowhere", topic: "t", content: "x" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Stream 'nowhere' does not exist", code: "STREAM_DOES_NOT_EXIST", stream: "nowhere" });
  });

  test("an unknown stream id is STREAM_DOES_NOT_EXIST", async () => {
    const res = await alice.post("/messages", { type: "stream", to: 987654, topic: "t", content: "x" });
    expect(res.body).toMatchObject({ result: "error", code: "STREAM_DOES_NOT_EXIST", msg: "Stream with ID '987654' does not exist" });
  });

  test("a stream message needs a topic of at most 60 characters", async () => {
    expect((await alice.post("/messages", { type: "stream", to: "general", content: "x" })).body).toMatchObject({ result: "error", msg: "Missing topic" });
    const long = await alice.post("/messages", { type: "stream", to: "general", topic: "t".repeat(61), content: "x" });
    expect(long.body).toEqual({ result: "error", msg: "Topic too long (limit: 60 characters)", code: "BAD_REQUEST" });
    expect((await alice.post("/messages", { type: "stream", to: "general", topic: "t".repeat(60), content: "x" })).body.result).toBe("success");
    // Characters, not bytes: 60 emoji fit.
    expect((await alice.post("/messages", { type: "stream", to: "general", topic: "🐙".repeat(60), content: "x" })).body.result).toBe("success");
  });

  test("the subject parameter is accepted as the topic, as older clients send it", async () => {
    const res = await alice.post("/messages", { type: "stream", to: "general", subject: "legacy", content: "x" });
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored.subject).toBe("legacy");
  });

  test("content must be non-empty and at most 10000 bytes", async () => {
    expect((await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "   " })).body).toMatchObject({ msg: "Message must not be empty" });
    const tooLong = await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "é".repeat(5001) });
    expect(tooLong.body).toEqual({ result: "error", msg: "Message too long (limit: 10000 bytes)", code: "BAD_REQUEST" });
    expect((await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "é".repeat(5000) })).body.result).toBe("success");
  });

  test("privately to user ids or emails, the sender included in the conversation", async () => {
    const queue = (await server.owner.post("/register", { event_types: ["message"] })).body.queue_id;
    const ownerId = (await server.owner.get("/users/me")).body.user_id;
    const byId = await alice.post("/messages", { type: "private", to: [ownerId], content: "by id" });
    expect(byId.body.result).toBe("success");
    const event = await waitForEvent(server.owner, queue, (e) => e.type === "message");
    expect(event.message.type).toBe("private");
    expect(event.message.display_recipient.map((r: { id: number }) => r.id).sort()).toEqual([ownerId, aliceId].sort((a, b) => a - b));
    expect(event.flags).toEqual([]);
    const byEmail = await alice.post("/messages", { type: "private", to: ["owner@example.com"], content: "by email" });
    const { prisma } = server.running.services.db;
    const [a, b] = await Promise.all([byId.body.id, byEmail.body.id].map((id) => prisma.message.findUniqueOrThrow({ where: { id } })));
    expect(a.recipient_id).toBe(b.recipient_id);
  });

  test("a group conversation is one recipient whatever the order", async () => {
    const ownerId = (await server.owner.get("/users/me")).body.user_id;
    const first = await alice.post("/messages", { type: "private", to: [bobId, ownerId], content: "group 1" });
    const second = await alice.post("/messages", { type: "private", to: JSON.stringify(["owner@example.com", "bob@example.com"]), content: "group 2" });
    const { prisma } = server.running.services.db;
    const [a, b] = await Promise.all([first.body.id, second.body.id].map((id) => prisma.message.findUniqueOrThrow({ where: { id } })));
    expect(a.recipient_id).toBe(b.recipient_id);
    expect(await prisma.userMessage.count({ where: { message_id: a.id } })).toBe(3);
  });

  // Zulip 3.x's check_private_message_policy: with private messages disabled, only messages a bot
  // sends, and messages to one bot, go through.
  test("private_message_policy 2 refuses private messages but those of and to one bot", async () => {
    // Zulip 9.0's words: 3.x's policy 2 is direct_message_permission_group role:nobody.
    const DISABLED = "Direct messages are disabled in this organization.";
    const { prisma } = server.running.services.db;
    const ownerId = (await server.owner.get("/users/me")).body.user_id;
    const bot = await alice.post("/bots", { full_name: "Policy Bot", short_name: "policy", bot_type: 1 });
    expect(bot.body.result).toBe("success");
    const botClient = server.client("policy-bot@chat.test", bot.body.api_key);
    expect((await server.owner.patch("/realm", { private_message_policy: 2 })).body.result).toBe("success");
    try {
      const before = await prisma.message.count();
      for (const to of [[bobId], ["bob@example.com"], [bobId, ownerId], [bot.body.user_id, bobId]]) {
        const res = await alice.post("/messages", { type: "private", to, content: "psst" });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: DISABLED, code: "BAD_REQUEST" });
      }
      expect(await prisma.message.count()).toBe(before);
      // Unknown recipients are still named as such.
      expect((await alice.post("/messages", { type: "private", to: [987654], content: "x" })).body.msg).toBe("Invalid user ID 987654");
      expect((await alice.post("/messages", { type: "private", to: [bot.body.user_id], content: "to my bot" })).body.result).toBe("success");
      // As Zulip 9.0's check_can_send_direct_message: a message to oneself goes through too.
      expect((await alice.post("/messages", { type: "private", to: [aliceId], content: "note to self" })).body.result).toBe("success");
      expect((await botClient.post("/messages", { type: "private", to: [bobId], content: "from a bot" })).body.result).toBe("success");
      // The Notification Bot's private messages too (a bot): subscribing someone tells them.
      const subscribed = await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "policy news" }], principals: ["bob@example.com"] });
      expect(subscribed.body.result).toBe("success");
      const told = await prisma.message.findFirst({ where: { content: { contains: "just subscribed you to" } }, orderBy: { id: "desc" } });
      expect(told?.id).toBeGreaterThan(before);
      // Streams are unaffected.
      expect((await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "public" })).body.result).toBe("success");
    } finally {
      expect((await server.owner.patch("/realm", { private_message_policy: 1 })).body.result).toBe("success");
    }
    expect((await alice.post("/messages", { type: "private", to: [bobId], content: "allowed again" })).body.result).toBe("success");
  });

  test.each([
    [[987654], "Invalid user ID 987654"],
    [["ghost@example.com"], "Invalid email 'ghost@example.com'"],
    [[], "Message must have recipients"],
  ])("an invalid private recipient %j is BAD_REQUEST", async (to, msg) => {
    const res = await alice.post("/messages", { type: "private", to, content: "x" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
  });

  test("mixing ids and emails is refused", async () => {
    const res = await alice.post("/messages", { type: "private", to: [bobId, "bob@example.com"], content: "x" });
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Recipient lists may contain emails or user IDs, but not both." });
  });

  test("a private stream refuses non-subscribers", async () => {
    const { services } = server.running;
    const ownerId = (await server.owner.get("/users/me")).body.user_id;
    await services.actions.run(1, async (tx, events) => {
      const stream = await createStream(tx, events, 1, { name: "secret", inviteOnly: true });
      await bulkAddSubscriptions(tx, events, services.ctx, [stream], [ownerId]);
    });
    const res = await alice.post("/messages", { type: "stream", to: "secret", topic: "t", content: "x" });
    expect(res.body).toEqual({ result: "error", msg: "Not authorized to send to stream 'secret'", code: "BAD_REQUEST" });
    expect((await server.owner.post("/messages", { type: "stream", to: "secret", topic: "t", content: "member" })).body.result).toBe("success");
  });

  /** Points general's can_send_message_group at a system group (Zulip 10.0's stream_post_policy, feature level 333). */
  const postingGroup = async (name: string) => {
    const { prisma } = server.running.services.db;
    const general = await prisma.stream.findFirstOrThrow({ where: { name: "general" } });
    const group = await prisma.userGroup.findFirstOrThrow({ where: { realm_id: general.realm_id, name, is_system_group: true } });
    await prisma.stream.update({ where: { id: general.id }, data: { can_send_message_group_id: group.id } });
  };

  test("the admins-only posting policy refuses members", async () => {
    await postingGroup("role:administrators");
    try {
      const res = await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "x" });
      expect(res.body).toMatchObject({ result: "error", msg: "You do not have permission to post in this channel." });
      expect((await server.owner.post("/messages", { type: "stream", to: "general", topic: "t", content: "admin" })).body.result).toBe("success");
    } finally {
      await postingGroup("role:everyone");
    }
  });

  test("the new-members posting policy refuses members within the waiting period", async () => {
    const { prisma } = server.running.services.db;
    const joined = (await prisma.userProfile.findUniqueOrThrow({ where: { id: aliceId } })).date_joined;
    await postingGroup("role:fullmembers");
    expect((await server.owner.patch("/realm", { waiting_period_threshold: 10 })).body.result).toBe("success");
    try {
      const res = await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "too soon" });
      expect(res.body).toEqual({ result: "error", msg: "You do not have permission to post in this channel.", code: "BAD_REQUEST" });
      expect((await server.owner.post("/messages", { type: "stream", to: "general", topic: "t", content: "admin" })).body.result).toBe("success");
      await prisma.userProfile.update({ where: { id: aliceId }, data: { date_joined: new Date(Date.now() - 11 * 86_400_000) } });
      // role:fullmembers follows (as the worker's daily promotion, or a change of the waiting period, does).
      expect((await server.owner.patch("/realm", { waiting_period_threshold: 9 })).body.result).toBe("success");
      expect((await alice.post("/messages", { type: "stream", to: "general", topic: "t", content: "a full member now" })).body.result).toBe("success");
    } finally {
      await prisma.userProfile.update({ where: { id: aliceId }, data: { date_joined: joined } });
      await postingGroup("role:everyone");
      expect((await server.owner.patch("/realm", { waiting_period_threshold: 0 })).body.result).toBe("success");
    }
  });

  test("mandatory_topics refuses an empty topic; without it the message goes to the empty topic (feature level 334)", async () => {
    const empty = () => alice.post("/messages", { type: "stream", to: "general", topic: "  ", content: "no topic" });
    const plain = await empty();
    expect(plain.body.result).toBe("success");
    expect((await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: plain.body.id } })).subject).toBe("");
    expect((await server.owner.patch("/realm", { mandatory_topics: true })).body.result).toBe("success");
    try {
      expect((await empty()).body).toEqual({ result: "error", msg: "Topics are required in this organization", code: "BAD_REQUEST" });
    } finally {
      expect((await server.owner.patch("/realm", { mandatory_topics: false })).body.result).toBe("success");
    }
  });

  test("the client name comes from the User-Agent", async () => {
    const res = await alice.raw("post", "/messages").set("User-Agent", "ZulipPython/0.8.2 (Linux)").type("form").send({ type: "stream", to: "general", topic: "ua", content: "x" });
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored.sending_client).toBe("ZulipPython");
  });

  test("the outbox row is written and removed once published", async () => {
    await alice.post("/messages", { type: "stream", to: "general", topic: "outbox", content: "x" });
    const { prisma } = server.running.services.db;
    const deadline = Date.now() + 3000;
    while ((await prisma.eventOutbox.count()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await prisma.eventOutbox.count()).toBe(0);
  });

  test("concurrent sends share statements, yet each gets its own message, rows, flags and event", async () => {
    const bobKey = (await server.anonymous.post("/fetch_api_key", { username: "bob@example.com", password: "message-pass" })).body.api_key;
    const bob = server.client("bob@example.com", bobKey);
    const queue = (await bob.post("/register", { event_types: ["message"] })).body.queue_id;
    // Stream messages with and without a mention of Bob, and private messages to him, all at once.
    const kinds = Array.from({ length: 15 }, (_, i) => (["plain", "mention", "private"] as const)[i % 3]);
    const sends = kinds.map((kind, i) =>
      kind === "private"
        ? alice.post("/messages", { type: "private", to: JSON.stringify([bobId]), content: `together ${i}` })
        : alice.post("/messages", { type: "stream", to: "general", topic: "together", content: kind === "mention" ? `@**Bob B** together ${i}` : `together ${i}` }),
    );
    const responses = await Promise.all(sends);
    const ids = responses.map((res) => res.body.id as number);
    expect(responses.every((res) => res.body.result === "success")).toBe(true);
    expect(new Set(ids).size).toBe(kinds.length);

    const { prisma } = server.running.services.db;
    const messages = await prisma.message.findMany({ where: { id: { in: ids } } });
    const bobRows = await prisma.userMessage.findMany({ where: { message_id: { in: ids }, user_id: bobId } });
    const events: Array<Record<string, any>> = [];
    for (const [i, kind] of kinds.entries()) {
      const message = messages.find((m) => m.id === ids[i])!;
      expect(message.content).toBe(kind === "mention" ? `@**Bob B** together ${i}` : `together ${i}`);
      const flags = bobRows.find((r) => r.message_id === ids[i])!.flags;
      expect(flags & 8).toBe(kind === "mention" ? 8 : 0); // mentioned
      expect(flags & 2048).toBe(kind === "private" ? 2048 : 0); // is_private
      events.push(await waitForEvent(bob, queue, (e) => e.type === "message" && e.message.id === ids[i]));
    }
    for (const [i, kind] of kinds.entries()) {
      const event = events[i];
      expect(event.message.content).toContain(`together ${i}`);
      expect(event.message.type).toBe(kind === "private" ? "private" : "stream");
      expect(event.flags).toEqual(kind === "mention" ? ["mentioned"] : []);
    }
  });
  test("the outbox row holds exactly the events published (Postgres writes it, the server builds its copy)", async () => {
    const changes = server.running.services.bus.changes;
    const publish = changes.publish.bind(changes);
    const published: Array<{ id: string; events: unknown }> = [];
    changes.publish = async (batches) => {
      published.push(...batches);
      throw new Error("not published: the row stays for this test to read");
    };
    let rows: Array<{ id: bigint; events: unknown }>;
    try {
      const sent = await alice.post("/messages", { type: "stream", to: "general", topic: "outbox copy", content: "@**Bob B** \"quoted\" ünïcödé <b>" });
      expect(sent.body.result).toBe("success");
      const direct = await alice.post("/messages", { type: "private", to: JSON.stringify([bobId]), content: "a private one" });
      expect(direct.body.result).toBe("success");
      rows = await server.running.services.db.prisma.eventOutbox.findMany({ where: { id: { in: published.map((b) => BigInt(b.id)) } } });
    } finally {
      changes.publish = publish;
    }
    // The stream message's batch, the batch of the topic it follows for Alice (starting it) and
    // Bob (mentioned), and the private message's.
    expect(published).toHaveLength(3);
    expect(rows).toHaveLength(3);
    for (const batch of published) expect(rows.find((row) => String(row.id) === batch.id)!.events).toStrictEqual(batch.events);
    const [routed] = rows.find((row) => String(row.id) === published[0].id)!.events as Array<{ event: { message: { rendered_content: string; id: number } }; users: EventRecipient[] }>;
    expect(routed.event.message.rendered_content).toContain(`"quoted" ünïcödé &lt;b&gt;`);
    const recipients: Array<{ id: number; flags: string[] | null }> = [];
    forEachEventRecipient(routed.users, (id, flags) => recipients.push({ id, flags }));
    expect(recipients.find((u) => u.id === bobId)!.flags).toEqual(["mentioned"]);
    expect(recipients.find((u) => u.id === aliceId)!.flags).toEqual(["read"]);
    // Everyone else in general shares no flags: one group.
    expect(routed.users).toContainEqual({ flags: [], ids: expect.arrayContaining(recipients.filter((u) => u.id !== bobId && u.id !== aliceId).map((u) => u.id)) });
  });
});
