// POST /register as today's official clients send it: zulip-flutter (every section, slim presence,
// its client_capabilities; spec modern-clients.md §1.3, §2.2-2.4) and zulip-terminal HEAD (§4.3:
// event_types and fetch_event_types lists, no capabilities), on an organization with data in every
// section. Flutter's answer is read with its own parsers' rules (support/flutter-contract.ts), and
// the values that today's Zulip encodes differently from 3.x are checked for both kinds of client.
import { SERVER_EMOJI_DATA_PATH } from "@chat/core";
import { readAsFlutter } from "../support/flutter-contract.ts";
import { imagePart, makePng, uploadFiles } from "../support/images.ts";
import { sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { FLUTTER_CAPABILITIES } from "../support/flutter-connection.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const FLUTTER_REGISTER = { apply_markdown: true, client_gravatar: false, slim_presence: true, idle_queue_timeout: '"mobile"', client_capabilities: FLUTTER_CAPABILITIES };

/** zulip-terminal HEAD (model.py:131-161, 2104-2127). */
const TERMINAL_REGISTER = {
  event_types: ["message", "update_message", "reaction", "submessage", "subscription", "typing", "update_message_flags", "user_settings", "realm_emoji", "realm_user"],
  fetch_event_types: ["realm", "presence", "subscription", "message", "starred_messages", "update_message_flags", "muted_topics", "realm_user", "realm_user_groups", "user_settings", "realm_emoji", "custom_profile_fields", "zulip_version"],
  narrow: [],
  client_gravatar: true,
  apply_markdown: true,
  include_subscribers: true,
};

const ascendingUnique = (ids: number[]) => ids.every((id, i) => i === 0 || ids[i - 1] < id);

describe.each(MODES)("/register for today's clients (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let me: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    me = await createTestUser(server, "Flo Flutter");
    bob = await createTestUser(server, "Bob Other");
    carol = await createTestUser(server, "Carol Third");

    // Settings whose encoding changed after 3.x: 0 = no edit limit, 4 = "stream administrators".
    const realm = await admin.client.patch("/realm", { wildcard_mention_policy: 4, message_content_edit_limit_seconds: 0, allow_message_deleting: true });
    expect(realm.body.result).toBe("success");

    // Streams: a public one and a private one, the latter with a color a client gave in capitals.
    await subscribeTo(bob.client, ["design"]);
    await subscribeTo(me.client, ["design"]);
    expect((await bob.client.post("/users/me/subscriptions", { subscriptions: [{ name: "secret" }], invite_only: true, principals: [me.email, bob.email] })).body.result).toBe("success");
    ids.secret = (await me.client.get("/get_stream_id", { stream: "secret" })).body.stream_id;
    const color = await me.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: ids.secret, property: "color", value: "#ABC" }] });
    expect(color.body.result).toBe("success");

    // Unread messages of every kind, a mention among them, and one starred.
    ids.streamMessage = await sendStreamMessage(bob.client, "design", "colors", "@**Flo Flutter** look");
    ids.secretMessage = await sendStreamMessage(bob.client, "secret", "plans", "shh");
    ids.dm = await sendPrivateMessage(bob.client, [me.id], "hi Flo");
    ids.dm2 = await sendPrivateMessage(bob.client, [me.id], "again");
    ids.groupDm = await sendPrivateMessage(carol.client, [me.id, bob.id], "all three");
    ids.mine = await sendPrivateMessage(me.client, [carol.id], "hello Carol");
    expect((await me.client.post("/messages/flags", { messages: [ids.dm], op: "add", flag: "starred" })).body.result).toBe("success");

    // Custom profile fields, one an external account, with my values.
    const phone = await admin.client.post("/realm/profile_fields", { name: "Phone", field_type: 1, hint: "Work phone" });
    const github = await admin.client.post("/realm/profile_fields", { name: "GitHub", field_type: 7, field_data: { subtype: "github" } });
    ids.phone = phone.body.id;
    ids.github = github.body.id;
    const profile = await admin.client.patch(`/users/${me.id}`, { profile_data: [{ id: ids.phone, value: "555-1234" }, { id: ids.github, value: "flo" }] });
    expect(profile.body.result).toBe("success");

    // A custom emoji, a user group, a status, presence.
    const emoji = await uploadFiles(bob.client, "/realm/emoji/party_flo", [imagePart(await makePng(64, 64))]);
    expect(emoji.status).toBe(200);
    expect((await bob.client.post("/user_groups/create", { name: "designers", description: "They design", members: [me.id, bob.id] })).body.result).toBe("success");
    // Bob reports presence before going away: `away` turns presence_enabled off (feature level 148),
    // after which his reports are not recorded.
    expect((await bob.client.post("/users/me/presence", { status: "active" })).body.result).toBe("success");
    expect((await bob.client.post("/users/me/status", { status_text: "in a meeting", away: true })).body.result).toBe("success");
    expect((await carol.client.post("/users/me/presence", { status: "idle" })).body.result).toBe("success");
  });
  afterAll(() => server.stop());

  async function register(user: TestUser, params: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await user.client.post("/register", params);
    expect(res.body).toMatchObject({ result: "success" });
    return res.body;
  }

  describe("zulip-flutter", () => {
    let body: Record<string, any>;
    beforeAll(async () => {
      body = await register(me, FLUTTER_REGISTER);
    });

    test("the answer parses as flutter's InitialSnapshot, with the self user and a queue", () => {
      expect(readAsFlutter("InitialSnapshot", body).failures).toEqual([]);
      expect(body.queue_id).toEqual(expect.any(String));
      expect(body.realm_users.map((u: { user_id: number }) => u.user_id)).toContain(me.id);
    });

    test("server constants", () => {
      expect(body).toMatchObject({
        max_stream_name_length: 60,
        max_topic_length: 60,
        server_presence_ping_interval_seconds: 60,
        server_presence_offline_threshold_seconds: 140,
        server_typing_started_expiry_period_milliseconds: 15000,
        server_typing_stopped_wait_period_milliseconds: 5000,
        server_typing_started_wait_period_milliseconds: 10000,
        server_thumbnail_formats: [],
        muted_users: [],
        realm_linkifiers: [],
        realm_playgrounds: [],
        // Zulip 9.0's one-time notices a new user has yet to see (onboarding-steps.test.ts).
        onboarding_steps: expect.arrayContaining([{ type: "one_time_notice", name: "visibility_policy_banner" }]),
        has_zoom_token: false,
        giphy_api_key: "",
        realm_enable_spectator_access: false,
        server_web_public_streams_enabled: false,
        realm_presence_disabled: false,
        realm_name: expect.any(String),
        realm_waiting_period_threshold: 0,
        realm_mandatory_topics: false,
        realm_allow_message_editing: true,
        max_file_upload_size_mib: 25,
        password_min_length: 6,
      });
      expect(body.realm_icon_url).toEqual(expect.any(String));
      expect(body.realm_url).toBe(body.realm_uri);
      expect(body.realm_date_created).toEqual(expect.any(Number));
      expect(body.server_emoji_data_url).toBe(`http://chat.test${SERVER_EMOJI_DATA_PATH}`);
      // Strictly longer than the heartbeat interval (50 s by default), as flutter times out at it.
      expect(body.event_queue_longpoll_timeout_seconds).toBeGreaterThanOrEqual(90);
      expect(body.realm_default_external_accounts.github).toEqual({ text: "GitHub", name: "GitHub username", hint: "", url_pattern: "https://github.com/%(username)s" });
      expect(Object.keys(body.realm_default_external_accounts).sort()).toEqual(["github", "twitter"]);
    });

    test("realm settings in today's encoding", () => {
      expect(body.realm_wildcard_mention_policy).toBe(5);
      expect(body.realm_message_content_edit_limit_seconds).toBeNull();
      expect(body.realm_message_content_delete_limit_seconds).toBeNull();
      expect(body.realm_message_retention_days).toBe(-1);
      // allow_message_deleting: senders (guests too) delete their own messages: Zulip 10.0's
      // can_delete_own_message_group is role:everyone (feature level 291 removed the integer).
      expect(body).not.toHaveProperty("realm_delete_own_message_policy");
      const everyone = (body.realm_user_groups as Array<{ id: number; name: string }> | undefined)?.find((g) => g.name === "role:everyone")?.id;
      expect(body.realm_can_delete_own_message_group).toBe(everyone ?? expect.any(Number));
    });

    test("users: every User field, delivery_email present (null where not visible), system bots marked", () => {
      const self = body.realm_users.find((u: { user_id: number }) => u.user_id === me.id);
      expect(self).toMatchObject({ email: me.email, full_name: "Flo Flutter", is_active: true, is_bot: false, role: 400, timezone: expect.any(String), avatar_version: expect.any(Number) });
      expect(new Date(self.date_joined).toISOString()).toBe(self.date_joined);
      expect(self.avatar_url).toMatch(/^https?:\/\//);
      expect(self.profile_data).toMatchObject({ [ids.phone]: { value: "555-1234" }, [ids.github]: { value: "flo" } });
      // Each user's email_address_visibility decides (feature level 163): under the default,
      // "everyone", a member sees every address, which is then the shown one.
      for (const user of body.realm_users) expect(user).toHaveProperty("delivery_email", user.email);
      expect(body.cross_realm_bots.length).toBeGreaterThan(0);
      for (const bot of body.cross_realm_bots) expect(bot).toMatchObject({ is_system_bot: true, is_bot: true });
      expect(body.realm_non_active_users).toEqual([]);
      expect(body).toMatchObject({ user_id: me.id, email: me.email, full_name: "Flo Flutter" });
    });

    test("an administrator gets everyone's delivery_email", async () => {
      const adminBody = await register(admin, FLUTTER_REGISTER);
      const flo = adminBody.realm_users.find((u: { user_id: number }) => u.user_id === me.id);
      expect(flo.delivery_email).toBe(me.email);
    });

    test("custom profile fields, emoji and groups", () => {
      expect(body.custom_profile_fields).toEqual([
        { id: ids.phone, type: 1, order: expect.any(Number), name: "Phone", hint: "Work phone", field_data: "", required: false, editable_by_user: true },
        { id: ids.github, type: 7, order: expect.any(Number), name: "GitHub", hint: "", field_data: JSON.stringify({ subtype: "github" }), required: false, editable_by_user: true },
      ]);
      const emoji = Object.values(body.realm_emoji as Record<string, Record<string, unknown>>).find((e) => e.name === "party_flo");
      expect(emoji).toMatchObject({ id: expect.any(String), source_url: expect.any(String), deactivated: false, still_url: null, author_id: bob.id });
      // The users' groups, after Zulip 9.0's eight system groups (test/api/system-groups.test.ts).
      const groups = body.realm_user_groups as Array<{ is_system_group: boolean }>;
      expect(groups.filter((g) => g.is_system_group)).toHaveLength(8);
      expect(groups.filter((g) => !g.is_system_group)).toEqual([
        {
          id: expect.any(Number),
          name: "designers",
          description: "They design",
          members: [me.id, bob.id].sort((a, b) => a - b),
          direct_subgroup_ids: [],
          is_system_group: false,
          deactivated: false,
          // Zulip 10.0's group fields: its creator, who manages it and adds members (as an anonymous group).
          creator_id: bob.id,
          date_created: expect.any(Number),
          can_mention_group: expect.any(Number),
          can_manage_group: { direct_members: [bob.id], direct_subgroups: [] },
          can_add_members_group: { direct_members: [bob.id], direct_subgroups: [] },
          can_join_group: expect.any(Number),
          can_leave_group: expect.any(Number),
          can_remove_members_group: expect.any(Number),
        },
      ]);
    });

    test("presences in the slim form, statuses by user id", () => {
      expect(Object.keys(body.presences).sort()).toEqual([String(bob.id), String(carol.id)].sort());
      const bobPresence = body.presences[String(bob.id)];
      expect(bobPresence).toEqual({ active_timestamp: expect.any(Number), idle_timestamp: expect.any(Number) });
      expect(bobPresence.idle_timestamp).toBe(bobPresence.active_timestamp);
      // Carol was never active: active when she joined, connected since.
      const carolPresence = body.presences[String(carol.id)];
      expect(carolPresence.active_timestamp).toBeLessThanOrEqual(carolPresence.idle_timestamp);
      expect(body.user_status[String(bob.id)]).toMatchObject({ status_text: "in a meeting" });
    });

    test("subscriptions and streams", () => {
      const secret = body.subscriptions.find((s: { name: string }) => s.name === "secret");
      expect(secret).toMatchObject({ stream_id: ids.secret, color: "#aabbcc", invite_only: true, is_web_public: false, is_muted: false, pin_to_top: false, history_public_to_subscribers: expect.any(Boolean) });
      for (const sub of body.subscriptions) {
        expect(sub.color).toMatch(/^#[0-9a-f]{6}$/);
        expect([1, 2, 3, 4]).toContain(sub.stream_post_policy);
        expect(sub).toMatchObject({ date_created: expect.any(Number), rendered_description: expect.any(String), is_muted: expect.any(Boolean), pin_to_top: expect.any(Boolean) });
        expect(sub).toHaveProperty("first_message_id");
        expect(sub).toHaveProperty("message_retention_days");
        expect(sub).toHaveProperty("stream_weekly_traffic");
        // notification_settings_null: null is "as the global setting".
        expect(sub.desktop_notifications).toBeNull();
      }
      for (const stream of body.streams) {
        expect([1, 2, 3, 4]).toContain(stream.stream_post_policy);
        expect(stream).toMatchObject({ date_created: expect.any(Number), is_web_public: false, history_public_to_subscribers: expect.any(Boolean) });
      }
      expect(body.streams.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(["design", "secret"]));
    });

    test("unread messages, starred messages, recent conversations", () => {
      const unread = body.unread_msgs;
      expect(unread.old_unreads_missing).toBe(false);
      // (Also the Notification Bot's welcome.)
      expect(unread.pms).toContainEqual({ other_user_id: bob.id, sender_id: bob.id, unread_message_ids: [ids.dm, ids.dm2] });
      for (const pm of unread.pms) expect(pm.other_user_id).toBe(pm.sender_id);
      expect(unread.huddles).toEqual([{ user_ids_string: [me.id, bob.id, carol.id].sort((a, b) => a - b).join(","), unread_message_ids: [ids.groupDm] }]);
      expect(unread.streams).toEqual(
        expect.arrayContaining([expect.objectContaining({ stream_id: ids.secret, topic: "plans", unread_message_ids: [ids.secretMessage] })]),
      );
      expect(unread.mentions).toEqual([ids.streamMessage]);
      for (const bucket of [...unread.pms, ...unread.streams, ...unread.huddles]) expect(ascendingUnique(bucket.unread_message_ids)).toBe(true);
      const idCount = (buckets: Array<{ unread_message_ids: number[] }>) => buckets.reduce((n, b) => n + b.unread_message_ids.length, 0);
      expect(unread.count).toBe(idCount(unread.pms) + idCount(unread.huddles) + idCount(unread.streams));
      expect(body.starred_messages).toEqual([ids.dm]);
      // Newest first; the oldest is the Notification Bot's welcome.
      expect(body.recent_private_conversations.slice(0, 3)).toEqual([
        { max_message_id: ids.mine, user_ids: [carol.id] },
        { max_message_id: ids.groupDm, user_ids: [bob.id, carol.id].sort((a, b) => a - b) },
        { max_message_id: ids.dm2, user_ids: [bob.id] },
      ]);
      expect(body.max_message_id).toBeGreaterThanOrEqual(ids.mine);
    });

    test("a realm change reaches a flutter queue in today's encoding", async () => {
      const events = async (queueId: string, count: number) => {
        for (;;) {
          const res = await me.client.get("/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
          const found = (res.body.events as Array<Record<string, any>>).filter((e) => e.type === "realm");
          if (found.length >= count) return found;
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const modern = body.queue_id as string;
      const legacy = (await register(me, { event_types: ["realm"] })).queue_id as string;
      await admin.client.patch("/realm", { allow_message_deleting: false, wildcard_mention_policy: 5 });
      await admin.client.patch("/realm", { wildcard_mention_policy: 4, allow_message_deleting: true });
      // 3.x's allow_message_deleting is a shorthand for can_delete_own_message_group (Zulip 10.0,
      // feature level 291); wildcard_mention_policy 5 and 3.x's 4 are both role:administrators,
      // which it already was: no change, no event.
      const modernEvents = await events(modern, 4);
      // The group, and the boolean /register still has; no integer Zulip 10.0 removed.
      expect(modernEvents.map((e) => Object.keys(e.data ?? { [e.property]: e.value }))).toEqual([["can_delete_own_message_group"], ["allow_message_deleting"], ["can_delete_own_message_group"], ["allow_message_deleting"]]);
      const legacyEvents = await events(legacy, 6);
      expect(legacyEvents.filter((e) => e.property === "allow_message_deleting").map((e) => e.value)).toEqual([false, true]);
      expect(legacyEvents.filter((e) => e.property === "wildcard_mention_policy")).toEqual([]);
    });
  });

  describe("zulip-terminal HEAD and other 3.x-era clients", () => {
    let body: Record<string, any>;
    beforeAll(async () => {
      body = await register(me, TERMINAL_REGISTER);
    });

    test("every key the terminal reads, in the forms it reads", () => {
      expect(body).toMatchObject({ zulip_version: expect.any(String), zulip_feature_level: expect.any(Number), queue_id: expect.any(String), last_event_id: expect.any(Number) });
      expect(body).toMatchObject({ user_id: me.id, email: me.email, full_name: "Flo Flutter", realm_name: expect.any(String), max_message_id: expect.any(Number) });
      expect(body.realm_users.find((u: { user_id: number }) => u.user_id === me.id)).toMatchObject({ is_bot: false, role: 400, profile_data: expect.any(Object) });
      expect(body.cross_realm_bots.length).toBeGreaterThan(0);
      // Legacy presence: by email, per client and aggregated.
      expect(body.presences[bob.email]).toMatchObject({ aggregated: { status: "active" } });
      const secret = body.subscriptions.find((s: { name: string }) => s.name === "secret");
      expect(secret).toMatchObject({ stream_id: ids.secret, description: expect.any(String), color: "#ABC", pin_to_top: false, is_muted: false, invite_only: true, is_web_public: false, subscribers: [me.id, bob.id].sort((a, b) => a - b), date_created: expect.any(Number) });
      // No notification_settings_null: the inherited values, never null.
      expect(secret.desktop_notifications).toEqual(expect.any(Boolean));
      expect(secret).toHaveProperty("message_retention_days");
      expect(body.muted_topics).toEqual([]);
      expect(body.unread_msgs.pms).toContainEqual({ other_user_id: bob.id, sender_id: bob.id, unread_message_ids: [ids.dm, ids.dm2] });
      expect(body.unread_msgs.huddles[0].user_ids_string).toEqual(expect.any(String));
      // Zulip 9.0's system groups come first, as Zulip sends them to every client (the terminal lists them too).
      expect(body.realm_user_groups.map((g: { name: string }) => g.name)).toEqual([
        "role:nobody",
        "role:owners",
        "role:administrators",
        "role:moderators",
        "role:fullmembers",
        "role:members",
        "role:everyone",
        "role:internet",
        "designers",
      ]);
      expect(Object.values(body.realm_emoji).map((e: any) => e.name)).toContain("party_flo");
      expect(body.custom_profile_fields).toHaveLength(2);
      expect(body.user_settings).toMatchObject({ send_private_typing_notifications: expect.any(Boolean), twenty_four_hour_time: expect.any(Boolean), pm_content_in_desktop_notifications: expect.any(Boolean) });
      // Only what it asked for.
      expect(body).not.toHaveProperty("streams");
      expect(body).not.toHaveProperty("recent_private_conversations");
    });

    test("3.x encodings stay for clients that declare no capability", () => {
      expect(body.realm_message_retention_days).toBeNull();
      // 3.x's 4 (stream administrators) was enforced as administrators: role:administrators now, read back as 5.
      expect(body.realm_wildcard_mention_policy).toBe(5);
      expect(body.realm_message_content_edit_limit_seconds).toBe(0);
      expect(body).not.toHaveProperty("realm_delete_own_message_policy");
      // delivery_email only where it may be seen, as in 3.x.
      for (const user of body.realm_users) expect(user).not.toHaveProperty("delivery_email");
    });

    test("slim_presence without capabilities is the modern form too (as Zulip since 3.0)", async () => {
      const slim = await register(me, { event_types: ["presence"], slim_presence: true });
      expect(slim.presences[String(bob.id)]).toEqual({ active_timestamp: expect.any(Number), idle_timestamp: expect.any(Number) });
    });

    test("no event_types: every section for a 3.x client too, in its encodings", async () => {
      const all = await register(me, {});
      for (const key of ["realm_users", "subscriptions", "streams", "unread_msgs", "presences", "muted_topics", "muted_users", "realm_emoji", "realm_user_groups", "custom_profile_fields", "recent_private_conversations", "starred_messages", "alert_words", "user_status", "server_emoji_data_url"]) {
        expect(all).toHaveProperty(key);
      }
      expect(all.realm_wildcard_mention_policy).toBe(5);
    });
  });
});
