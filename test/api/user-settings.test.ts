// Zulip 9.0's personal settings: the `user_settings` section of /register (feature level 89), every
// setting through PATCH /settings and its 3.x aliases, and the events each kind of client gets: a
// `user_settings` event for every change, and 3.x's update_display_settings /
// update_global_notifications besides only for queues without the user_settings_object capability.
import { applyEvents } from "@chat/core";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const MODERN = { client_capabilities: { user_settings_object: true, notification_settings_null: true, bulk_message_deletion: true } };
const LEGACY_TYPES = ["update_display_settings", "update_global_notifications"];

/** Every key Zulip 9.0's user_settings has, and its type. */
const USER_SETTINGS_TYPES: Record<string, string> = {
  ...Object.fromEntries(
    [
      "twenty_four_hour_time", "dense_mode", "starred_message_counts", "fluid_layout_width", "high_contrast_mode", "translate_emoticons",
      "left_side_userlist", "enter_sends", "enable_drafts_synchronization", "display_emoji_reaction_users", "web_escape_navigates_to_home_view",
      "web_navigate_to_sent_message", "enable_stream_desktop_notifications", "enable_stream_email_notifications", "enable_stream_push_notifications",
      "enable_stream_audible_notifications", "wildcard_mentions_notify", "enable_desktop_notifications", "enable_sounds",
      "enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications", "enable_digest_emails",
      "enable_login_emails", "enable_marketing_emails", "message_content_in_email_notifications", "pm_content_in_desktop_notifications",
      "presence_enabled", "enable_followed_topic_desktop_notifications", "enable_followed_topic_email_notifications",
      "enable_followed_topic_push_notifications", "enable_followed_topic_audible_notifications", "enable_followed_topic_wildcard_mentions_notify",
      "automatically_follow_topics_where_mentioned", "send_stream_typing_notifications", "send_private_typing_notifications", "send_read_receipts",
      "receives_typing_notifications", "allow_private_data_export",
      // Zulip 10.0 (feature levels 329, 350).
      "web_suggest_update_timezone", "hide_ai_features",
    ].map((key) => [key, "boolean"]),
  ),
  ...Object.fromEntries(
    [
      "color_scheme", "demote_inactive_streams", "desktop_icon_count_display", "email_notifications_batching_period_seconds",
      "realm_name_in_email_notifications_policy", "automatically_follow_topics_policy", "automatically_unmute_topics_in_muted_streams_policy",
      "web_font_size_px", "web_line_height_percent", "web_mark_read_on_scroll_policy", "web_channel_default_view", "user_list_style",
      "web_stream_unreads_count_display_policy", "email_address_visibility",
    ].map((key) => [key, "number"]),
  ),
  ...Object.fromEntries(["default_language", "web_home_view", "emojiset", "notification_sound", "timezone", "web_animate_image_previews"].map((key) => [key, "string"])),
  available_notification_sounds: "object",
  emojiset_choices: "object",
};

