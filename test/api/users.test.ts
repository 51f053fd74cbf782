import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";

describe.each(MODES)("users (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;
  let memberId: number;
  let ownerId: number;

  async function createMember(email: string, fullName: string): Promise<{ id: number; client: ApiClient }> {
    const res = await server.owner.post("/users", { email, password: "member-pass", full_name: fullName, short_name: fullName.split(" ")[0] });
    expect(res.body).toMatchObject({ result: "success", msg: "" });
    const key = (await server.anonymous.post("/fetch_api_key", { username: email, password: "member-pass" })).body.api_key;
    return { id: res.body.user_id, client: server.client(email, key) };
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    ownerId = (await server.owner.get("/users/me")).body.user_id;
    ({ id: memberId, client: member } = await createMember("member@example.com", "Mia Member"));
  });
  afterAll(() => server.stop());

  describe("GET /users/me", () => {
    test("returns the caller's own profile", async () => {
      const res = await member.get("/users/me");
      expect(res.body).toMatchObject({
        result: "success",
        msg: "",
        user_id: memberId,
        email: "member@example.com",
        full_name: "Mia Member",
        short_name: "Mia",
        is_admin: false,
        is_owner: false,
        is_guest: false,
        is_bot: false,
        role: 400,
        max_message_id: -1,
        pointer: -1,
        profile_data: {},
      });
      expect(typeof res.body.client_id).toBe("string");
      expect(res.body.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?/);
    });

    test("max_message_id follows the messages the user has", async () => {
      const sent = await server.owner.post("/messages", { type: "stream", to: "general", topic: "t", content: "hello" });
      const res = await member.get("/users/me");
      expect(res.body.max_message_id).toBe(sent.body.id);
    });
  });

  describe("GET /users and /users/{id}", () => {
    test("lists every user with the contract's fields", async () => {
      const res = await member.get("/users");
      expect(res.body.result).toBe("success");
      const me = res.body.members.find((u: { user_id: number }) => u.user_id === memberId);
      expect(me).toEqual({
        user_id: memberId,
        email: "member@example.com",
        full_name: "Mia Member",
        is_active: true,
        is_admin: false,
        is_owner: false,
        is_guest: false,
        is_bot: false,
        role: 400,
        timezone: "",
        date_joined: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        avatar_url: expect.any(String),
        avatar_version: 1,
        avatar_source: "G",
      });
      const owner = res.body.members.find((u: { user_id: number }) => u.user_id === ownerId);
      expect(owner).toMatchObject({ role: 100, is_owner: true, is_admin: true });
    });

    test("delivery_email is shown to administrators only", async () => {
      const asAdmin = await server.owner.get(`/users/${memberId}`);
      expect(asAdmin.body.user.delivery_email).toBe("member@example.com");
      const asMember = await member.get(`/users/${ownerId}`);
      expect(asMember.body.user).not.toHaveProperty("delivery_email");
    });

    test("client_gravatar leaves gravatar URLs to the client", async () => {
      const res = await member.get(`/users/${ownerId}`, { client_gravatar: true });
      expect(res.body.user.avatar_url).toBeNull();
    });

    test("include_custom_profile_fields adds profile_data", async () => {
      const without = await member.get(`/users/${memberId}`);
      expect(without.body.user).not.toHaveProperty("profile_data");
      const withFields = await member.get("/users", { include_custom_profile_fields: true });
      expect(withFields.body.members.every((u: Record<string, unknown>) => "profile_data" in u)).toBe(true);
    });

    test("an unknown user id is `No such user`", async () => {
      const res = await member.get("/users/987654");
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "No such user", code: "BAD_REQUEST" });
    });
  });

  describe("POST /users", () => {
    test("creates a user who joins the default streams, and announces them to the realm", async () => {
      const queue = (await member.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      const { id, client } = await createMember("newbie@example.com", "Nina Newbie");
      const event = await waitForEvent(member, queue, (e) => e.type === "realm_user" && e.op === "add");
      expect(event.person).toMatchObject({ user_id: id, email: "newbie@example.com", full_name: "Nina Newbie", role: 400, is_active: true });
      expect(event.person).not.toHaveProperty("delivery_email");
      const subs = await server.running.services.db.prisma.subscription.count({ where: { user_id: id, active: true } });
      expect(subs).toBe(1);
      expect((await client.get("/users/me")).body.user_id).toBe(id);
    });

    test("refuses an email already in use, in any case", async () => {
      const res = await server.owner.post("/users", { email: "MEMBER@example.com", password: "whatever1", full_name: "Dup", short_name: "dup" });
      expect(res.body).toEqual({ result: "error", msg: "Email 'MEMBER@example.com' already in use", code: "BAD_REQUEST" });
    });

    test.each([
      [{ email: "not-an-email", password: "long-enough", full_name: "X Y", short_name: "x" }, "Invalid email 'not-an-email'"],
      [{ email: "ok@example.com", password: "long-enough", full_name: "   ", short_name: "x" }, "Name too short!"],
      [{ email: "ok@example.com", password: "long-enough", full_name: "Bad *name*", short_name: "x" }, "Invalid characters in name!"],
      [{ email: "ok@example.com", password: "long-enough", full_name: "x".repeat(101), short_name: "x" }, "Name too long!"],
      [{ email: "ok@example.com", password: "short", full_name: "Ok Name", short_name: "x" }, "The password is too weak."],
    ])("refuses bad input %j", async (params, msg) => {
      const res = await server.owner.post("/users", params);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg });
    });

    // Zulip's email_allowed_for_realm: realm_disallow_disposable_email_addresses, true by default.
    test("refuses a disposable address while the realm disallows them, and creates nothing", async () => {
      const { prisma } = server.running.services.db;
      expect((await server.owner.post("/register", { event_types: ["realm"] })).body.realm_disallow_disposable_email_addresses).toBe(true);
      const params = { email: "someone@Mailinator.com", password: "long-enough", full_name: "Throw Away", short_name: "throw" };
      const res = await server.owner.post("/users", params);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Disposable email addresses are not allowed in this organization", code: "BAD_REQUEST" });
      expect(await prisma.userProfile.count({ where: { delivery_email: { equals: params.email, mode: "insensitive" } } })).toBe(0);
      await prisma.realm.update({ where: { id: 1 }, data: { disallow_disposable_email_addresses: false } });
      try {
        expect((await server.owner.post("/users", params)).body.result).toBe("success");
      } finally {
        await prisma.realm.update({ where: { id: 1 }, data: { disallow_disposable_email_addresses: true } });
      }
    });

    test("requires an administrator", async () => {
      const res = await member.post("/users", { email: "x@example.com", password: "long-enough", full_name: "X", short_name: "x" });
      expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
    });
  });

  describe("PATCH /users/{id}", () => {
    test("renames a user and sends realm_user update", async () => {
      const queue = (await member.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      const res = await server.owner.patch(`/users/${memberId}`, { full_name: "Mia Renamed" });
      expect(res.body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(member, queue, (e) => e.type === "realm_user" && e.op === "update");
      expect(event.person).toEqual({ user_id: memberId, full_name: "Mia Renamed" });
    });

    test("changes roles through is_admin and is_guest", async () => {
      const { id } = await createMember("roles@example.com", "Rory Roles");
      const queue = (await server.owner.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      expect((await server.owner.patch(`/users/${id}`, { is_admin: true })).body.result).toBe("success");
      expect((await server.owner.get(`/users/${id}`)).body.user).toMatchObject({ role: 200, is_admin: true });
      const event = await waitForEvent(server.owner, queue, (e) => e.type === "realm_user" && e.person.role === 200);
      expect(event.person).toEqual({ user_id: id, role: 200 });
      expect((await server.owner.patch(`/users/${id}`, { is_admin: false, is_guest: true })).body.result).toBe("success");
      expect((await server.owner.get(`/users/${id}`)).body.user).toMatchObject({ role: 600, is_guest: true, is_admin: false });
    });

    test("a guest cannot be an administrator", async () => {
      const res = await server.owner.patch(`/users/${memberId}`, { is_admin: true, is_guest: true });
      expect(res.body).toEqual({ result: "error", msg: "Guests cannot be organization administrators", code: "BAD_REQUEST" });
    });

    test("requires an administrator", async () => {
      const res = await member.patch(`/users/${ownerId}`, { full_name: "Hacked" });
      expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
      expect((await member.get(`/users/${ownerId}`)).body.user.full_name).toBe("Olivia Owner");
    });

    test("profile_data sets custom profile field values", async () => {
      const { prisma } = server.running.services.db;
      const field = await prisma.customProfileField.create({ data: { realm_id: 1, name: `Phone ${mode}`, type: 1 } });
      const res = await server.owner.patch(`/users/${memberId}`, { profile_data: [{ id: field.id, value: "+1 555 0100" }] });
      expect(res.body.result).toBe("success");
      const user = await member.get(`/users/${memberId}`, { include_custom_profile_fields: true });
      expect(user.body.user.profile_data[String(field.id)]).toMatchObject({ value: "+1 555 0100" });
      const bad = await server.owner.patch(`/users/${memberId}`, { profile_data: [{ id: 999999, value: "x" }] });
      expect(bad.body).toMatchObject({ result: "error", msg: "Field id 999999 not found." });
    });
  });

  describe("DELETE /users", () => {
    test("an administrator deactivates a user; the realm hears realm_user remove", async () => {
      const { id, client } = await createMember("gone@example.com", "Gus Gone");
      const queue = (await member.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      expect((await server.owner.delete(`/users/${id}`)).body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(member, queue, (e) => e.type === "realm_user" && e.op === "remove");
      expect(event.person).toEqual({ user_id: id, full_name: "Gus Gone" });
      expect((await client.get("/users/me")).body.code).toBe("USER_DEACTIVATED");
      expect((await server.owner.get(`/users/${id}`)).body.user.is_active).toBe(false);
    });

    test("a member cannot deactivate others", async () => {
      const res = await member.delete(`/users/${ownerId}`);
      expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
    });

    test("the only administrator cannot be deactivated", async () => {
      const admins = (await server.owner.get("/users")).body.members.filter((u: { is_admin: boolean; is_active: boolean; user_id: number }) => u.is_admin && u.is_active && u.user_id !== ownerId);
      for (const admin of admins) await server.owner.patch(`/users/${admin.user_id}`, { is_admin: false });
      for (const res of [await server.owner.delete(`/users/${ownerId}`), await server.owner.delete("/users/me")]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: "Cannot deactivate the only organization administrator", code: "BAD_REQUEST" });
      }
      expect((await server.owner.get("/users/me")).status).toBe(200);
    });

    test("the only owner cannot deactivate themselves, even with another administrator left", async () => {
      const { id: adminId } = await createMember("second-admin@example.com", "Second Admin");
      expect((await server.owner.patch(`/users/${adminId}`, { role: 200 })).body.result).toBe("success");
      const own = await server.owner.delete("/users/me");
      expect(own.status).toBe(400);
      expect(own.body).toEqual({ result: "error", msg: "Cannot deactivate the only organization owner", code: "BAD_REQUEST" });
      expect((await server.owner.get("/users/me")).status).toBe(200);
      expect((await server.owner.delete(`/users/${adminId}`)).body.result).toBe("success");
    });

    test("an unknown user is `No such user`", async () => {
      expect((await server.owner.delete("/users/424242")).body).toMatchObject({ result: "error", msg: "No such user" });
    });
  });

  test("events of one action are not delivered to users who may not see them (own queues only)", async () => {
    const ownerQueue = (await server.owner.post("/register", { event_types: ["message"] })).body.queue_id;
    const pm = await member.post("/messages", { type: "private", to: [memberId], content: "note to self" });
    expect(pm.body.result).toBe("success");
    await member.post("/messages", { type: "private", to: [ownerId], content: "to the owner" });
    const event = await waitForEvent(server.owner, ownerQueue, (e) => e.type === "message");
    expect(event.message.content).toBe("to the owner");
    const rest = await drainEvents(server.owner, ownerQueue, event.id);
    expect(rest.filter((e) => e.type === "message")).toEqual([]);
  });
});

