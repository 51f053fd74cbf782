// Organization data exports (POST/GET /export/realm, DELETE /export/realm/{id}, realm_export
// events): administrators only, five in seven days, written by the worker tier (here the server's
// own, in process) as a tarball in Zulip's format that administrators of the organization alone
// may download; a failed export says so and tells its requester.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { download, readExportTarball, waitForExport } from "../support/realm-exports.ts";

jest.setTimeout(120_000);

describe.each(MODES)("organization data exports (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mo Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "back room" }], invite_only: true });
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "open house" }, { name: "back room" }], principals: [member.id] });
    await server.owner.post("/messages", { type: "stream", to: "open house", topic: "hello", content: "a public message" });
    await server.owner.post("/messages", { type: "stream", to: "back room", topic: "secret", content: "a private stream message" });
    await server.owner.post("/messages", { type: "private", to: JSON.stringify([member.id]), content: "a direct message" });
  });
  afterAll(() => server.stop());

  test.each([
    ["post", "/export/realm"],
    ["get", "/export/realm"],
    ["delete", "/export/realm/1"],
  ] as const)("%s %s: members and guests are refused", async (method, path) => {
    for (const user of [member, guest]) {
      const res = await user.client[method](path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    expect((await server.owner.get("/export/realm")).body.exports).toEqual([]);
  });

  test("an administrator's export is written by the worker, announced to administrators, and downloadable by them only", async () => {
    const ownerQueue = (await server.owner.post("/register", { event_types: ["realm_export"] })).body.queue_id;
    const memberQueue = (await member.client.post("/register", { event_types: ["realm_export", "message"] })).body.queue_id;
    const adminQueue = (await admin.client.post("/register", { event_types: ["realm_export", "message"] })).body.queue_id;
    const before = Date.now() / 1000;
    const res = await admin.client.post("/export/realm");
    expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    const id = res.body.id as number;

    const pending = await waitForEvent(server.owner, ownerQueue, (e) => e.type === "realm_export");
    expect(pending.exports).toEqual([
      { id, acting_user_id: admin.id, export_time: expect.any(Number), deleted_timestamp: null, failed_timestamp: null, export_url: null, pending: true, export_type: 1 },
    ]);
    expect(pending.exports[0].export_time).toBeGreaterThanOrEqual(before - 5);
    const done = await waitForEvent(server.owner, ownerQueue, (e) => e.type === "realm_export" && e.exports[0].pending === false, { timeoutMs: 60_000 });
    const url = done.exports[0].export_url as string;
    expect(url).toMatch(new RegExp(`^https?://chat\\.test/realm_exports/\\d+/[A-Za-z0-9_-]{24}/zulip-export-[a-z0-9-]+-\\d{14}\\.tar\\.gz$`));
    expect(await waitForExport(admin.client, id)).toEqual(done.exports[0]);
    // The requester hears from the Notification Bot.
    const note = await waitForEvent(admin.client, adminQueue, (e) => e.type === "message" && e.message.sender_email.startsWith("notification-bot@"), { timeoutMs: 10_000 });
    expect(note.message.content).toContain("Your data export is complete.");
    expect((await drainEvents(member.client, memberQueue)).filter((e) => e.type === "realm_export")).toEqual([]);

    const owner = await server.running.services.db.prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
    const got = await download(server.baseUrl, url, { email: admin.email, apiKey: admin.client.credentials!.apiKey });
    expect(got.status).toBe(200);
    expect(got.headers["content-type"]).toBe("application/gzip");
    const files = await readExportTarball(got.body as Buffer);
    expect([...files.keys()].sort()).toEqual(["attachment.json", "avatars/records.json", "emoji/records.json", "messages-000001.json", "realm.json", "uploads/records.json"]);
    const realm = JSON.parse(files.get("realm.json")!.toString());
    expect(realm.zerver_realm).toEqual([expect.objectContaining({ id: owner.realm_id, string_id: "", name: expect.any(String) })]);
    const users = realm.zerver_userprofile as Array<Record<string, unknown>>;
    expect(users.map((u) => u.delivery_email)).toEqual(expect.arrayContaining([OWNER_EMAIL, admin.email, member.email, guest.email]));
    // No secrets: Zulip's export has neither passwords nor API keys.
    for (const user of users) {
      expect(user).not.toHaveProperty("api_key");
      expect(user).not.toHaveProperty("password_hash");
      expect(user.realm).toBe(owner.realm_id);
      expect(typeof user.date_joined).toBe("number");
    }
    expect(realm.zerver_stream.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(["open house", "back room"]));
    // A public export: public streams' messages only.
    const messages = JSON.parse(files.get("messages-000001.json")!.toString());
    const contents = messages.zerver_message.map((m: { content: string }) => m.content);
    expect(contents).toContain("a public message");
    expect(contents).not.toContain("a private stream message");
    expect(contents).not.toContain("a direct message");
    const publicMessage = messages.zerver_message.find((m: { content: string }) => m.content === "a public message");
    expect(messages.zerver_usermessage).toEqual(expect.arrayContaining([expect.objectContaining({ message: publicMessage.id, user_profile: member.id, flags_mask: 0 })]));
    expect(realm.zerver_client).toEqual(expect.arrayContaining([{ id: publicMessage.sending_client, name: expect.any(String) }]));

    // Others may not download it.
    expect((await download(server.baseUrl, url, { email: member.email, apiKey: member.client.credentials!.apiKey })).status).toBe(403);
    expect((await download(server.baseUrl, url, null)).status).toBe(401);
    const wrongToken = url.replace(/\/([A-Za-z0-9_-]{24})\//, "/AAAAAAAAAAAAAAAAAAAAAAAA/");
    expect((await download(server.baseUrl, wrongToken, { email: admin.email, apiKey: admin.client.credentials!.apiKey })).status).toBe(404);
  });

  test("deleting an export removes its tarball and keeps it in the list", async () => {
    const id = (await server.owner.post("/export/realm")).body.id as number;
    const done = await waitForExport(server.owner, id);
    const queue = (await admin.client.post("/register", { event_types: ["realm_export"] })).body.queue_id;
    expect((await server.owner.delete(`/export/realm/${id}`)).body).toEqual({ result: "success", msg: "" });
    const event = await waitForEvent(admin.client, queue, (e) => e.type === "realm_export");
    const deleted = event.exports.find((e: { id: number }) => e.id === id);
    expect(deleted).toEqual({ ...done, deleted_timestamp: expect.any(Number), export_url: null, pending: false });
    expect((await server.owner.get("/export/realm")).body.exports).toContainEqual(deleted);
    expect((await download(server.baseUrl, done.export_url, server.owner.credentials)).status).toBe(404);
    expect((await server.owner.delete(`/export/realm/${id}`)).body).toEqual({ result: "error", msg: "Export already deleted", code: "BAD_REQUEST" });
    expect((await server.owner.delete("/export/realm/999999")).body).toEqual({ result: "error", msg: "Invalid data export ID", code: "BAD_REQUEST" });
  });

  test("an export still being written cannot be deleted", async () => {
    const prisma = server.running.services.db.prisma;
    const owner = await prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
    const [row] = await prisma.$queryRawUnsafe<{ id: number }[]>("INSERT INTO realm_export (realm_id, acting_user_id) VALUES ($1, $2) RETURNING id", owner.realm_id, owner.id);
    expect((await server.owner.delete(`/export/realm/${row.id}`)).body).toEqual({ result: "error", msg: "Export still in progress", code: "BAD_REQUEST" });
    await prisma.$executeRawUnsafe("UPDATE realm_export SET failed_timestamp = now() WHERE id = $1", row.id);
    expect((await server.owner.delete(`/export/realm/${row.id}`)).body).toEqual({ result: "error", msg: "Export failed, nothing to delete", code: "BAD_REQUEST" });
  });

  test("a failed export says so, to the administrators and its requester", async () => {
    const storage = server.running.services.storage;
    const put = storage.put.bind(storage);
    storage.put = async (key, body, options) => {
      if (key.startsWith("exports/")) {
        (body as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        throw new Error("the disk is full");
      }
      return put(key, body, options);
    };
    try {
      const queue = (await admin.client.post("/register", { event_types: ["realm_export", "message"] })).body.queue_id;
      const id = (await admin.client.post("/export/realm")).body.id as number;
      const failed = await waitForExport(admin.client, id);
      expect(failed).toEqual({ id, acting_user_id: admin.id, export_time: expect.any(Number), deleted_timestamp: null, failed_timestamp: expect.any(Number), export_url: null, pending: false, export_type: 1 });
      const event = await waitForEvent(admin.client, queue, (e) => e.type === "realm_export" && e.exports.some((x: { id: number; failed_timestamp: number | null }) => x.id === id && x.failed_timestamp !== null));
      expect(event.exports.find((x: { id: number }) => x.id === id)).toEqual(failed);
      const note = await waitForEvent(admin.client, queue, (e) => e.type === "message" && e.message.content.includes("Your data export failed"));
      expect(note.message.type).toBe("private");
    } finally {
      storage.put = put;
    }
  });

  test("five exports in seven days, then Zulip's rate limit", async () => {
    const prisma = server.running.services.db.prisma;
    const owner = await prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
    const count = async () => Number((await prisma.$queryRawUnsafe<{ n: bigint }[]>("SELECT count(*) AS n FROM realm_export WHERE realm_id = $1", owner.realm_id))[0].n);
    // Earlier tests asked for three; older exports do not count.
    await prisma.$executeRawUnsafe("UPDATE realm_export SET export_time = now() - interval '8 days' WHERE realm_id = $1 AND id = (SELECT min(id) FROM realm_export WHERE realm_id = $1)", owner.realm_id);
    while ((await prisma.$queryRawUnsafe<{ n: bigint }[]>("SELECT count(*) AS n FROM realm_export WHERE realm_id = $1 AND export_time > now() - interval '7 days'", owner.realm_id))[0].n < 5n) {
      expect((await server.owner.post("/export/realm")).body.result).toBe("success");
    }
    const before = await count();
    const res = await server.owner.post("/export/realm");
    expect(res.body).toEqual({ result: "error", msg: "Exceeded rate limit.", code: "BAD_REQUEST" });
    expect(await count()).toBe(before);
  });

  test("a malformed export id is not found", async () => {
    expect((await server.owner.delete("/export/realm/abc")).status).toBe(404);
    expect((await server.owner.delete("/export/realm/99999999999")).body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });
});
