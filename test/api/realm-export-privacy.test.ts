// What an organization export leaves out of each user's private data, as Zulip's export
// (zerver/lib/export.py): a public export (export_type 1) holds none of anyone's alert words, muted
// users, topic settings, status, bots' services, storage and configuration, scrubs every
// subscription's personal choices and sets every user's personal settings to the organization's
// defaults; a full export with consent (export_type 2) holds those of the consenting users only.
// Drafts and scheduled messages are never exported, and no mode holds a password hash or API key.
import { readExportTarball, download, waitForExport } from "../support/realm-exports.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

jest.setTimeout(180_000);

type Row = Record<string, any>;

describe.each(MODES)("private data in organization exports (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  /** Consents to the export of their private data. */
  let yes: TestUser;
  /** Does not. */
  let no: TestUser;
  let botId: number;
  let botApiKey: string;
  let streamId: number;
  let recipientId: number;
  const secrets: string[] = [];

  const ok = async <R extends { body: any }>(pending: Promise<R>, what: string): Promise<R> => {
    const res = await pending;
    if (res.body.result !== "success") throw new Error(`${what}: ${JSON.stringify(res.body)}`);
    return res;
  };

  /** Gives `user` one of each kind of private data, marked with `tag`. */
  async function privateData(user: TestUser, other: TestUser, tag: string): Promise<void> {
    await ok(user.client.post("/users/me/alert_words", { alert_words: JSON.stringify([`${tag}alertword`]) }), "alert word");
    await ok(user.client.post(`/users/me/muted_users/${other.id}`), "mute");
    await ok(user.client.post("/user_topics", { stream_id: streamId, topic: `${tag} muted topic`, visibility_policy: 1 }), "muted topic");
    await ok(user.client.post("/users/me/status", { status_text: `${tag} status text` }), "status");
    await ok(user.client.post("/drafts", { drafts: [{ type: "stream", to: [streamId], topic: "drafting", content: `${tag} draft content` }] }), "draft");
    const at = Math.floor(Date.now() / 1000) + 86_400;
    await ok(user.client.post("/scheduled_messages", { type: "stream", to: streamId, topic: "later", content: `${tag} scheduled content`, scheduled_delivery_timestamp: at }), "scheduled message");
    await ok(
      user.client.post("/users/me/subscriptions/properties", {
        subscription_data: JSON.stringify([
          { stream_id: streamId, property: "pin_to_top", value: true },
          { stream_id: streamId, property: "is_muted", value: true },
          { stream_id: streamId, property: "color", value: "#123456" },
          { stream_id: streamId, property: "desktop_notifications", value: true },
        ]),
      }),
      "subscription settings",
    );
    // A personal setting the organization has a default for.
    await ok(user.client.patch("/settings", { enable_sounds: false }), "setting");
  }

  async function exportOf(exportType: 1 | 2): Promise<Map<string, Buffer>> {
    const id = (await ok(admin.client.post("/export/realm", { export_type: exportType }), "export")).body.id as number;
    const done = await waitForExport(admin.client, id);
    expect(done).toMatchObject({ export_type: exportType, failed_timestamp: null });
    const got = await download(server.baseUrl, done.export_url, { email: admin.email, apiKey: admin.client.credentials!.apiKey });
    expect(got.status).toBe(200);
    return readExportTarball(got.body as Buffer);
  }

  /** Every JSON file of the export, as text. */
  const allText = (files: Map<string, Buffer>) => [...files.entries()].filter(([name]) => name.endsWith(".json")).map(([, body]) => body.toString()).join("\n");

  beforeAll(async () => {
    server = await startTestServer(mode);
    const prisma = server.running.services.db.prisma;
    admin = await createTestUser(server, "Ada Privacy Admin", "admin");
    yes = await createTestUser(server, "Yan Consenting");
    no = await createTestUser(server, "Noor Private");
    await ok(server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "privacy square" }], principals: JSON.stringify([yes.id, no.id, admin.id]) }), "subscribe");
    const stream = await prisma.stream.findFirstOrThrow({ where: { name: "privacy square" } });
    streamId = stream.id;
    recipientId = stream.recipient_id!;
    // Whoever has a channel's email token may post to it by email.
    secrets.push(stream.email_token);
    await ok(server.owner.post("/messages", { type: "stream", to: "privacy square", topic: "hello", content: "public talk" }), "send");
    await privateData(yes, no, "yes");
    await privateData(no, yes, "no");
    await ok(yes.client.patch("/settings", { allow_private_data_export: true }), "consent");
    // Nobody may see this user's email address: nor may the export's reader.
    await ok(no.client.patch("/settings", { email_address_visibility: 4 }), "email visibility");

    // A bot of the user who does not consent, with its storage, configuration and service.
    const bot = await ok(no.client.post("/bots", { full_name: "Private Bot", short_name: "privatebot" }), "bot");
    botId = bot.body.user_id;
    botApiKey = bot.body.api_key;
    await prisma.botStorageData.create({ data: { user_id: botId, key: "remembered", value: "bot storage value" } });
    await prisma.botConfigData.create({ data: { bot_profile_id: botId, key: "config key", value: "bot config value" } });
    await prisma.service.create({ data: { user_id: botId, name: "privatebot", base_url: "https://hooks.example/bot", token: "service-token-secret", interface: 1 } });

    const users = await prisma.userProfile.findMany({ where: { id: { in: [admin.id, yes.id, no.id, botId] } }, select: { api_key: true, password_hash: true } });
    for (const user of users) {
      secrets.push(user.api_key);
      if (user.password_hash) secrets.push(user.password_hash);
    }
    expect(secrets).toContain(botApiKey);
  });
  afterAll(() => server.stop());

  test("a public export holds no one's private data", async () => {
    const files = await exportOf(1);
    const realm = JSON.parse(files.get("realm.json")!.toString());
    for (const table of ["zerver_alertword", "zerver_muteduser", "zerver_usertopic", "zerver_userstatus", "zerver_botstoragedata", "zerver_botconfigdata", "zerver_service"]) {
      expect([table, realm[table]]).toEqual([table, []]);
    }
    const text = allText(files);
    for (const tag of ["yes", "no"]) {
      for (const hidden of [`${tag}alertword`, `${tag} muted topic`, `${tag} status text`, `${tag} draft content`, `${tag} scheduled content`]) expect(text).not.toContain(hidden);
    }
    for (const hidden of ["bot storage value", "bot config value", "service-token-secret", "#123456"]) expect(text).not.toContain(hidden);
    // Everyone's subscriptions are there (channels need their members), none of their personal choices.
    const subscriptions = (realm.zerver_subscription as Row[]).filter((s) => s.recipient === recipientId);
    expect(subscriptions.map((s) => s.user_profile)).toEqual(expect.arrayContaining([yes.id, no.id, admin.id]));
    for (const s of subscriptions) expect(s).toMatchObject({ pin_to_top: false, is_muted: false, desktop_notifications: null });
    // Personal settings are the organization's defaults.
    const users = new Map((realm.zerver_userprofile as Row[]).map((u) => [u.id as number, u]));
    expect(users.get(yes.id)).toMatchObject({ enable_sounds: true });
    expect(users.get(no.id)).toMatchObject({ enable_sounds: true });
    // An account whose address nobody may see is exported without it, and cannot be used.
    expect(users.get(no.id)).toMatchObject({ email_address_visibility: 4, is_mirror_dummy: true, is_active: false });
    expect(users.get(no.id)!.delivery_email).toMatch(/^exported-user-[0-9a-f]{32}@/);
    expect(text).not.toContain(no.email);
    expect(users.get(yes.id)).toMatchObject({ delivery_email: yes.email, is_active: true, is_mirror_dummy: false });
    // The public channel's message is there.
    expect(JSON.parse(files.get("messages-000001.json")!.toString()).zerver_message.map((m: Row) => m.content)).toContain("public talk");
  });

  test("a full export with consent holds the consenting user's private data only", async () => {
    const files = await exportOf(2);
    const realm = JSON.parse(files.get("realm.json")!.toString());
    const owners = (table: string, field = "user_profile") => new Set((realm[table] as Row[]).map((r) => r[field] as number));
    expect((realm.zerver_alertword as Row[]).map((w) => w.word)).toEqual(["yesalertword"]);
    expect([...owners("zerver_alertword")]).toEqual([yes.id]);
    expect(realm.zerver_muteduser).toEqual([expect.objectContaining({ user_profile: yes.id, muted_user: no.id })]);
    expect((realm.zerver_usertopic as Row[]).map((t) => [t.user_profile, t.topic_name])).toEqual([[yes.id, "yes muted topic"]]);
    expect([...owners("zerver_userstatus")]).toEqual([yes.id]);
    // Bots cannot consent (Zulip's get_consented_user_ids counts humans only).
    for (const table of ["zerver_botstoragedata", "zerver_botconfigdata", "zerver_service"]) expect([table, realm[table]]).toEqual([table, []]);
    const text = allText(files);
    for (const hidden of ["noalertword", "no muted topic", "no status text", "no draft content", "no scheduled content", "yes draft content", "bot storage value", "bot config value", "service-token-secret"]) {
      expect(text).not.toContain(hidden);
    }
    const subscriptions = new Map((realm.zerver_subscription as Row[]).filter((s) => s.recipient === recipientId).map((s) => [s.user_profile as number, s]));
    expect(subscriptions.get(yes.id)).toMatchObject({ pin_to_top: true, is_muted: true, color: "#123456", desktop_notifications: true });
    expect(subscriptions.get(no.id)).toMatchObject({ pin_to_top: false, is_muted: false, desktop_notifications: null });
    expect(subscriptions.get(no.id)!.color).not.toBe("#123456");
    const users = new Map((realm.zerver_userprofile as Row[]).map((u) => [u.id as number, u]));
    expect(users.get(yes.id)).toMatchObject({ enable_sounds: false });
    expect(users.get(no.id)).toMatchObject({ enable_sounds: true, email_address_visibility: 4 });
    expect(users.get(no.id)!.delivery_email).toMatch(/^exported-user-[0-9a-f]{32}@/);
    expect(text).not.toContain(no.email);
  });

  test.each([1, 2] as const)("export_type %s: no password hash, API key, service token or channel email token, in any file", async (exportType) => {
    const files = await exportOf(exportType);
    const realm = JSON.parse(files.get("realm.json")!.toString());
    for (const user of realm.zerver_userprofile as Row[]) {
      for (const field of ["api_key", "password", "password_hash"]) expect(user).not.toHaveProperty(field);
    }
    expect((realm.zerver_userprofile as Row[]).map((u) => u.id)).toEqual(expect.arrayContaining([yes.id, no.id, botId]));
    for (const stream of realm.zerver_stream as Row[]) expect(stream).not.toHaveProperty("email_token");
    const text = allText(files);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain("service-token-secret");
  });
});
