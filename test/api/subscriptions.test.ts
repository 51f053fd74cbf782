import { applyEvents } from "@chat/core";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("subscriptions (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let guest: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    alice = await createTestUser(server, "Alice Member");
    bob = await createTestUser(server, "Bob Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
  });
  afterAll(() => server.stop());

  const subscribe = (user: TestUser, names: string[], extra: Record<string, unknown> = {}) =>
    user.client.post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), ...extra });
  const streamId = async (name: string) => (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name } })).id;

  describe("GET /users/me/subscriptions", () => {
    test("lists the user's streams with their properties", async () => {
      const res = await alice.client.get("/users/me/subscriptions");
      expect(res.body.result).toBe("success");
      expect(res.body.subscriptions).toHaveLength(1);
      expect(res.body.subscriptions[0]).toMatchObject({
        name: "general",
        stream_id: expect.any(Number),
        invite_only: false,
        is_muted: false,
        in_home_view: true,
        pin_to_top: false,
        color: expect.stringMatching(/^#[0-9a-f]{6}$/),
        desktop_notifications: null,
        email_address: expect.stringMatching(/^general\+[0-9a-f]+@chat\.test$/),
        stream_weekly_traffic: null,
        stream_post_policy: 1,
        is_announcement_only: false,
        history_public_to_subscribers: true,
      });
      expect(res.body.subscriptions[0]).not.toHaveProperty("subscribers");
    });

    test("include_subscribers lists subscribers' emails", async () => {
      const res = await alice.client.get("/users/me/subscriptions", { include_subscribers: true });
      expect(res.body.subscriptions[0].subscribers).toEqual(expect.arrayContaining([alice.email, bob.email, "owner@example.com"]));
    });
  });

  describe("POST /users/me/subscriptions", () => {
    test("creates a missing stream, subscribes, and tells each user what they need to know", async () => {
      const aliceQueue = (await alice.client.post("/register", { event_types: ["subscription", "stream"] })).body.queue_id;
      const bobQueue = (await bob.client.post("/register", { event_types: ["subscription", "stream"] })).body.queue_id;
      const guestQueue = (await guest.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      const res = await subscribe(alice, ["design"], { subscriptions: [{ name: "design", description: "All things *design*" }] });
      expect(res.body).toEqual({ result: "success", msg: "", subscribed: { [String(alice.id)]: ["design"] }, already_subscribed: {} });

      const created = await waitForEvent(bob.client, bobQueue, (e) => e.type === "stream" && e.op === "create");
      expect(created.streams[0]).toMatchObject({ name: "design", description: "All things *design*", rendered_description: "<p>All things <em>design</em></p>", invite_only: false });
      const add = await waitForEvent(alice.client, aliceQueue, (e) => e.type === "subscription" && e.op === "add");
      expect(add.subscriptions[0]).toMatchObject({ name: "design", subscribers: [alice.id] });
      // Clients without notification_settings_null get the inherited values, never null.
      expect(typeof add.subscriptions[0].desktop_notifications).toBe("boolean");
      const peer = await waitForEvent(bob.client, bobQueue, (e) => e.type === "subscription" && e.op === "peer_add", { acknowledge: false });
      expect(peer).toMatchObject({ stream_id: await streamId("design"), user_id: alice.id });
      expect((await drainEvents(bob.client, bobQueue)).filter((e) => e.op === "add")).toEqual([]);
      // Guests do not see public streams they are not in.
      expect((await drainEvents(guest.client, guestQueue)).filter((e) => e.op === "create")).toEqual([]);

      const again = await subscribe(alice, ["DESIGN"]);
      expect(again.body).toMatchObject({ subscribed: {}, already_subscribed: { [String(alice.id)]: ["design"] } });
    });

    test("private streams: created invisible to others; others cannot join unless subscribed by a member", async () => {
      const bobQueue = (await bob.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      const res = await subscribe(alice, ["secret-plans"], { invite_only: true });
      expect(res.body.subscribed).toEqual({ [String(alice.id)]: ["secret-plans"] });
      const stream = await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name: "secret-plans" } });
      expect(stream).toMatchObject({ invite_only: true, history_public_to_subscribers: false });
      expect((await drainEvents(bob.client, bobQueue)).filter((e) => e.streams?.[0]?.name === "secret-plans")).toEqual([]);

      const fatal = await subscribe(bob, ["secret-plans"]);
      expect(fatal.body).toEqual({ result: "error", msg: "Unable to access stream (secret-plans).", code: "BAD_REQUEST" });
      const lenient = await subscribe(bob, ["secret-plans", "general"], { authorization_errors_fatal: false });
      expect(lenient.body).toMatchObject({ result: "success", unauthorized: ["secret-plans"], already_subscribed: { [String(bob.id)]: ["general"] } });
      // Administrators are no exception: a private stream's content belongs to its subscribers.
      expect((await subscribe(admin, ["secret-plans"])).body.msg).toBe("Unable to access stream (secret-plans).");

      const bobPms = (await bob.client.post("/register", { event_types: ["message"] })).body.queue_id;
      const invited = await subscribe(alice, ["secret-plans"], { principals: [bob.email] });
      expect(invited.body.subscribed).toEqual({ [String(bob.id)]: ["secret-plans"] });
      const note = await waitForEvent(bob.client, bobPms, (e) => e.type === "message");
      expect(note.message).toMatchObject({ type: "private", sender_full_name: "Notification Bot" });
      expect(note.message.content).toContain("just subscribed you to the stream #**secret-plans**");
    });

    test("principals may be user ids; an unknown or deactivated principal is refused with 400 (feature level 208)", async () => {
      const res = await subscribe(admin, ["general", "design"], { principals: [guest.id] });
      expect(res.body.result).toBe("success");
      expect(res.body.subscribed[String(guest.id)]).toEqual(["design"]);
      const unknown = await subscribe(admin, ["general"], { principals: ["nobody@example.com"] });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "No such user" });
      const byId = await subscribe(admin, ["general"], { principals: [999999] });
      expect(byId.body).toEqual({ result: "error", code: "BAD_REQUEST", msg: "No such user" });
    });

    test("announce posts the new stream in the notifications stream", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["message"], apply_markdown: false })).body.queue_id;
      expect((await subscribe(alice, ["announced"], { announce: true })).body.result).toBe("success");
      const event = await waitForEvent(bob.client, queue, (e) => e.type === "message" && e.message.subject === "new streams");
      expect(event.message).toMatchObject({ display_recipient: "general", sender_full_name: "Notification Bot", content: `@_**Alice Member|${alice.id}** created a new stream #**announced**.` });
    });

    test("rejects bad input", async () => {
      expect((await alice.client.post("/users/me/subscriptions", {})).body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "subscriptions" });
      expect((await alice.client.post("/users/me/subscriptions", { subscriptions: ["general"] })).body.msg).toBe("subscriptions[0] is not a dict");
      expect((await alice.client.post("/users/me/subscriptions", { subscriptions: [{ nome: "x" }] })).body.msg).toBe("subscriptions[0] key is missing: name");
      expect((await subscribe(alice, ["   "])).body.msg).toBe("Stream name can't be empty!");
      expect((await subscribe(alice, ["x".repeat(61)])).body.msg).toBe("Stream name too long (limit: 60 characters).");
      expect((await subscribe(alice, ["new-one"], { stream_post_policy: 7 })).body.msg).toBe("Invalid stream_post_policy");
      expect(await server.running.services.db.prisma.stream.count({ where: { name: "new-one" } })).toBe(0);
    });
  });

  describe("who may do what (the role matrix)", () => {
    test.each([
      ["owner", true],
      ["admin", true],
      ["member", true],
      ["guest", false],
    ] as const)("a %s may create streams: %s", async (role, allowed) => {
      const user = role === "owner" ? { client: server.owner } : role === "admin" ? admin : role === "member" ? alice : guest;
      const res = await user.client.post("/users/me/subscriptions", { subscriptions: [{ name: `made-by-${role}` }] });
      if (allowed) expect(res.body.result).toBe("success");
      else expect(res.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    });

    test.each([
      ["admin", true],
      ["member", true],
      ["guest", false],
    ] as const)("a %s may subscribe others: %s", async (role, allowed) => {
      const user = role === "admin" ? admin : role === "member" ? alice : guest;
      const res = await user.client.post("/users/me/subscriptions", { subscriptions: [{ name: "general" }], principals: [bob.email] });
      if (allowed) expect(res.body.result).toBe("success");
      else expect(res.body.msg).toBe("You can't subscribe other users to streams.");
    });

    test("realm policies restrict members: admins-only stream creation and invitations", async () => {
      const { prisma } = server.running.services.db;
      // Through PATCH /realm: 3.x's create_stream_policy sets Zulip 9.0's can_create_*_channel_group.
      expect((await server.owner.patch("/realm", { create_stream_policy: 2, invite_to_stream_policy: 2 })).body.result).toBe("success");
      try {
        expect((await subscribe(alice, ["members-cannot"])).body.msg).toBe("Insufficient permission");
        expect((await subscribe(alice, ["general"], { principals: [bob.email] })).body.msg).toBe("You can't subscribe other users to streams.");
        expect((await subscribe(admin, ["admins-can"], { principals: [bob.email] })).body.result).toBe("success");
      } finally {
        expect((await server.owner.patch("/realm", { create_stream_policy: 1, invite_to_stream_policy: 1 })).body.result).toBe("success");
      }
    });

    test("a guest cannot join a public stream on their own, but can be added by a member", async () => {
      expect((await subscribe(guest, ["announced"])).body.msg).toBe("Unable to access stream (announced).");
      expect((await subscribe(alice, ["announced"], { principals: [guest.email] })).body.subscribed).toEqual({ [String(guest.id)]: ["announced"] });
    });

    test("only administrators may unsubscribe others (the streams' can_remove_subscribers_group)", async () => {
      const res = await alice.client.delete("/users/me/subscriptions", { subscriptions: ["general"], principals: [bob.email] });
      expect(res.body.msg).toBe("Insufficient permission");
      const ok = await admin.client.delete("/users/me/subscriptions", { subscriptions: ["announced"], principals: [guest.email] });
      expect(ok.body).toMatchObject({ result: "success", removed: ["announced"], not_removed: [] });
    });
  });

  describe("DELETE and PATCH /users/me/subscriptions", () => {
    test("unsubscribing sends remove to the user and peer_remove to others", async () => {
      await subscribe(alice, ["leaving"]);
      await subscribe(bob, ["leaving"]);
      const aliceQueue = (await alice.client.post("/register", { event_types: ["subscription"] })).body.queue_id;
      const bobQueue = (await bob.client.post("/register", { event_types: ["subscription"] })).body.queue_id;
      const res = await alice.client.delete("/users/me/subscriptions", { subscriptions: ["leaving", "design"] });
      expect(res.body).toEqual({ result: "success", msg: "", removed: ["leaving", "design"], not_removed: [] });
      const removed = await waitForEvent(alice.client, aliceQueue, (e) => e.op === "remove");
      expect(removed.subscriptions).toEqual([{ stream_id: await streamId("leaving"), name: "leaving" }]);
      const peer = await waitForEvent(bob.client, bobQueue, (e) => e.op === "peer_remove" && e.user_id === alice.id);
      expect(peer.stream_id).toBe(await streamId("leaving"));
      const again = await alice.client.delete("/users/me/subscriptions", { subscriptions: ["leaving"] });
      expect(again.body).toMatchObject({ removed: [], not_removed: ["leaving"] });
    });

    test("the last subscriber leaving a private stream deactivates it, as Zulip", async () => {
      await subscribe(bob, ["solo-private"], { invite_only: true });
      const id = await streamId("solo-private");
      const queue = (await bob.client.post("/register", { event_types: ["stream", "subscription"] })).body.queue_id;
      await bob.client.delete("/users/me/subscriptions", { subscriptions: ["solo-private"] });
      const deleted = await waitForEvent(bob.client, queue, (e) => e.type === "stream" && e.op === "delete");
      expect(deleted.streams.map((s: { stream_id: number }) => s.stream_id)).toEqual([id]);
      // Nobody could reach it again: it is gone, and its name is free.
      expect((await bob.client.get("/get_stream_id", { stream: "solo-private" })).body.msg).toBe("Invalid stream name 'solo-private'");
      expect((await server.owner.get("/streams", { include_all_active: true })).body.streams.map((s: { stream_id: number }) => s.stream_id)).not.toContain(id);
    });

    test("the last subscriber leaving a public stream vacates it for the organization; it leaves the listed streams", async () => {
      await subscribe(alice, ["vacated"]);
      const id = await streamId("vacated");
      const events = await verifyAction(bob.client, ["stream"], () => alice.client.delete("/users/me/subscriptions", { subscriptions: ["vacated"] }));
      expect(events).toEqual([{ id: expect.any(Number), type: "stream", op: "vacate", streams: [expect.objectContaining({ stream_id: id, name: "vacated" })] }]);
      expect((await bob.client.get("/streams")).body.streams.map((s: { stream_id: number }) => s.stream_id)).not.toContain(id);
      // Still a stream: anyone may join it again, which occupies it.
      const occupied = await verifyAction(bob.client, ["stream"], () => subscribe(alice, ["vacated"]));
      expect(occupied).toEqual([{ id: expect.any(Number), type: "stream", op: "occupy", streams: [expect.objectContaining({ stream_id: id })] }]);
    });

    test("a public stream that had no subscribers is occupied by the next one", async () => {
      await subscribe(alice, ["emptied"]);
      await alice.client.delete("/users/me/subscriptions", { subscriptions: ["emptied"] });
      const queue = (await bob.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      await subscribe(alice, ["emptied"]);
      const occupy = await waitForEvent(bob.client, queue, (e) => e.type === "stream" && e.op === "occupy");
      expect(occupy.streams[0].name).toBe("emptied");
    });

    test("a stream created by subscribing is announced by `create`, not `occupy`", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      await subscribe(alice, ["brand-new"]);
      const created = await waitForEvent(bob.client, queue, (e) => e.type === "stream" && e.op === "create");
      expect(created.streams[0].name).toBe("brand-new");
      await subscribe(alice, ["after-new"]);
      await waitForEvent(bob.client, queue, (e) => e.type === "stream" && e.op === "create" && e.streams[0].name === "after-new", { acknowledge: false });
      const all = await drainEvents(bob.client, queue);
      expect(all.filter((e) => e.op === "occupy")).toEqual([]);
    });

    test("an unknown stream is STREAM_DOES_NOT_EXIST", async () => {
      const res = await alice.client.delete("/users/me/subscriptions", { subscriptions: ["no-such-stream"] });
      expect(res.body).toEqual({ result: "error", msg: "Stream 'no-such-stream' does not exist", code: "STREAM_DOES_NOT_EXIST", stream: "no-such-stream" });
      // A private stream one cannot see does not exist either.
      expect((await bob.client.delete("/users/me/subscriptions", { subscriptions: ["secret-plans-x"] })).body.code).toBe("STREAM_DOES_NOT_EXIST");
    });

    test("a color asked for is the new subscription's color, in the response's state and the add event", async () => {
      const queue = (await alice.client.post("/register", { event_types: ["subscription"] })).body.queue_id;
      const res = await alice.client.patch("/users/me/subscriptions", { add: [{ name: "colored", color: "#AA00ff" }] });
      expect(res.body).toMatchObject({ result: "success", subscribed: { [String(alice.id)]: ["colored"] } });
      const added = await waitForEvent(alice.client, queue, (e) => e.op === "add");
      expect(added.subscriptions[0]).toMatchObject({ name: "colored", color: "#AA00ff" });
      const listed = (await alice.client.get("/users/me/subscriptions")).body.subscriptions;
      expect(listed.find((s: { name: string }) => s.name === "colored").color).toBe("#AA00ff");
      // POST takes it too, for an existing stream.
      await bob.client.post("/users/me/subscriptions", { subscriptions: [{ name: "colored", color: "#123" }] });
      expect((await bob.client.get("/users/me/subscriptions")).body.subscriptions.find((s: { name: string }) => s.name === "colored").color).toBe("#123");
    });

    test("a color that is not a hex color code is refused and subscribes nobody", async () => {
      const res = await alice.client.patch("/users/me/subscriptions", { add: [{ name: "badly-colored", color: "red" }] });
      expect(res.body).toEqual({ result: "error", msg: 'subscriptions[0]["color"] is not a valid hex color code', code: "BAD_REQUEST" });
      expect(await server.running.services.db.prisma.stream.findFirst({ where: { name: "badly-colored" } })).toBeNull();
    });

    test("PATCH adds and deletes in one request", async () => {
      const res = await alice.client.patch("/users/me/subscriptions", { add: [{ name: "patched" }], delete: ["announced"] });
      expect(res.body).toEqual({ result: "success", msg: "", subscribed: { [String(alice.id)]: ["patched"] }, already_subscribed: {}, removed: ["announced"], not_removed: [] });
      expect((await alice.client.patch("/users/me/subscriptions", {})).body.result).toBe("error");
    });
  });

  describe("POST /users/me/subscriptions/properties", () => {
    test("sets properties, echoes them, and sends subscription update", async () => {
      const id = await streamId("general");
      const queue = (await alice.client.post("/register", { event_types: ["subscription"] })).body.queue_id;
      const data = [
        { stream_id: id, property: "color", value: "#ff0000" },
        { stream_id: id, property: "pin_to_top", value: true },
        { stream_id: id, property: "desktop_notifications", value: false },
        { stream_id: id, property: "in_home_view", value: false },
      ];
      const res = await alice.client.post("/users/me/subscriptions/properties", { subscription_data: data });
      expect(res.body).toEqual({ result: "success", msg: "", subscription_data: data });
      const sub = (await alice.client.get("/users/me/subscriptions")).body.subscriptions.find((s: { name: string }) => s.name === "general");
      expect(sub).toMatchObject({ color: "#ff0000", pin_to_top: true, desktop_notifications: false, is_muted: true, in_home_view: false });
      const event = await waitForEvent(alice.client, queue, (e) => e.op === "update" && e.property === "color");
      expect(event).toMatchObject({ type: "subscription", stream_id: id, name: "general", value: "#ff0000" });
      await waitForEvent(alice.client, queue, (e) => e.op === "update" && e.property === "is_muted" && e.value === true);
    });

    test.each([
      [[{ stream_id: 1, property: "volume", value: 11 }], "Unknown subscription property: volume"],
      [[{ stream_id: 1, property: "pin_to_top", value: "yes" }], "pin_to_top is not a boolean"],
      [[{ stream_id: 1, property: "color", value: "red" }], "color is not a valid hex color code"],
      [[{ stream_id: 987654, property: "pin_to_top", value: true }], "Invalid stream id"],
    ])("refuses %j", async (data, msg) => {
      const res = await alice.client.post("/users/me/subscriptions/properties", { subscription_data: data });
      expect(res.body).toMatchObject({ result: "error", msg });
    });

    test("a stream one is not subscribed to is refused", async () => {
      // A stream the guest cannot even see does not exist for them.
      const res = await guest.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: await streamId("patched"), property: "pin_to_top", value: true }] });
      expect(res.body.msg).toBe("Invalid stream id");
      const bobRes = await bob.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: await streamId("design"), property: "pin_to_top", value: true }] });
      expect(bobRes.body.msg).toBe(`Not subscribed to stream id ${await streamId("design")}`);
    });
  });

  test("/register gives null notification settings only to clients that declare notification_settings_null", async () => {
    const modern = await alice.client.post("/register", { event_types: ["subscription"], client_capabilities: { notification_settings_null: true } });
    const legacy = await alice.client.post("/register", { event_types: ["subscription"] });
    const general = (state: Record<string, any>) => (state.subscriptions as Array<Record<string, unknown>>).find((s) => s.name === "general")!;
    expect(general(modern.body).audible_notifications).toBeNull();
    expect(general(legacy.body).audible_notifications).toBe(false);
    expect(general(legacy.body).wildcard_mentions_notify).toBe(true);
  });

  describe("muted topics", () => {
    test("add, remove, and both errors, with the muted_topics event", async () => {
      const queue = (await alice.client.post("/register", { event_types: ["muted_topics"] })).body.queue_id;
      const add = await alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "lunch", op: "add" });
      expect(add.body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(alice.client, queue, (e) => e.type === "muted_topics");
      expect(event.muted_topics).toEqual([["general", "lunch", expect.any(Number)]]);
      const dup = await alice.client.patch("/users/me/subscriptions/muted_topics", { stream_id: await streamId("general"), topic: "LUNCH", op: "add" });
      expect(dup.body).toEqual({ result: "error", msg: "Topic already muted", code: "BAD_REQUEST" });
      expect((await alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "lunch", op: "remove" })).body.result).toBe("success");
      const missing = await alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "lunch", op: "remove" });
      expect(missing.body).toEqual({ result: "error", msg: "Topic is not muted", code: "BAD_REQUEST" });
      // The topic need not have messages; bob's mutes are his own.
      expect((await bob.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "never used", op: "add" })).body.result).toBe("success");
      expect((await drainEvents(alice.client, queue, event.id)).filter((e) => e.muted_topics?.some((m: string[]) => m[1] === "never used"))).toEqual([]);
    });

    test("stream or stream_id, exactly one", async () => {
      expect((await alice.client.patch("/users/me/subscriptions/muted_topics", { topic: "t", op: "add" })).body.msg).toBe("Please supply 'stream'.");
      expect((await alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", stream_id: 1, topic: "t", op: "add" })).body.msg).toBe("Please choose one: 'stream' or 'stream_id'.");
      expect((await alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "nope", topic: "t", op: "add" })).body.code).toBe("STREAM_DOES_NOT_EXIST");
      expect((await alice.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "t", op: "toggle" })).body.msg).toBe("Invalid op");
    });
  });

  test("register state plus the events equals a fresh register (subscriptions, streams, muted topics)", async () => {
    const types = ["subscription", "stream", "muted_topics"];
    const registered = await bob.client.post("/register", { event_types: types, include_subscribers: true, client_capabilities: { notification_settings_null: true } });
    const { queue_id, result: _r, msg: _m, last_event_id: _l, ...state } = registered.body;

    await subscribe(bob, ["verify-a", "verify-b"]);
    await subscribe(alice, ["verify-a"]);
    await bob.client.delete("/users/me/subscriptions", { subscriptions: ["verify-b"] });
    await bob.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: await streamId("verify-a"), property: "color", value: "#123456" }] });
    await bob.client.patch("/users/me/subscriptions/muted_topics", { stream: "verify-a", topic: "quiet", op: "add" });
    await admin.client.patch(`/streams/${await streamId("verify-a")}`, { description: "now *described*", new_name: "verify-renamed" });
    // Not acknowledged: the drain below must still see every event from the start.
    await waitForEvent(bob.client, queue_id, (e) => e.type === "stream" && e.property === "name", { acknowledge: false });

    const events = await drainEvents(bob.client, queue_id);
    const applied = applyEvents(structuredClone(state), events, bob.id);
    const fresh = await bob.client.post("/register", { event_types: types, include_subscribers: true, client_capabilities: { notification_settings_null: true } });
    const { queue_id: _q, result: _r2, msg: _m2, last_event_id: _l2, ...expected } = fresh.body;
    const byId = (list: Array<{ stream_id: number }>) => [...list].sort((a, b) => a.stream_id - b.stream_id);
    for (const key of ["subscriptions", "unsubscribed", "never_subscribed", "streams"]) {
      expect(byId(applied[key] as Array<{ stream_id: number }>)).toEqual(byId(expected[key]));
    }
    expect(applied.muted_topics).toEqual(expected.muted_topics);
  });
});
