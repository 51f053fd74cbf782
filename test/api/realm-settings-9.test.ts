// Zulip 9.0's organization settings that are not permissions (feature levels 55, 128, 129, 143,
// 195, 212, 216, 240-243, 246): in /register, changed by PATCH /realm with their events, refused
// when out of range, and require_unique_names enforced wherever a name is set.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const MODERN = { client_capabilities: JSON.stringify({ notification_settings_null: true, user_settings_object: true }) };

describe.each(MODES)("Zulip 9.0 organization settings (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;

  async function realmRow(): Promise<Record<string, unknown>> {
    return server.running.services.db.prisma.realm.findUniqueOrThrow({ where: { id: 1 } });
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Nine", "admin");
    member = await createTestUser(server, "Mo Nine");
  });
  afterAll(() => server.stop());

  test("/register carries them with Zulip's defaults", async () => {
    const state = (await member.client.post("/register", { event_types: ["realm"] })).body;
    expect(state).toMatchObject({
      realm_org_type: 0,
      realm_want_advertise_in_communities_directory: false,
      realm_jitsi_server_url: null,
      jitsi_server_url: "https://meet.jit.si",
      server_jitsi_server_url: "https://meet.jit.si",
      realm_enable_guest_user_indicator: true,
      realm_require_unique_names: false,
      realm_giphy_rating: 2,
      realm_default_code_block_language: "",
      realm_new_stream_announcements_stream_id: state.realm_notifications_stream_id,
      realm_signup_announcements_stream_id: state.realm_signup_notifications_stream_id,
      realm_zulip_update_announcements_stream_id: -1,
      realm_plan_type: 1,
      realm_push_notifications_enabled_end_timestamp: null,
      server_needs_upgrade: false,
      realm_available_video_chat_providers: { disabled: { name: "None", id: 0 }, jitsi_meet: { name: "Jitsi Meet", id: 1 } },
    });
    expect(state.realm_authentication_methods.Email).toEqual({ enabled: true, available: true });
    expect(state.realm_authentication_methods.LDAP).toMatchObject({ enabled: false, available: false });
    expect(Object.keys(state.giphy_rating_options)).toEqual(["disabled", "y", "g", "pg", "pg-13", "r"]);
  });

  test("an administrator changes each; everyone gets an update, and /register reflects it", async () => {
    const queue = (await member.client.post("/register", { event_types: ["realm"] })).body.queue_id;
    const res = await admin.client.patch("/realm", {
      org_type: 20,
      want_advertise_in_communities_directory: true,
      jitsi_server_url: JSON.stringify("https://jitsi.example.org"),
      enable_guest_user_indicator: false,
      giphy_rating: 0,
      default_code_block_language: "python",
      video_chat_provider: 0,
      digest_weekday: 4,
    });
    expect(res.body).toEqual({
      result: "success",
      msg: "",
      org_type: 20,
      want_advertise_in_communities_directory: true,
      jitsi_server_url: "updated",
      enable_guest_user_indicator: false,
      giphy_rating: 0,
      default_code_block_language: "updated",
      video_chat_provider: 0,
      digest_weekday: 4,
    });
    await waitForEvent(member.client, queue, (e) => e.property === "video_chat_provider");
    const properties = (await drainEvents(member.client, queue)).map((e) => e.property);
    expect(properties).toEqual(expect.arrayContaining(["org_type", "jitsi_server_url", "enable_guest_user_indicator", "giphy_rating", "default_code_block_language", "digest_weekday"]));
    const state = (await member.client.post("/register", { event_types: ["realm"] })).body;
    expect(state).toMatchObject({ realm_org_type: 20, realm_jitsi_server_url: "https://jitsi.example.org", jitsi_server_url: "https://jitsi.example.org", realm_giphy_rating: 0, realm_default_code_block_language: "python", realm_digest_weekday: 4 });

    // "default" gives the server's Jitsi back.
    expect((await admin.client.patch("/realm", { jitsi_server_url: JSON.stringify("default") })).body).toEqual({ result: "success", msg: "", jitsi_server_url: null });
    expect((await member.client.post("/register", { event_types: ["realm"] })).body.jitsi_server_url).toBe("https://meet.jit.si");
  });

  test.each([
    [{ org_type: 5 }, "Invalid org_type"],
    [{ giphy_rating: 9 }, "Invalid giphy_rating"],
    [{ video_chat_provider: 3 }, "Invalid video_chat_provider 3"],
    [{ digest_weekday: 7 }, "Invalid digest_weekday"],
    [{ jitsi_server_url: JSON.stringify("javascript:alert(1)") }, "jitsi_server_url is not an allowed_type"],
    [{ jitsi_server_url: JSON.stringify("https://" + "a".repeat(300)) }, "jitsi_server_url is too long (limit: 202 characters)"],
    [{ default_code_block_language: "py thon" }, "Invalid default_code_block_language"],
    [{ zulip_update_announcements_stream_id: 999999 }, "Invalid stream id"],
  ])("%j is refused and changes nothing", async (params, msg) => {
    const before = await realmRow();
    const res = await admin.client.patch("/realm", { org_type: 90, ...params });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await realmRow()).toEqual(before);
  });

  test("settings of who may join are the owners' (feature level 143)", async () => {
    for (const params of [{ invite_required: false }, { emails_restricted_to_domains: true }, { disallow_disposable_email_addresses: false }, { waiting_period_threshold: 5 }]) {
      const res = await admin.client.patch("/realm", params);
      expect(res.body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    expect((await server.owner.patch("/realm", { disallow_disposable_email_addresses: false })).body).toEqual({ result: "success", msg: "", disallow_disposable_email_addresses: false });
    expect((await realmRow()).disallow_disposable_email_addresses).toBe(false);
    expect((await server.owner.patch("/realm", { disallow_disposable_email_addresses: true })).body.result).toBe("success");
  });

  test("the announcement streams answer to feature level 241's names too, and today's clients get events by them", async () => {
    const stream = (await admin.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "announce-nine" }]) })).body;
    expect(stream.result).toBe("success");
    const streamId = (await admin.client.get("/get_stream_id", { stream: "announce-nine" })).body.stream_id as number;
    const modern = (await member.client.post("/register", { event_types: ["realm"], ...MODERN })).body.queue_id;
    const legacy = (await member.client.post("/register", { event_types: ["realm"] })).body.queue_id;
    const res = await admin.client.patch("/realm", { new_stream_announcements_stream_id: streamId, zulip_update_announcements_stream_id: streamId });
    expect(res.body).toEqual({ result: "success", msg: "", new_stream_announcements_stream_id: streamId, zulip_update_announcements_stream_id: streamId });
    const modernEvent = await waitForEvent(member.client, modern, (e) => e.value === streamId && e.property !== "zulip_update_announcements_stream_id");
    expect(modernEvent).toMatchObject({ type: "realm", op: "update", property: "new_stream_announcements_stream_id", value: streamId });
    const legacyEvent = await waitForEvent(member.client, legacy, (e) => e.value === streamId && e.property !== "zulip_update_announcements_stream_id");
    expect(legacyEvent).toMatchObject({ type: "realm", op: "update", property: "notifications_stream_id", value: streamId });
    const state = (await member.client.post("/register", { event_types: ["realm"] })).body;
    expect(state).toMatchObject({ realm_notifications_stream_id: streamId, realm_new_stream_announcements_stream_id: streamId, realm_zulip_update_announcements_stream_id: streamId });
  });

  test("register state: these settings plus their events equal a fresh register, for 3.x and today's clients", async () => {
    expect((await admin.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "announce-verify" }]) })).body.result).toBe("success");
    const streamId = (await admin.client.get("/get_stream_id", { stream: "announce-verify" })).body.stream_id as number;
    for (const [extra, announce, orgType, rating] of [[{}, streamId, 35, 4], [MODERN, -1, 40, 3]] as const) {
      await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { org_type: orgType, jitsi_server_url: JSON.stringify("https://meet.example.com") }), 5000, extra);
      await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { jitsi_server_url: JSON.stringify("default"), giphy_rating: rating }), 5000, extra);
      await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { signup_announcements_stream_id: announce, new_stream_announcements_stream_id: announce }), 5000, extra);
    }
  });

  test("require_unique_names: no new user, name change or self-rename takes a name in use, in any case", async () => {
    expect((await admin.client.patch("/realm", { require_unique_names: true })).body).toEqual({ result: "success", msg: "", require_unique_names: true });
    const created = await server.owner.post("/users", { email: "second.mo@example.com", password: "member-pass", full_name: "MO NINE", short_name: "mo" });
    expect(created.body).toEqual({ result: "error", msg: "Unique names required in this organization.", code: "BAD_REQUEST" });
    expect(await server.running.services.db.prisma.userProfile.count({ where: { delivery_email: "second.mo@example.com" } })).toBe(0);

    const other = await createTestUser(server, "Uma Unique");
    expect((await admin.client.patch(`/users/${other.id}`, { full_name: "mo nine" })).body.msg).toBe("Unique names required in this organization.");
    expect((await other.client.patch("/settings", { full_name: "Mo Nine" })).body.msg).toBe("Unique names required in this organization.");
    // Changing only the case of one's own name is not a clash with oneself.
    expect((await member.client.patch("/settings", { full_name: "MO Nine" })).body.result).toBe("success");
    expect((await other.client.patch("/settings", { full_name: "Uma Elsewise" })).body.result).toBe("success");

    expect((await admin.client.patch("/realm", { require_unique_names: false })).body.result).toBe("success");
    expect((await other.client.patch("/settings", { full_name: "Mo Nine" })).body.result).toBe("success");
  });
});
