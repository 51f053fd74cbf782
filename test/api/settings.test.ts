import { createMember as createSharedMember } from "../support/users.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("settings (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;
  let memberId: number;
  let other: ApiClient;
  let bot: ApiClient;

  const createMember = (email: string, fullName: string) => createSharedMember(server, email, fullName);

  const me = async (client: ApiClient) => (await client.post("/register", { event_types: ["update_global_notifications", "update_display_settings"] })).body;

  beforeAll(async () => {
    server = await startTestServer(mode);
    ({ id: memberId, client: member } = await createMember("set@example.com", "Sam Settings"));
    ({ client: other } = await createMember("other@example.com", "Otto Other"));
    const created = await createMember("settings-bot@example.com", "Settings Bot");
    await server.running.services.db.prisma.userProfile.update({ where: { id: created.id }, data: { is_bot: true, bot_type: 1 } });
    bot = created.client;
  });
  afterAll(() => server.stop());

  describe("PATCH /settings/notifications", () => {
    test("answers with the settings that changed and sends one event per change to the user only", async () => {
      const queue = (await member.post("/register", { event_types: ["update_global_notifications"] })).body.queue_id;
      const otherQueue = (await other.post("/register", { event_types: ["update_global_notifications"] })).body.queue_id;
      const res = await member.patch("/settings/notifications", {
        enable_sounds: false,
        enable_desktop_notifications: true, // already true: not a change
        notification_sound: "ding",
        desktop_icon_count_display: 2,
      });
      expect(res.body).toEqual({ result: "success", msg: "", enable_sounds: false, notification_sound: "ding", desktop_icon_count_display: 2 });
      await waitForEvent(member, queue, (e) => e.notification_name === "desktop_icon_count_display");
      const events = await drainEvents(member, queue);
      expect(events.map(({ id: _id, ...e }) => e)).toEqual([
        { type: "update_global_notifications", user: "set@example.com", notification_name: "notification_sound", setting: "ding" },
        { type: "update_global_notifications", user: "set@example.com", notification_name: "enable_sounds", setting: false },
        { type: "update_global_notifications", user: "set@example.com", notification_name: "desktop_icon_count_display", setting: 2 },
      ]);
      expect(await drainEvents(other, otherQueue)).toEqual([]);
      expect(await me(member)).toMatchObject({ enable_sounds: false, notification_sound: "ding", desktop_icon_count_display: 2 });
    });

    test("setting a value it already has changes nothing and sends nothing", async () => {
      const queue = (await member.post("/register", { event_types: ["update_global_notifications"] })).body.queue_id;
      const res = await member.patch("/settings/notifications", { enable_sounds: false });
      expect(res.body).toEqual({ result: "success", msg: "" });
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(member, queue)).toEqual([]);
    });

    test.each([
      [{ enable_sounds: "yes" }, 'Argument "enable_sounds" is not valid JSON.'],
      [{ enable_sounds: 1 }, "enable_sounds is not a boolean"],
      [{ notification_sound: "no-such-sound" }, "Invalid notification sound 'no-such-sound'"],
      [{ desktop_icon_count_display: 4 }, "Invalid desktop_icon_count_display"],
      [{ desktop_icon_count_display: 0 }, "Invalid desktop_icon_count_display"],
      [{ desktop_icon_count_display: "two" }, "desktop_icon_count_display is not an integer"],
      [{ enable_digest_emails: false, desktop_icon_count_display: 9 }, "Invalid desktop_icon_count_display"],
    ])("refuses %j and changes nothing", async (params, msg) => {
      const before = await me(member);
      const res = await member.patch("/settings/notifications", params);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg, code: "BAD_REQUEST" });
      const after = await me(member);
      for (const key of ["enable_sounds", "notification_sound", "desktop_icon_count_display", "enable_digest_emails"]) expect(after[key]).toEqual(before[key]);
    });

    test("refuses bots", async () => {
      const res = await bot.patch("/settings/notifications", { enable_sounds: false });
      expect(res.body).toEqual({ result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" });
    });

    test("verifyAction: the events turn the old state into the new one", async () => {
      const events = await verifyAction(member, ["update_global_notifications"], () =>
        member.patch("/settings/notifications", { enable_offline_email_notifications: false, wildcard_mentions_notify: false, notification_sound: "chime" }),
      );
      expect(events).toHaveLength(3);
    });
  });

  describe("PATCH /settings/display", () => {
    test("answers with the changes and sends update_display_settings to the user only", async () => {
      const queue = (await member.post("/register", { event_types: ["update_display_settings"] })).body.queue_id;
      const otherQueue = (await other.post("/register", { event_types: ["update_display_settings", "realm_user"] })).body.queue_id;
      const res = await member.patch("/settings/display", {
        twenty_four_hour_time: true,
        dense_mode: true, // unchanged
        color_scheme: 3,
        emojiset: "twitter",
        default_language: "de",
        demote_inactive_streams: 2,
        default_view: "all_messages",
      });
      expect(res.body).toEqual({
        result: "success",
        msg: "",
        twenty_four_hour_time: true,
        color_scheme: 3,
        emojiset: "twitter",
        default_language: "de",
        demote_inactive_streams: 2,
        default_view: "all_messages",
      });
      await waitForEvent(member, queue, (e) => e.setting_name === "demote_inactive_streams");
      const events = await drainEvents(member, queue);
      expect(events.map((e) => [e.setting_name, e.setting])).toEqual([
        ["twenty_four_hour_time", true],
        ["color_scheme", 3],
        ["default_language", "de"],
        ["default_view", "all_messages"],
        ["emojiset", "twitter"],
        ["demote_inactive_streams", 2],
      ]);
      expect(events.find((e) => e.setting_name === "default_language")).toMatchObject({ type: "update_display_settings", language_name: "Deutsch", user: "set@example.com" });
      expect(events.find((e) => e.setting_name === "emojiset")).not.toHaveProperty("language_name");
      expect(await drainEvents(other, otherQueue)).toEqual([]);
    });

    test("a new timezone also reaches the organization as realm_user update", async () => {
      const queue = (await member.post("/register", { event_types: ["update_display_settings", "realm_user"] })).body.queue_id;
      const otherQueue = (await other.post("/register", { event_types: ["update_display_settings", "realm_user"] })).body.queue_id;
      const res = await member.patch("/settings/display", { timezone: "Europe/Berlin" });
      expect(res.body).toEqual({ result: "success", msg: "", timezone: "Europe/Berlin" });
      const update = await waitForEvent(other, otherQueue, (e) => e.type === "realm_user");
      expect(update).toMatchObject({ op: "update", person: { user_id: memberId, email: "set@example.com", timezone: "Europe/Berlin" } });
      expect((await drainEvents(other, otherQueue)).filter((e) => e.type === "update_display_settings")).toEqual([]);
      await waitForEvent(member, queue, (e) => e.type === "realm_user");
      expect((await drainEvents(member, queue)).map((e) => e.type).sort()).toEqual(["realm_user", "update_display_settings"]);
      const users = (await other.get("/users")).body.members;
      expect(users.find((u: { user_id: number }) => u.user_id === memberId).timezone).toBe("Europe/Berlin");
    });

    test("accepts time zone aliases", async () => {
      expect((await member.patch("/settings/display", { timezone: "US/Mountain" })).body).toMatchObject({ result: "success", timezone: "US/Mountain" });
      expect((await member.patch("/settings/display", { timezone: "UTC" })).body).toMatchObject({ result: "success", timezone: "UTC" });
    });

    test.each([
      [{ dense_mode: "no" }, 'Argument "dense_mode" is not valid JSON.'],
      [{ high_contrast_mode: 0 }, "high_contrast_mode is not a boolean"],
      [{ color_scheme: 4 }, "Invalid color_scheme"],
      [{ color_scheme: "dark" }, "color_scheme is not an integer"],
      [{ demote_inactive_streams: 0 }, "Invalid demote_inactive_streams"],
      [{ emojiset: "apple" }, "Invalid emojiset"],
      [{ default_language: "xx" }, "Invalid default_language"],
      [{ default_view: "inbox" }, "Invalid default_view"],
      [{ timezone: "Mars/Olympus_Mons" }, "Invalid timezone"],
      [{ timezone: "utc" }, "Invalid timezone"],
      [{ timezone: "" }, "Invalid timezone"],
      [{ fluid_layout_width: true, emojiset: "apple" }, "Invalid emojiset"],
    ])("refuses %j and changes nothing", async (params, msg) => {
      const before = await me(member);
      const res = await member.patch("/settings/display", params);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg });
      const after = await me(member);
      expect(after).toEqual({ ...before, queue_id: after.queue_id });
    });

    test("refuses bots", async () => {
      const res = await bot.patch("/settings/display", { dense_mode: false });
      expect(res.body).toEqual({ result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" });
    });

    test("verifyAction: display settings and timezone", async () => {
      const events = await verifyAction(member, ["update_display_settings", "realm_user"], () =>
        member.patch("/settings/display", { left_side_userlist: true, default_language: "fr", timezone: "Asia/Tokyo" }),
      );
      expect(events.map((e) => e.type).sort()).toEqual(["realm_user", "update_display_settings", "update_display_settings", "update_display_settings"]);
    });
  });
});
