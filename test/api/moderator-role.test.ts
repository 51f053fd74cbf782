// The moderator role (Zulip's feature levels 59, 60 and 62): role 300, assignable by
// administrators through PATCH /users/{id}, announced in realm_user events, `is_moderator` in
// /register, and counted wherever a policy says "moderators" (realm-policies.test.ts goes through
// every policy value; here what is particular to moderators).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("the moderator role (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let moderator: TestUser;
  let member: TestUser;
  let other: TestUser;
  const prisma = () => server.running.services.db.prisma;
  const roleOf = async (id: number) => (await prisma().userProfile.findUniqueOrThrow({ where: { id } })).role;

  beforeAll(async () => {
    server = await startTestServer(mode);
    [admin, moderator, member, other] = await Promise.all([
      createTestUser(server, "Mod Admin", "admin"),
      createTestUser(server, "Mod Moderator"),
      createTestUser(server, "Mod Member"),
      createTestUser(server, "Mod Other"),
    ]);
  });
  afterAll(() => server.stop());

  test("an administrator makes a member a moderator: everyone hears realm_user update with role 300; the user's state says is_moderator", async () => {
    const own = await verifyAction(moderator.client, ["realm_user"], async () => {
      const watched = await verifyAction(other.client, ["realm_user"], async () => {
        expect((await admin.client.patch(`/users/${moderator.id}`, { role: 300 })).body).toEqual({ result: "success", msg: "" });
      });
      expect(watched).toEqual([{ id: expect.any(Number), type: "realm_user", op: "update", person: { user_id: moderator.id, role: 300 } }]);
    });
    expect(own).toEqual([{ id: expect.any(Number), type: "realm_user", op: "update", person: { user_id: moderator.id, role: 300 } }]);
    const { state } = await registerState(moderator.client, ["realm_user"]);
    expect(state).toMatchObject({ role: 300, is_moderator: true, is_admin: false, is_owner: false, is_guest: false });
    expect((state.realm_users as Array<{ user_id: number; role: number; is_admin: boolean }>).find((u) => u.user_id === moderator.id)).toMatchObject({ role: 300, is_admin: false });
    expect((await member.client.get(`/users/${moderator.id}`)).body.user).toMatchObject({ role: 300, is_admin: false, is_guest: false });
    expect((await registerState(member.client, ["realm_user"])).state.is_moderator).toBe(false);
  });

  test("a moderator back to member: is_moderator follows the event", async () => {
    await verifyAction(moderator.client, ["realm_user"], async () => {
      expect((await admin.client.patch(`/users/${moderator.id}`, { role: 400 })).body.result).toBe("success");
    });
    expect((await registerState(moderator.client, ["realm_user"])).state.is_moderator).toBe(false);
    expect((await admin.client.patch(`/users/${moderator.id}`, { role: 300 })).body.result).toBe("success");
  });

  test("only administrators assign roles; owners alone the owner role; no other values", async () => {
    for (const actor of [member, moderator]) {
      const res = await actor.client.patch(`/users/${other.id}`, { role: 300 });
      expect(res.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    expect((await admin.client.patch(`/users/${moderator.id}`, { role: 100 })).body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
    expect((await admin.client.patch(`/users/${other.id}`, { role: 250 })).body).toEqual({ result: "error", msg: "Invalid role", code: "BAD_REQUEST" });
    expect(await roleOf(other.id)).toBe(400);
    expect(await roleOf(moderator.id)).toBe(300);
    // An owner may make a moderator an owner, and back.
    expect((await server.owner.patch(`/users/${other.id}`, { role: 300 })).body.result).toBe("success");
    expect((await server.owner.patch(`/users/${other.id}`, { role: 400 })).body.result).toBe("success");
  });

  test("moderators are not administrators: no organization settings, no deleting others' messages", async () => {
    expect((await moderator.client.patch("/realm", { name: "Moderated" })).body.msg).toBe("Must be an organization administrator");
    await subscribeTo(server.owner, ["moderated"], { principals: JSON.stringify([moderator.email, member.email]) });
    const id = await sendStreamMessage(member.client, "moderated", "theirs");
    expect((await moderator.client.delete(`/messages/${id}`)).body.msg).toBe("You don't have permission to delete this message");
  });

  test("user groups as Zulip 10.0 manages them: the creator and can_manage_all_groups, not a member of the group; moderators by the setting", async () => {
    const created = await admin.client.post("/user_groups/create", { name: `mods-${mode}`, description: "d", members: JSON.stringify([other.id]) });
    expect(created.body.result).toBe("success");
    const group = (await admin.client.get("/user_groups")).body.user_groups.find((g: { name: string }) => g.name === `mods-${mode}`);
    expect((await member.client.patch(`/user_groups/${group.id}`, { description: "by a stranger" })).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    expect((await member.client.post(`/user_groups/${group.id}/members`, { add: JSON.stringify([member.id]) })).body.msg).toBe("Insufficient permission");
    // Being in a group no longer lets one manage it (Zulip 9.0's has_user_group_access did).
    expect((await other.client.patch(`/user_groups/${group.id}`, { description: "by a member of it" })).body.msg).toBe("Insufficient permission");
    // The creator is the group's can_manage_group by default.
    expect((await admin.client.patch(`/user_groups/${group.id}`, { description: "by its creator" })).body.result).toBe("success");
    // can_manage_all_groups is role:owners by default: moderators manage groups once it names them.
    expect((await moderator.client.patch(`/user_groups/${group.id}`, { description: "by a moderator" })).body.msg).toBe("Insufficient permission");
    const groups = (await server.owner.get("/user_groups")).body.user_groups as Array<{ id: number; name: string }>;
    const byName = (name: string) => groups.find((g) => g.name === name)!.id;
    await server.owner.patch("/realm", { can_manage_all_groups: JSON.stringify({ new: byName("role:moderators") }) });
    try {
      expect((await moderator.client.patch(`/user_groups/${group.id}`, { description: "by a moderator" })).body.result).toBe("success");
      expect((await moderator.client.post(`/user_groups/${group.id}/members`, { add: JSON.stringify([member.id]) })).body.result).toBe("success");
      expect((await other.client.patch(`/user_groups/${group.id}`, { description: "x" })).body.msg).toBe("Insufficient permission");
    } finally {
      await server.owner.patch("/realm", { can_manage_all_groups: JSON.stringify({ new: byName("role:owners") }) });
    }
  });

  test("moderators move others' messages past the time limits, as administrators do", async () => {
    await subscribeTo(server.owner, ["moderated", "moderated-2"], { principals: JSON.stringify([moderator.email, member.email]) });
    const target = (await moderator.client.get("/get_stream_id", { stream: "moderated-2" })).body.stream_id;
    await server.owner.patch("/realm", { edit_topic_policy: 1, move_messages_between_streams_policy: 4, move_messages_within_stream_limit_seconds: 60, move_messages_between_streams_limit_seconds: 60 });
    try {
      const id = await sendStreamMessage(member.client, "moderated", "old one");
      await prisma().message.update({ where: { id }, data: { date_sent: new Date(Date.now() - 3600_000) } });
      expect((await member.client.patch(`/messages/${id}`, { topic: "renamed" })).body.msg).toBe("The time limit for editing this message's topic has passed.");
      expect((await member.client.patch(`/messages/${id}`, { stream_id: target })).body.msg).toBe("You don't have permission to move this message");
      expect((await moderator.client.patch(`/messages/${id}`, { topic: "renamed" })).body.result).toBe("success");
      expect((await moderator.client.patch(`/messages/${id}`, { stream_id: target })).body.result).toBe("success");
    } finally {
      await server.owner.patch("/realm", { edit_topic_policy: 5, move_messages_between_streams_policy: 2, move_messages_within_stream_limit_seconds: 259_200, move_messages_between_streams_limit_seconds: 604_800 });
    }
  });

  test("stream_post_policy 4 and wildcard_mention_policy 7 take moderators, not members", async () => {
    await subscribeTo(server.owner, ["announcements"], { principals: JSON.stringify([moderator.email, member.email]) });
    const streamId = (await member.client.get("/get_stream_id", { stream: "announcements" })).body.stream_id;
    expect((await admin.client.patch(`/streams/${streamId}`, { stream_post_policy: 4 })).body.result).toBe("success");
    const post = (user: TestUser) => user.client.post("/messages", { type: "stream", to: "announcements", topic: "news", content: "hi" });
    // Zulip 10.0: the policy is can_send_message_group's role:moderators (feature level 333).
    expect((await post(member)).body.msg).toBe("You do not have permission to post in this channel.");
    expect((await post(moderator)).body.result).toBe("success");
    const stream = (await moderator.client.get(`/streams/${streamId}`)).body.stream;
    expect(stream).toMatchObject({ stream_post_policy: 4, is_announcement_only: false });
    expect((await admin.client.patch("/realm", { wildcard_mention_policy: 7 })).body.result).toBe("success");
    expect((await registerState(member.client, ["realm"])).state.realm_wildcard_mention_policy).toBe(7);
    expect((await admin.client.patch("/realm", { wildcard_mention_policy: 1 })).body.result).toBe("success");
  });
});
