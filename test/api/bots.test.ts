// Bots their owners manage, as Zulip 3.x has them: POST/GET/PATCH/DELETE /bots, a bot's and one's
// own API key, reactivation, avatars, and what realm_bots and realm_users show, checked against a
// fresh /register after every change (verifyAction), in both modes.
import { readFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { createRealm, createUser } from "@chat/core";
import type { ApiClient, ApiResponse } from "../support/client.ts";
import { waitForEvent } from "../support/events.ts";
import { fetchPublic, imagePart, makePng, multipart, notAnImage, rawRequest, uploadFiles, type FilePart, type RawAnswer } from "../support/images.ts";
import { registerQueue } from "../support/messages.ts";
import { MODES, startSecondNode, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const BOT_EVENTS = ["realm_bot", "realm_user"];

describe.each(MODES)("bots (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let guest: TestUser;
  let realmId: number;
  let count = 0;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    guest = await createTestUser(server, "Gus Guest", "guest");
    realmId = (await userRow(member.id)).realm_id;
    // A private stream the member is in, and one only the administrator is in.
    await ok(member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "member secret" }], invite_only: true }));
    await ok(admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "admin secret" }], invite_only: true }));
  });
  afterAll(() => server.stop());

  const prisma = () => server.running.services.db.prisma;
  const userRow = (id: number) => prisma().userProfile.findUniqueOrThrow({ where: { id } });

  async function ok(res: Promise<ApiResponse> | ApiResponse): Promise<Record<string, any>> {
    const { body } = await res;
    if (body.result !== "success") throw new Error(JSON.stringify(body));
    return body;
  }

  async function setPolicy(policy: number): Promise<void> {
    await ok(server.owner.patch("/realm", { bot_creation_policy: policy }));
  }

  /** A new bot of the caller's with unique names; `extra` overrides any parameter. */
  function botParams(type: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const n = ++count;
    const byType: Record<number, Record<string, unknown>> = {
      1: {},
      2: {},
      3: { payload_url: JSON.stringify("https://hooks.example.com/bot"), interface_type: 2 },
      4: { service_name: "helloworld" },
    };
    return { full_name: `Test Bot ${n}`, short_name: `test${n}`, bot_type: type, ...byType[type], ...extra };
  }

  async function createBot(owner: TestUser, type = 1, extra: Record<string, unknown> = {}): Promise<{ id: number; email: string; apiKey: string; client: ApiClient }> {
    const params = botParams(type, extra);
    const body = await ok(owner.client.post("/bots", params));
    const email = `${params.short_name}-bot@chat.test`;
    return { id: body.user_id, email, apiKey: body.api_key, client: server.client(email, body.api_key) };
  }

  /** Row counts a refused request must leave as they were. */
  async function counts(): Promise<number[]> {
    const p = prisma();
    return Promise.all([p.userProfile.count(), p.service.count(), p.botConfigData.count(), p.recipient.count()]);
  }

  async function registered(client: ApiClient, sections: string[]): Promise<Record<string, any>> {
    return ok(client.post("/register", { event_types: sections, fetch_event_types: sections }));
  }

  describe("a bot's default streams, as Zulip applies them", () => {
    test("a stream message without `to` goes to default_sending_stream; without one it is refused", async () => {
      await ok(member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "bot home" }, { name: "bot elsewhere" }] }));
      const bot = await createBot(member, 1, { default_sending_stream: "bot home" });
      const sent = await ok(bot.client.post("/messages", { type: "stream", topic: "defaults", content: "where am I?" }));
      const message = await prisma().message.findUniqueOrThrow({ where: { id: sent.id }, include: { recipient: true } });
      const home = await prisma().stream.findFirstOrThrow({ where: { name: "bot home" } });
      expect(message.recipient_id).toBe(home.recipient_id);
      const plain = await createBot(member, 1);
      const refused = await plain.client.post("/messages", { type: "stream", topic: "defaults", content: "nowhere" });
      expect(refused.body).toMatchObject({ result: "error", msg: "Missing stream" });
      const privateWithout = await member.client.post("/messages", { type: "private", content: "to nobody" });
      expect(privateWithout.body).toMatchObject({ result: "error", msg: "Message must have recipients" });
    });

    test("/register without a narrow or all_public_streams takes the bot's defaults", async () => {
      await ok(member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "bot watch" }, { name: "bot ignore" }] }));
      const watcher = await createBot(member, 1, { default_events_register_stream: "bot watch" });
      const everywhere = await createBot(member, 1, { default_all_public_streams: true });
      // The narrow filters what the bot receives; it receives a stream's messages as a subscriber.
      await ok(member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "bot watch" }, { name: "bot ignore" }], principals: [watcher.id] }));
      const watching = await registerQueue(watcher.client, ["message"]);
      const seeing = await registerQueue(everywhere.client, ["message"]);
      const explicit = await registerQueue(everywhere.client, ["message"], { all_public_streams: false });
      await ok(member.client.post("/messages", { type: "stream", to: "bot ignore", topic: "t", content: "not for the watcher" }));
      await ok(member.client.post("/messages", { type: "stream", to: "bot watch", topic: "t", content: "for the watcher" }));
      const watched = await waitForEvent(watcher.client, watching, (e) => e.type === "message");
      expect(watched.message.display_recipient).toBe("bot watch");
      const seen = await waitForEvent(everywhere.client, seeing, (e) => e.type === "message" && e.message.display_recipient === "bot watch", { acknowledge: false });
      expect(seen.message.content).toContain("for the watcher");
      const drained = await everywhere.client.get("/events", { queue_id: explicit, last_event_id: -1, dont_block: true });
      expect(drained.body.events.filter((e: { type: string }) => e.type === "message")).toEqual([]);
    });
  });

  describe("POST /bots", () => {
    afterAll(() => setPolicy(1));

    // Zulip's check_bot_creation_policy and allowed_bot_types: guests never; administrators always;
    // members by the policy (2: no generic bots, 3: none).
    const cases = [1, 2, 3].flatMap((policy) =>
      (["member", "admin", "guest"] as const).flatMap((who) => [1, 2, 3, 4].map((type) => ({ policy, who, type }))),
    );
    test.each(cases)("policy $policy, $who, bot type $type", async ({ policy, who, type }) => {
      await setPolicy(policy);
      const actor = { member, admin, guest }[who];
      const before = await counts();
      const res = await actor.client.post("/bots", botParams(type));
      let expected: string | null = null;
      if (who === "guest") expected = "Not allowed for guest users";
      // Zulip 10.0 (feature level 344): policy 2 is can_create_bots_group administrators and
      // can_create_write_only_bots_group members, whose bots are incoming webhooks only.
      else if (who === "member" && (policy === 3 || (policy === 2 && type !== 2))) expected = "Must be an organization administrator";
      if (expected === null) {
        expect(res.body).toMatchObject({ result: "success", user_id: expect.any(Number) });
        expect(await userRow(res.body.user_id)).toMatchObject({ is_bot: true, bot_type: type, bot_owner_id: actor.id, is_active: true });
      } else {
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ result: "error", msg: expected });
        expect(await counts()).toEqual(before);
      }
    });

    test("each type: the response, the row, its service and configuration", async () => {
      await setPolicy(1);
      const generic = await ok(member.client.post("/bots", { full_name: "Plain Bot", short_name: "plain" }));
      expect(generic).toEqual({
        result: "success",
        msg: "",
        user_id: expect.any(Number),
        api_key: expect.stringMatching(/^[a-zA-Z0-9]{32}$/),
        avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\//),
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
      });
      expect(await userRow(generic.user_id)).toMatchObject({ email: "plain-bot@chat.test", delivery_email: "plain-bot@chat.test", full_name: "Plain Bot", bot_type: 1, role: 400, avatar_source: "G" });
      expect(await prisma().service.count({ where: { user_id: generic.user_id } })).toBe(0);

      const outgoing = await ok(
        member.client.post("/bots", {
          full_name: "Hook Bot",
          short_name: "hook",
          bot_type: 3,
          payload_url: JSON.stringify("https://hooks.example.com/in?x=1"),
          interface_type: 2,
          default_sending_stream: "general",
          default_events_register_stream: "member secret",
          default_all_public_streams: true,
        }),
      );
      expect(outgoing).toMatchObject({ default_sending_stream: "general", default_events_register_stream: "member secret", default_all_public_streams: true });
      const [service] = await prisma().service.findMany({ where: { user_id: outgoing.user_id } });
      expect(service).toMatchObject({ name: "hook", base_url: "https://hooks.example.com/in?x=1", interface: 2, token: expect.stringMatching(/^[a-zA-Z0-9]{32}$/) });
      expect(service.token).not.toBe(outgoing.api_key);

      // The URL as sent, not JSON-encoded, is taken too.
      const plainUrl = await ok(member.client.post("/bots", { full_name: "Plain Hook", short_name: "plainhook", bot_type: 3, payload_url: "http://10.0.0.1:8080/x" }));
      expect(await prisma().service.findFirstOrThrow({ where: { user_id: plainUrl.user_id } })).toMatchObject({ base_url: "http://10.0.0.1:8080/x", interface: 1 });

      const embedded = await ok(member.client.post("/bots", { full_name: "Embedded Bot", short_name: "embedded", bot_type: 4, service_name: "followup", config_data: JSON.stringify({ stream: "general", other: "x" }) }));
      expect(await prisma().service.findMany({ where: { user_id: embedded.user_id } })).toEqual([expect.objectContaining({ name: "followup", base_url: "", interface: 1 })]);
      expect(await prisma().botConfigData.findMany({ where: { bot_profile_id: embedded.user_id }, orderBy: { key: "asc" } })).toEqual([
        { bot_profile_id: embedded.user_id, key: "other", value: "x" },
        { bot_profile_id: embedded.user_id, key: "stream", value: "general" },
      ]);

      // An embedded bot's service name defaults to its short name, which must then be a bot's name.
      const byShortName = await ok(member.client.post("/bots", { full_name: "Hello World", short_name: "helloworld", bot_type: 4 }));
      expect(await prisma().service.findFirstOrThrow({ where: { user_id: byShortName.user_id } })).toMatchObject({ name: "helloworld" });

      const incoming = await ok(member.client.post("/bots", { full_name: "Incoming Bot", short_name: "incoming", bot_type: 2, config_data: JSON.stringify({ token: "abc" }) }));
      expect(await prisma().service.count({ where: { user_id: incoming.user_id } })).toBe(0);
      expect(await prisma().botConfigData.findMany({ where: { bot_profile_id: incoming.user_id } })).toEqual([{ bot_profile_id: incoming.user_id, key: "token", value: "abc" }]);
    });

    test.each([
      ["an empty short name", { short_name: "   " }, "Bad name or username"],
      ["a short name with a space", { short_name: "two words" }, "Bad name or username"],
      ["a short name outside ASCII", { short_name: "bоt" }, "Bad name or username"],
      ["a short name with a quote", { short_name: 'a"b' }, "Bad name or username"],
      ["a short name with an @", { short_name: "a@b" }, "Bad name or username"],
      ["an empty full name", { full_name: " " }, "Name too short!"],
      ["a long full name", { full_name: "x".repeat(101) }, "Name too long!"],
      ["a full name with *", { full_name: "Bad*Bot" }, "Invalid characters in name!"],
      ["a human's full name", { full_name: "Mia Member" }, "Name is already in use!"],
      ["bot type 5", { bot_type: 5 }, "Invalid bot type"],
      ["bot type 0", { bot_type: 0 }, "Invalid bot type"],
      ["a bot type that is no integer", { bot_type: "generic" }, "bot_type is not an integer"],
      ["interface type 3", { interface_type: 3 }, "Invalid interface type"],
      ["an outgoing webhook without a URL", { bot_type: 3 }, "payload_url is not a URL"],
      ["an ftp URL", { bot_type: 3, payload_url: JSON.stringify("ftp://example.com/x") }, "payload_url is not a URL"],
      ["a URL without a host", { bot_type: 3, payload_url: JSON.stringify("http://") }, "payload_url is not a URL"],
      ["a URL with a space", { bot_type: 3, payload_url: JSON.stringify("http://exa mple.com/") }, "payload_url is not a URL"],
      ["a URL with credentials, which the worker would never call", { bot_type: 3, payload_url: JSON.stringify("https://user:secret@hooks.example.com/") }, "payload_url is not a URL"],
      ["a relative URL, whatever the bot", { payload_url: JSON.stringify("/hook") }, "payload_url is not a URL"],
      ["a URL past its bound", { bot_type: 3, payload_url: `https://x.test/${"a".repeat(2000)}` }, "payload_url is too long (limit: 2000 characters)"],
      ["an unknown embedded bot", { bot_type: 4, service_name: "nope" }, "Invalid embedded bot name."],
      ["an embedded bot named by an unknown short name", { bot_type: 4 }, "Invalid embedded bot name."],
      ["an incoming webhook integration this server lacks", { bot_type: 2, service_name: "github" }, "Invalid integration 'github'."],
      ["an unknown default stream", { default_sending_stream: "nowhere" }, "Invalid stream name 'nowhere'"],
      ["a private stream one is not in", { default_events_register_stream: "admin secret" }, "Invalid stream name 'admin secret'"],
      ["configuration that is no dict", { bot_type: 4, service_name: "helloworld", config_data: "[1]" }, "config_data is not a dict"],
      ["configuration with a value that is no string", { bot_type: 4, service_name: "helloworld", config_data: JSON.stringify({ a: 1 }) }, "config_data contains a value that is not a string"],
      ["configuration for a generic bot", { config_data: JSON.stringify({ a: "1" }) }, "Only incoming webhook and embedded bots have configuration data"],
      ["too many configuration keys", { bot_type: 2, config_data: JSON.stringify(Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, "v"]))) }, "config_data has too many keys (limit: 100)"],
      ["a long configuration key", { bot_type: 2, config_data: JSON.stringify({ ["k".repeat(101)]: "v" }) }, "config_data has a key that is too long (limit: 100 characters)"],
      ["a long configuration value", { bot_type: 2, config_data: JSON.stringify({ k: "v".repeat(10_001) }) }, "config_data has a value that is too long (limit: 10000 characters)"],
      ["NUL in configuration", { bot_type: 2, config_data: JSON.stringify({ k: "a\u0000b" }) }, "config_data contains NULL (0x00) characters."],
      ["a long service name", { bot_type: 3, payload_url: "https://x.test/", service_name: "s".repeat(101) }, "service_name is too long (limit: 100 characters)"],
    ])("%s is refused and changes nothing", async (_what, extra, msg) => {
      const before = await counts();
      const res = await member.client.post("/bots", botParams(1, extra));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg });
      expect(await counts()).toEqual(before);
    });

    test("a used short name is refused, a deactivated bot's and the server's own bots' included", async () => {
      await ok(member.client.post("/bots", { full_name: "First Dup", short_name: "dup" }));
      const before = await counts();
      expect((await member.client.post("/bots", { full_name: "Second Dup", short_name: "dup" })).body).toMatchObject({ result: "error", msg: "Username already in use" });
      expect((await other.client.post("/bots", { full_name: "Third Dup", short_name: "DUP" })).body).toMatchObject({ result: "error", msg: "Username already in use" });
      expect((await member.client.post("/bots", { full_name: "Fake Notifier", short_name: "notification" })).body).toMatchObject({ result: "error", msg: "Username already in use" });
      const gone = await createBot(member);
      await ok(member.client.delete(`/bots/${gone.id}`));
      expect((await member.client.post("/bots", { full_name: "Reuse", short_name: gone.email.replace(/-bot@.*/, "") })).body).toMatchObject({ result: "error", msg: "Username already in use" });
      expect(await counts()).toEqual(before.map((n, i) => (i === 0 || i === 3 ? n + 1 : n)));
      // A deactivated bot's full name is free again (Zulip counts active users only).
      const goneName = (await userRow(gone.id)).full_name;
      await ok(member.client.post("/bots", { full_name: goneName, short_name: `again${count++}` }));
    });

    test("two requests for one address at once: one bot, and a clean refusal", async () => {
      const answers = await Promise.all([0, 1, 2].map((i) => member.client.post("/bots", { full_name: `Racer ${i}`, short_name: "racer" })));
      expect(answers.map((a) => a.body.result).sort()).toEqual(["error", "error", "success"]);
      expect(answers.filter((a) => a.body.result === "error").map((a) => [a.status, a.body.msg])).toEqual([[400, "Username already in use"], [400, "Username already in use"]]);
      expect(await prisma().userProfile.count({ where: { email: "racer-bot@chat.test" } })).toBe(1);
    });

    test("events: realm_user add to everyone, realm_bot add with the whole bot to its owner and the administrators", async () => {
      const otherQueue = await registerQueue(other.client, BOT_EVENTS);
      let created: Record<string, any> = {};
      const create = async () => {
        created = await ok(
          member.client.post("/bots", {
            full_name: "Event Bot",
            short_name: "eventbot",
            bot_type: 4,
            service_name: "encrypt",
            config_data: JSON.stringify({ key: "value" }),
            default_sending_stream: "general",
            default_all_public_streams: true,
          }),
        );
      };
      const adminQueue = await registerQueue(admin.client, BOT_EVENTS);
      const ownerEvents = await verifyAction(member.client, BOT_EVENTS, create);
      const bot = {
        email: "eventbot-bot@chat.test",
        user_id: created.user_id,
        full_name: "Event Bot",
        bot_type: 4,
        is_active: true,
        api_key: created.api_key,
        default_sending_stream: "general",
        default_events_register_stream: null,
        default_all_public_streams: true,
        owner_id: member.id,
        avatar_url: created.avatar_url,
        services: [{ config_data: { key: "value" }, service_name: "encrypt" }],
      };
      expect(ownerEvents).toEqual([
        {
          id: expect.any(Number),
          type: "realm_user",
          op: "add",
          person: expect.objectContaining({ user_id: created.user_id, email: "eventbot-bot@chat.test", full_name: "Event Bot", is_bot: true, bot_type: 4, bot_owner_id: member.id, is_active: true }),
        },
        { id: expect.any(Number), type: "realm_bot", op: "add", bot },
      ]);
      expect(await waitForEvent(admin.client, adminQueue, (e) => e.type === "realm_bot", { acknowledge: false })).toMatchObject({ op: "add", bot });
      const adminAdd = await waitForEvent(admin.client, adminQueue, (e) => e.type === "realm_user", { acknowledge: false });
      expect(adminAdd.person).toMatchObject({ user_id: created.user_id, delivery_email: "eventbot-bot@chat.test" });
      expect((await waitForEvent(other.client, otherQueue, (e) => e.type === "realm_user", { acknowledge: false })).person).toMatchObject({ user_id: created.user_id, is_bot: true, bot_type: 4, bot_owner_id: member.id });
      // Others hear of the user, not of the bot's keys.
      const seen = (await other.client.get("/events", { queue_id: otherQueue, last_event_id: -1, dont_block: true })).body.events;
      expect(seen.filter((e: { type: string }) => e.type === "realm_bot")).toEqual([]);

      // realm_users shows the bot to everyone; realm_bots to its owner and the administrators only.
      const otherState = await registered(other.client, ["realm_user", "realm_bot"]);
      expect(otherState.realm_users).toContainEqual(expect.objectContaining({ user_id: created.user_id, is_bot: true, bot_type: 4, bot_owner_id: member.id }));
      expect(otherState.realm_bots.map((b: { user_id: number }) => b.user_id)).not.toContain(created.user_id);
      expect((await registered(admin.client, ["realm_bot"])).realm_bots).toContainEqual(bot);
    });
  });

  describe("realm_bots, realm_embedded_bots and GET /bots", () => {
    test("realm_bots shows services and default streams as Zulip's get_owned_bot_dicts", async () => {
      const owner = await createTestUser(server, `Owner ${count++}`);
      const generic = await createBot(owner, 1, { default_events_register_stream: "general" });
      const outgoing = await createBot(owner, 3);
      const embedded = await createBot(owner, 4, { service_name: "followup" });
      const incoming = await createBot(owner, 2, { config_data: JSON.stringify({ a: "b" }) });
      const bots = (await registered(owner.client, ["realm_bot"])).realm_bots as Array<Record<string, any>>;
      const token = (await prisma().service.findFirstOrThrow({ where: { user_id: outgoing.id } })).token;
      expect(bots.map((b) => [b.user_id, b.services, b.default_events_register_stream])).toEqual([
        [generic.id, [], "general"],
        [outgoing.id, [{ base_url: "https://hooks.example.com/bot", interface: 2, token }], null],
        [embedded.id, [{ config_data: {}, service_name: "followup" }], null],
        [incoming.id, [], null],
      ]);
    });

    test("realm_embedded_bots lists the embedded bots this server runs", async () => {
      expect((await registered(member.client, ["realm_embedded_bots"])).realm_embedded_bots).toEqual([
        { name: "helloworld", config: {} },
        { name: "encrypt", config: {} },
        { name: "followup", config: {} },
      ]);
    });

    test("GET /bots: the caller's own active bots, oldest first", async () => {
      const owner = await createTestUser(server, `Lister ${count++}`);
      const first = await createBot(owner, 1, { default_sending_stream: "general" });
      const gone = await createBot(owner, 1);
      const last = await createBot(owner, 3);
      await createBot(other, 1);
      await ok(owner.client.delete(`/bots/${gone.id}`));
      const body = await ok(owner.client.get("/bots"));
      expect(body.bots).toEqual([
        {
          user_id: first.id,
          username: first.email,
          full_name: (await userRow(first.id)).full_name,
          api_key: first.apiKey,
          avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\//),
          default_sending_stream: "general",
          default_events_register_stream: null,
          default_all_public_streams: false,
        },
        expect.objectContaining({ user_id: last.id, username: last.email }),
      ]);
      // Administrators' lists are their own bots too; the server's own bots are no one's.
      expect((await ok(server.owner.get("/bots"))).bots).toEqual([]);
      expect(await guest.client.get("/bots")).toMatchObject({ status: 400, body: { msg: "Not allowed for guest users" } });
    });
  });

  describe("PATCH /bots/{id}", () => {
    test("each change reaches realm_bots (and realm_users where others see it) as a fresh register shows it", async () => {
      const bot = await createBot(member, 3, { default_sending_stream: "general" });
      const patch = (params: Record<string, unknown>) => ok(member.client.patch(`/bots/${bot.id}`, params));

      const renamed = await verifyAction(member.client, BOT_EVENTS, () => patch({ full_name: "Renamed Bot" }));
      expect(renamed.map((e) => [e.type, e.op])).toEqual([["realm_user", "update"], ["realm_bot", "update"]]);
      expect(renamed[1].bot).toEqual({ email: bot.email, user_id: bot.id, full_name: "Renamed Bot" });
      // Others see the new name in realm_users.
      await verifyAction(other.client, ["realm_user"], () => patch({ full_name: "Renamed Again" }));

      const streams = await verifyAction(member.client, ["realm_bot"], () => patch({ default_sending_stream: "", default_events_register_stream: "member secret", default_all_public_streams: true }));
      expect(streams.map((e) => e.bot)).toEqual([
        { email: bot.email, user_id: bot.id, default_sending_stream: null },
        { email: bot.email, user_id: bot.id, default_events_register_stream: "member secret" },
        { email: bot.email, user_id: bot.id, default_all_public_streams: true },
      ]);

      const token = (await prisma().service.findFirstOrThrow({ where: { user_id: bot.id } })).token;
      const service = await verifyAction(admin.client, ["realm_bot"], () => patch({ service_payload_url: JSON.stringify("https://new.example.com/hook"), service_interface: 1 }));
      expect(service).toEqual([{ id: expect.any(Number), type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, services: [{ base_url: "https://new.example.com/hook", interface: 1, token }] } }]);

      const answer = await patch({ full_name: "Renamed Again", service_interface: 2 });
      expect(answer).toEqual({
        result: "success",
        msg: "",
        full_name: "Renamed Again",
        avatar_url: expect.any(String),
        service_interface: 2,
        service_payload_url: null,
        config_data: null,
        default_sending_stream: null,
        default_events_register_stream: "member secret",
        default_all_public_streams: true,
        bot_owner: member.email,
      });
    });

    test("an embedded bot's configuration is merged and shown; an incoming webhook's is stored", async () => {
      const bot = await createBot(member, 4, { service_name: "followup", config_data: JSON.stringify({ a: "1" }) });
      const events = await verifyAction(member.client, ["realm_bot"], () => ok(member.client.patch(`/bots/${bot.id}`, { config_data: JSON.stringify({ b: "2", a: "one" }) })));
      expect(events.map((e) => e.bot)).toEqual([{ email: bot.email, user_id: bot.id, services: [{ config_data: { a: "one", b: "2" }, service_name: "followup" }] }]);
      const incoming = await createBot(member, 2);
      expect(await ok(member.client.patch(`/bots/${incoming.id}`, { config_data: JSON.stringify({ secret: "s" }) }))).toMatchObject({ config_data: { secret: "s" } });
      expect(await prisma().botConfigData.findMany({ where: { bot_profile_id: incoming.id } })).toEqual([{ bot_profile_id: incoming.id, key: "secret", value: "s" }]);
      // The merged configuration stays within its bound.
      const many = JSON.stringify(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, "v"])));
      expect((await member.client.patch(`/bots/${bot.id}`, { config_data: many })).body).toMatchObject({ result: "error", msg: "config_data has too many keys (limit: 100)" });
    });

    test("a new owner: the old one loses the bot, the new one gains it, everyone learns bot_owner_id", async () => {
      const bot = await createBot(member, 1);
      const oldOwnerQueue = await registerQueue(member.client, ["realm_bot"]);
      const events = await verifyAction(other.client, BOT_EVENTS, () => ok(member.client.patch(`/bots/${bot.id}`, { bot_owner_id: other.id })));
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "realm_bot", op: "add", bot: expect.objectContaining({ user_id: bot.id, owner_id: other.id, services: [] }) }),
          expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: bot.id, bot_owner_id: other.id } }),
        ]),
      );
      expect(await waitForEvent(member.client, oldOwnerQueue, (e) => e.type === "realm_bot")).toMatchObject({ op: "delete", bot: { user_id: bot.id } });
      // The old owner may no longer change it; administrators may.
      expect((await member.client.patch(`/bots/${bot.id}`, { full_name: "Mine Again" })).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      await verifyAction(admin.client, BOT_EVENTS, () => ok(admin.client.patch(`/bots/${bot.id}`, { bot_owner_id: member.id, full_name: "Back Home" })));
      expect(await userRow(bot.id)).toMatchObject({ bot_owner_id: member.id, full_name: "Back Home" });
    });

    test("refusals change nothing", async () => {
      const bot = await createBot(member, 1);
      const outgoing = await createBot(member, 3);
      const deactivated = await createTestUser(server, `Gone ${count++}`);
      await ok(server.owner.delete(`/users/${deactivated.id}`));
      const humanName = "Oscar Other";
      const notificationBot = (await registered(member.client, ["realm_user"])).cross_realm_bots[0].user_id as number;
      // Another organization's bot.
      const { running } = server;
      const elsewhere = await running.services.actions.run(0, async (tx, events) => {
        const { realm } = await createRealm(tx, events, running.services.ctx, { subdomain: `else${count++}`, name: "Elsewhere", owner: { email: `o${count}@else.test`, fullName: "Else Owner", password: "else-password" } });
        return createUser(tx, events, running.services.ctx, realm, { email: `b${count}-bot@else.test`, fullName: "Else Bot", password: null, isBot: true, botType: 1 });
      });
      const cases: Array<[ApiClient, number, Record<string, unknown>, string]> = [
        [member.client, 999_999, { full_name: "X" }, "No such bot"],
        [member.client, other.id, { full_name: "X" }, "No such bot"],
        [admin.client, notificationBot, { full_name: "X" }, "No such bot"],
        [admin.client, elsewhere.id, { full_name: "X" }, "No such bot"],
        [other.client, bot.id, { full_name: "X" }, "Insufficient permission"],
        [guest.client, bot.id, { full_name: "X" }, "Not allowed for guest users"],
        [member.client, bot.id, { full_name: humanName }, "Name is already in use!"],
        [member.client, bot.id, { full_name: "" }, "Name too short!"],
        [member.client, bot.id, { bot_owner_id: 999_999 }, "Failed to change owner, no such user"],
        [member.client, bot.id, { bot_owner_id: deactivated.id }, "Failed to change owner, user is deactivated"],
        [member.client, bot.id, { bot_owner_id: outgoing.id }, "Failed to change owner, bots can't own other bots"],
        [member.client, bot.id, { bot_owner_id: elsewhere.id }, "Failed to change owner, no such user"],
        [member.client, bot.id, { default_sending_stream: "nowhere" }, "Invalid stream name 'nowhere'"],
        [member.client, bot.id, { default_events_register_stream: "admin secret" }, "Invalid stream name 'admin secret'"],
        [member.client, bot.id, { service_payload_url: JSON.stringify("https://x.test/") }, "Only outgoing webhook bots have a service URL and interface"],
        [member.client, outgoing.id, { service_payload_url: JSON.stringify("nope") }, "service_payload_url is not a URL"],
        [member.client, outgoing.id, { service_payload_url: "" }, "service_payload_url is not a URL"],
        [member.client, outgoing.id, { service_interface: 7 }, "Invalid interface type"],
        [member.client, bot.id, { config_data: JSON.stringify({ a: "b" }) }, "Only incoming webhook and embedded bots have configuration data"],
        // A refusal late in the request undoes the changes before it.
        [member.client, bot.id, { full_name: "Half Changed", default_sending_stream: "nowhere" }, "Invalid stream name 'nowhere'"],
      ];
      for (const [client, id, params, msg] of cases) {
        const before = await Promise.all([prisma().userProfile.findMany({ orderBy: { id: "asc" } }), prisma().service.findMany(), prisma().botConfigData.findMany()]);
        const res = await client.patch(`/bots/${id}`, params);
        expect({ id, params, status: res.status, body: res.body }).toMatchObject({ id, params, status: 400, body: { result: "error", msg } });
        expect(await Promise.all([prisma().userProfile.findMany({ orderBy: { id: "asc" } }), prisma().service.findMany(), prisma().botConfigData.findMany()])).toEqual(before);
      }
      expect((await member.client.patch("/bots/abc", { full_name: "X" })).status).toBe(404);
    });
  });

  describe("DELETE /bots/{id} and reactivation", () => {
    afterAll(() => setPolicy(1));

    test("deactivation: realm_bot remove and realm_user remove; the bot's key stops working", async () => {
      const bot = await createBot(member, 3);
      await ok(bot.client.get("/users/me"));
      const events = await verifyAction(member.client, BOT_EVENTS, () => ok(member.client.delete(`/bots/${bot.id}`)));
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "realm_user", op: "remove", person: expect.objectContaining({ user_id: bot.id }) }),
          expect.objectContaining({ type: "realm_bot", op: "remove", bot: expect.objectContaining({ user_id: bot.id }) }),
        ]),
      );
      expect((await bot.client.get("/users/me")).status).toBe(401);
      expect((await registered(member.client, ["realm_bot"])).realm_bots).toContainEqual(expect.objectContaining({ user_id: bot.id, is_active: false }));
      expect((await member.client.delete(`/bots/${bot.id}`)).body).toMatchObject({ result: "error", msg: "User is already deactivated" });
      const mine = await createBot(member, 1);
      expect((await other.client.delete(`/bots/${mine.id}`)).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      expect((await member.client.delete(`/bots/${other.id}`)).body).toMatchObject({ result: "error", msg: "No such bot" });
      expect((await member.client.delete("/bots/999999")).body).toMatchObject({ result: "error", msg: "No such bot" });
      expect((await userRow(mine.id)).is_active).toBe(true);
    });

    test("reactivation: realm_user add and realm_bot add, as a fresh register shows them", async () => {
      const bot = await createBot(member, 4, { service_name: "encrypt", config_data: JSON.stringify({ k: "v" }) });
      await ok(member.client.delete(`/bots/${bot.id}`));
      const ownerQueue = await registerQueue(member.client, BOT_EVENTS);
      const events = await verifyAction(admin.client, BOT_EVENTS, () => ok(admin.client.post(`/users/${bot.id}/reactivate`)));
      expect(events.map((e) => [e.type, e.op])).toEqual([["realm_user", "add"], ["realm_bot", "add"]]);
      expect(events[1].bot).toMatchObject({ user_id: bot.id, is_active: true, services: [{ config_data: { k: "v" }, service_name: "encrypt" }] });
      expect(await waitForEvent(member.client, ownerQueue, (e) => e.type === "realm_bot", { acknowledge: false })).toMatchObject({ op: "add", bot: { user_id: bot.id, is_active: true } });
      await ok(bot.client.get("/users/me"));
      expect((await admin.client.post(`/users/${bot.id}/reactivate`)).body).toMatchObject({ result: "error", msg: "User is already active" });
    });

    test("a bot's owner may reactivate it within the creation policy; others may not", async () => {
      const bot = await createBot(member, 1);
      await ok(member.client.delete(`/bots/${bot.id}`));
      expect((await other.client.post(`/users/${bot.id}/reactivate`)).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      await setPolicy(2);
      expect((await member.client.post(`/users/${bot.id}/reactivate`)).body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
      expect((await userRow(bot.id)).is_active).toBe(false);
      await setPolicy(1);
      await verifyAction(member.client, BOT_EVENTS, () => ok(member.client.post(`/users/${bot.id}/reactivate`)));
      expect((await userRow(bot.id)).is_active).toBe(true);
    });

    test("a human: administrators only; everyone's realm_users follows", async () => {
      const human = await createTestUser(server, `Returning ${count++}`);
      await ok(admin.client.delete(`/users/${human.id}`));
      expect((await member.client.post(`/users/${human.id}/reactivate`)).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      const events = await verifyAction(member.client, ["realm_user"], () => ok(admin.client.post(`/users/${human.id}/reactivate`)));
      expect(events).toEqual([expect.objectContaining({ type: "realm_user", op: "add", person: expect.objectContaining({ user_id: human.id, is_active: true }) })]);
      await ok(human.client.get("/users/me"));
      expect((await admin.client.post("/users/999999/reactivate")).body).toMatchObject({ result: "error", msg: "No such user" });
      const notificationBot = (await registered(member.client, ["realm_user"])).cross_realm_bots[0].user_id as number;
      expect((await admin.client.post(`/users/${notificationBot}/reactivate`)).body).toMatchObject({ result: "error", msg: "No such user" });
    });
  });

  describe("API keys", () => {
    test("POST /users/me/api_key/regenerate: the old key stops working at once, the cached copy included", async () => {
      const user = await createTestUser(server, `Rekey ${count++}`);
      // GET /messages keeps this node's copy of the user (the actor cache).
      await ok(user.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
      await ok(user.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
      const body = await ok(user.client.post("/users/me/api_key/regenerate"));
      expect(body.api_key).toMatch(/^[a-zA-Z0-9]{32}$/);
      expect(body.api_key).not.toBe(user.client.credentials!.apiKey);
      expect((await user.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
      expect((await user.client.get("/users/me")).status).toBe(401);
      const renewed = server.client(user.email, body.api_key);
      await ok(renewed.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
      expect((await prisma().userProfile.findUniqueOrThrow({ where: { id: user.id } })).api_key).toBe(body.api_key);
    });

    test("POST /bots/{id}/api_key/regenerate: realm_bot update to its administrators; the old key is refused", async () => {
      const bot = await createBot(member, 1);
      await ok(bot.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
      let apiKey = "";
      const events = await verifyAction(member.client, ["realm_bot"], async () => {
        apiKey = (await ok(member.client.post(`/bots/${bot.id}/api_key/regenerate`))).api_key;
      });
      expect(events).toEqual([{ id: expect.any(Number), type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, api_key: apiKey } }]);
      expect(apiKey).not.toBe(bot.apiKey);
      expect((await bot.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
      await ok(server.client(bot.email, apiKey).get("/users/me"));
      // Administrators may too; others, guests and the server's own bots not.
      await verifyAction(admin.client, ["realm_bot"], () => ok(admin.client.post(`/bots/${bot.id}/api_key/regenerate`)));
      expect((await other.client.post(`/bots/${bot.id}/api_key/regenerate`)).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      expect((await guest.client.post(`/bots/${bot.id}/api_key/regenerate`)).body).toMatchObject({ result: "error", msg: "Not allowed for guest users" });
      const notificationBot = (await registered(member.client, ["realm_user"])).cross_realm_bots[0].user_id as number;
      expect((await admin.client.post(`/bots/${notificationBot}/api_key/regenerate`)).body).toMatchObject({ result: "error", msg: "No such bot" });
      expect((await admin.client.delete(`/bots/${notificationBot}`)).body).toMatchObject({ result: "error", msg: "No such bot" });
    });

    if (mode === "postgres") {
      test("a new key is refused on another node at once, which had the old one cached", async () => {
        const node = await startSecondNode(server);
        try {
          const user = await createTestUser(server, `Two Nodes ${count++}`);
          const elsewhere = node.client(user.client.credentials);
          await ok(elsewhere.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
          await ok(elsewhere.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
          const { api_key: apiKey } = await ok(user.client.post("/users/me/api_key/regenerate"));
          expect((await elsewhere.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
          await ok(node.client({ email: user.email, apiKey }).get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }));
        } finally {
          await node.stop();
        }
      });
    }
  });

  describe("avatars", () => {
    const storage = () => server.running.services.storage;
    const keysOf = (id: number) => [`avatars/${realmId}/${id}.png`, `avatars/${realmId}/${id}-medium.png`, `avatars/${realmId}/${id}.original`];

    function sendForm(client: ApiClient, method: "POST" | "PATCH", path: string, files: FilePart[], fields: Record<string, string>): Promise<RawAnswer> {
      const { email, apiKey } = client.credentials!;
      const headers = { authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`, "content-type": "multipart/form-data; boundary=test-image-boundary-5d1c" };
      return rawRequest(server.baseUrl, method, `/api/v1${path}`, headers, multipart(files, fields));
    }

    test("a bot created with an image has it as its avatar", async () => {
      const image = await makePng(200, 120);
      const answer = await uploadFiles(member.client, "/bots", [imagePart(image)], { full_name: "Pictured Bot", short_name: "pictured", bot_type: "1" });
      expect(answer.status).toBe(200);
      const id = answer.json.user_id as number;
      expect(answer.json.avatar_url).toBe(`/user_avatars/${realmId}/${id}.png?version=1`);
      expect(await userRow(id)).toMatchObject({ avatar_source: "U", email: "pictured-bot@chat.test", full_name: "Pictured Bot" });
      const served = await fetchPublic(server.baseUrl, answer.json.avatar_url);
      expect(served.status).toBe(200);
      expect(await sharp(served.body).metadata()).toMatchObject({ format: "png", width: 100, height: 100 });
      const state = await registered(member.client, ["realm_bot"]);
      expect(state.realm_bots).toContainEqual(expect.objectContaining({ user_id: id, avatar_url: answer.json.avatar_url }));
      // Multipart without a file is a form like any other.
      const plain = await sendForm(member.client, "POST", "/bots", [], { full_name: "Form Bot", short_name: "formbot" });
      expect(plain.json).toMatchObject({ result: "success", avatar_url: expect.stringMatching(/gravatar/) });
    });

    test.each([
      ["two files", async () => [imagePart(await makePng(10, 10)), imagePart(await makePng(10, 10), "b.png")], "You may only upload one file at a time"],
      ["a file that is no image", async () => [imagePart(notAnImage(), "x.png")], null],
    ])("%s: refused, no bot and no file", async (_what, files, msg) => {
      const before = await counts();
      const next = (await prisma().$queryRaw<{ id: number }[]>`SELECT last_value::int AS id FROM user_profile_id_seq`)[0].id;
      const answer = await sendForm(member.client, "POST", "/bots", await files(), { full_name: `Refused ${count}`, short_name: `refused${count++}` });
      expect(answer.status).toBe(400);
      expect(answer.json.result).toBe("error");
      if (msg) expect(answer.json.msg).toBe(msg);
      expect(await counts()).toEqual(before);
      for (let id = next; id <= next + 3; id++) {
        for (const key of keysOf(id)) expect(await storage().stat(key)).toBeNull();
      }
    });

    test("a refused bot writes no file even with a good image", async () => {
      const before = await counts();
      const answer = await uploadFiles(member.client, "/bots", [imagePart(await makePng(20, 20))], { full_name: "Mia Member", short_name: `named${count++}` });
      expect(answer.json).toMatchObject({ result: "error", msg: "Name is already in use!" });
      expect(await counts()).toEqual(before);
      expect((await guest.client.raw("post", "/bots").attach("file", await makePng(10, 10), "a.png").field("full_name", "G").field("short_name", "g")).body).toMatchObject({ msg: "Not allowed for guest users" });
    });

    test("PATCH with an image: a new version, realm_bot and realm_user updates", async () => {
      const bot = await createBot(member, 1);
      const image = await makePng(64, 64, "#00ff00");
      let answer: RawAnswer | undefined;
      const events = await verifyAction(member.client, BOT_EVENTS, async () => {
        answer = await sendForm(member.client, "PATCH", `/bots/${bot.id}`, [imagePart(image)], { full_name: "Green Bot" });
      });
      const url = `/user_avatars/${realmId}/${bot.id}.png?version=2`;
      expect(answer!.json).toMatchObject({ result: "success", full_name: "Green Bot", avatar_url: url });
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, avatar_url: url } }),
          expect.objectContaining({ type: "realm_user", op: "update", person: expect.objectContaining({ user_id: bot.id, avatar_url: url, avatar_source: "U" }) }),
        ]),
      );
      expect((await fetchPublic(server.baseUrl, url)).status).toBe(200);
      // A refused change with an image keeps the old avatar and name.
      const refused = await sendForm(member.client, "PATCH", `/bots/${bot.id}`, [imagePart(await makePng(30, 30))], { full_name: "Mia Member" });
      expect(refused.json).toMatchObject({ result: "error", msg: "Name is already in use!" });
      expect(await userRow(bot.id)).toMatchObject({ full_name: "Green Bot", avatar_version: 2 });
      expect((await sendForm(other.client, "PATCH", `/bots/${bot.id}`, [imagePart(image)], {})).json).toMatchObject({ result: "error", msg: "Insufficient permission" });
    });
  });

  // Issue 31: a bot created bots it owned, and deactivating the person above it left them running.
  describe("bots do not manage bots; a person's deactivation reaches every bot they control", () => {
    const BOT_REFUSAL = { result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" };

    /** Every row a refused request could touch. */
    const snapshot = () =>
      Promise.all([
        prisma().userProfile.findMany({ orderBy: { id: "asc" } }),
        prisma().service.findMany({ orderBy: { id: "asc" } }),
        prisma().botConfigData.findMany(),
        prisma().subscription.findMany({ orderBy: { id: "asc" } }),
        prisma().userGroup.findMany({ orderBy: { id: "asc" } }),
      ]);

    test("every /bots endpoint answers a bot, an administrator bot too, with Zulip's error and changes nothing", async () => {
      const plain = await createBot(member, 1);
      const privileged = await createBot(member, 3);
      // Zulip lets bots be administrators: the refusal does not depend on the role.
      await ok(server.owner.patch(`/users/${privileged.id}`, { role: 200 }));
      const target = await createBot(member, 1);
      for (const actor of [plain, privileged]) {
        const requests: Array<[string, () => Promise<ApiResponse>]> = [
          ["GET /bots", () => actor.client.get("/bots")],
          ["POST /bots", () => actor.client.post("/bots", botParams(1))],
          ["POST /bots (outgoing webhook)", () => actor.client.post("/bots", botParams(3))],
          ["PATCH /bots/{id}", () => actor.client.patch(`/bots/${target.id}`, { full_name: `Hijacked ${count++}` })],
          ["PATCH /bots/{id} (owner)", () => actor.client.patch(`/bots/${target.id}`, { bot_owner_id: admin.id })],
          ["PATCH /bots/{id} (itself)", () => actor.client.patch(`/bots/${actor.id}`, { full_name: `Self ${count++}` })],
          ["DELETE /bots/{id}", () => actor.client.delete(`/bots/${target.id}`)],
          ["DELETE /bots/{id} (itself)", () => actor.client.delete(`/bots/${actor.id}`)],
          ["POST /bots/{id}/api_key/regenerate", () => actor.client.post(`/bots/${target.id}/api_key/regenerate`)],
          ["POST /bots/{id}/api_key/regenerate (itself)", () => actor.client.post(`/bots/${actor.id}/api_key/regenerate`)],
          // Zulip's other human-only endpoints this server has.
          ["POST /user_groups/create", () => actor.client.post("/user_groups/create", { name: `bot group ${count++}`, description: "d", members: [member.id] })],
          ["POST /users/me/enter-sends", () => actor.client.post("/users/me/enter-sends", { enter_sends: true })],
        ];
        for (const [what, send] of requests) {
          const before = await snapshot();
          const res = await send();
          expect({ what, status: res.status, body: res.body }).toEqual({ what, status: 400, body: BOT_REFUSAL });
          expect(await snapshot()).toEqual(before);
        }
        // A bot's avatar upload with POST /bots is refused before its body is read.
        const before = await counts();
        const image = await makePng(20, 20);
        const answer = await uploadFiles(actor.client, "/bots", [imagePart(image)], { full_name: `Pictured ${count}`, short_name: `pictured${count++}` });
        expect({ status: answer.status, body: answer.json }).toEqual({ status: 400, body: BOT_REFUSAL });
        expect(await counts()).toEqual(before);
      }
      // The bots still work, and the target is as it was.
      await ok(plain.client.get("/users/me"));
      await ok(server.client(target.email, target.apiKey).get("/users/me"));
    });

    test("deactivating a person deactivates every bot they control, however made, each with realm_user and realm_bot remove", async () => {
      // Made first, so that the deactivated users' list stays in id order (as a fresh /register sends it)
      // when the applied events append to it.
      const retired = await createBot(member, 1);
      const person = await createTestUser(server, `Chain Owner ${count++}`);
      await prisma().userProfile.update({ where: { id: retired.id }, data: { bot_owner_id: person.id } });
      const first = await createBot(person, 3);
      // Bots owned by bots, as bots could make them before /bots refused them.
      const second = await createBot(member, 1);
      const third = await createBot(member, 4, { service_name: "helloworld" });
      await prisma().userProfile.update({ where: { id: second.id }, data: { bot_owner_id: first.id } });
      await prisma().userProfile.update({ where: { id: third.id }, data: { bot_owner_id: second.id } });
      // Below a bot already deactivated.
      await ok(person.client.delete(`/bots/${retired.id}`));
      const belowRetired = await createBot(member, 1);
      await prisma().userProfile.update({ where: { id: belowRetired.id }, data: { bot_owner_id: retired.id } });
      // Someone else's bot stays.
      const unrelated = await createBot(member, 1);
      for (const bot of [first, second, third, belowRetired]) await ok(bot.client.get("/users/me"));

      const controlled = [first, second, third, belowRetired].map((bot) => bot.id);
      const events = await verifyAction(admin.client, BOT_EVENTS, () => ok(admin.client.delete(`/users/${person.id}`)));
      const removed = (type: string) => events.filter((e) => e.type === type && e.op === "remove").map((e) => (type === "realm_user" ? e.person.user_id : e.bot.user_id));
      expect(removed("realm_user").sort((a, b) => a - b)).toEqual([person.id, ...controlled].sort((a, b) => a - b));
      expect(removed("realm_bot").sort((a, b) => a - b)).toEqual([...controlled].sort((a, b) => a - b));
      for (const bot of [first, second, third, belowRetired]) {
        expect(await userRow(bot.id)).toMatchObject({ is_active: false });
        expect((await bot.client.get("/users/me")).status).toBe(401);
        expect(await prisma().subscription.count({ where: { user_id: bot.id, is_user_active: true } })).toBe(0);
      }
      expect(await userRow(unrelated.id)).toMatchObject({ is_active: true });

      // A bot's own deactivation reaches what it owns too.
      const top = await createBot(member, 1);
      const below = await createBot(member, 1);
      await prisma().userProfile.update({ where: { id: below.id }, data: { bot_owner_id: top.id } });
      await ok(member.client.delete(`/bots/${top.id}`));
      expect(await userRow(below.id)).toMatchObject({ is_active: false });
    });

    test("migration 0020 gives each bot owned by a bot to the nearest person above it, with a new key, or deactivates it", async () => {
      const sql = readFileSync(path.resolve(__dirname, "../../prisma/migrations/0020_bots_owned_by_people/migration.sql"), "utf8");
      const setOwner = (id: number, owner: number | null) => prisma().userProfile.update({ where: { id }, data: { bot_owner_id: owner } });
      // A person still here, with a chain below one of their bots.
      const person = await createTestUser(server, `Migrated Owner ${count++}`);
      const top = await createBot(person, 1);
      const middle = await createBot(member, 3);
      const bottom = await createBot(member, 1);
      await setOwner(middle.id, top.id);
      await setOwner(bottom.id, middle.id);
      // A person deactivated, whose deactivation (in the code before) stopped one bot short.
      const gone = await createTestUser(server, `Migrated Gone ${count++}`);
      const goneBot = await createBot(gone, 1);
      await ok(admin.client.delete(`/users/${gone.id}`));
      const leftRunning = await createBot(member, 1, { default_sending_stream: "general" });
      await ok(member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "general" }], principals: [leftRunning.id] }));
      await setOwner(leftRunning.id, goneBot.id);
      // A chain that reaches no person: its top bot is no one's.
      const orphanTop = await createBot(member, 1);
      const orphan = await createBot(member, 1);
      await setOwner(orphanTop.id, null);
      await setOwner(orphan.id, orphanTop.id);
      // A bot owned by a person is left alone.
      const untouched = await userRow(top.id);

      await prisma().$executeRawUnsafe(sql);

      for (const bot of [middle, bottom]) {
        const row = await userRow(bot.id);
        expect(row).toMatchObject({ bot_owner_id: person.id, is_active: true });
        expect(row.api_key).toMatch(/^[a-zA-Z0-9]{32}$/);
        expect(row.api_key).not.toBe(bot.apiKey);
        expect((await bot.client.get("/users/me")).status).toBe(401);
        await ok(server.client(bot.email, row.api_key).get("/users/me"));
      }
      // The person sees them as their own, with the keys that work.
      const listed = (await ok(person.client.get("/bots"))).bots as Array<{ user_id: number; api_key: string }>;
      expect(listed.map((b) => b.user_id)).toEqual([top.id, middle.id, bottom.id]);
      expect(listed[1].api_key).toBe((await userRow(middle.id)).api_key);
      expect(await userRow(leftRunning.id)).toMatchObject({ bot_owner_id: gone.id, is_active: false });
      expect((await leftRunning.client.get("/users/me")).status).toBe(401);
      expect(await prisma().subscription.count({ where: { user_id: leftRunning.id, is_user_active: true } })).toBe(0);
      expect(await userRow(orphan.id)).toMatchObject({ bot_owner_id: null, is_active: false });
      expect(await userRow(top.id)).toEqual(untouched);
      expect(await prisma().userProfile.count({ where: { is_bot: true, bot_owner: { is_bot: true } } })).toBe(0);

      // A second run (the data already consistent) changes nothing.
      const before = await snapshot();
      await prisma().$executeRawUnsafe(sql);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe("a new owner gets a new key", () => {
    test("the old key stops working; the new owner gets the new one in realm_bot add, administrators in realm_bot update", async () => {
      const bot = await createBot(member, 1);
      await ok(bot.client.get("/users/me"));
      const adminQueue = await registerQueue(admin.client, ["realm_bot"]);
      const events = await verifyAction(other.client, BOT_EVENTS, () => ok(member.client.patch(`/bots/${bot.id}`, { bot_owner_id: other.id })));
      const row = await userRow(bot.id);
      expect(row.api_key).toMatch(/^[a-zA-Z0-9]{32}$/);
      expect(row.api_key).not.toBe(bot.apiKey);
      expect(events).toContainEqual(expect.objectContaining({ type: "realm_bot", op: "add", bot: expect.objectContaining({ user_id: bot.id, owner_id: other.id, api_key: row.api_key }) }));
      // The previous owner could read the old key; it is refused now, on this node's cached copy too.
      expect((await bot.client.get("/users/me")).status).toBe(401);
      expect((await bot.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
      await ok(server.client(bot.email, row.api_key).get("/users/me"));
      expect(((await ok(member.client.get("/bots"))).bots as Array<{ user_id: number }>).map((b) => b.user_id)).not.toContain(bot.id);
      expect(await waitForEvent(admin.client, adminQueue, (e) => e.type === "realm_bot" && "api_key" in e.bot)).toMatchObject({ op: "update", bot: { user_id: bot.id, api_key: row.api_key } });
      // An administrator giving it back: the administrators' realm_bots follow, new key included.
      const back = await verifyAction(admin.client, ["realm_bot"], () => ok(admin.client.patch(`/bots/${bot.id}`, { bot_owner_id: member.id })));
      const newest = (await userRow(bot.id)).api_key;
      expect(newest).not.toBe(row.api_key);
      expect(back).toContainEqual(expect.objectContaining({ op: "update", bot: { email: bot.email, user_id: bot.id, api_key: newest } }));
      // The same owner again is no change, and keeps the key.
      await ok(member.client.patch(`/bots/${bot.id}`, { bot_owner_id: member.id }));
      expect((await userRow(bot.id)).api_key).toBe(newest);
    });
  });

  test("a bot authenticates with its key and sends a message; it is a realm user with is_bot", async () => {
    const bot = await createBot(member, 1, { default_sending_stream: "general" });
    const me = await ok(bot.client.get("/users/me"));
    expect(me).toMatchObject({ user_id: bot.id, is_bot: true, email: bot.email });
    const sent = await ok(bot.client.post("/messages", { type: "stream", to: "general", topic: "from a bot", content: "beep" }));
    const message = (await ok(member.client.get("/messages", { anchor: sent.id, num_before: 0, num_after: 0 }))).messages[0];
    expect(message).toMatchObject({ id: sent.id, sender_id: bot.id, sender_email: bot.email, content: "<p>beep</p>" });
    const users = (await ok(other.client.get("/users"))).members as Array<Record<string, unknown>>;
    expect(users).toContainEqual(expect.objectContaining({ user_id: bot.id, is_bot: true, bot_type: 1, bot_owner_id: member.id }));
  });
});

describe("bots on the default EXTERNAL_HOST", () => {
  let server: TestServer;
  afterAll(async () => {
    await server?.stop();
  });

  test("localhost makes bot addresses, as Django's validator lets Zulip's", async () => {
    server = await startTestServer("embedded", { EXTERNAL_HOST: "localhost:9991" });
    const res = await server.owner.post("/bots", { full_name: "Local Bot", short_name: "local" });
    expect(res.body.result).toBe("success");
    const bot = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: res.body.user_id } });
    expect(bot.email).toBe("local-bot@localhost");
  });
});

// Issue 31, item 3: one message triggers every service bot it mentions (a group names many), so the
// number of bots bounds what a message costs. Small caps here, so they are reached.
describe.each(MODES)("caps on active bots (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let count = 0;
  const PER_USER = 2;
  const PER_REALM = 5;

  beforeAll(async () => {
    server = await startTestServer(mode, { MAX_BOTS_PER_USER: String(PER_USER), MAX_BOTS_PER_REALM: String(PER_REALM) });
    admin = await createTestUser(server, "Cap Admin", "admin");
  });
  afterAll(() => server.stop());

  const prisma = () => server.running.services.db.prisma;
  const activeBots = () => prisma().userProfile.count({ where: { is_bot: true, is_active: true, bot_owner_id: { not: null } } });
  const rows = () => prisma().userProfile.findMany({ orderBy: { id: "asc" } });
  const USER_CAP = `You have reached the limit of ${PER_USER} active bots`;
  const OWNER_CAP = `The bot's owner has reached the limit of ${PER_USER} active bots`;
  const NEW_OWNER_CAP = `Failed to change owner, the new owner has reached the limit of ${PER_USER} active bots`;
  const REALM_CAP = `This organization has reached the limit of ${PER_REALM} active bots`;

  async function ok(res: Promise<ApiResponse> | ApiResponse): Promise<Record<string, any>> {
    const { body } = await res;
    if (body.result !== "success") throw new Error(JSON.stringify(body));
    return body;
  }

  const create = (user: TestUser) => {
    const n = ++count;
    return user.client.post("/bots", { full_name: `Capped ${n}`, short_name: `capped${n}` });
  };

  async function refused(res: Promise<ApiResponse>, msg: string): Promise<void> {
    const before = await rows();
    const answer = await res;
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: { result: "error", msg, code: "BAD_REQUEST" } });
    expect(await rows()).toEqual(before);
  }

  test("creation, reactivation and a new owner each stay within the user's and the organization's caps", async () => {
    const first = await createTestUser(server, "Cap First");
    const second = await createTestUser(server, "Cap Second");
    const third = await createTestUser(server, "Cap Third");
    const [a, b] = [await ok(create(first)), await ok(create(first))];
    await refused(create(first), USER_CAP);
    // With an avatar too: refused before the image is resized and an id drawn to name its files after.
    const lastId = () => prisma().$queryRaw<{ id: number }[]>`SELECT last_value::int AS id FROM user_profile_id_seq`.then(([row]) => row.id);
    const idBefore = await lastId();
    const withImage = await uploadFiles(first.client, "/bots", [imagePart(await makePng(20, 20))], { full_name: "Capped Picture", short_name: `cappedpic${count++}` });
    expect({ status: withImage.status, body: withImage.json }).toEqual({ status: 400, body: { result: "error", msg: USER_CAP, code: "BAD_REQUEST" } });
    expect(await lastId()).toBe(idBefore);

    // A deactivated bot does not count; bringing it back is within the cap, by its owner or an administrator.
    await ok(first.client.delete(`/bots/${a.user_id}`));
    const c = await ok(create(first));
    await refused(first.client.post(`/users/${a.user_id}/reactivate`), USER_CAP);
    await refused(admin.client.post(`/users/${a.user_id}/reactivate`), OWNER_CAP);

    // A new owner over their cap is refused; a deactivated bot may change hands, then not come back.
    await ok(create(second));
    await ok(create(second));
    await refused(first.client.patch(`/bots/${b.user_id}`, { bot_owner_id: second.id }), NEW_OWNER_CAP);
    await refused(admin.client.patch(`/bots/${c.user_id}`, { bot_owner_id: second.id, full_name: "Renamed In Vain" }), NEW_OWNER_CAP);
    await ok(admin.client.patch(`/bots/${a.user_id}`, { bot_owner_id: second.id }));
    await refused(admin.client.post(`/users/${a.user_id}/reactivate`), OWNER_CAP);

    // The organization: four active, one more is the fifth; a sixth is refused, whoever asks.
    expect(await activeBots()).toBe(4);
    await ok(create(third));
    await refused(create(admin), REALM_CAP);
    await ok(third.client.delete(`/bots/${(await ok(third.client.get("/bots"))).bots[0].user_id}`));
    expect(await activeBots()).toBe(4);
    await ok(create(admin));
    expect(await activeBots()).toBe(PER_REALM);
  });

  test("requests at once cannot pass the organization's cap together", async () => {
    // Make room for exactly one more, then ask for it from four users at the same moment.
    for (const bot of await prisma().userProfile.findMany({ where: { is_bot: true, is_active: true, bot_owner_id: { not: null } } })) {
      await ok(admin.client.delete(`/bots/${bot.id}`));
    }
    for (let i = 1; i < PER_REALM; i++) await ok(create(await createTestUser(server, `Cap Filler ${i}`)));
    const racers = await Promise.all([1, 2, 3, 4].map((i) => createTestUser(server, `Cap Runner ${i}`)));
    const answers = await Promise.all(racers.map((user) => create(user)));
    expect(answers.map((a) => a.body.result).sort()).toEqual(["error", "error", "error", "success"]);
    for (const answer of answers.filter((a) => a.body.result === "error")) expect(answer.body).toMatchObject({ msg: REALM_CAP });
    expect(await activeBots()).toBe(PER_REALM);
  });
});
