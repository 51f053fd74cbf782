// Zulip 10.0's archived channels: DELETE /streams/{id} archives (feature level 315) and what may be
// done in an archived channel (315, 360, 362), `stream delete` with stream_ids (343), the
// archived_channels capability in /register, GET /streams' exclude_archived, include_all and
// include_can_access_content (315, 356), is_recently_active (323), and the subscribe reply keyed by
// user id (289; by email for clients written before it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { refreshStreamRecentActivity } from "@chat/core";
import { drainEvents } from "../support/events.ts";
import { eventsUntil, registerQueue, sendStreamMessage } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const ARCHIVED_CHANNELS = { client_capabilities: JSON.stringify({ archived_channels: true }) };

describe.each(MODES)("archived channels (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let guest: TestUser;
  let count = 0;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    alice = await createTestUser(server, "Alice Member");
    bob = await createTestUser(server, "Bob Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
  });
  afterAll(() => server.stop());

  const prisma = () => server.running.services.db.prisma;
  const subscribe = (user: TestUser, names: string[], extra: Record<string, unknown> = {}) =>
    user.client.post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), ...extra });
  const streamId = async (name: string) => (await prisma().stream.findFirstOrThrow({ where: { name } })).id;
  /** A new stream `alice` (and `others`) are subscribed to, with a message in it; its id and the message's. */
  async function newStream(extra: Record<string, unknown> = {}, others: TestUser[] = [], prefix = "archive"): Promise<{ name: string; id: number; messageId: number }> {
    const name = `${prefix}-${count++}`;
    const res = await subscribe(admin, [name], { principals: [alice.id, ...others.map((u) => u.id)], ...extra });
    expect(res.body.result).toBe("success");
    const messageId = await sendStreamMessage(alice.client, name, "history", "kept for reference");
    return { name, id: await streamId(name), messageId };
  }
  const archive = (id: number, by: TestUser = admin) => by.client.delete(`/streams/${id}`);

  describe("DELETE /streams/{id} archives (feature level 315)", () => {
    test("the stream keeps its name, privacy and subscriptions; it leaves the default streams", async () => {
      const { name, id } = await newStream();
      expect((await admin.client.post("/default_streams", { stream_id: id })).body.result).toBe("success");
      expect((await archive(id)).body).toEqual({ result: "success", msg: "" });

      const row = await prisma().stream.findUniqueOrThrow({ where: { id } });
      expect(row).toMatchObject({ name, deactivated: true, invite_only: false });
      expect(await prisma().defaultStream.count({ where: { stream_id: id } })).toBe(0);
      const subscription = await prisma().subscription.findFirstOrThrow({ where: { user_id: alice.id, recipient_id: row.recipient_id! } });
      expect(subscription.active).toBe(true);

      // GET /streams/{id} and GET /users/me/subscriptions show it archived.
      expect((await alice.client.get(`/streams/${id}`)).body.stream).toMatchObject({ stream_id: id, name, is_archived: true });
      const subs = (await alice.client.get("/users/me/subscriptions")).body.subscriptions as Array<Record<string, unknown>>;
      expect(subs.find((s) => s.stream_id === id)).toMatchObject({ name, is_archived: true });
      expect(subs.find((s) => s.name === "general")).toMatchObject({ is_archived: false, is_recently_active: expect.any(Boolean) });
    });

    test("a second time: Channel is already deactivated; others than administrators are refused", async () => {
      const { id } = await newStream();
      // Organization administrators (and Zulip 10.0's channel administrators, the channel group settings' business).
      expect((await archive(id, alice)).body).toMatchObject({ result: "error" });
      expect((await prisma().stream.findUniqueOrThrow({ where: { id } })).deactivated).toBe(false);
      expect((await archive(id)).body.result).toBe("success");
      expect((await archive(id)).body).toEqual({ result: "error", msg: "Channel is already deactivated", code: "BAD_REQUEST" });
    });

    test("the name stays taken: neither a rename nor a new stream takes it", async () => {
      const { name, id } = await newStream();
      await archive(id);
      const other = await newStream();
      expect((await admin.client.patch(`/streams/${other.id}`, { new_name: name })).body).toMatchObject({ result: "error", msg: `Stream name '${name}' is already taken.` });
      // Subscribing by the name subscribes to the archived stream (feature level 362), creating nothing.
      expect((await subscribe(bob, [name])).body).toMatchObject({ result: "success", subscribed: { [String(bob.id)]: [name] } });
      expect(await prisma().stream.count({ where: { name } })).toBe(1);
    });

    test("an announcement channel stops being one, with its event", async () => {
      const { id } = await newStream();
      expect((await admin.client.patch("/realm", { signup_notifications_stream_id: id })).body.result).toBe("success");
      const queue = await registerQueue(bob.client, ["realm"], { fetch_event_types: JSON.stringify(["alert_words"]) });
      await archive(id);
      const events = await eventsUntil(bob.client, queue, (e) => e.type === "realm");
      expect(events.find((e) => e.type === "realm")).toMatchObject({ op: "update", property: "signup_notifications_stream_id", value: -1 });
      const realmId = (await prisma().stream.findUniqueOrThrow({ where: { id } })).realm_id;
      expect((await prisma().realm.findUniqueOrThrow({ where: { id: realmId } })).signup_notifications_stream_id).toBeNull();
    });
  });

  describe("stream delete events (feature level 343)", () => {
    test("everyone who could see the stream gets stream_ids beside the deprecated streams", async () => {
      const { id } = await newStream();
      const bobQueue = await registerQueue(bob.client, ["stream"]);
      const guestQueue = await registerQueue(guest.client, ["stream"]);
      await archive(id);
      const [event] = (await eventsUntil(bob.client, bobQueue, (e) => e.type === "stream")).filter((e) => e.type === "stream");
      expect(event).toMatchObject({ op: "delete", stream_ids: [id], streams: [expect.objectContaining({ stream_id: id, is_archived: true })] });
      // The guest never saw this public stream.
      await new Promise((r) => setTimeout(r, 300));
      expect((await drainEvents(guest.client, guestQueue)).filter((e) => e.type === "stream")).toEqual([]);
    });

    test("verify_action: a client without archived_channels loses the stream everywhere", async () => {
      const { id } = await newStream();
      const events = await verifyAction(alice.client, ["stream", "subscription"], () => archive(id));
      expect(events.map((e) => [e.type, e.op])).toContainEqual(["stream", "delete"]);
    });

    test("verify_action: an archived_channels client keeps it, archived, in streams and subscriptions", async () => {
      const { id } = await newStream();
      await verifyAction(alice.client, ["stream", "subscription"], () => archive(id), 5000, ARCHIVED_CHANNELS);
      // And never_subscribed: bob is not in it.
      const other = await newStream();
      await verifyAction(bob.client, ["stream", "subscription"], () => archive(other.id), 5000, ARCHIVED_CHANNELS);
    });
  });

  describe("/register and the archived_channels capability (feature levels 315, 362)", () => {
    test("only clients that declare it get archived streams, in streams and every subscription list", async () => {
      const mine = await newStream();
      const left = await newStream({}, [bob]);
      const notMine = await newStream();
      await alice.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify([left.name]) });
      for (const s of [mine, left, notMine]) await archive(s.id);
      await alice.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify([notMine.name]) });

      const ids = (list: unknown) => (list as Array<{ stream_id: number }>).map((s) => s.stream_id);
      const plain = (await alice.client.post("/register", { fetch_event_types: JSON.stringify(["stream", "subscription"]) })).body;
      for (const key of ["streams", "subscriptions", "unsubscribed", "never_subscribed"]) {
        expect(ids(plain[key])).not.toEqual(expect.arrayContaining([mine.id]));
        for (const s of [mine, left, notMine]) expect(ids(plain[key])).not.toContain(s.id);
      }

      const capable = (await alice.client.post("/register", { fetch_event_types: JSON.stringify(["stream", "subscription"]), ...ARCHIVED_CHANNELS })).body;
      expect(ids(capable.streams)).toEqual(expect.arrayContaining([mine.id, left.id, notMine.id]));
      expect(capable.streams.find((s: any) => s.stream_id === mine.id)).toMatchObject({ is_archived: true });
      expect(ids(capable.subscriptions)).toContain(mine.id);
      expect(ids(capable.unsubscribed)).toEqual(expect.arrayContaining([left.id, notMine.id]));
      expect(capable.subscriptions.find((s: any) => s.stream_id === mine.id)).toMatchObject({ is_archived: true });

      // never_subscribed: bob never was in `mine`.
      const bobs = (await bob.client.post("/register", { fetch_event_types: JSON.stringify(["subscription"]), ...ARCHIVED_CHANNELS })).body;
      expect(bobs.never_subscribed.find((s: any) => s.stream_id === mine.id)).toMatchObject({ is_archived: true });
      const bobsPlain = (await bob.client.post("/register", { fetch_event_types: JSON.stringify(["subscription"]) })).body;
      expect(ids(bobsPlain.never_subscribed)).not.toContain(mine.id);
    });
  });

  describe("GET /streams (feature levels 315, 356)", () => {
    test("exclude_archived (default true), include_all for everyone, include_all_active its old name, include_can_access_content", async () => {
      const archivedOne = await newStream();
      await archive(archivedOne.id);
      const secret = await newStream({ invite_only: true });
      const open = await newStream();
      const ids = async (user: TestUser, params: Record<string, unknown>) => {
        const res = await user.client.get("/streams", params);
        expect(res.body.result).toBe("success");
        return (res.body.streams as Array<{ stream_id: number; is_archived: boolean }>).map((s) => s.stream_id);
      };
      expect(await ids(bob, {})).not.toContain(archivedOne.id);
      expect(await ids(bob, { exclude_archived: false })).toContain(archivedOne.id);
      // include_all: what the user can see (no longer administrators only).
      expect(await ids(bob, { include_all: true, include_public: false, include_subscribed: false })).toEqual(expect.arrayContaining([await streamId("general")]));
      expect(await ids(bob, { include_all: true })).not.toContain(secret.id);
      expect(await ids(bob, { include_all_active: true })).not.toContain(secret.id);
      expect(await ids(admin, { include_all: true, include_public: false, include_subscribed: false })).toContain(secret.id);
      expect(await ids(admin, { include_all_active: true, include_public: false, include_subscribed: false })).toContain(secret.id);
      expect(await ids(admin, { include_all: true, exclude_archived: false })).toContain(archivedOne.id);
      // Content access: not a private stream one is not in, even for an administrator.
      expect(await ids(admin, { include_can_access_content: true, include_public: false, include_subscribed: false })).not.toContain(secret.id);
      expect(await ids(alice, { include_can_access_content: true, include_public: false, include_subscribed: false })).toEqual(expect.arrayContaining([secret.id, await streamId("general")]));
      expect(await ids(bob, { include_can_access_content: true, include_public: false, include_subscribed: false })).toContain(open.id);
      expect(await ids(guest, { include_can_access_content: true, include_public: false, include_subscribed: false })).not.toContain(open.id);
      const bad = await bob.client.get("/streams", { exclude_archived: "maybe" });
      expect(bad.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    });
  });

  describe("what may be done in an archived channel", () => {
    test("sending is refused with Zulip's error, by name or id", async () => {
      const { name, id } = await newStream();
      await archive(id);
      const byName = await alice.client.post("/messages", { type: "stream", to: name, topic: "t", content: "late" });
      expect(byName.body).toEqual({ result: "error", msg: `Not authorized to send to channel '${name}'`, code: "BAD_REQUEST" });
      const byId = await alice.client.post("/messages", { type: "stream", to: JSON.stringify(id), topic: "t", content: "late" });
      expect(byId.body.msg).toBe(`Not authorized to send to channel '${name}'`);
    });

    test("its history stays readable (feature level 360): GET /messages/{id}, a stream narrow, read receipts", async () => {
      const { id, messageId } = await newStream();
      await archive(id);
      // Bob never was subscribed: he reads it as public history.
      const one = await bob.client.get(`/messages/${messageId}`);
      expect(one.body).toMatchObject({ result: "success", message: { id: messageId, content: expect.stringContaining("kept for reference") } });
      const page = await bob.client.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: id }]) });
      expect(page.body.result).toBe("success");
      expect(page.body.messages.map((m: { id: number }) => m.id)).toContain(messageId);
      expect((await alice.client.get(`/messages/${messageId}/read_receipts`)).body.result).toBe("success");
      // Guests are not given public history.
      expect((await guest.client.get(`/messages/${messageId}`)).body).toMatchObject({ result: "error" });
    });

    test("subscribing and unsubscribing (feature level 362) and a change of privacy are allowed", async () => {
      const { name, id } = await newStream();
      await archive(id);
      expect((await subscribe(bob, [name])).body).toMatchObject({ result: "success", subscribed: { [String(bob.id)]: [name] } });
      expect((await bob.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify([name]) })).body).toMatchObject({ result: "success", removed: [name] });
      expect((await admin.client.patch(`/streams/${id}`, { is_private: true })).body.result).toBe("success");
      expect((await prisma().stream.findUniqueOrThrow({ where: { id } })).invite_only).toBe(true);
    });

    test("subscribing to one: an archived_channels client hears of it, another nothing (as its /register)", async () => {
      // Last by name, where the add event puts it in the state (subscriptions are listed by name).
      const { name, id } = await newStream({}, [], "zz-archive");
      await archive(id);
      const plainQueue = await registerQueue(bob.client, ["subscription", "stream"]);
      const events = await verifyAction(bob.client, ["subscription", "stream"], () => subscribe(bob, [name]), 5000, { ...ARCHIVED_CHANNELS, include_subscribers: true });
      expect(events).toContainEqual(expect.objectContaining({ type: "subscription", op: "add", subscriptions: [expect.objectContaining({ stream_id: id, is_archived: true })] }));
      await sendStreamMessage(admin.client, "general", "marker", "after");
      await new Promise((r) => setTimeout(r, 300));
      expect((await drainEvents(bob.client, plainQueue)).filter((e) => e.type === "subscription" || e.type === "stream")).toEqual([]);
    });
  });

  describe("the subscribe reply names users by id (feature level 289)", () => {
    test("by id for today's clients, by email for the Python library and the clients built on it", async () => {
      const name = `keyed-${count++}`;
      const res = await subscribe(alice, [name], { principals: JSON.stringify([bob.id]) });
      expect(res.body).toMatchObject({ subscribed: { [String(bob.id)]: [name] }, already_subscribed: {} });
      const again = await alice.client.raw("post", "/users/me/subscriptions").set("User-Agent", "ZulipPython/0.7.1 (Debian GNU/Linux; 12)").type("form").send({ subscriptions: JSON.stringify([{ name }]), principals: JSON.stringify([bob.email, alice.email]) });
      expect(again.body).toMatchObject({ result: "success", subscribed: { [alice.email]: [name] }, already_subscribed: { [bob.email]: [name] } });
      const patched = await alice.client.raw("patch", "/users/me/subscriptions").set("User-Agent", "ZulipTerminal/0.7.0").type("form").send({ add: JSON.stringify([{ name: `keyed-${count++}` }]) });
      expect(Object.keys(patched.body.subscribed)).toEqual([alice.email]);
    });
  });

  describe("is_recently_active (feature level 323)", () => {
    test("the worker marks a stream without messages for 180 days inactive, and active again after one, with events", async () => {
      const { id } = await newStream();
      const recipientId = (await prisma().stream.findUniqueOrThrow({ where: { id } })).recipient_id!;
      expect((await alice.client.get(`/streams/${id}`)).body.stream.is_recently_active).toBe(true);
      await prisma().message.updateMany({ where: { recipient_id: recipientId }, data: { date_sent: new Date(Date.now() - 200 * 24 * 60 * 60 * 1000) } });
      // Sending set first_message_id, which the nodes' copies of the streams do not follow (message-delete.ts): read them again.
      await prisma().$executeRaw`UPDATE realm SET stream_generation = stream_generation + 1`;

      const events = await verifyAction(bob.client, ["stream"], () => refreshStreamRecentActivity(prisma(), server.running.services.actions));
      expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", stream_id: id, property: "is_recently_active", value: false }));
      expect((await alice.client.get(`/streams/${id}`)).body.stream.is_recently_active).toBe(false);
      // Nothing left to change.
      expect(await refreshStreamRecentActivity(prisma(), server.running.services.actions)).toBe(0);

      await sendStreamMessage(alice.client, (await prisma().stream.findUniqueOrThrow({ where: { id } })).name, "back", "again");
      expect(await refreshStreamRecentActivity(prisma(), server.running.services.actions)).toBe(1);
      expect((await bob.client.get("/streams")).body.streams.find((s: { stream_id: number }) => s.stream_id === id)).toMatchObject({ is_recently_active: true });
    });
  });

  describe("migration 0046", () => {
    test("streams deactivated before get their name back where it is free", async () => {
      const sql = readFileSync(join(__dirname, "../../prisma/migrations/0046_archived_channels/migration.sql"), "utf8");
      const rename = sql.slice(0, sql.indexOf("ALTER TABLE"));
      const free = await newStream();
      const taken = await newStream();
      const realmId = (await prisma().stream.findUniqueOrThrow({ where: { id: free.id } })).realm_id;
      await prisma().stream.update({ where: { id: free.id }, data: { deactivated: true, name: `!DEACTIVATED:${free.id}:${free.name}` } });
      await prisma().stream.update({ where: { id: taken.id }, data: { deactivated: true, name: `!DEACTIVATED:${taken.id}:${taken.name}` } });
      // Someone made a new stream with the old name since.
      const reused = await prisma().stream.create({ data: { realm_id: realmId, name: taken.name, email_token: "x".repeat(32) } });
      await prisma().$executeRawUnsafe(rename);
      expect((await prisma().stream.findUniqueOrThrow({ where: { id: free.id } })).name).toBe(free.name);
      expect((await prisma().stream.findUniqueOrThrow({ where: { id: taken.id } })).name).toBe(`!DEACTIVATED:${taken.id}:${taken.name}`);
      await prisma().stream.delete({ where: { id: reused.id } });
    });
  });
});
