// Organization odds and ends of Zulip 10.0 (feature levels 278-371): invitations into user groups
// (322) and with default channels (342), default channels as ids for today's clients (330),
// deletion delays of deactivated organizations (332), the channel email address's sender (335),
// incoming webhook bots' config_options (318), and the services this server does not run
// (BigBlueButton's voice_only 337, Zulip services registration 345, Zoom server to server 353).
import request from "supertest";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

jest.setTimeout(90_000);

const STRONG = "Correct-Horse-Battery-77";
const MODERN = { client_capabilities: JSON.stringify({ user_settings_object: true }) };

describe.each(MODES)("Zulip 10 organization changes (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let ownerId: number;
  let groupId: number;

  const prisma = () => server.running.services.db.prisma;
  const systemGroupId = async (name: string) => (await prisma().userGroup.findFirstOrThrow({ where: { name, is_system_group: true } })).id;

  async function makeStream(name: string): Promise<number> {
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }] })).body.result).toBe("success");
    return (await server.owner.get("/get_stream_id", { stream: name })).body.stream_id;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Ten Admin", "admin");
    member = await createTestUser(server, "Mia Ten Member");
    ownerId = (await prisma().userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } })).id;
    const created = await server.owner.post("/user_groups/create", { name: "newcomers", description: "Joined by invitation", members: JSON.stringify([ownerId]) });
    expect(created.body.result).toBe("success");
    groupId = (await prisma().userGroup.findFirstOrThrow({ where: { name: "newcomers" } })).id;
  });
  afterAll(() => server.stop());

  describe("invitations into user groups (feature level 322)", () => {
    test("a reusable link's new users join its groups, announced as any new membership", async () => {
      const link = await server.owner.post("/invites/multiuse", { group_ids: JSON.stringify([groupId]) });
      expect(link.body).toEqual({ result: "success", msg: "", invite_link: expect.stringMatching(/\/join\/[a-z2-7]{24}\/$/) });
      const key = /\/join\/([a-z2-7]{24})\//.exec(link.body.invite_link)![1];
      const row = await prisma().invite.findFirstOrThrow({ where: { is_multiuse: true }, orderBy: { id: "desc" } });
      expect(row.group_ids).toEqual([groupId]);

      const queue = (await member.client.post("/register", { event_types: JSON.stringify(["user_group"]) })).body.queue_id;
      const accepted = await server.anonymous.post(`/invitations/${key}/accept`, { email: "grouped@example.com", full_name: "Greta Grouped", password: STRONG });
      expect(accepted.body.result).toBe("success");
      const newId = accepted.body.user_id as number;
      // (The system groups of the new user's role are announced too.)
      const event = await waitForEvent(member.client, queue, (e) => e.type === "user_group" && e.op === "add_members" && e.group_id === groupId);
      expect(event).toMatchObject({ type: "user_group", op: "add_members", group_id: groupId, user_ids: [newId] });
      const members = (await prisma().userGroupMembership.findMany({ where: { user_group_id: groupId } })).map((m) => m.user_id);
      expect(members.sort((x, y) => x - y)).toEqual([ownerId, newId].sort((x, y) => x - y));
    });

    test("only named, active groups the inviter may add members to; bounded", async () => {
      const members = await systemGroupId("role:members");
      const nobody = await systemGroupId("role:nobody");
      const invite = (client: TestUser["client"], groupIds: unknown) => client.post("/invites", { invitee_emails: "someone.new@example.com", group_ids: JSON.stringify(groupIds) });
      expect((await invite(server.owner, [999999])).body).toEqual({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
      expect((await invite(server.owner, [members])).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      // An anonymous group (a setting's value) is no group to join.
      const [anonymous] = await prisma().$queryRawUnsafe<Array<{ id: number }>>(
        "INSERT INTO user_group (realm_id, name) VALUES ((SELECT realm_id FROM user_profile WHERE id = $1), NULL) RETURNING id",
        ownerId,
      );
      expect((await invite(server.owner, [anonymous.id])).body.msg).toBe("Invalid user group");
      // A member may name a group only if its can_add_members_group (or can_manage_group) has them.
      await prisma().$executeRawUnsafe("UPDATE user_group SET can_add_members_group_id = $2, can_manage_group_id = $2 WHERE id = $1", groupId, nobody);
      expect((await invite(member.client, [groupId])).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      expect(await prisma().invite.count({ where: { email: "someone.new@example.com" } })).toBe(0);
      await prisma().$executeRawUnsafe("UPDATE user_group SET can_add_members_group_id = $2 WHERE id = $1", groupId, members);
      expect((await invite(member.client, [groupId])).body).toEqual({ result: "success", msg: "" });
      expect((await prisma().invite.findFirstOrThrow({ where: { email: "someone.new@example.com" } })).group_ids).toEqual([groupId]);
      // Deactivated groups are refused.
      await prisma().$executeRawUnsafe("UPDATE user_group SET deactivated = true WHERE id = $1", groupId);
      expect((await server.owner.post("/invites/multiuse", { group_ids: JSON.stringify([groupId]) })).body.msg).toBe("User group is deactivated.");
      await prisma().$executeRawUnsafe("UPDATE user_group SET deactivated = false WHERE id = $1", groupId);
      // Bounded, and typed.
      const tooMany = await server.owner.post("/invites/multiuse", { group_ids: JSON.stringify(Array.from({ length: 101 }, (_, i) => i + 1)) });
      expect(tooMany.body).toMatchObject({ result: "error", msg: "group_ids has too many items (limit: 100)" });
      expect((await server.owner.post("/invites/multiuse", { group_ids: JSON.stringify(["x"]) })).body.result).toBe("error");
      expect((await server.owner.post("/invites/multiuse", { group_ids: "null" })).body.result).toBe("success");
    });
  });

  test("feature level 342: default channels may always be in an invitation", async () => {
    const plain = await makeStream("ten-plain");
    const welcome = await makeStream("ten-welcome");
    expect((await server.owner.post("/default_streams", { stream_id: welcome })).body.result).toBe("success");
    const realm = await prisma().realm.findFirstOrThrow({ where: { string_id: "" } });
    const saved = realm.can_add_subscribers_group_id;
    await prisma().realm.update({ where: { id: realm.id }, data: { can_add_subscribers_group_id: await systemGroupId("role:administrators") } });
    try {
      const refused = await member.client.post("/invites", { invitee_emails: "channel.a@example.com", stream_ids: JSON.stringify([plain]) });
      expect(refused.body).toEqual({ result: "error", msg: "You do not have permission to subscribe other users to channels.", code: "BAD_REQUEST" });
      const mixed = await member.client.post("/invites", { invitee_emails: "channel.b@example.com", stream_ids: JSON.stringify([welcome, plain]) });
      expect(mixed.body.msg).toBe("You do not have permission to subscribe other users to channels.");
      expect((await member.client.post("/invites", { invitee_emails: "channel.c@example.com", stream_ids: JSON.stringify([welcome]) })).body).toEqual({ result: "success", msg: "" });
      expect((await prisma().invite.findFirstOrThrow({ where: { email: "channel.c@example.com" } })).stream_ids).toEqual([welcome]);
    } finally {
      await prisma().realm.update({ where: { id: realm.id }, data: { can_add_subscribers_group_id: saved } });
    }
  });

  test("feature level 330: default channels as ids for today's clients, whole streams for 3.x-era ones", async () => {
    const a = await makeStream("ten-default-a");
    const b = await makeStream("ten-default-b");
    expect((await server.owner.post("/default_streams", { stream_id: a })).body.result).toBe("success");
    const types = JSON.stringify(["default_streams", "default_stream_groups"]);
    const modern = await member.client.post("/register", { ...MODERN, event_types: types });
    const legacy = await member.client.post("/register", { event_types: types });
    expect(modern.body.realm_default_streams).toEqual(expect.arrayContaining([a]));
    for (const id of modern.body.realm_default_streams) expect(typeof id).toBe("number");
    const legacyIds = legacy.body.realm_default_streams.map((s: { stream_id: number; name: string }) => s.stream_id);
    expect(legacy.body.realm_default_streams).toEqual(expect.arrayContaining([expect.objectContaining({ stream_id: a, name: "ten-default-a" })]));
    expect([...modern.body.realm_default_streams].sort()).toEqual([...legacyIds].sort());

    // The events, each as its queue's client registered.
    expect((await server.owner.post("/default_stream_groups/create", { group_name: "ten group", description: "two", stream_names: JSON.stringify(["ten-default-a", "ten-default-b"]) })).body.result).toBe("success");
    expect((await server.owner.post("/default_streams", { stream_id: b })).body.result).toBe("success");
    const modernGroups = await waitForEvent(member.client, modern.body.queue_id, (e) => e.type === "default_stream_groups");
    expect(modernGroups.default_stream_groups).toEqual([expect.objectContaining({ name: "ten group", description: "two", streams: [a, b] })]);
    const legacyGroups = await waitForEvent(member.client, legacy.body.queue_id, (e) => e.type === "default_stream_groups");
    expect(legacyGroups.default_stream_groups[0].streams.map((s: { name: string }) => s.name)).toEqual(["ten-default-a", "ten-default-b"]);
    const modernDefaults = await waitForEvent(member.client, modern.body.queue_id, (e) => e.type === "default_streams");
    expect(modernDefaults.default_streams).toEqual(expect.arrayContaining([a, b]));
    for (const id of modernDefaults.default_streams) expect(typeof id).toBe("number");
    const legacyDefaults = await waitForEvent(member.client, legacy.body.queue_id, (e) => e.type === "default_streams");
    expect(legacyDefaults.default_streams).toEqual(expect.arrayContaining([expect.objectContaining({ stream_id: b, name: "ten-default-b" })]));

    // A fresh /register agrees with the state the events built.
    const again = await member.client.post("/register", { ...MODERN, event_types: types });
    expect(again.body.realm_default_streams).toEqual(modernDefaults.default_streams);
    expect(again.body.realm_default_stream_groups).toEqual(modernGroups.default_stream_groups);
    await drainEvents(member.client, modern.body.queue_id);
  });

  test("verifyAction: default channel events take a modern client's and a 3.x client's state alike to the new one", async () => {
    const c = await makeStream("ten-default-c");
    for (const registerParams of [MODERN, {}]) {
      const add = await verifyAction(member.client, ["default_streams"], () => server.owner.post("/default_streams", { stream_id: c }), 5000, registerParams);
      expect(add.map((e) => e.type)).toEqual(["default_streams"]);
      await verifyAction(member.client, ["default_streams"], () => server.owner.delete("/default_streams", { stream_id: c }), 5000, registerParams);
      await verifyAction(member.client, ["default_stream_groups"], () => server.owner.post("/default_stream_groups/create", { group_name: `ten ${Object.keys(registerParams).length}`, description: "", stream_names: JSON.stringify(["ten-default-c"]) }), 5000, registerParams);
    }
  });

  test("feature level 332: deletion delays in /register (POST /realm/deactivate itself: realm-deactivate.test.ts)", async () => {
    const state = await member.client.post("/register", { ...MODERN, fetch_event_types: JSON.stringify(["realm"]) });
    expect(state.body.server_min_deactivated_realm_deletion_days).toBe(14);
    expect(state.body.server_max_deactivated_realm_deletion_days).toBeNull();
    // Only owners deactivate; this organization stays active for the tests after this one.
    expect((await member.client.post("/realm/deactivate", { deletion_delay_days: 30 })).body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
  });

  test("feature level 335: the channel email address's sender_id is the user or a bot they may manage", async () => {
    const stream = await makeStream("ten-email");
    const path = `/streams/${stream}/email_address`;
    expect((await member.client.get(path)).body).toEqual({ result: "success", msg: "", email: "" });
    expect((await member.client.get(path, { sender_id: member.id })).body).toEqual({ result: "success", msg: "", email: "" });
    const bot = await member.client.post("/bots", { full_name: "Ten Mail Bot", short_name: "tenmail" });
    expect((await member.client.get(path, { sender_id: bot.body.user_id })).body.result).toBe("success");
    const otherBot = await admin.client.post("/bots", { full_name: "Admin Mail Bot", short_name: "adminmail" });
    expect((await member.client.get(path, { sender_id: otherBot.body.user_id })).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    // An administrator manages every bot.
    expect((await admin.client.get(path, { sender_id: bot.body.user_id })).body.result).toBe("success");
    for (const other of [admin.id, 999999]) expect((await member.client.get(path, { sender_id: other })).body).toEqual({ result: "error", msg: "No such bot", code: "BAD_REQUEST" });
    expect((await member.client.get(path, { sender_id: "me" })).body.result).toBe("error");
  });

  test("feature level 318: no incoming webhook bots are offered, in config_options' shape", async () => {
    const state = await member.client.post("/register", { ...MODERN, fetch_event_types: JSON.stringify(["realm_incoming_webhook_bots"]) });
    expect(state.body.realm_incoming_webhook_bots).toEqual([]);
  });

  describe("services this server does not run answer as Zulip does when they are not configured", () => {
    test("337: a voice-only BigBlueButton call", async () => {
      for (const voice_only of [true, false]) {
        const res = await member.client.get("/calls/bigbluebutton/create", { meeting_name: "standup", voice_only });
        expect(res.body).toEqual({ result: "error", msg: "BigBlueButton is not configured.", code: "BAD_REQUEST" });
      }
    });

    test("345: Zulip services registration is a push bouncer's, not here", async () => {
      // (Without credentials, any path under /api/v1 this server does not know asks for them first.)
      for (const path of ["/remotes/server/register", "/remotes/server/register/transfer", "/remotes/server/register/verify_challenge"]) {
        const res = await server.owner.post(path, { hostname: "chat.example.com", contact_email: "ops@example.com" });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ result: "error", msg: "Endpoint not found", code: "BAD_REQUEST" });
      }
      const verify = await request(server.baseUrl).post("/zulip-services/verify/abc/").set("Host", "chat.test");
      expect(verify.status).toBe(404);
    });

    test("353: Zoom server to server is no video chat provider here", async () => {
      const state = await member.client.post("/register", { ...MODERN, fetch_event_types: JSON.stringify(["realm"]) });
      const ids = Object.values(state.body.realm_available_video_chat_providers as Record<string, { id: number }>).map((p) => p.id);
      expect(ids).not.toContain(6);
      const res = await server.owner.patch("/realm", { video_chat_provider: 6 });
      expect(res.body).toEqual({ result: "error", msg: "Invalid video_chat_provider 6", code: "BAD_REQUEST" });
      expect((await server.owner.post("/calls/zoom/create")).body.msg).toBe("Zoom credentials have not been configured");
    });
  });
});
