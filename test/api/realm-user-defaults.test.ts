// realm_user_settings_defaults (feature level 95): /register, PATCH /realm/user_settings_defaults
// (administrators), its events, and what new users start with.
import { createTestUser, type TestUser } from "../support/users.ts";
import { waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("realm user settings defaults (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;

  const defaults = async () => (await member.client.post("/register", { fetch_event_types: ["realm_user_settings_defaults"] })).body.realm_user_settings_defaults;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mel Member");
  });
  afterAll(() => server.stop());

  test("/register has Zulip 9.0's defaults, without what organizations do not choose", async () => {
    const state = await defaults();
    expect(state).toMatchObject({
      enter_sends: false,
      color_scheme: 1,
      emojiset: "google-blob",
      web_home_view: "recent_topics",
      notification_sound: "zulip",
      email_notifications_batching_period_seconds: 120,
      twenty_four_hour_time: false,
      send_read_receipts: true,
      email_address_visibility: expect.any(Number),
      available_notification_sounds: expect.arrayContaining(["zulip", "ding"]),
      emojiset_choices: expect.arrayContaining([{ key: "google", text: "Google modern" }]),
    });
    for (const absent of ["default_language", "timezone", "enable_login_emails", "enable_marketing_emails"]) expect(state).not.toHaveProperty(absent);
  });

  test("an administrator changes them; everyone gets an event per change", async () => {
    const queue = (await member.client.post("/register", { event_types: ["realm_user_settings_defaults"] })).body.queue_id;
    const res = await admin.client.patch("/realm/user_settings_defaults", { color_scheme: 2, web_home_view: "inbox", enter_sends: true });
    expect(res.body).toMatchObject({ result: "success" });
    const event = await waitForEvent(member.client, queue, (e) => e.type === "realm_user_settings_defaults" && e.property === "web_home_view");
    expect(event).toEqual({ id: expect.any(Number), type: "realm_user_settings_defaults", op: "update", property: "web_home_view", value: "inbox" });
    expect(await defaults()).toMatchObject({ color_scheme: 2, web_home_view: "inbox", enter_sends: true });
  });

  test("new users start with them; existing users keep theirs", async () => {
    const fresh = await createTestUser(server, "Nina New");
    const settings = (await fresh.client.post("/register", { fetch_event_types: ["user_settings"] })).body.user_settings;
    expect(settings).toMatchObject({ color_scheme: 2, web_home_view: "inbox", enter_sends: true });
    const mine = (await member.client.post("/register", { fetch_event_types: ["user_settings"] })).body.user_settings;
    expect(mine).toMatchObject({ color_scheme: 1, web_home_view: "recent_topics", enter_sends: false });
  });

  test("twenty_four_hour_time is the organization's default_twenty_four_hour_time", async () => {
    await admin.client.patch("/realm/user_settings_defaults", { twenty_four_hour_time: true });
    const body = (await member.client.post("/register", { fetch_event_types: ["realm_user_settings_defaults", "realm"] })).body;
    expect(body.realm_user_settings_defaults.twenty_four_hour_time).toBe(true);
    expect(body.realm_default_twenty_four_hour_time).toBe(true);
    const fresh = await createTestUser(server, "Tess Time");
    expect((await fresh.client.post("/register", { fetch_event_types: ["user_settings"] })).body.user_settings.twenty_four_hour_time).toBe(true);
    await admin.client.patch("/realm/user_settings_defaults", { twenty_four_hour_time: false });
  });

  test("verifyAction: the events turn the old state into the new", async () => {
    const events = await verifyAction(member.client, ["realm_user_settings_defaults"], () => admin.client.patch("/realm/user_settings_defaults", { dense_mode: false, user_list_style: 3 }));
    expect(events.map((e) => [e.property, e.value])).toEqual([
      ["dense_mode", false],
      ["user_list_style", 3],
    ]);
  });

  test.each([
    [{ color_scheme: 7 }, "Invalid color_scheme"],
    [{ web_home_view: "nowhere" }, "Invalid web_home_view"],
    [{ notification_sound: "klaxon" }, "Invalid notification sound 'klaxon'"],
    [{ email_notifications_batching_period_seconds: 0 }, "Invalid email batching period: 0 seconds"],
    [{ enter_sends: 3 }, "enter_sends is not a boolean"],
    [{ email_address_visibility: 99 }, "Invalid email_address_visibility"],
  ] as Array<[Record<string, unknown>, unknown]>)("%j is refused and changes nothing", async (params, msg) => {
    const before = await defaults();
    const res = await admin.client.patch("/realm/user_settings_defaults", { ...params, dense_mode: !before.dense_mode });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await defaults()).toEqual(before);
  });

  test("members may not change them", async () => {
    const before = await defaults();
    const res = await member.client.patch("/realm/user_settings_defaults", { color_scheme: 3 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    expect(await defaults()).toEqual(before);
  });
});
