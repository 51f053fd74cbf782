// Zulip 9.0's group-based permission settings (as Zulip 10.0 declares them): what /register says, what PATCH /realm accepts, and
// what each enforces (stream creation by type, direct messages, group mentions, unsubscribing
// others), tried by members and guests as an attacker would.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const SETTINGS = [
  "create_multiuse_invite_group",
  "can_access_all_users_group",
  "can_create_public_channel_group",
  "can_create_private_channel_group",
  "can_create_web_public_channel_group",
  "direct_message_initiator_group",
  "direct_message_permission_group",
];
/** Zulip 10.0's Realm.REALM_PERMISSION_GROUP_SETTINGS: the 9.0 ones and 15 more (feature levels 281 to 367). */
const ALL_SETTINGS = [
  ...SETTINGS,
  "can_add_custom_emoji_group",
  "can_add_subscribers_group",
  "can_create_bots_group",
  "can_create_groups",
  "can_create_write_only_bots_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_invite_users_group",
  "can_manage_all_groups",
  "can_manage_billing_group",
  "can_mention_many_users_group",
  "can_move_messages_between_channels_group",
  "can_move_messages_between_topics_group",
  "can_resolve_topics_group",
  "can_summarize_topics_group",
];

describe.each(MODES)("group-based permissions (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let guest: TestUser;
  let ids: Record<string, number>;

  async function setRealm(settings: Record<string, unknown>): Promise<void> {
    const res = await server.owner.patch("/realm", settings);
    expect(res.body.result).toBe("success");
  }

  async function realmState(client = server.owner): Promise<Record<string, any>> {
    return (await client.post("/register", { fetch_event_types: ["realm", "realm_user", "realm_user_groups"] })).body;
  }

  const send = (client: TestUser["client"], to: number[], content = "hello") => client.post("/messages", { type: "private", to: JSON.stringify(to), content });

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    guest = await createTestUser(server, "Gil Guest", "guest");
    const groups = (await realmState()).realm_user_groups as Array<{ id: number; name: string }>;
    ids = Object.fromEntries(groups.map((g) => [g.name, g.id]));
  });
  afterAll(() => server.stop());

  test("/register has each setting as its default group, and server_supported_permission_settings", async () => {
    const state = await realmState(member.client);
    expect(Object.fromEntries(SETTINGS.map((s) => [s, state[`realm_${s}`]]))).toEqual({
      create_multiuse_invite_group: ids["role:administrators"],
      can_access_all_users_group: ids["role:everyone"],
      can_create_public_channel_group: ids["role:members"],
      can_create_private_channel_group: ids["role:members"],
      can_create_web_public_channel_group: ids["role:owners"],
      direct_message_initiator_group: ids["role:everyone"],
      direct_message_permission_group: ids["role:everyone"],
    });
    const supported = state.server_supported_permission_settings;
    expect(Object.keys(supported.realm).sort()).toEqual([...ALL_SETTINGS].sort());
    // Feature level 326: no allow_owners_group, no id_field_name.
    expect(supported.realm.can_access_all_users_group).toEqual({
      require_system_group: true,
      allow_internet_group: false,
      allow_nobody_group: false,
      allow_everyone_group: true,
      default_group_name: "role:everyone",
      default_for_system_groups: null,
      allowed_system_groups: ["role:everyone", "role:members"],
    });
    // Zulip 10.0 takes any group, named or anonymous, for the 9.0 settings but these two.
    for (const name of ALL_SETTINGS) {
      expect(supported.realm[name].require_system_group).toBe(name === "can_access_all_users_group" || name === "can_create_web_public_channel_group");
    }
    expect(supported.stream.can_remove_subscribers_group.default_group_name).toBe("role:administrators");
    expect(supported.group.can_mention_group).toMatchObject({ require_system_group: false, default_for_system_groups: "role:nobody" });
    expect(state.can_create_streams).toBe(true);
    expect((await realmState(guest.client)).can_create_streams).toBe(false);
  });

  describe("PATCH /realm", () => {
    test("verifyAction: a change is one realm update_dict with the group's id, and the answer names it", async () => {
      let res: Record<string, any> = {};
      const events = await verifyAction(member.client, ["realm", "realm_user", "user_group"], async () => {
        res = (await server.owner.patch("/realm", { can_create_public_channel_group: ids["role:administrators"] })).body;
      });
      expect(res).toMatchObject({ result: "success", can_create_public_channel_group: ids["role:administrators"] });
      expect(events).toEqual([
        { id: expect.any(Number), type: "realm", op: "update_dict", property: "default", data: { can_create_public_channel_group: ids["role:administrators"] } },
      ]);
      await setRealm({ can_create_public_channel_group: ids["role:members"] });
    });

    test.each([
      ["can_create_public_channel_group", "role:everyone", "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group."],
      ["can_manage_all_groups", "role:nobody", "'can_manage_all_groups' setting cannot be set to 'role:nobody' group."],
      ["can_create_private_channel_group", "role:everyone", "'can_create_private_channel_group' setting cannot be set to 'role:everyone' group."],
      ["direct_message_permission_group", "role:internet", "'direct_message_permission_group' setting cannot be set to 'role:internet' group."],
      ["can_access_all_users_group", "role:moderators", "'can_access_all_users_group' setting cannot be set to 'role:moderators' group."],
      ["can_create_web_public_channel_group", "role:members", "'can_create_web_public_channel_group' setting cannot be set to 'role:members' group."],
      ["create_multiuse_invite_group", "role:everyone", "'create_multiuse_invite_group' setting cannot be set to 'role:everyone' group."],
    ])("%s = %s is refused", async (setting, group, msg) => {
      const before = await realmState();
      const res = await server.owner.patch("/realm", { [setting]: ids[group], name: "Renamed meanwhile" });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
      const after = await realmState();
      expect(after[`realm_${setting}`]).toBe(before[`realm_${setting}`]);
      expect(after.realm_name).toBe(before.realm_name);
    });

    test("a group users made, an unknown id, or a non-integer is refused", async () => {
      await member.client.post("/user_groups/create", { name: "crew", description: "x", members: [member.id] });
      const crew = ((await realmState()).realm_user_groups as Array<{ id: number; name: string }>).find((g) => g.name === "crew")!.id;
      expect((await server.owner.patch("/realm", { can_access_all_users_group: crew })).body).toEqual({
        result: "error",
        msg: "'can_access_all_users_group' must be a system user group.",
        code: "BAD_REQUEST",
      });
      expect((await server.owner.patch("/realm", { can_create_public_channel_group: 999999 })).body).toMatchObject({ result: "error", msg: "Invalid user group" });
      expect((await server.owner.patch("/realm", { can_create_public_channel_group: "members" })).body).toMatchObject({ result: "error", msg: "can_create_public_channel_group is not a valid group-setting change" });
      expect((await server.owner.patch("/realm", { can_create_public_channel_group: "99999999999999999999" })).body.result).toBe("error");
    });

    test("another organization's system group is an unknown group here", async () => {
      const { createRealm } = await import("@chat/core");
      const { services } = server.running;
      const made = await services.actions.run(0, (tx, events) =>
        createRealm(tx, events, services.ctx, { subdomain: `perms${mode}`, name: "Elsewhere", owner: { email: "boss@perms.example", fullName: "Boss", password: "boss-password" } }),
      );
      const theirs = made.realm.can_create_public_channel_group_id!;
      expect(Object.values(ids)).not.toContain(theirs);
      expect((await server.owner.patch("/realm", { can_create_public_channel_group: theirs })).body).toEqual({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
      expect((await member.client.post("/user_groups/create", { name: "x-realm", description: "x", members: [member.id], can_mention_group: theirs })).body).toMatchObject({ msg: "Invalid user group" });
    });

    test("members and guests may not change them", async () => {
      for (const user of [member, guest]) {
        const res = await user.client.patch("/realm", { direct_message_permission_group: ids["role:nobody"] });
        expect(res.body.result).toBe("error");
      }
      expect((await realmState()).realm_direct_message_permission_group).toBe(ids["role:everyone"]);
    });
  });

  describe("stream creation by type", () => {
    afterEach(() => setRealm({ can_create_public_channel_group: ids["role:members"], can_create_private_channel_group: ids["role:members"] }));

    test("public streams take can_create_public_channel_group, private ones can_create_private_channel_group", async () => {
      await setRealm({ can_create_public_channel_group: ids["role:administrators"] });
      const refused = await member.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "member-public" }]) });
      expect(refused.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      const privateOk = await member.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "member-private" }]), invite_only: true });
      expect(privateOk.body.result).toBe("success");
      expect((await admin.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "admin-public" }]) })).body.result).toBe("success");
      await setRealm({ can_create_private_channel_group: ids["role:moderators"] });
      const privateRefused = await member.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "member-private-2" }]), invite_only: true });
      expect(privateRefused.body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      const streams = (await server.owner.get("/streams", { include_all_active: true })).body.streams as Array<{ name: string }>;
      expect(streams.map((s) => s.name)).not.toContain("member-public");
      expect(streams.map((s) => s.name)).not.toContain("member-private-2");
      expect((await realmState(member.client)).can_create_streams).toBe(false);
    });

    test("a guest never creates streams, whatever the settings allow", async () => {
      const res = await guest.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "guest-stream" }]) });
      expect(res.body).toMatchObject({ result: "error", msg: "Insufficient permission" });
    });

    test("3.x's create_stream_policy sets both groups", async () => {
      await setRealm({ create_stream_policy: 2 });
      const state = await realmState();
      expect(state.realm_can_create_public_channel_group).toBe(ids["role:administrators"]);
      expect(state.realm_can_create_private_channel_group).toBe(ids["role:administrators"]);
      await setRealm({ create_stream_policy: 1 });
    });
  });

  describe("direct messages", () => {
    afterEach(() => setRealm({ direct_message_permission_group: ids["role:everyone"], direct_message_initiator_group: ids["role:everyone"] }));

    test("direct_message_permission_group role:nobody: no direct messages, but to oneself and bots", async () => {
      await setRealm({ direct_message_permission_group: ids["role:nobody"] });
      const res = await send(member.client, [other.id]);
      expect(res.body).toEqual({ result: "error", msg: "Direct messages are disabled in this organization.", code: "BAD_REQUEST" });
      expect((await send(server.owner, [admin.id])).body.result).toBe("error");
      expect((await send(member.client, [member.id])).body.result).toBe("success");
    });

    test("direct_message_permission_group role:administrators: a conversation needs an administrator in it", async () => {
      await setRealm({ direct_message_permission_group: ids["role:administrators"] });
      expect((await send(member.client, [other.id])).body).toEqual({
        result: "error",
        msg: "This conversation does not include any users who can authorize it.",
        code: "BAD_REQUEST",
      });
      expect((await send(member.client, [other.id, guest.id])).body.result).toBe("error");
      expect((await send(member.client, [admin.id])).body.result).toBe("success");
      expect((await send(member.client, [other.id, admin.id])).body.result).toBe("success");
      expect((await send(server.owner, [member.id])).body.result).toBe("success");
    });

    test("direct_message_initiator_group: others may only answer conversations that have begun", async () => {
      const fresh = await createTestUser(server, "Fay Fresh");
      await setRealm({ direct_message_initiator_group: ids["role:administrators"] });
      const msg = "You do not have permission to initiate direct message conversations.";
      expect((await send(member.client, [fresh.id])).body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
      expect((await send(member.client, [fresh.id, other.id])).body).toMatchObject({ msg });
      expect((await send(admin.client, [fresh.id])).body.result).toBe("success");
      // The administrator began it: Fay may answer.
      expect((await send(fresh.client, [admin.id])).body.result).toBe("success");
      expect((await send(admin.client, [fresh.id, member.id])).body.result).toBe("success");
      expect((await send(member.client, [member.id, fresh.id, admin.id])).body.result).toBe("success");
      expect((await send(member.client, [fresh.id])).body).toMatchObject({ msg });
    });

    test("3.x's private_message_policy 2 is direct_message_permission_group role:nobody", async () => {
      await setRealm({ private_message_policy: 2 });
      expect((await realmState()).realm_direct_message_permission_group).toBe(ids["role:nobody"]);
      expect((await send(member.client, [other.id])).body.msg).toBe("Direct messages are disabled in this organization.");
      await setRealm({ private_message_policy: 1 });
      expect((await realmState()).realm_direct_message_permission_group).toBe(ids["role:everyone"]);
    });
  });

  describe("mentioning a group", () => {
    let crewId: number;
    beforeAll(async () => {
      const res = await member.client.post("/user_groups/create", { name: "ops", description: "Ops", members: [member.id, other.id], can_mention_group: ids["role:administrators"] });
      expect(res.body.result).toBe("success");
      crewId = ((await realmState()).realm_user_groups as Array<{ id: number; name: string; can_mention_group: number }>).find((g) => g.name === "ops")!.id;
    });
    const post = (client: TestUser["client"], content: string) => client.post("/messages", { type: "stream", to: "general", topic: "mentions", content });

    test("only its can_mention_group may mention it; a silent mention needs nothing", async () => {
      expect((await post(member.client, "hi @*ops*")).body).toEqual({
        result: "error",
        msg: "You are not allowed to mention user group 'ops'. You must be a member of 'role:administrators' to mention this group.",
        code: "BAD_REQUEST",
      });
      expect((await post(member.client, "hi @_*ops*")).body.result).toBe("success");
      expect((await post(admin.client, "hi @*ops*")).body.result).toBe("success");
      expect((await post(server.owner, "hi @*ops*")).body.result).toBe("success");
    });

    test("editing a message into a mention is checked too", async () => {
      const sent = await post(member.client, "plain");
      const res = await member.client.patch(`/messages/${sent.body.id}`, { content: "now @*ops*" });
      expect(res.body).toMatchObject({ result: "error", msg: expect.stringContaining("You are not allowed to mention user group 'ops'.") });
    });

    test("verifyAction: can_mention_group changes by PATCH /user_groups, checked like a setting", async () => {
      const events = await verifyAction(server.owner, ["user_group"], () => member.client.patch(`/user_groups/${crewId}`, { can_mention_group: ids["role:everyone"] }));
      expect(events).toEqual([{ id: expect.any(Number), type: "user_group", op: "update", group_id: crewId, data: { can_mention_group: ids["role:everyone"] } }]);
      expect((await post(guest.client, "hey @*ops*")).body.result).toBe("success");
      expect((await member.client.patch(`/user_groups/${crewId}`, { can_mention_group: ids["role:internet"] })).body).toMatchObject({
        result: "error",
        msg: "'can_mention_group' setting cannot be set to 'role:internet' group.",
      });
      expect((await member.client.patch(`/user_groups/${crewId}`, { can_mention_group: 999999 })).body).toMatchObject({ result: "error", msg: "Invalid user group" });
    });
  });

  describe("removing subscribers", () => {
    test("streams carry can_remove_subscribers_group (administrators); members may not unsubscribe others", async () => {
      const streams = (await server.owner.get("/streams")).body.streams as Array<{ name: string; can_remove_subscribers_group: number }>;
      const stream = streams.find((s) => s.name === "general")!;
      expect(stream.can_remove_subscribers_group).toBe(ids["role:administrators"]);
      const res = await member.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([other.id]) });
      expect(res.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      const guestTry = await guest.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([other.id]) });
      expect(guestTry.body.result).toBe("error");
      const subs = (await other.client.get("/users/me/subscriptions")).body.subscriptions as Array<{ name: string }>;
      expect(subs.map((s) => s.name)).toContain("general");
      const byAdmin = await admin.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["general"]), principals: JSON.stringify([other.id]) });
      expect(byAdmin.body).toMatchObject({ result: "success", removed: ["general"] });
      expect((await member.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["general"]) })).body.result).toBe("success");
    });

    test("verifyAction: PATCH /streams sets can_remove_subscribers_group, within what the setting allows", async () => {
      const made = await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "removable" }]), principals: JSON.stringify([member.id, other.id]) });
      expect(made.body.result).toBe("success");
      const streamId = (await server.owner.get("/get_stream_id", { stream: "removable" })).body.stream_id;
      // Zulip 10.0 allows role:nobody here; role:internet never.
      const refuse = await server.owner.patch(`/streams/${streamId}`, { can_remove_subscribers_group: ids["role:internet"] });
      expect(refuse.body).toEqual({ result: "error", msg: "'can_remove_subscribers_group' setting cannot be set to 'role:internet' group.", code: "BAD_REQUEST" });
      expect((await member.client.patch(`/streams/${streamId}`, { can_remove_subscribers_group: ids["role:members"] })).body.result).toBe("error");
      const events = await verifyAction(member.client, ["stream", "subscription"], () => server.owner.patch(`/streams/${streamId}`, { can_remove_subscribers_group: ids["role:members"] }));
      expect(events).toEqual([expect.objectContaining({ type: "stream", op: "update", stream_id: streamId, property: "can_remove_subscribers_group", value: ids["role:members"] })]);
      const res = await member.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["removable"]), principals: JSON.stringify([other.id]) });
      expect(res.body).toMatchObject({ result: "success", removed: ["removable"] });
      expect((await guest.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["removable"]), principals: JSON.stringify([member.id]) })).body.result).toBe("error");
    });
  });
});
