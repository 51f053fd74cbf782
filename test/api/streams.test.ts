import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("streams (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let guest: TestUser;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    alice = await createTestUser(server, "Alice Member");
    bob = await createTestUser(server, "Bob Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
    for (const [name, extra] of [["public-one", {}], ["private-one", { invite_only: true }], ["default-one", {}]] as const) {
      const res = await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name }], ...extra });
      expect(res.body.result).toBe("success");
    }
    for (const stream of await server.running.services.db.prisma.stream.findMany()) ids[stream.name] = stream.id;
    await server.running.services.db.prisma.defaultStream.create({ data: { realm_id: 1, stream_id: ids["default-one"] } });
  });
  afterAll(() => server.stop());

  describe("GET /get_stream_id", () => {
    test("finds a stream by name, case-insensitively", async () => {
      expect((await bob.client.get("/get_stream_id", { stream: "PUBLIC-one" })).body).toEqual({ result: "success", msg: "", stream_id: ids["public-one"] });
    });
    test("an unknown name, or a private stream one cannot see, is BAD_REQUEST", async () => {
      expect((await bob.client.get("/get_stream_id", { stream: "nope" })).body).toEqual({ result: "error", msg: "Invalid stream name 'nope'", code: "BAD_REQUEST" });
      expect((await bob.client.get("/get_stream_id", { stream: "private-one" })).body.msg).toBe("Invalid stream name 'private-one'");
      expect((await alice.client.get("/get_stream_id", { stream: "private-one" })).body.stream_id).toBe(ids["private-one"]);
      expect((await bob.client.get("/get_stream_id", {})).body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "stream" });
    });
  });

  describe("GET /streams", () => {
    const names = (res: { body: Record<string, any> }) => (res.body.streams as Array<{ name: string }>).map((s) => s.name).sort();

    test("a member sees public streams and the private ones they are in", async () => {
      expect(names(await bob.client.get("/streams"))).toEqual(["default-one", "general", "public-one"]);
      expect(names(await alice.client.get("/streams"))).toEqual(["default-one", "general", "private-one", "public-one"]);
    });
    test("a guest sees only their own streams", async () => {
      expect(names(await guest.client.get("/streams"))).toEqual(["general"]);
    });
    test("include flags select what is listed", async () => {
      expect(names(await bob.client.get("/streams", { include_public: false }))).toEqual(["general"]);
      expect(names(await bob.client.get("/streams", { include_public: false, include_subscribed: false, include_default: true }))).toEqual(["default-one", "general"]);
    });
    test("include_all (include_all_active before feature level 356): what the user can see, administrators private streams too", async () => {
      expect(names(await bob.client.get("/streams", { include_all_active: true }))).toEqual(["default-one", "general", "public-one"]);
      expect(names(await bob.client.get("/streams", { include_all: true }))).toEqual(["default-one", "general", "public-one"]);
      expect(names(await admin.client.get("/streams", { include_all_active: true }))).toEqual(["default-one", "general", "private-one", "public-one"]);
    });
    test("streams carry the contract's fields", async () => {
      const stream = (await bob.client.get("/streams")).body.streams.find((s: { name: string }) => s.name === "public-one");
      expect(stream).toEqual({
        stream_id: ids["public-one"],
        name: "public-one",
        description: "",
        rendered_description: "",
        invite_only: false,
        is_web_public: false,
        stream_post_policy: 1,
        is_announcement_only: false,
        history_public_to_subscribers: true,
        first_message_id: null,
        message_retention_days: null,
        date_created: expect.any(Number),
        // Feature levels 254 and 199 (stream-metadata.test.ts).
        creator_id: expect.any(Number),
        stream_weekly_traffic: null,
        // Feature levels 142 and 197: role:administrators by default (system-groups.test.ts).
        can_remove_subscribers_group: expect.any(Number),
        // Zulip 10.0's channel settings (channel-permissions-10.test.ts): the creator administers it.
        can_add_subscribers_group: expect.any(Number),
        can_administer_channel_group: { direct_members: [expect.any(Number)], direct_subgroups: [] },
        can_send_message_group: expect.any(Number),
        can_subscribe_group: expect.any(Number),
        // Feature levels 315 and 323 (archived-channels.test.ts).
        is_archived: false,
        is_recently_active: expect.any(Boolean),
      });
    });
  });

  describe("PATCH /streams/{id}", () => {
    test("an administrator changes the description (rendered) and everyone who can see it hears", async () => {
      const queue = (await bob.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      const res = await admin.client.patch(`/streams/${ids["public-one"]}`, { description: "Talk about **one** thing" });
      expect(res.body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(bob.client, queue, (e) => e.op === "update");
      expect(event).toMatchObject({
        type: "stream",
        stream_id: ids["public-one"],
        name: "public-one",
        property: "description",
        value: "Talk about **one** thing",
        rendered_description: "<p>Talk about <strong>one</strong> thing</p>",
      });
    });

    test("renames; a taken name is refused", async () => {
      expect((await admin.client.patch(`/streams/${ids["public-one"]}`, { new_name: "General" })).body.msg).toBe("Stream name 'General' is already taken.");
      expect((await admin.client.patch(`/streams/${ids["public-one"]}`, { new_name: "public-renamed" })).body.result).toBe("success");
      expect((await bob.client.get("/get_stream_id", { stream: "public-renamed" })).body.stream_id).toBe(ids["public-one"]);
    });

    test("privacy, history and posting policy, with their events", async () => {
      const queue = (await alice.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "public-renamed" }] });
      expect((await admin.client.patch(`/streams/${ids["public-one"]}`, { is_private: true, history_public_to_subscribers: false })).body.result).toBe("success");
      const privacy = await waitForEvent(alice.client, queue, (e) => e.property === "invite_only");
      expect(privacy).toMatchObject({ value: true, history_public_to_subscribers: false });
      expect((await admin.client.patch(`/streams/${ids["public-one"]}`, { is_announcement_only: true })).body.result).toBe("success");
      const policy = await waitForEvent(alice.client, queue, (e) => e.property === "stream_post_policy");
      expect(policy.value).toBe(2);
      expect((await admin.client.patch(`/streams/${ids["public-one"]}`, { stream_post_policy: 1, is_private: false })).body.result).toBe("success");
      const stream = await server.running.services.db.prisma.stream.findUniqueOrThrow({ where: { id: ids["public-one"] } });
      // Public streams always have public history.
      expect(stream).toMatchObject({ invite_only: false, stream_post_policy: 1, history_public_to_subscribers: true });
    });

    test("history_public_to_subscribers=false on a public stream succeeds and keeps history public, as Zulip", async () => {
      // What the Python library's edit-stream example sends.
      const res = await admin.client.patch(`/streams/${ids["default-one"]}`, { description: "Defaults", history_public_to_subscribers: false });
      expect(res.body).toEqual({ result: "success", msg: "" });
      const stream = await server.running.services.db.prisma.stream.findUniqueOrThrow({ where: { id: ids["default-one"] } });
      expect(stream).toMatchObject({ description: "Defaults", invite_only: false, history_public_to_subscribers: true });
    });

    test("refuses non-administrators, bad values and unknown streams", async () => {
      // Alice made private-one, so administers it (feature level 325); general she does not.
      expect((await alice.client.patch(`/streams/${ids["general"]}`, { description: "x" })).body.msg).toBe("You do not have permission to administer this channel.");
      expect((await admin.client.patch(`/streams/${ids["general"]}`, { stream_post_policy: 9 })).body.msg).toBe("Invalid stream_post_policy");
      expect((await admin.client.patch(`/streams/${ids["general"]}`, { new_name: "" })).body.msg).toBe("Stream name can't be empty!");
      expect((await admin.client.patch(`/streams/${ids["general"]}`, { description: "d".repeat(1025) })).body.msg).toBe("Stream description too long (limit: 1024 characters).");
      expect((await admin.client.patch("/streams/987654", { description: "x" })).body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
      // A private stream one is not in does not exist for a member.
      expect((await bob.client.patch(`/streams/${ids["private-one"]}`, { description: "x" })).body.msg).toBe("Invalid stream id");
    });
  });

  describe("DELETE /streams/{id}", () => {
    test("archives (feature level 315): those who could see it hear `stream delete`, nobody else; the name and subscriptions stay", async () => {
      await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "doomed-private" }], invite_only: true });
      const doomed = (await alice.client.get("/get_stream_id", { stream: "doomed-private" })).body.stream_id;
      const aliceQueue = (await alice.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      const bobQueue = (await bob.client.post("/register", { event_types: ["stream"] })).body.queue_id;
      expect((await bob.client.delete(`/streams/${doomed}`)).body.msg).toBe("Invalid stream id");
      // Admins manage private streams they are not in.
      expect((await admin.client.delete(`/streams/${doomed}`)).body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(alice.client, aliceQueue, (e) => e.op === "delete");
      expect(event).toMatchObject({ stream_ids: [doomed], streams: [expect.objectContaining({ stream_id: doomed, name: "doomed-private", is_archived: true })] });
      expect((await drainEvents(bob.client, bobQueue)).filter((e) => e.op === "delete")).toEqual([]);
      expect((await alice.client.get("/streams")).body.streams.map((s: { name: string }) => s.name)).not.toContain("doomed-private");
      // Subscriptions are kept: GET /users/me/subscriptions lists it, archived.
      const kept = (await alice.client.get("/users/me/subscriptions")).body.subscriptions.find((s: { name: string }) => s.name === "doomed-private");
      expect(kept).toMatchObject({ stream_id: doomed, is_archived: true });
      expect((await admin.client.delete(`/streams/${doomed}`)).body.msg).toBe("Channel is already deactivated");
      // The name is the archived stream's: subscribing by it finds that stream.
      expect((await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "doomed-private" }] })).body.already_subscribed).toEqual({ [String(alice.id)]: ["doomed-private"] });
    });
  });

  describe("GET /users/me/{stream_id}/topics", () => {
    test("lists topics newest first with their latest message id", async () => {
      const send = (topic: string) => alice.client.post("/messages", { type: "stream", to: "general", topic, content: "x" });
      const a = (await send("alpha")).body.id;
      await send("beta");
      const a2 = (await send("Alpha")).body.id;
      const res = await bob.client.get(`/users/me/${ids.general}/topics`);
      expect(res.body.result).toBe("success");
      expect(res.body.topics.slice(0, 2)).toEqual([
        { name: "Alpha", max_id: a2 },
        { name: "beta", max_id: a + 1 },
      ]);
    });

    test("private history is limited to what the user received; unknown or invisible streams are `Invalid stream id`", async () => {
      await alice.client.post("/messages", { type: "stream", to: "private-one", topic: "before bob", content: "x" });
      await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "private-one" }], principals: [bob.email] });
      await alice.client.post("/messages", { type: "stream", to: "private-one", topic: "after bob", content: "x" });
      expect((await bob.client.get(`/users/me/${ids["private-one"]}/topics`)).body.topics.map((t: { name: string }) => t.name)).toEqual(["after bob"]);
      expect((await alice.client.get(`/users/me/${ids["private-one"]}/topics`)).body.topics.map((t: { name: string }) => t.name)).toEqual(["after bob", "before bob"]);
      expect((await guest.client.get(`/users/me/${ids["private-one"]}/topics`)).body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
      expect((await bob.client.get("/users/me/987654/topics")).body.msg).toBe("Invalid stream id");
    });
  });
});
