// Zulip 10.0's realm group settings as group-setting values (feature levels 280 to 367): what
// /register shows (each setting's value, server_supported_permission_settings, and the deprecated
// integers as the superset of the group), PATCH /realm's `{new, old}` changes and their one
// `realm update_dict` event each, the integer policies older clients still send (a shorthand for
// the group they name) and the events each kind of client gets, and the update_dict a
// deactivation sends when it changes an anonymous setting (feature level 303).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

/** What a client of today's API declares (a 3.x client declares none of these). */
const MODERN = { client_capabilities: { user_settings_object: true, notification_settings_null: true } };

const REALM_SETTINGS = [
  "create_multiuse_invite_group",
  "can_access_all_users_group",
  "can_add_custom_emoji_group",
  "can_add_subscribers_group",
  "can_create_bots_group",
  "can_create_groups",
  "can_create_public_channel_group",
  "can_create_private_channel_group",
  "can_create_web_public_channel_group",
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
  "direct_message_initiator_group",
  "direct_message_permission_group",
];

describe.each(MODES)("realm group settings, Zulip 10.0 (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let leaver: TestUser;
  let groups: Record<string, number>;
  let crew: number;
  const prisma = () => server.running.services.db.prisma;
  const change = (value: unknown, old?: unknown) => JSON.stringify(old === undefined ? { new: value } : { new: value, old });

  async function modernState(client = member.client, types = ["realm", "realm_user", "realm_user_groups"]): Promise<Record<string, any>> {
    return (await registerState(client, types, MODERN)).state;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Set Admin", "admin");
    member = await createTestUser(server, "Set Member");
    leaver = await createTestUser(server, "Set Leaver");
    expect((await server.owner.post("/user_groups/create", { name: "setters", description: "d", members: JSON.stringify([member.id]) })).body.result).toBe("success");
    const all = (await server.owner.post("/register", { fetch_event_types: ["realm_user_groups"] })).body.realm_user_groups as Array<{ id: number; name: string }>;
    groups = Object.fromEntries(all.map((g) => [g.name, g.id]));
    crew = groups.setters;
  });
  afterAll(() => server.stop());

  describe("/register", () => {
    test("every realm group setting, as its default group; the settings' rules as Zulip 10.0 shows them", async () => {
      const state = await modernState();
      const defaults = (await server.owner.post("/register", { fetch_event_types: ["realm"] })).body.server_supported_permission_settings.realm as Record<string, any>;
      expect(Object.keys(defaults).sort()).toEqual([...REALM_SETTINGS].sort());
      for (const name of REALM_SETTINGS) {
        expect({ name, value: state[`realm_${name}`] }).toEqual({ name, value: groups[defaults[name].default_group_name] });
        // Feature level 326.
        expect(defaults[name]).not.toHaveProperty("allow_owners_group");
        expect(defaults[name]).not.toHaveProperty("id_field_name");
      }
      expect(defaults.can_delete_own_message_group).toEqual({
        require_system_group: false,
        allow_internet_group: false,
        allow_nobody_group: true,
        allow_everyone_group: true,
        default_group_name: "role:everyone",
        default_for_system_groups: null,
        allowed_system_groups: [],
      });
      expect(defaults.can_manage_all_groups).toMatchObject({ allow_nobody_group: false, allow_everyone_group: false, default_group_name: "role:owners" });
    });

    test("the deprecated integers are the superset that best approximates the group; removed ones are gone", async () => {
      await server.owner.patch("/realm", {
        can_mention_many_users_group: change(groups["role:owners"]),
        can_create_web_public_channel_group: change(groups["role:nobody"]),
        can_create_public_channel_group: change({ direct_members: [member.id], direct_subgroups: [] }),
        can_create_private_channel_group: change(groups["role:moderators"]),
        can_manage_all_groups: change(groups["role:administrators"]),
        can_create_groups: change(groups["role:fullmembers"]),
      });
      const state = await modernState();
      expect(state).toMatchObject({
        // Owners: administrators is the smallest policy holding them.
        realm_wildcard_mention_policy: 5,
        realm_create_web_public_stream_policy: 6,
        // An anonymous group may hold anyone a policy can: members.
        realm_create_public_stream_policy: 1,
        realm_create_private_stream_policy: 4,
        // The wider of creating (full members) and managing (administrators).
        realm_user_group_edit_policy: 3,
      });
      for (const key of ["invite_to_stream_policy", "invite_to_realm_policy", "bot_creation_policy", "edit_topic_policy", "move_messages_between_streams_policy", "delete_own_message_policy", "add_custom_emoji_policy"]) {
        expect(state).not.toHaveProperty(`realm_${key}`);
      }
      expect(state).not.toHaveProperty("can_subscribe_other_users");
      // A 3.x client reads its era's integers, from the groups too.
      const legacy = (await member.client.post("/register", { fetch_event_types: ["realm"] })).body;
      expect(legacy).toMatchObject({ realm_wildcard_mention_policy: 5, realm_create_stream_policy: 1, realm_user_group_edit_policy: 3 });
      await server.owner.patch("/realm", {
        can_mention_many_users_group: change(groups["role:administrators"]),
        can_create_web_public_channel_group: change(groups["role:owners"]),
        can_create_public_channel_group: change(groups["role:members"]),
        can_create_private_channel_group: change(groups["role:members"]),
        can_manage_all_groups: change(groups["role:owners"]),
        can_create_groups: change(groups["role:members"]),
      });
    });
  });

  describe("PATCH /realm", () => {
    test("verifyAction: an anonymous group is one realm update_dict with the value as the API shows it", async () => {
      const value = { direct_members: [leaver.id, member.id], direct_subgroups: [crew] };
      let answer: Record<string, any> = {};
      const events = await verifyAction(member.client, ["realm", "realm_user", "realm_user_groups"], async () => {
        answer = (await server.owner.patch("/realm", { can_delete_any_message_group: change(value, groups["role:administrators"]) })).body;
      }, 5000, MODERN);
      const shown = { direct_members: [member.id, leaver.id].sort((a, b) => a - b), direct_subgroups: [crew] };
      expect(answer).toEqual({ result: "success", msg: "", can_delete_any_message_group: shown });
      expect(events).toEqual([{ id: expect.any(Number), type: "realm", op: "update_dict", property: "default", data: { can_delete_any_message_group: shown } }]);
      // The same value again changes nothing: no event, and `old` may be the anonymous value.
      expect((await server.owner.patch("/realm", { can_delete_any_message_group: change({ direct_members: [member.id, leaver.id], direct_subgroups: [crew] }, shown) })).body).toEqual({ result: "success", msg: "" });
    });

    test("a stale `old` is refused, and nothing else of the request is kept", async () => {
      const before = await modernState();
      const res = await server.owner.patch("/realm", { name: "Renamed meanwhile", can_delete_any_message_group: change(groups["role:moderators"], groups["role:administrators"]) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "'old' value does not match the expected value.", code: "EXPECTATION_MISMATCH" });
      const after = await modernState();
      expect(after.realm_can_delete_any_message_group).toEqual(before.realm_can_delete_any_message_group);
      expect(after.realm_name).toBe(before.realm_name);
    });

    test("a matching `old` moves it back to a named group, and the anonymous group goes", async () => {
      const current = (await modernState()).realm_can_delete_any_message_group as { direct_members: number[]; direct_subgroups: number[] };
      const anonymousCount = await prisma().userGroup.count({ where: { name: null } });
      const res = await server.owner.patch("/realm", { can_delete_any_message_group: change(groups["role:administrators"], current) });
      expect(res.body).toEqual({ result: "success", msg: "", can_delete_any_message_group: groups["role:administrators"] });
      expect(await prisma().userGroup.count({ where: { name: null } })).toBe(anonymousCount - 1);
    });

    test("an anonymous group of one subgroup and no members is that group; Zulip 9.0's bare id still works", async () => {
      const res = await server.owner.patch("/realm", { can_resolve_topics_group: change({ direct_members: [], direct_subgroups: [crew] }) });
      expect(res.body).toMatchObject({ can_resolve_topics_group: crew });
      expect((await server.owner.patch("/realm", { can_resolve_topics_group: String(groups["role:everyone"]) })).body).toMatchObject({ can_resolve_topics_group: groups["role:everyone"] });
    });

    test.each([
      ["a deactivated user", "can_resolve_topics_group", () => ({ new: { direct_members: [999_999], direct_subgroups: [] } }), "Invalid user ID: 999999"],
      ["an unknown subgroup", "can_resolve_topics_group", () => ({ new: { direct_members: [], direct_subgroups: [crew, 999_999] } }), "Invalid user group ID: 999999"],
      ["an unknown group", "can_resolve_topics_group", () => ({ new: 999_999 }), "Invalid user group"],
      ["an anonymous group where a system group is required", "can_access_all_users_group", () => ({ new: { direct_members: [member.id], direct_subgroups: [] } }), "'can_access_all_users_group' must be a system user group."],
      ["role:everyone where guests may not be", "can_invite_users_group", () => ({ new: groups["role:everyone"] }), "'can_invite_users_group' setting cannot be set to 'role:everyone' group."],
      ["a missing `new`", "can_resolve_topics_group", () => ({ old: groups["role:everyone"] }), "can_resolve_topics_group is not a valid group-setting change"],
      ["an unknown key", "can_resolve_topics_group", () => ({ new: groups["role:everyone"], extra: 1 }), "can_resolve_topics_group is not a valid group-setting change"],
      ["a partial anonymous group", "can_resolve_topics_group", () => ({ new: { direct_members: [member.id] } }), "can_resolve_topics_group is not a valid group-setting value"],
    ])("%s is refused", async (_what, setting, value, msg) => {
      const res = await server.owner.patch("/realm", { [setting]: JSON.stringify(value()) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg });
    });

    test("an anonymous group has bounds", async () => {
      const many = Array.from({ length: 1001 }, (_, i) => i + 1);
      const res = await server.owner.patch("/realm", { can_resolve_topics_group: change({ direct_members: many, direct_subgroups: [] }) });
      expect(res.body.result).toBe("error");
      expect(res.status).toBe(400);
    });

    test("an administrator's deleted member is deactivated: the setting no longer lists them", async () => {
      const deactivated = await createTestUser(server, "Gone Soon");
      await server.owner.delete(`/users/${deactivated.id}`);
      const res = await server.owner.patch("/realm", { can_resolve_topics_group: change({ direct_members: [deactivated.id], direct_subgroups: [] }) });
      expect(res.body).toMatchObject({ result: "error", msg: `Invalid user ID: ${deactivated.id}` });
    });
  });

  describe("the integer policies older clients send", () => {
    test("a 3.x client's wildcard_mention_policy sets can_mention_many_users_group; each client hears of it as it reads it", async () => {
      let threeX: Array<Record<string, any>> = [];
      threeX = await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { wildcard_mention_policy: 7 }));
      expect(threeX).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "realm", op: "update_dict", data: { can_mention_many_users_group: groups["role:moderators"] } }),
          expect.objectContaining({ type: "realm", op: "update", property: "wildcard_mention_policy", value: 7 }),
        ]),
      );
      expect((await modernState()).realm_can_mention_many_users_group).toBe(groups["role:moderators"]);
      const modern = await verifyAction(member.client, ["realm", "realm_user_groups"], () => admin.client.patch("/realm", { wildcard_mention_policy: 5 }), 5000, MODERN);
      // Zulip 10.0's clients get the group only (feature level 352 removed the property from events).
      expect(modern).toEqual([expect.objectContaining({ type: "realm", op: "update_dict", data: { can_mention_many_users_group: groups["role:administrators"] } })]);
    });

    test("bot_creation_policy, invite_to_stream_policy and 3.x's booleans set the groups that replaced them", async () => {
      const res = await admin.client.patch("/realm", { bot_creation_policy: 2, invite_to_stream_policy: 4, allow_message_deleting: false, add_emoji_by_admins_only: true });
      expect(res.body.result).toBe("success");
      const state = await modernState();
      expect(state).toMatchObject({
        realm_can_create_bots_group: groups["role:administrators"],
        realm_can_create_write_only_bots_group: groups["role:members"],
        realm_can_add_subscribers_group: groups["role:moderators"],
        realm_can_delete_own_message_group: groups["role:administrators"],
        realm_can_add_custom_emoji_group: groups["role:administrators"],
      });
      // The integer columns follow, for whoever still reads them.
      const realm = await prisma().realm.findFirstOrThrow({ where: { id: (await prisma().userProfile.findUniqueOrThrow({ where: { id: member.id } })).realm_id } });
      expect(realm).toMatchObject({ bot_creation_policy: 2, invite_to_stream_policy: 4, delete_own_message_policy: 2, add_custom_emoji_policy: 2, allow_message_deleting: false, add_emoji_by_admins_only: true });
      await admin.client.patch("/realm", { bot_creation_policy: 1, invite_to_stream_policy: 1, allow_message_deleting: true, add_emoji_by_admins_only: false });
      expect((await modernState()).realm_can_delete_own_message_group).toBe(groups["role:everyone"]);
    });

    test("a setting named outright wins over its shorthand; an administrator's user_group_edit_policy is an owner's matter now", async () => {
      const res = await server.owner.patch("/realm", { edit_topic_policy: 2, can_move_messages_between_topics_group: change(groups["role:moderators"]) });
      expect(res.body.result).toBe("success");
      expect((await modernState()).realm_can_move_messages_between_topics_group).toBe(groups["role:moderators"]);
      expect((await admin.client.patch("/realm", { user_group_edit_policy: 2 })).body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
      await server.owner.patch("/realm", { can_move_messages_between_topics_group: change(groups["role:everyone"]) });
    });
  });

  test("verifyAction: deactivating a user an anonymous setting names sends its new value; reactivating sends it back (feature level 303)", async () => {
    await server.owner.patch("/realm", { can_summarize_topics_group: change({ direct_members: [member.id, leaver.id], direct_subgroups: [crew] }) });
    // The realm section alone: the user and group sections' own events are the user groups' test's.
    const gone = await verifyAction(admin.client, ["realm"], () => server.owner.delete(`/users/${leaver.id}`), 5000, MODERN);
    expect(gone).toEqual(expect.arrayContaining([expect.objectContaining({ type: "realm", op: "update_dict", data: { can_summarize_topics_group: { direct_members: [member.id], direct_subgroups: [crew] } } })]));
    const back = await verifyAction(admin.client, ["realm"], () => server.owner.post(`/users/${leaver.id}/reactivate`), 5000, MODERN);
    const both = [member.id, leaver.id].sort((a, b) => a - b);
    expect(back).toEqual(expect.arrayContaining([expect.objectContaining({ type: "realm", op: "update_dict", data: { can_summarize_topics_group: { direct_members: both, direct_subgroups: [crew] } } })]));
    await server.owner.patch("/realm", { can_summarize_topics_group: change(groups["role:everyone"]) });
  });
});
