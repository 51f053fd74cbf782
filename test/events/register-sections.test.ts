// /register's sections under Zulip's names, each as real clients ask for it with fetch_event_types
// (zulip-terminal asks for `realm_user_groups`, `realm_emoji`, `starred_messages`, `zulip_version`),
// and a verifyAction check for every section an action can change.
import { changeBotOwner, createUser } from "@chat/core";
import { waitForEvent } from "../support/events.ts";
import { registerQueue, sendPrivateMessage, sendStreamMessage } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("/register sections (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let generalId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    generalId = (await member.client.get("/get_stream_id", { stream: "general" })).body.stream_id;
  });
  afterAll(() => server.stop());

  /** What a client gets for these fetch_event_types, as zulip-terminal registers. */
  async function fetched(user: TestUser, names: string[]): Promise<Record<string, any>> {
    const res = await user.client.post("/register", { event_types: ["message"], fetch_event_types: names, apply_markdown: true, client_gravatar: true });
    expect(res.body.result).toBe("success");
    return res.body;
  }

  // Each Zulip section name and the keys it brings (Zulip 3.x's fetch_initial_state_data).
  test.each([
    ["realm_user_groups", ["realm_user_groups"]],
    ["realm_emoji", ["realm_emoji"]],
    ["starred_messages", ["starred_messages"]],
    ["recent_private_conversations", ["recent_private_conversations"]],
    ["hotspots", ["hotspots"]],
    ["realm_domains", ["realm_domains"]],
    ["realm_embedded_bots", ["realm_embedded_bots"]],
    ["realm_incoming_webhook_bots", ["realm_incoming_webhook_bots"]],
    ["realm_bot", ["realm_bots"]],
    ["custom_profile_fields", ["custom_profile_fields", "custom_profile_field_types"]],
    ["stream", ["streams", "stream_name_max_length", "stream_description_max_length"]],
    ["update_display_settings", ["twenty_four_hour_time", "emojiset", "emojiset_choices"]],
    ["update_global_notifications", ["enable_sounds", "pm_content_in_desktop_notifications", "available_notification_sounds"]],
    ["realm_user", ["realm_users", "realm_non_active_users", "cross_realm_bots", "enter_sends", "user_id", "avatar_url"]],
    [
      "realm",
      [
        "realm_uri",
        "realm_icon_url",
        "realm_bot_domain",
        "realm_authentication_methods",
        "realm_presence_disabled",
        "realm_email_auth_enabled",
        "realm_password_auth_enabled",
        "realm_push_notifications_enabled",
        "realm_is_zephyr_mirror_realm",
        "realm_notifications_stream_id",
      ],
    ],
    ["zulip_version", ["zulip_version", "zulip_feature_level"]],
  ])("fetch_event_types [%s] returns %j", async (name, keys) => {
    const body = await fetched(member, [name]);
    for (const key of keys) expect(body).toHaveProperty(key);
    expect(body).not.toHaveProperty("max_message_id");
  });

  test("the sections zulip-terminal asks for at start, all at once", async () => {
    const names = ["realm", "presence", "subscription", "message", "starred_messages", "update_message_flags", "muted_topics", "realm_user", "realm_user_groups", "update_global_notifications", "update_display_settings", "user_settings", "realm_emoji", "zulip_version"];
    const body = await fetched(member, names);
    for (const key of ["realm_user_groups", "realm_emoji", "starred_messages", "cross_realm_bots", "realm_users", "subscriptions", "unread_msgs", "muted_topics", "presences", "twenty_four_hour_time", "pm_content_in_desktop_notifications", "realm_message_retention_days", "max_message_id"]) {
      expect(body).toHaveProperty(key);
    }
  });

  test("the older name `user_group` still brings realm_user_groups; unknown names bring nothing", async () => {
    expect(await fetched(member, ["user_group"])).toHaveProperty("realm_user_groups");
    const unknown = await fetched(member, ["no_such_section"]);
    expect(Object.keys(unknown).sort()).toEqual(["last_event_id", "msg", "queue_id", "result", "zulip_feature_level", "zulip_merge_base", "zulip_version"]);
  });

  test("constant sections say what this server has", async () => {
    const body = await fetched(member, ["realm", "hotspots", "realm_domains", "realm_embedded_bots", "custom_profile_fields", "update_display_settings", "stream", "realm_emoji"]);
    expect(body).toMatchObject({
      hotspots: [],
      realm_domains: [],
      realm_embedded_bots: [
        { name: "helloworld", config: {} },
        { name: "encrypt", config: {} },
        { name: "followup", config: {} },
      ],
      realm_emoji: {},
      stream_name_max_length: 60,
      stream_description_max_length: 1024,
      realm_uri: "http://chat.test",
      realm_bot_domain: "chat.test",
      realm_presence_disabled: false,
      realm_email_auth_enabled: true,
      realm_password_auth_enabled: true,
      realm_push_notifications_enabled: false,
      realm_is_zephyr_mirror_realm: false,
      realm_notifications_stream_id: generalId,
      max_file_upload_size_mib: 25,
      // REALM_UPLOAD_QUOTA_MIB's default, 5 GiB, in bytes (Zulip 3.x sends bytes, or null for none).
      realm_upload_quota: 5 * 1024 * 1024 * 1024,
      realm_icon_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon$/),
      // Feature level 243's form: each backend says whether it is on and could be.
      realm_authentication_methods: expect.objectContaining({ Email: { enabled: true, available: true }, Google: expect.objectContaining({ enabled: false }) }),
    });
    expect(body.custom_profile_field_types).toMatchObject({ SHORT_TEXT: { id: 1, name: "Short text" }, EXTERNAL_ACCOUNT: { id: 7, name: "External account" } });
    expect(body.emojiset_choices).toEqual([
      { key: "google", text: "Google modern" },
      { key: "google-blob", text: "Google classic" },
      { key: "twitter", text: "Twitter" },
      { key: "text", text: "Plain text" },
    ]);
  });

  test("realm_uri is the organization's own address", async () => {
    const { running } = server;
    await running.services.actions.run(0, async (tx, events) => {
      const { createRealm } = await import("@chat/core");
      await createRealm(tx, events, running.services.ctx, { subdomain: "acme", name: "Acme", owner: { email: "boss@acme.example", fullName: "Boss", password: "boss-password" } });
    });
    const boss = await running.services.db.prisma.userProfile.findFirstOrThrow({ where: { email: "boss@acme.example" } });
    const res = await server.client(boss.email, boss.api_key, "acme.chat.test").post("/register", { event_types: ["realm"] });
    expect(res.body.realm_uri).toBe("http://acme.chat.test");
  });

  test("realm_notifications_stream_id is -1 when unset, and the realm event keeps it so", async () => {
    await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { notifications_stream_id: -1 }));
    expect((await fetched(member, ["realm"])).realm_notifications_stream_id).toBe(-1);
    await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { notifications_stream_id: generalId }));
  });

  describe("system bots and bots", () => {
    test("the Notification Bot is a cross-realm bot with the fields clients read, not a realm user", async () => {
      const body = await fetched(member, ["realm_user"]);
      expect(body.cross_realm_bots).toEqual([
        expect.objectContaining({ user_id: expect.any(Number), email: expect.stringMatching(/^notification-bot@chat\.test$/), full_name: "Notification Bot", is_bot: true, is_cross_realm_bot: true, bot_owner_id: null, is_admin: false, is_active: true, avatar_url: expect.any(String), timezone: "", date_joined: expect.any(String) }),
      ]);
      const botId = body.cross_realm_bots[0].user_id;
      expect(body.realm_users.map((u: { user_id: number }) => u.user_id)).not.toContain(botId);
      expect((await member.client.get("/users")).body.members.map((u: { user_id: number }) => u.user_id)).not.toContain(botId);
    });

    test("a private message from the Notification Bot names a sender clients know, and can be answered", async () => {
      const queue = await registerQueue(member.client, ["message"]);
      // Subscribing someone else makes the bot tell them.
      const res = await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "bot-notice" }], principals: [member.email] });
      expect(res.body.result).toBe("success");
      const notice = await waitForEvent(member.client, queue, (e) => e.type === "message" && e.message.type === "private");
      const bots = (await fetched(member, ["realm_user"])).cross_realm_bots as Array<{ user_id: number; email: string }>;
      expect(bots.map((b) => b.user_id)).toContain(notice.message.sender_id);
      const reply = await member.client.post("/messages", { type: "private", to: JSON.stringify([notice.message.sender_id]), content: "thanks, bot" });
      expect(reply.body).toMatchObject({ result: "success", id: expect.any(Number) });
      const byEmail = await member.client.post("/messages", { type: "private", to: bots[0].email, content: "thanks again" });
      expect(byEmail.body.result).toBe("success");
    });

    test("bots are realm users with is_bot; realm_bots holds the bots one administers", async () => {
      const { running } = server;
      const realm = await running.services.db.prisma.realm.findFirstOrThrow({ where: { string_id: "" } });
      const bot = await running.services.actions.run(realm.id, (tx, events) =>
        createUser(tx, events, running.services.ctx, realm, { email: "helper-bot@chat.test", fullName: "Helper", password: null, isBot: true, botType: 1, botOwnerId: member.id }),
      );
      const mine = await fetched(member, ["realm_user", "realm_bot"]);
      expect(mine.realm_users).toContainEqual(expect.objectContaining({ user_id: bot.id, is_bot: true, bot_type: 1, bot_owner_id: member.id, full_name: "Helper" }));
      expect(mine.realm_bots).toEqual([expect.objectContaining({ user_id: bot.id, email: "helper-bot@chat.test", full_name: "Helper", owner_id: member.id, api_key: bot.api_key, is_active: true })]);
      expect((await fetched(other, ["realm_bot"])).realm_bots).toEqual([]);
      expect((await fetched(admin, ["realm_bot"])).realm_bots.map((b: { user_id: number }) => b.user_id)).toEqual([bot.id]);

      // A new owner: realm_bot events move it between the owners' lists, realm_user tells everyone.
      const move = () => running.services.actions.run(realm.id, async (tx, events) => {
        const actor = { ...(await tx.userProfile.findUniqueOrThrow({ where: { id: admin.id } })), realm };
        await changeBotOwner(tx, events, actor, await tx.userProfile.findUniqueOrThrow({ where: { id: bot.id } }), other.id, running.services.ctx.bots);
      });
      const oldOwnerQueue = await registerQueue(member.client, ["realm_bot"]);
      const newOwnerEvents = await verifyAction(other.client, ["realm_bot", "realm_user"], move);
      expect(newOwnerEvents).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "realm_bot", op: "add", bot: expect.objectContaining({ user_id: bot.id, owner_id: other.id }) }),
          expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: bot.id, bot_owner_id: other.id } }),
        ]),
      );
      const removed = await waitForEvent(member.client, oldOwnerQueue, (e) => e.type === "realm_bot");
      expect(removed).toMatchObject({ op: "delete", bot: { user_id: bot.id } });
      expect((await fetched(member, ["realm_bot"])).realm_bots).toEqual([]);

      // An administrator keeps every bot: an update, checked against a fresh register.
      const back = () => running.services.actions.run(realm.id, async (tx, events) => {
        const actor = { ...(await tx.userProfile.findUniqueOrThrow({ where: { id: admin.id } })), realm };
        await changeBotOwner(tx, events, actor, await tx.userProfile.findUniqueOrThrow({ where: { id: bot.id } }), member.id, running.services.ctx.bots);
      });
      const adminEvents = await verifyAction(admin.client, ["realm_bot", "realm_user"], back);
      expect(adminEvents).toContainEqual(expect.objectContaining({ type: "realm_bot", op: "update", bot: expect.objectContaining({ user_id: bot.id, owner_id: member.id }) }));

      // Renaming and deactivating the bot reach realm_bots too.
      await verifyAction(member.client, ["realm_bot", "realm_user"], () => admin.client.patch(`/users/${bot.id}`, { full_name: "Helpful" }));
      await verifyAction(member.client, ["realm_bot", "realm_user"], () => running.services.actions.run(realm.id, async (tx, events) => {
        const { deactivateUser } = await import("@chat/core");
        const actor = { ...(await tx.userProfile.findUniqueOrThrow({ where: { id: admin.id } })), realm };
        await deactivateUser(tx, events, actor, await tx.userProfile.findUniqueOrThrow({ where: { id: bot.id } }));
      }));
    });

    test("changing a bot's owner is refused for non-owners and for impossible owners", async () => {
      const { running } = server;
      const realm = await running.services.db.prisma.realm.findFirstOrThrow({ where: { string_id: "" } });
      const bot = await running.services.actions.run(realm.id, (tx, events) =>
        createUser(tx, events, running.services.ctx, realm, { email: "owned-bot@chat.test", fullName: "Owned", password: null, isBot: true, botOwnerId: member.id }),
      );
      const attempt = (actorId: number, ownerId: number) => running.services.actions.run(realm.id, async (tx, events) => {
        const actor = { ...(await tx.userProfile.findUniqueOrThrow({ where: { id: actorId } })), realm };
        await changeBotOwner(tx, events, actor, await tx.userProfile.findUniqueOrThrow({ where: { id: bot.id } }), ownerId, running.services.ctx.bots);
      });
      await expect(attempt(other.id, other.id)).rejects.toThrow("Insufficient permission");
      await expect(attempt(member.id, 987654)).rejects.toThrow("Failed to change owner, no such user");
      await expect(attempt(member.id, bot.id)).rejects.toThrow("Failed to change owner, bots can't own other bots");
      expect((await running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: bot.id } })).bot_owner_id).toBe(member.id);
    });
  });

  describe("sections kept current by events (verifyAction)", () => {
    test("starred_messages follows starring and unstarring", async () => {
      const id = await sendStreamMessage(other.client, "general", "stars");
      const types = ["starred_messages", "update_message_flags"];
      await verifyAction(member.client, types, () => member.client.post("/messages/flags", { messages: [id], op: "add", flag: "starred" }));
      expect((await fetched(member, ["starred_messages"])).starred_messages).toContain(id);
      await verifyAction(member.client, types, () => member.client.post("/messages/flags", { messages: [id], op: "remove", flag: "starred" }));
      expect((await fetched(member, ["starred_messages"])).starred_messages).not.toContain(id);
    });

    test("starred_messages loses a deleted message", async () => {
      const id = await sendStreamMessage(member.client, "general", "stars", "to delete");
      await member.client.post("/messages/flags", { messages: [id], op: "add", flag: "starred" });
      await verifyAction(member.client, ["starred_messages", "delete_message"], () => admin.client.delete(`/messages/${id}`));
    });

    test("recent_private_conversations: newest first, the other participants, none for oneself", async () => {
      const types = ["recent_private_conversations", "message"];
      await verifyAction(member.client, types, () => sendPrivateMessage(other.client, [member.id], "hi"));
      await verifyAction(member.client, types, () => sendPrivateMessage(member.client, [other.id, admin.id], "all of us"));
      await verifyAction(member.client, types, () => sendPrivateMessage(member.client, [member.id], "note to self"));
      const latest = await sendPrivateMessage(member.client, [other.id], "again");
      const { recent_private_conversations: conversations } = await fetched(member, ["recent_private_conversations"]);
      expect(conversations[0]).toEqual({ max_message_id: latest, user_ids: [other.id] });
      expect(conversations).toContainEqual({ max_message_id: expect.any(Number), user_ids: [admin.id, other.id].sort((a, b) => a - b) });
      expect(conversations).toContainEqual({ max_message_id: expect.any(Number), user_ids: [] });
      const ids = conversations.map((c: { max_message_id: number }) => c.max_message_id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      // Stream messages are no conversation.
      await sendStreamMessage(member.client, "general", "not private");
      expect((await fetched(member, ["recent_private_conversations"])).recent_private_conversations).toEqual(conversations);
    });

    test("realm_emoji: the realm's custom emoji, deactivated ones too, and the event on removal", async () => {
      const { prisma } = server.running.services.db;
      const realm = await prisma.realm.findFirstOrThrow({ where: { string_id: "" } });
      const emoji = await prisma.realmEmoji.create({ data: { realm_id: realm.id, name: "party_parrot", author_id: member.id, file_name: "1.png" } });
      const listed = (await fetched(member, ["realm_emoji"])).realm_emoji;
      expect(listed).toEqual({
        [String(emoji.id)]: {
          id: String(emoji.id),
          name: "party_parrot",
          source_url: `/user_avatars/${realm.id}/emoji/images/1.png`,
          deactivated: false,
          author: { id: member.id, email: member.email, full_name: "Mia Member" },
          // Feature levels 7 and 97, beside 3.x's `author`.
          author_id: member.id,
          still_url: null,
        },
      });
      expect((await member.client.get("/realm/emoji")).body).toEqual({ result: "success", msg: "", emoji: listed });
      expect((await other.client.delete("/realm/emoji/party_parrot")).body).toEqual({ result: "error", msg: "Must be an organization administrator or emoji author", code: "BAD_REQUEST" });
      const events = await verifyAction(other.client, ["realm_emoji"], () => member.client.delete("/realm/emoji/party_parrot"));
      expect(events[0].realm_emoji[String(emoji.id)].deactivated).toBe(true);
      const again = await member.client.delete("/realm/emoji/party_parrot");
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ result: "error", msg: "Emoji 'party_parrot' does not exist", code: "BAD_REQUEST" });
      // A name Postgres cannot hold is refused as NUL in any parameter is, never a 500.
      const nul = await member.client.delete("/realm/emoji/a%00b");
      expect(nul.status).toBe(400);
      expect(nul.body).toMatchObject({ result: "error", msg: "emoji_name contains NULL (0x00) characters.", code: "BAD_REQUEST" });
    });

    test("enter_sends is the user's, set by POST /users/me/enter-sends", async () => {
      expect((await fetched(member, ["realm_user"])).enter_sends).toBe(false);
      expect((await member.client.post("/users/me/enter-sends", { enter_sends: true })).body).toEqual({ result: "success", msg: "" });
      expect((await fetched(member, ["realm_user"])).enter_sends).toBe(true);
      expect((await fetched(other, ["realm_user"])).enter_sends).toBe(false);
      expect((await member.client.post("/users/me/enter-sends", { enter_sends: "yes" })).body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
      expect((await member.client.post("/users/me/enter-sends")).body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING" });
    });
  });
});
