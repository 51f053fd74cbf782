// Zulip 10.0's user and settings entries (feature levels 282-369): presence history limits (288),
// the removed tutorial_status endpoint (282), custom profile fields' editable_by_user (296),
// personal settings web_suggest_update_timezone (329) and hide_ai_features (350), /register's
// password_max_length (338), enable_guest_user_dm_warning (348), server_can_summarize_topics (350),
// realm_billing without is_billing_admin (363), navigation_tour_video_url (369), and a bot's
// subscriptions surviving a change of owner (359).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("Zulip 10.0 settings (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin Ten", "admin");
    alice = await createTestUser(server, "Alice Ten");
    bob = await createTestUser(server, "Bob Ten");
  });
  afterAll(() => server.stop());

  test("presence_history_limit_days and history_limit_days: 0 gives none, a window gives recent ones", async () => {
    expect((await bob.client.post("/users/me/presence", { status: "active" })).body.result).toBe("success");
    const recent = await alice.client.post("/users/me/presence", { status: "active", slim_presence: true, history_limit_days: 1 });
    expect(recent.body.presences[String(bob.id)]).toBeDefined();
    const none = await alice.client.post("/users/me/presence", { status: "active", slim_presence: true, history_limit_days: 0 });
    expect(none.body.presences).toEqual({});
    const incremental = await alice.client.post("/users/me/presence", { status: "active", last_update_id: -1, history_limit_days: 0 });
    expect(incremental.body.presences).toEqual({});

    const registered = await alice.client.post("/register", { fetch_event_types: ["presence"], slim_presence: true, presence_history_limit_days: 0 });
    expect(registered.body.presences).toEqual({});
    const registeredAll = await alice.client.post("/register", { fetch_event_types: ["presence"], slim_presence: true, presence_history_limit_days: 30 });
    expect(registeredAll.body.presences[String(bob.id)]).toBeDefined();
    const bad = await alice.client.post("/users/me/presence", { status: "active", history_limit_days: "soon" });
    expect(bad.body).toMatchObject({ result: "error", code: expect.any(String) });
  });

  test("POST /users/me/tutorial_status is no endpoint (removed at feature level 282)", async () => {
    const res = await alice.client.post("/users/me/tutorial_status", { status: "finished" });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ result: "error", code: expect.any(String) });
  });

  test("custom profile fields say editable_by_user; users may not change a field not editable by them", async () => {
    const created = await admin.client.post("/realm/profile_fields", { name: "Badge number", field_type: 1, editable_by_user: false });
    expect(created.body.result).toBe("success");
    const locked = created.body.id as number;
    const open = (await admin.client.post("/realm/profile_fields", { name: "Nickname", field_type: 1 })).body.id as number;
    const fields = (await alice.client.get("/realm/profile_fields")).body.custom_fields as Array<Record<string, unknown>>;
    expect(fields.find((f) => f.id === locked)).toMatchObject({ name: "Badge number", editable_by_user: false });
    expect(fields.find((f) => f.id === open)).toMatchObject({ name: "Nickname", editable_by_user: true });
    expect((await alice.client.post("/register", { fetch_event_types: ["custom_profile_fields"] })).body.custom_profile_fields.find((f: { id: number }) => f.id === locked)).toMatchObject({ editable_by_user: false });

    const refused = await alice.client.patch("/users/me/profile_data", { data: JSON.stringify([{ id: open, value: "Al" }, { id: locked, value: "007" }]) });
    expect(refused.body).toEqual({ result: "error", msg: "You are not allowed to change this field. Contact an administrator to update it.", code: "BAD_REQUEST" });
    // All or nothing: the editable field did not change either.
    const profile = async () => (await alice.client.get(`/users/${alice.id}`, { include_custom_profile_fields: true })).body.user.profile_data as Record<string, { value: string }>;
    expect((await profile())[String(open)]).toBeUndefined();
    expect((await alice.client.patch("/users/me/profile_data", { data: JSON.stringify([{ id: open, value: "Al" }]) })).body.result).toBe("success");
    expect((await profile())[String(open)].value).toBe("Al");
    expect((await admin.client.patch(`/users/${alice.id}`, { profile_data: JSON.stringify([{ id: locked, value: "007" }]) })).body.result).toBe("success");

    const events = await verifyAction(alice.client, ["custom_profile_fields"], () => admin.client.patch(`/realm/profile_fields/${locked}`, { editable_by_user: true }));
    expect(events[0]).toMatchObject({ type: "custom_profile_fields" });
    expect((events[0].fields as Array<Record<string, unknown>>).find((f) => f.id === locked)).toMatchObject({ editable_by_user: true });
    expect((await alice.client.patch("/users/me/profile_data", { data: JSON.stringify([{ id: locked, value: "008" }]) })).body.result).toBe("success");
    expect((await profile())[String(locked)].value).toBe("008");
    expect((await alice.client.patch(`/realm/profile_fields/${locked}`, { editable_by_user: false })).body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
  });

  test.each(["web_suggest_update_timezone", "hide_ai_features"])("%s is a personal setting with a realm default", async (name) => {
    const defaults = { web_suggest_update_timezone: true, hide_ai_features: false } as Record<string, boolean>;
    const state = (await alice.client.post("/register", { fetch_event_types: ["user_settings", "realm_user_settings_defaults"] })).body;
    expect(state.user_settings[name]).toBe(defaults[name]);
    expect(state.realm_user_settings_defaults[name]).toBe(defaults[name]);
    const events = await verifyAction(alice.client, ["user_settings"], () => alice.client.patch("/settings", { [name]: !defaults[name] }));
    expect(events).toEqual([expect.objectContaining({ type: "user_settings", op: "update", property: name, value: !defaults[name] })]);
    const bad = await alice.client.patch("/settings", { [name]: "maybe" });
    expect(bad.body).toMatchObject({ result: "error" });
    const realmEvents = await verifyAction(bob.client, ["realm_user_settings_defaults"], () => admin.client.patch("/realm/user_settings_defaults", { [name]: !defaults[name] }));
    expect(realmEvents).toEqual([expect.objectContaining({ type: "realm_user_settings_defaults", op: "update", property: name, value: !defaults[name] })]);
    // New users start from the organization's default.
    const carol = await createTestUser(server, `Carol ${name}`);
    expect((await carol.client.post("/register", { fetch_event_types: ["user_settings"] })).body.user_settings[name]).toBe(!defaults[name]);
  });

  test("/register: password_max_length, server_can_summarize_topics, navigation_tour_video_url, realm_billing; no is_billing_admin", async () => {
    const state = (await alice.client.post("/register", {})).body;
    expect(state.password_max_length).toBe(100);
    expect(state.server_can_summarize_topics).toBe(false);
    expect(state.navigation_tour_video_url).toBeNull();
    expect(state.realm_billing).toEqual({ has_pending_sponsorship_request: false });
    expect(state).not.toHaveProperty("is_billing_admin");
    expect(state.realm_users.every((user: Record<string, unknown>) => !("is_billing_admin" in user))).toBe(true);
    expect(state.realm_enable_guest_user_dm_warning).toBe(true);
  });

  test("enable_guest_user_dm_warning: administrators change it, everyone hears", async () => {
    const events = await verifyAction(alice.client, ["realm"], () => admin.client.patch("/realm", { enable_guest_user_dm_warning: false }));
    expect(events).toEqual([{ id: expect.any(Number), type: "realm", op: "update", property: "enable_guest_user_dm_warning", value: false }]);
    expect((await alice.client.patch("/realm", { enable_guest_user_dm_warning: true })).body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
    expect((await admin.client.patch("/realm", { enable_guest_user_dm_warning: "sometimes" })).body).toMatchObject({ result: "error" });
    expect((await admin.client.patch("/realm", { enable_guest_user_dm_warning: true })).body).toEqual({ result: "success", msg: "", enable_guest_user_dm_warning: true });
  });

  test("GET /users/{email}: a real address finds a user only for those who may see it; the shown address always (feature level 302)", async () => {
    const real = bob.email;
    expect((await bob.client.patch("/settings", { email_address_visibility: 1 })).body.result).toBe("success");
    expect((await alice.client.get(`/users/${real}`)).body.user).toMatchObject({ user_id: bob.id });
    expect((await bob.client.patch("/settings", { email_address_visibility: 3 })).body.result).toBe("success");
    const hidden = await alice.client.get(`/users/${real}`);
    expect(hidden.body).toEqual({ result: "error", msg: "No such user", code: "BAD_REQUEST" });
    const shown = (await alice.client.get(`/users/${bob.id}`)).body.user.email as string;
    expect(shown).not.toBe(real);
    expect((await alice.client.get(`/users/${shown}`)).body.user).toMatchObject({ user_id: bob.id });
    expect((await admin.client.get(`/users/${real}`)).body.user).toMatchObject({ user_id: bob.id });
    expect((await alice.client.get("/users/nobody.ten@example.com")).body).toMatchObject({ result: "error", msg: "No such user" });
  });

  test("PATCH /users/{email} changes the user the address names; new_email needs a permission no one has here (feature level 313)", async () => {
    expect((await admin.client.patch(`/users/${bob.email}`, { full_name: "Bob Renamed" })).body).toEqual({ result: "success", msg: "" });
    expect((await admin.client.get(`/users/${bob.id}`)).body.user.full_name).toBe("Bob Renamed");
    expect((await alice.client.patch(`/users/${bob.email}`, { full_name: "Nope" })).body).toMatchObject({ result: "error" });
    expect((await admin.client.patch("/users/nobody.ten@example.com", { full_name: "x" })).body).toMatchObject({ result: "error", msg: "No such user" });
    for (const path of [`/users/${bob.id}`, `/users/${bob.email}`]) {
      const refused = await server.owner.patch(path, { new_email: "bob.new@example.com", full_name: "Bob Changed" });
      expect(refused.body).toEqual({ result: "error", msg: "User not authorized to change user emails", code: "BAD_REQUEST" });
    }
    expect((await admin.client.get(`/users/${bob.id}`)).body.user.full_name).toBe("Bob Renamed");
    // The address it already has is no change.
    expect((await admin.client.patch(`/users/${bob.id}`, { new_email: bob.email })).body.result).toBe("success");
    expect((await admin.client.patch(`/users/${bob.id}`, { full_name: "Bob Ten" })).body.result).toBe("success");
  });

  test("GET and PATCH /users/{email} refuse a NUL in the address as any other parameter", async () => {
    const refused = { result: "error", msg: "email contains NULL (0x00) characters.", code: "BAD_REQUEST", var_name: "email" };
    expect((await alice.client.get("/users/a%00b@example.com")).body).toEqual(refused);
    expect((await admin.client.patch("/users/a%00b@example.com", { full_name: "x" })).body).toEqual(refused);
  });

  test("a bot whose owner changes keeps its subscriptions (feature level 359)", async () => {
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "owner ten secret" }]), invite_only: true })).body.result).toBe("success");
    const bot = await server.owner.post("/bots", { full_name: "Ten Bot", short_name: "tenbot" });
    expect(bot.body.result).toBe("success");
    const streamId = (await server.owner.get("/get_stream_id", { stream: "owner ten secret" })).body.stream_id as number;
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "owner ten secret" }]), principals: JSON.stringify([bot.body.user_id]) })).body.result).toBe("success");
    expect((await server.owner.patch(`/bots/${bot.body.user_id}`, { bot_owner_id: alice.id })).body.result).toBe("success");
    const members = (await server.owner.get(`/streams/${streamId}/members`)).body.subscribers as number[];
    expect(members).toContain(bot.body.user_id);
  });
});
