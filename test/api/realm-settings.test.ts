import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("realm settings (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;

  async function realm(): Promise<Record<string, any>> {
    return server.running.services.db.prisma.realm.findUniqueOrThrow({ where: { id: 1 } });
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    guest = await createTestUser(server, "Gil Guest", "guest");
  });
  afterAll(() => server.stop());

  test("an administrator changes settings; everyone gets one realm update per property", async () => {
    const queue = (await guest.client.post("/register", { event_types: ["realm"] })).body.queue_id;
    // invite_required and waiting_period_threshold are the owners' (feature level 143).
    const res = await server.owner.patch("/realm", { name: "Renamed Org", invite_required: false, create_stream_policy: 2, waiting_period_threshold: 3 });
    expect(res.body).toEqual({ result: "success", msg: "", name: "updated", invite_required: false, create_stream_policy: 2, waiting_period_threshold: 3 });
    await waitForEvent(guest.client, queue, (e) => e.property === "waiting_period_threshold");
    const events = (await drainEvents(guest.client, queue)).map(({ id: _id, ...e }) => e);
    expect(events).toEqual([
      { type: "realm", op: "update", property: "name", value: "Renamed Org" },
      { type: "realm", op: "update", property: "invite_required", value: false },
      { type: "realm", op: "update", property: "waiting_period_threshold", value: 3 },
      // 3.x's create_stream_policy is a shorthand for the groups that replaced it
      // (realm-group-settings.ts); then the policy, derived from them again, for a 3.x client.
      { type: "realm", op: "update_dict", property: "default", data: { can_create_public_channel_group: expect.any(Number) } },
      { type: "realm", op: "update_dict", property: "default", data: { can_create_private_channel_group: expect.any(Number) } },
      { type: "realm", op: "update", property: "create_stream_policy", value: 2 },
    ]);
    expect(await realm()).toMatchObject({ name: "Renamed Org", invite_required: false, create_stream_policy: 2, waiting_period_threshold: 3 });
  });

  // Feature level 150: each changed message editing setting in its own update_dict, and only the
  // changed ones in the answer (3.x sent and answered all three together).
  test("message editing settings: one update_dict per changed setting, only those answered", async () => {
    const queue = (await member.client.post("/register", { event_types: ["realm"] })).body.queue_id;
    const res = await admin.client.patch("/realm", { message_content_edit_limit_seconds: 1200, allow_message_editing: true });
    expect(res.body).toEqual({ result: "success", msg: "", message_content_edit_limit_seconds: 1200 });
    const event = await waitForEvent(member.client, queue, (e) => e.type === "realm");
    expect(event).toEqual({ id: expect.any(Number), type: "realm", op: "update_dict", property: "default", data: { message_content_edit_limit_seconds: 1200 } });
    const both = await admin.client.patch("/realm", { message_content_edit_limit_seconds: 600, allow_message_editing: false });
    expect(both.body).toEqual({ result: "success", msg: "", message_content_edit_limit_seconds: 600, allow_message_editing: false });
    let events: Array<Record<string, any>> = [];
    for (let tries = 0; tries < 100 && events.length < 2; tries++) {
      events = await drainEvents(member.client, queue, event.id);
      if (events.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    expect(events.map(({ id: _id, ...rest }) => rest)).toEqual([
      { type: "realm", op: "update_dict", property: "default", data: { allow_message_editing: false } },
      { type: "realm", op: "update_dict", property: "default", data: { message_content_edit_limit_seconds: 600 } },
    ]);
    expect((await admin.client.patch("/realm", { allow_message_editing: true })).body.result).toBe("success");
  });

  test("an unchanged value sends nothing", async () => {
    const queue = (await member.client.post("/register", { event_types: ["realm"] })).body.queue_id;
    const current = (await realm()).mandatory_topics;
    expect((await admin.client.patch("/realm", { mandatory_topics: current })).body).toEqual({ result: "success", msg: "" });
    expect(await drainEvents(member.client, queue)).toEqual([]);
  });

  test.each([
    [{ create_stream_policy: 9 }, "Invalid create_stream_policy"],
    [{ user_group_edit_policy: 5 }, "Invalid user_group_edit_policy"],
    [{ private_message_policy: 0 }, "Invalid private_message_policy"],
    [{ email_address_visibility: 5 }, "Invalid email_address_visibility"],
    [{ bot_creation_policy: 4 }, "Invalid bot_creation_policy"],
    [{ waiting_period_threshold: -1 }, "Bad value for 'waiting_period_threshold': -1"],
    [{ message_content_edit_limit_seconds: -5 }, "Bad value for 'message_content_edit_limit_seconds': -5"],
    [{ name: "x".repeat(41) }, "Organization name is too long."],
    [{ description: "x".repeat(1001) }, "Organization description is too long."],
    [{ default_language: "xx" }, "Invalid language 'xx'"],
    [{ notifications_stream_id: 987654 }, "Invalid stream id"],
    [{ signup_notifications_stream_id: 987654 }, "Invalid stream id"],
    [{ invite_required: "yes" }, 'Argument "invite_required" is not valid JSON.'],
    [{ waiting_period_threshold: "soon" }, "waiting_period_threshold is not an integer"],
    [{ name: "Valid", create_stream_policy: 7 }, "Invalid create_stream_policy"],
  ])("refuses bad values (case %#) and changes nothing", async (params, msg) => {
    const before = await realm();
    const res = await server.owner.patch("/realm", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await realm()).toEqual(before);
  });

  test("members and guests cannot change settings; message retention is for owners", async () => {
    for (const user of [member, guest]) {
      expect((await user.client.patch("/realm", { name: "Hacked" })).body).toEqual({
        result: "error",
        msg: "Must be an organization administrator",
        code: "UNAUTHORIZED_PRINCIPAL",
      });
    }
    expect((await admin.client.patch("/realm", { message_retention_days: 30 })).body.msg).toBe("Must be an organization owner");
    expect((await server.owner.patch("/realm", { message_retention_days: 0 })).body.msg).toBe("Bad value for 'message_retention_days': 0");
    // This server deletes no old messages: a limit it would not keep is refused, and the realm keeps "forever".
    const limited = await server.owner.patch("/realm", { message_retention_days: 30 });
    expect(limited.status).toBe(400);
    expect(limited.body).toEqual({ result: "error", msg: "Message retention is not available on this server.", code: "BAD_REQUEST" });
    expect((await realm()).message_retention_days).toBeNull();
    expect((await server.owner.patch("/realm", { message_retention_days: "forever" })).body.result).toBe("success");
    expect((await realm()).message_retention_days).toBeNull();
    expect((await server.owner.post("/register", { event_types: ["realm"] })).body.realm_message_retention_days).toBeNull();
    expect((await realm()).name).not.toBe("Hacked");
  });

  test("notifications streams take a stream of the realm, or -1 for none", async () => {
    const general = await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { realm_id: 1, name: "general" } });
    const queue = (await member.client.post("/register", { event_types: ["realm"] })).body.queue_id;
    expect((await admin.client.patch("/realm", { notifications_stream_id: -1 })).body).toMatchObject({ result: "success", notifications_stream_id: -1 });
    const event = await waitForEvent(member.client, queue, (e) => e.property === "notifications_stream_id");
    expect(event.value).toBe(-1);
    expect((await realm()).notifications_stream_id).toBeNull();
    expect((await admin.client.patch("/realm", { notifications_stream_id: general.id })).body.result).toBe("success");
    expect((await realm()).notifications_stream_id).toBe(general.id);
  });

  test("GET /server_settings renders the description as escaped HTML", async () => {
    await admin.client.patch("/realm", { description: "We **ship**. <script>alert(1)</script>" });
    const res = await server.anonymous.get("/server_settings");
    expect(res.body.realm_description).toContain("<strong>ship</strong>");
    expect(res.body.realm_description).not.toContain("<script>");
    expect(res.body.realm_description).toContain("&lt;script&gt;");
  });

  test("can_create_streams and can_subscribe_other_users say what subscribing enforces", async () => {
    const permissions = async (user: TestUser) => {
      const body = (await user.client.post("/register", { event_types: ["realm_user"] })).body;
      return [body.can_create_streams, body.can_subscribe_other_users];
    };
    const { prisma } = server.running.services.db;
    expect((await server.owner.patch("/realm", { create_stream_policy: 3, invite_to_stream_policy: 2, waiting_period_threshold: 10 })).body.result).toBe("success");
    const joined = (await prisma.userProfile.findUniqueOrThrow({ where: { id: member.id } })).date_joined;
    try {
      expect(await permissions(member)).toEqual([false, false]);
      expect((await member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "too early" }] })).body.msg).toBe("Insufficient permission");
      expect((await member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "general" }], principals: [guest.email] })).body.msg).toBe("You can't subscribe other users to streams.");
      expect(await permissions(admin)).toEqual([true, true]);
      expect(await permissions(guest)).toEqual([false, false]);
      // Past the waiting period a member is a full member; members may subscribe others under policy 1.
      await prisma.userProfile.update({ where: { id: member.id }, data: { date_joined: new Date(Date.now() - 11 * 86_400_000) } });
      expect((await admin.client.patch("/realm", { invite_to_stream_policy: 1 })).body.result).toBe("success");
      // role:fullmembers follows date_joined when the daily job (or a waiting period change) runs, as in Zulip.
      expect((await server.owner.patch("/realm", { waiting_period_threshold: 10 })).body.result).toBe("success");
      expect(await permissions(member)).toEqual([true, true]);
      expect((await member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "full member's" }], principals: [member.email, guest.email] })).body.result).toBe("success");
    } finally {
      await prisma.userProfile.update({ where: { id: member.id }, data: { date_joined: joined } });
      expect((await server.owner.patch("/realm", { create_stream_policy: 1, invite_to_stream_policy: 1, waiting_period_threshold: 0 })).body.result).toBe("success");
    }
    await verifyAction(member.client, ["realm", "realm_user"], () => admin.client.patch("/realm", { invite_to_stream_policy: 2 }));
    await verifyAction(member.client, ["realm", "realm_user"], () => admin.client.patch("/realm", { invite_to_stream_policy: 1 }));
  });

  test("register state: settings plus the events equal a fresh register", async () => {
    await verifyAction(member.client, ["realm", "realm_user"], () => admin.client.patch("/realm", { create_stream_policy: 1, description: "verify" }));
    await verifyAction(member.client, ["realm", "realm_user"], () => admin.client.patch("/realm", { create_stream_policy: 2 }));
    await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { allow_message_editing: false, allow_community_topic_editing: false }));
    await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { message_content_delete_limit_seconds: 60, default_language: "de" }));
    await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { signup_notifications_stream_id: -1 }));
  });
});