describe.each(MODES)("personal settings, Zulip 9.0 (%s)", (mode) => {
  let server: TestServer;
  let fresh: TestUser;
  let user: TestUser;
  let bot: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    fresh = await createTestUser(server, "Fiona Fresh");
    user = await createTestUser(server, "Uma Settings");
    bot = await createTestUser(server, "Settings Robot");
    await server.running.services.db.prisma.userProfile.update({ where: { id: bot.id }, data: { is_bot: true, bot_type: 1 } });
  });
  afterAll(() => server.stop());

  const register = async (client: TestUser, params: Record<string, unknown> = {}) => {
    const res = await client.client.post("/register", params);
    expect(res.body.result).toBe("success");
    return res.body as Record<string, any>;
  };
  const settingsOf = async (client: TestUser) => (await register(client, { event_types: ["user_settings"], ...MODERN })).user_settings as Record<string, any>;

  describe("/register", () => {
    test("user_settings has every key of Zulip 9.0, typed, with Zulip's defaults for what 3.x did not have", async () => {
      const settings = (await register(fresh, MODERN)).user_settings;
      expect(Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, typeof value]))).toEqual(USER_SETTINGS_TYPES);
      expect(settings).toMatchObject({
        send_private_typing_notifications: true,
        send_stream_typing_notifications: true,
        send_read_receipts: true,
        receives_typing_notifications: true,
        display_emoji_reaction_users: true,
        web_home_view: "recent_topics",
        web_font_size_px: 16,
        web_line_height_percent: 140,
        web_animate_image_previews: "on_hover",
        user_list_style: 2,
        web_channel_default_view: 1,
        automatically_follow_topics_policy: 3,
        automatically_unmute_topics_in_muted_streams_policy: 2,
        realm_name_in_email_notifications_policy: 1,
        email_notifications_batching_period_seconds: 120,
        desktop_icon_count_display: 1,
        notification_sound: "zulip",
        timezone: "",
      });
      expect(settings.available_notification_sounds).toContain("ding");
      expect(settings.available_notification_sounds).not.toContain("none");
      expect(settings.emojiset_choices).toContainEqual({ key: "google", text: expect.any(String) });
    });

    test("email_address_visibility starts as realm_user_settings_defaults says (feature level 163)", async () => {
      const state = await register(fresh, { event_types: ["realm_user_settings_defaults"] });
      expect((await settingsOf(fresh)).email_address_visibility).toBe((state.realm_user_settings_defaults as Record<string, unknown>).email_address_visibility);
    });

    test("with user_settings_object the settings are only in user_settings, even when the legacy sections are asked for", async () => {
      for (const params of [MODERN, { ...MODERN, event_types: ["user_settings", ...LEGACY_TYPES] }]) {
        const body = await register(fresh, params);
        expect(body.user_settings).toBeDefined();
        for (const key of ["twenty_four_hour_time", "emojiset", "emojiset_choices", "enable_sounds", "available_notification_sounds", "timezone", "default_view"]) {
          expect(body).not.toHaveProperty(key);
        }
      }
    });

    test("without it the legacy sections' top-level keys come too, under 3.x's names and values", async () => {
      const body = await register(fresh);
      expect(body.user_settings).toBeDefined();
      expect(body).toMatchObject({ twenty_four_hour_time: false, enable_sounds: true, default_view: "recent_topics", realm_name_in_notifications: false, desktop_icon_count_display: 1 });
      expect(body).not.toHaveProperty("web_home_view");
      expect(body).not.toHaveProperty("realm_name_in_email_notifications_policy");
    });

    test("user_settings comes only when asked for by name, whichever way (zulip-terminal HEAD fetches it with fetch_event_types)", async () => {
      expect(await register(fresh, { event_types: LEGACY_TYPES })).not.toHaveProperty("user_settings");
      const terminal = await register(fresh, { event_types: ["message", "user_settings"], fetch_event_types: ["realm_user", "user_settings"] });
      expect(terminal.user_settings).toMatchObject({ send_private_typing_notifications: true, twenty_four_hour_time: false, pm_content_in_desktop_notifications: true });
      expect(terminal).not.toHaveProperty("twenty_four_hour_time");
    });
  });

  describe("PATCH /settings", () => {
    test.each([
      ["a boolean", { send_read_receipts: false }, { send_read_receipts: false }],
      ["booleans sent by flutter and zulip-terminal", { display_emoji_reaction_users: false, send_private_typing_notifications: false }, { display_emoji_reaction_users: false, send_private_typing_notifications: false }],
      ["an integer choice", { user_list_style: 3, web_mark_read_on_scroll_policy: 2, automatically_follow_topics_policy: 4 }, { user_list_style: 3, web_mark_read_on_scroll_policy: 2, automatically_follow_topics_policy: 4 }],
      ["a string choice, plain or JSON-encoded", { web_animate_image_previews: "always", web_home_view: '"inbox"' }, { web_animate_image_previews: "always", web_home_view: "inbox" }],
      ["a number", { web_font_size_px: 18, email_notifications_batching_period_seconds: 600 }, { web_font_size_px: 18, email_notifications_batching_period_seconds: 600 }],
      ["a 3.x setting by 9.0's values", { desktop_icon_count_display: 4, realm_name_in_email_notifications_policy: 3 }, { desktop_icon_count_display: 4, realm_name_in_email_notifications_policy: 3 }],
      ["a checked string", { notification_sound: "ding", default_language: "fr", timezone: "Europe/Paris" }, { notification_sound: "ding", default_language: "fr", timezone: "Europe/Paris" }],
      ["enter_sends", { enter_sends: true }, { enter_sends: true }],
    ])("changes %s, answers nothing else, and keeps it", async (_kind, params, stored) => {
      const res = await user.client.patch("/settings", params);
      expect(res.body).toEqual({ result: "success", msg: "" });
      expect(await settingsOf(user)).toMatchObject(stored);
    });

    test("with the 3.x account fields in the same request", async () => {
      const res = await user.client.patch("/settings", { full_name: "Uma Renamed", enable_marketing_emails: false });
      expect(res.body).toEqual({ result: "success", msg: "", full_name: "Uma Renamed" });
      expect((await settingsOf(user)).enable_marketing_emails).toBe(false);
    });

    test("nothing at all is still 3.x's refusal", async () => {
      expect((await user.client.patch("/settings", {})).body).toMatchObject({ result: "error", msg: "Please fill out all fields." });
    });

    test.each([
      [{ send_read_receipts: "yes" }, 'Argument "send_read_receipts" is not valid JSON.'],
      [{ send_read_receipts: 1 }, "send_read_receipts is not a boolean"],
      [{ user_list_style: 4 }, "Invalid user_list_style"],
      [{ user_list_style: "compact" }, "user_list_style is not an integer"],
      [{ web_animate_image_previews: "sometimes" }, "Invalid web_animate_image_previews"],
      [{ web_home_view: "streams" }, "Invalid web_home_view"],
      [{ web_channel_default_view: 3 }, "Invalid web_channel_default_view"],
      [{ desktop_icon_count_display: 5 }, "Invalid desktop_icon_count_display"],
      [{ realm_name_in_email_notifications_policy: 0 }, "Invalid realm_name_in_email_notifications_policy"],
      [{ automatically_unmute_topics_in_muted_streams_policy: 7 }, "Invalid automatically_unmute_topics_in_muted_streams_policy"],
      [{ color_scheme: 4 }, "Invalid color_scheme"],
      [{ emojiset: "apple" }, "Invalid emojiset"],
      [{ email_notifications_batching_period_seconds: 0 }, "Invalid email batching period: 0 seconds"],
      [{ email_notifications_batching_period_seconds: 604801 }, "Invalid email batching period: 604801 seconds"],
      [{ notification_sound: "klaxon" }, "Invalid notification sound 'klaxon'"],
      [{ default_language: "xx" }, "Invalid default_language"],
      [{ timezone: "Mars/Olympus_Mons" }, "Invalid timezone"],
      [{ web_font_size_px: -1 }, "Invalid web_font_size_px"],
      [{ web_line_height_percent: 40000 }, "Invalid web_line_height_percent"],
      [{ email_address_visibility: 9 }, "Invalid email_address_visibility"],
      [{ send_read_receipts: false, full_name: "Never Applied", user_list_style: 0 }, "Invalid user_list_style"],
    ])("refuses %j with Zulip's error and changes nothing", async (params, msg) => {
      const before = await settingsOf(user);
      const name = (await register(user, { event_types: ["realm_user"] })).full_name;
      const res = await user.client.patch("/settings", params);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg, code: "BAD_REQUEST" });
      expect(await settingsOf(user)).toEqual(before);
      expect((await register(user, { event_types: ["realm_user"] })).full_name).toBe(name);
    });

    test("email_address_visibility is the user's own (feature level 163; email-visibility-per-user.test.ts)", async () => {
      const current = (await settingsOf(user)).email_address_visibility as number;
      const other = current === 1 ? 4 : 1;
      expect((await user.client.patch("/settings", { email_address_visibility: other })).body).toEqual({ result: "success", msg: "" });
      expect((await settingsOf(user)).email_address_visibility).toBe(other);
      expect((await user.client.patch("/settings", { email_address_visibility: current })).body).toEqual({ result: "success", msg: "" });
    });

    test("refuses bots", async () => {
      expect((await bot.client.patch("/settings", { send_read_receipts: false })).body).toEqual({ result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" });
    });
  });

  describe("the 3.x endpoints", () => {
    test("keep 3.x's names and values, and take the newer settings by 9.0's names", async () => {
      await user.client.patch("/settings", { desktop_icon_count_display: 1, realm_name_in_email_notifications_policy: 1, web_home_view: "recent_topics" });
      const notifications = await user.client.patch("/settings/notifications", { realm_name_in_notifications: true, desktop_icon_count_display: 3, enable_followed_topic_push_notifications: false });
      expect(notifications.body).toEqual({ result: "success", msg: "", realm_name_in_notifications: true, desktop_icon_count_display: 3, enable_followed_topic_push_notifications: false });
      const display = await user.client.patch("/settings/display", { default_view: "all_messages", web_line_height_percent: 150 });
      expect(display.body).toEqual({ result: "success", msg: "", default_view: "all_messages", web_line_height_percent: 150 });
      expect(await settingsOf(user)).toMatchObject({
        realm_name_in_email_notifications_policy: 2,
        desktop_icon_count_display: 4,
        enable_followed_topic_push_notifications: false,
        web_home_view: "all_messages",
        web_line_height_percent: 150,
      });
      expect(await register(user, { event_types: LEGACY_TYPES })).toMatchObject({ realm_name_in_notifications: true, desktop_icon_count_display: 3, default_view: "all_messages" });
    });

    test("refuse 9.0's values of the settings 3.x had", async () => {
      expect((await user.client.patch("/settings/display", { default_view: "inbox" })).body).toMatchObject({ result: "error", msg: "Invalid default_view" });
      expect((await user.client.patch("/settings/display", { user_list_style: 9 })).body).toMatchObject({ result: "error", msg: "Invalid user_list_style" });
    });
  });

  describe("events", () => {
    type Events = Array<Record<string, any>>;
    const strip = (events: Events) => events.map(({ id: _id, ...event }) => event);

    /** Queues of each kind of client, a change, and what each received once the last one's events are in. */
    async function eventsOfEachClient(change: Record<string, unknown>, doneWhen: (event: Record<string, any>) => boolean) {
      const queues = {
        flutter: (await register(user, { ...MODERN, event_types: ["user_settings", "realm_user"] })).queue_id,
        modernAll: (await register(user, MODERN)).queue_id,
        legacyAll: (await register(user)).queue_id,
        terminalHead: (await register(user, { event_types: ["message", "user_settings", "realm_user"] })).queue_id,
        terminal07: (await register(user, { event_types: ["message", ...LEGACY_TYPES] })).queue_id,
        modernLegacyTypes: (await register(user, { ...MODERN, event_types: LEGACY_TYPES })).queue_id,
      };
      const res = await user.client.patch("/settings", change);
      expect(res.body.result).toBe("success");
      await waitForEvent(user.client, queues.legacyAll, doneWhen, { acknowledge: false });
      // A marker change after it: once it is in, every queue has everything before it.
      await user.client.patch("/settings", { web_font_size_px: 17 });
      await user.client.patch("/settings", { web_font_size_px: 16 });
      await waitForEvent(user.client, queues.modernAll, (e) => e.property === "web_font_size_px" && e.value === 16, { acknowledge: false });
      const received: Record<string, Events> = {};
      for (const [kind, queue] of Object.entries(queues)) {
        received[kind] = strip(await drainEvents(user.client, queue)).filter((e) => e.property !== "web_font_size_px" && e.setting_name !== "web_font_size_px");
      }
      return received;
    }

    test("a 3.x display setting: user_settings to all who want it, update_display_settings besides only to queues without user_settings_object", async () => {
      await user.client.patch("/settings", { twenty_four_hour_time: false });
      const received = await eventsOfEachClient({ twenty_four_hour_time: true }, (e) => e.type === "user_settings" && e.property === "twenty_four_hour_time");
      const modern = { type: "user_settings", op: "update", property: "twenty_four_hour_time", value: true };
      const legacy = { type: "update_display_settings", user: user.email, setting_name: "twenty_four_hour_time", setting: true };
      expect(received.flutter).toEqual([modern]);
      expect(received.modernAll).toEqual([modern]);
      expect(received.legacyAll).toEqual([legacy, modern]);
      expect(received.terminalHead).toEqual([modern]);
      expect(received.terminal07).toEqual([legacy]);
      expect(received.modernLegacyTypes).toEqual([]);
    });

    test("a 3.x notification setting renamed since: each under its own name and values", async () => {
      await user.client.patch("/settings", { realm_name_in_email_notifications_policy: 1 });
      const received = await eventsOfEachClient({ realm_name_in_email_notifications_policy: 2 }, (e) => e.type === "user_settings" && e.property === "realm_name_in_email_notifications_policy");
      const modern = { type: "user_settings", op: "update", property: "realm_name_in_email_notifications_policy", value: 2 };
      const legacy = { type: "update_global_notifications", user: user.email, notification_name: "realm_name_in_notifications", setting: true };
      expect(received.legacyAll).toEqual([legacy, modern]);
      expect(received.terminal07).toEqual([legacy]);
      expect(received.flutter).toEqual([modern]);
    });

    test("a change 3.x cannot tell apart sends it no legacy event", async () => {
      await user.client.patch("/settings", { desktop_icon_count_display: 2 });
      const received = await eventsOfEachClient({ desktop_icon_count_display: 3 }, (e) => e.type === "user_settings" && e.property === "desktop_icon_count_display");
      const modern = { type: "user_settings", op: "update", property: "desktop_icon_count_display", value: 3 };
      expect(received.legacyAll).toEqual([modern]);
      expect(received.terminal07).toEqual([]);
    });

    test("a setting newer than 3.x: user_settings only", async () => {
      await user.client.patch("/settings", { send_private_typing_notifications: true });
      const received = await eventsOfEachClient({ send_private_typing_notifications: false }, (e) => e.property === "send_private_typing_notifications");
      const modern = { type: "user_settings", op: "update", property: "send_private_typing_notifications", value: false };
      expect(received.legacyAll).toEqual([modern]);
      expect(received.terminalHead).toEqual([modern]);
      expect(received.flutter).toEqual([modern]);
      expect(received.terminal07).toEqual([]);
    });

    test("default_language carries the language's name in both events", async () => {
      await user.client.patch("/settings", { default_language: "en" });
      const received = await eventsOfEachClient({ default_language: "de" }, (e) => e.type === "user_settings" && e.property === "default_language");
      expect(received.legacyAll).toEqual([
        { type: "update_display_settings", user: user.email, setting_name: "default_language", setting: "de", language_name: "Deutsch" },
        { type: "user_settings", op: "update", property: "default_language", value: "de", language_name: "Deutsch" },
      ]);
    });

    test("verifyAction with user_settings_object: the events keep user_settings", async () => {
      await user.client.patch("/settings", { web_stream_unreads_count_display_policy: 2, emojiset: "google", enter_sends: true, timezone: "UTC" });
      const events = await verifyAction(
        user.client,
        ["user_settings", "realm_user"],
        () => user.client.patch("/settings", { web_stream_unreads_count_display_policy: 3, emojiset: "text", enter_sends: false, timezone: "Asia/Tokyo" }),
        5000,
        MODERN,
      );
      expect(events.filter((e) => e.type === "user_settings").map((e) => e.property).sort()).toEqual(["emojiset", "enter_sends", "timezone", "web_stream_unreads_count_display_policy"]);
    });

    test("verifyAction without it: user_settings and the legacy keys both kept", async () => {
      await user.client.patch("/settings", { desktop_icon_count_display: 1, enable_sounds: true, automatically_follow_topics_where_mentioned: true });
      const events = await verifyAction(user.client, ["user_settings", ...LEGACY_TYPES], () =>
        user.client.patch("/settings/notifications", { desktop_icon_count_display: 2, enable_sounds: false, automatically_follow_topics_where_mentioned: false }),
      );
      expect(events.map((e) => e.type).sort()).toEqual(["update_global_notifications", "update_global_notifications", "user_settings", "user_settings", "user_settings"]);
    });
  });

  test("applyEvents keeps a registered state's user_settings and enter_sends", () => {
    const state = { user_settings: { send_read_receipts: true, enter_sends: false }, enter_sends: false };
    applyEvents(state, [
      { type: "user_settings", op: "update", property: "send_read_receipts", value: false },
      { type: "user_settings", op: "update", property: "enter_sends", value: true },
    ], 1, ["user_settings", "realm_user"]);
    expect(state).toEqual({ user_settings: { send_read_receipts: false, enter_sends: true }, enter_sends: true });
  });
});
