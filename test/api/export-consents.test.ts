// Exports with members' consent (feature levels 293, 295, 304, 312): the allow_private_data_export
// setting (/register, PATCH /settings, user_settings events), GET /export/realm/consents, the
// realm_export_consent event to administrators, export_type on POST /export/realm and in the list,
// and what a full export with consent holds: as Zulip's export_partial_message_files, private
// data only of the users who consented when it was written.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { download, readExportTarball, waitForExport } from "../support/realm-exports.ts";
import { verifyAction } from "../support/verify-action.ts";

jest.setTimeout(180_000);

const MODERN = { client_capabilities: JSON.stringify({ user_settings_object: true }) };

describe.each(MODES)("exports with consent (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let yes: TestUser;
  let no: TestUser;
  let ownerId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Consent Admin", "admin");
    yes = await createTestUser(server, "Yvonne Yes");
    no = await createTestUser(server, "Nadia No");
    ownerId = (await server.running.services.db.prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } })).id;
  });
  afterAll(() => server.stop());

  test("allow_private_data_export: false by default, changed by PATCH /settings, announced to the user and to administrators only", async () => {
    const state = await yes.client.post("/register", { ...MODERN, fetch_event_types: JSON.stringify(["user_settings"]) });
    expect(state.body.user_settings.allow_private_data_export).toBe(false);
    // Not an organization default: new users start without consent whatever the organization says.
    const defaults = await yes.client.post("/register", { fetch_event_types: JSON.stringify(["realm_user_settings_defaults"]) });
    expect(defaults.body.realm_user_settings_defaults).not.toHaveProperty("allow_private_data_export");
    // Zulip's answer to a parameter it does not take there: ignored, and said so.
    const ignored = await server.owner.patch("/realm/user_settings_defaults", { allow_private_data_export: true });
    expect(ignored.body.ignored_parameters_unsupported).toEqual(["allow_private_data_export"]);

    const yesQueue = (await yes.client.post("/register", { ...MODERN, event_types: JSON.stringify(["user_settings", "realm_export_consent"]) })).body.queue_id;
    const adminQueue = (await admin.client.post("/register", { ...MODERN, event_types: JSON.stringify(["realm_export_consent"]) })).body.queue_id;
    const ownerQueue = (await server.owner.post("/register", { ...MODERN, event_types: JSON.stringify(["realm_export_consent"]) })).body.queue_id;
    const noQueue = (await no.client.post("/register", { ...MODERN, event_types: JSON.stringify(["realm_export_consent"]) })).body.queue_id;

    expect((await yes.client.patch("/settings", { allow_private_data_export: true })).body).toEqual({ result: "success", msg: "" });
    const own = await waitForEvent(yes.client, yesQueue, (e) => e.type === "user_settings");
    expect(own).toMatchObject({ type: "user_settings", op: "update", property: "allow_private_data_export", value: true });
    let adminSeen = -1;
    for (const [client, queue] of [[admin.client, adminQueue], [server.owner, ownerQueue]] as const) {
      const event = await waitForEvent(client, queue, (e) => e.type === "realm_export_consent");
      expect(event).toEqual({ type: "realm_export_consent", id: expect.any(Number), user_id: yes.id, consented: true });
      if (client === admin.client) adminSeen = event.id;
    }
    // A member is not told, not even the user themselves by this event.
    expect((await drainEvents(no.client, noQueue)).filter((e) => e.type === "realm_export_consent")).toEqual([]);
    expect((await drainEvents(yes.client, yesQueue)).filter((e) => e.type === "realm_export_consent")).toEqual([]);
    // The same value again changes nothing and tells no one.
    expect((await yes.client.patch("/settings", { allow_private_data_export: true })).body.result).toBe("success");
    expect((await drainEvents(admin.client, adminQueue, adminSeen)).filter((e) => e.type === "realm_export_consent")).toEqual([]);

    const after = await yes.client.post("/register", { ...MODERN, fetch_event_types: JSON.stringify(["user_settings"]) });
    expect(after.body.user_settings.allow_private_data_export).toBe(true);
    const bad = await yes.client.patch("/settings", { allow_private_data_export: "maybe" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });

  test("verifyAction: the user_settings event takes a modern client's state to the new one", async () => {
    const events = await verifyAction(no.client, ["user_settings"], () => no.client.patch("/settings", { allow_private_data_export: true }), 5000, MODERN);
    expect(events).toEqual([expect.objectContaining({ type: "user_settings", property: "allow_private_data_export", value: true })]);
    await verifyAction(no.client, ["user_settings"], () => no.client.patch("/settings", { allow_private_data_export: false }), 5000, MODERN);
  });

  test("GET /export/realm/consents: administrators see each active human user's consent", async () => {
    const refused = await no.client.get("/export/realm/consents");
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    await yes.client.post("/bots", { full_name: "Consent Bot", short_name: "consentbot" });
    const res = await admin.client.get("/export/realm/consents");
    expect(res.body.result).toBe("success");
    const consents = res.body.export_consents as Array<{ user_id: number; consented: boolean }>;
    expect(consents).toEqual(expect.arrayContaining([{ user_id: yes.id, consented: true }, { user_id: no.id, consented: false }, { user_id: admin.id, consented: false }]));
    const ids = consents.map((c) => c.user_id);
    const prisma = server.running.services.db.prisma;
    const bots = await prisma.userProfile.findMany({ where: { is_bot: true }, select: { id: true } });
    for (const bot of bots) expect(ids).not.toContain(bot.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("POST /export/realm: export_type 1 or 2, shown in the list; anything else refused", async () => {
    for (const value of [3, 0, "full", -1]) {
      const res = await admin.client.post("/export/realm", { export_type: value });
      expect(res.status).toBe(400);
      expect(res.body.result).toBe("error");
    }
    expect((await admin.client.post("/export/realm", { export_type: 3 })).body.msg).toBe("Invalid export_type");
    expect((await no.client.post("/export/realm", { export_type: 2 })).body.code).toBe("UNAUTHORIZED_PRINCIPAL");
    // None of the refusals made an export.
    expect((await admin.client.get("/export/realm")).body.exports).toEqual([]);
  });

  test("a full export with consent holds public data and the consenting users' private data only", async () => {
    const prisma = server.running.services.db.prisma;
    // Channels: public; private with shared history, the consenting user in it; private with
    // protected history, joined by the consenting user after a first message; private without them.
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "consent square" }], principals: JSON.stringify([yes.id, no.id, ownerId]) });
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "shared room" }], invite_only: true, principals: JSON.stringify([yes.id, ownerId]) });
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "protected room" }], invite_only: true, history_public_to_subscribers: false, principals: JSON.stringify([no.id, ownerId]) });
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "closed room" }], invite_only: true, principals: JSON.stringify([no.id, ownerId]) });
    const send = async (client: TestUser["client"], params: Record<string, unknown>) => {
      const res = await client.post("/messages", params);
      if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
      return res.body.id as number;
    };
    const stream = (to: string, content: string) => ({ type: "stream", to, topic: "t", content });
    const publicMsg = await send(server.owner, stream("consent square", "square talk"));
    const sharedMsg = await send(server.owner, stream("shared room", "shared history talk"));
    const beforeJoin = await send(server.owner, stream("protected room", "before yes joined"));
    const closedMsg = await send(server.owner, stream("closed room", "closed room talk"));
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "protected room" }], principals: JSON.stringify([yes.id]) })).body.result).toBe("success");
    const afterJoin = await send(server.owner, stream("protected room", "after yes joined"));
    const dmToYes = await send(server.owner, { type: "private", to: JSON.stringify([yes.id]), content: "dm to yes" });
    const dmFromYes = await send(yes.client, { type: "private", to: JSON.stringify([no.id]), content: "dm from yes to no" });
    const dmToNo = await send(server.owner, { type: "private", to: JSON.stringify([no.id]), content: "dm to no" });
    const groupWithYes = await send(no.client, { type: "private", to: JSON.stringify([yes.id, ownerId]), content: "group with yes" });
    const groupWithoutYes = await send(no.client, { type: "private", to: JSON.stringify([admin.id, ownerId]), content: "group without yes" });
    // Private per-user data.
    await yes.client.post("/users/me/alert_words", { alert_words: JSON.stringify(["yesword"]) });
    await no.client.post("/users/me/alert_words", { alert_words: JSON.stringify(["noword"]) });
    const closed = await prisma.stream.findFirstOrThrow({ where: { name: "closed room" } });
    expect((await no.client.post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: closed.id, property: "pin_to_top", value: true }]) })).body.result).toBe("success");

    const queue = (await admin.client.post("/register", { event_types: JSON.stringify(["realm_export"]) })).body.queue_id;
    const res = await admin.client.post("/export/realm", { export_type: 2 });
    expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    const id = res.body.id as number;
    const pending = await waitForEvent(admin.client, queue, (e) => e.type === "realm_export");
    expect(pending.exports.find((e: { id: number }) => e.id === id)).toMatchObject({ pending: true, export_type: 2 });
    const done = await waitForExport(admin.client, id);
    expect(done).toMatchObject({ id, export_type: 2, pending: false, failed_timestamp: null });
    const got = await download(server.baseUrl, done.export_url, { email: admin.email, apiKey: admin.client.credentials!.apiKey });
    expect(got.status).toBe(200);
    const files = await readExportTarball(got.body as Buffer);
    const messages = JSON.parse(files.get("messages-000001.json")!.toString());
    const exported = new Set((messages.zerver_message as Array<{ id: number }>).map((m) => m.id));
    for (const included of [publicMsg, sharedMsg, afterJoin, dmToYes, dmFromYes, groupWithYes]) expect(exported).toContain(included);
    for (const excluded of [beforeJoin, closedMsg, dmToNo, groupWithoutYes]) expect(exported).not.toContain(excluded);
    // Who read or starred what: the consenting users' rows only.
    const readers = new Set((messages.zerver_usermessage as Array<{ user_profile: number }>).map((um) => um.user_profile));
    expect([...readers]).toEqual([yes.id]);

    const realm = JSON.parse(files.get("realm.json")!.toString());
    const words = (realm.zerver_alertword as Array<{ word: string; user_profile: number }>).map((w) => w.word);
    expect(words).toContain("yesword");
    expect(words).not.toContain("noword");
    // Everyone's subscriptions are there (channels need their members), without the personal choices of those who did not consent.
    const pinned = (realm.zerver_subscription as Array<{ user_profile: number; recipient: number; pin_to_top: boolean }>).find((s) => s.user_profile === no.id && s.recipient === closed.recipient_id);
    expect(pinned).toMatchObject({ pin_to_top: false });
    // Users are all there, consenting or not.
    expect((realm.zerver_userprofile as Array<{ id: number }>).map((u) => u.id)).toEqual(expect.arrayContaining([yes.id, no.id, admin.id, ownerId]));

    // A public export of the same organization still holds only public channels' messages.
    const publicId = (await admin.client.post("/export/realm")).body.id as number;
    const publicDone = await waitForExport(admin.client, publicId);
    expect(publicDone.export_type).toBe(1);
    const publicFiles = await readExportTarball((await download(server.baseUrl, publicDone.export_url, { email: admin.email, apiKey: admin.client.credentials!.apiKey })).body as Buffer);
    const publicIds = new Set((JSON.parse(publicFiles.get("messages-000001.json")!.toString()).zerver_message as Array<{ id: number }>).map((m) => m.id));
    expect(publicIds).toContain(publicMsg);
    for (const excluded of [sharedMsg, afterJoin, dmToYes, dmFromYes, groupWithYes]) expect(publicIds).not.toContain(excluded);
  });

  test("consent is read when the export is written: withdrawn consent takes the private data out", async () => {
    expect((await yes.client.patch("/settings", { allow_private_data_export: false })).body.result).toBe("success");
    const id = (await admin.client.post("/export/realm", { export_type: 2 })).body.id as number;
    const done = await waitForExport(admin.client, id);
    const files = await readExportTarball((await download(server.baseUrl, done.export_url, { email: admin.email, apiKey: admin.client.credentials!.apiKey })).body as Buffer);
    const messages = JSON.parse(files.get("messages-000001.json")!.toString());
    const contents = (messages.zerver_message as Array<{ content: string }>).map((m) => m.content);
    expect(contents).toContain("square talk");
    for (const hidden of ["shared history talk", "after yes joined", "dm to yes", "dm from yes to no", "group with yes"]) expect(contents).not.toContain(hidden);
    expect(messages.zerver_usermessage).toEqual([]);
    const consents = (await admin.client.get("/export/realm/consents")).body.export_consents as Array<{ user_id: number; consented: boolean }>;
    expect(consents.find((c) => c.user_id === yes.id)).toEqual({ user_id: yes.id, consented: false });
  });
});
