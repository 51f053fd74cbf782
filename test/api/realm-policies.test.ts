// Zulip 9.0's integer realm and stream policies (lib/permissions.ts, migration 0030): each value
// of each policy admits exactly the roles Zulip's has_permission admits, shown by doing what the
// policy governs as an owner, an administrator, a moderator, a member, a new member (inside the
// waiting period) and a guest; the time limits of editing, moving and deleting; PATCH /realm's
// checks; and Zulip 3.x's booleans kept in step for 3.x clients.
import { readFileSync } from "node:fs";
import path from "node:path";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { imagePart, makePng, uploadFiles } from "../support/images.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

type Who = "owner" | "admin" | "moderator" | "member" | "newbie" | "guest";
const EVERYONE: Who[] = ["owner", "admin", "moderator", "member", "newbie", "guest"];

/** Who each value of Zulip's Realm.POLICY_* admits (has_permission). */
const ADMITS: Record<number, Who[]> = {
  1: ["owner", "admin", "moderator", "member", "newbie"],
  2: ["owner", "admin"],
  3: ["owner", "admin", "moderator", "member"],
  4: ["owner", "admin", "moderator"],
  5: EVERYONE,
  6: [],
};

/** What a client of today's API declares (a 3.x client declares none of these). */
const MODERN = { client_capabilities: { user_settings_object: true, notification_settings_null: true } };

describe.each(MODES)("realm policies (%s)", (mode) => {
  let server: TestServer;
  let users: Record<Who, TestUser>;
  let realmId: number;
  let targetId: number;
  let counter = 0;
  const unique = (prefix: string) => `${prefix}_${++counter}`;
  const prisma = () => server.running.services.db.prisma;
  const setRealm = async (data: Record<string, unknown>) => {
    const res = await server.owner.patch("/realm", data);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
  };
  const backdate = (id: number, seconds: number) => prisma().message.update({ where: { id }, data: { date_sent: new Date(Date.now() - seconds * 1000) } });

  /** Runs `attempt` as everyone and returns whom it succeeded for; each refusal must be one of `refusals`. */
  async function admitted(attempt: (user: TestUser, who: Who) => Promise<Record<string, any>>, refusals: string[]): Promise<Who[]> {
    const ok: Who[] = [];
    for (const who of EVERYONE) {
      const body = await attempt(users[who], who);
      if (body.result === "success") ok.push(who);
      else if (!refusals.includes(body.msg)) expect({ who, msg: body.msg }).toEqual({ who, msg: refusals });
    }
    return ok;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    const owner: TestUser = { id: (await server.owner.get("/users/me")).body.user_id, email: "owner@example.com", client: server.owner };
    const [admin, moderator, member, newbie, guest] = await Promise.all([
      createTestUser(server, "Pol Admin", "admin"),
      createTestUser(server, "Pol Moderator", "moderator"),
      createTestUser(server, "Pol Member"),
      createTestUser(server, "Pol Newbie"),
      createTestUser(server, "Pol Guest", "guest"),
    ]);
    users = { owner, admin, moderator, member, newbie, guest };
    realmId = (await prisma().userProfile.findUniqueOrThrow({ where: { id: member.id } })).realm_id;
    // Everyone but the newbie joined long ago; the waiting period is 30 days.
    await prisma().userProfile.updateMany({ where: { realm_id: realmId, id: { not: newbie.id } }, data: { date_joined: new Date(Date.now() - 100 * 86_400_000) } });
    await setRealm({ waiting_period_threshold: 30 });
    await subscribeTo(server.owner, ["policies", "policies-target"], { principals: JSON.stringify(EVERYONE.map((w) => users[w].email)) });
    targetId = (await prisma().stream.findFirstOrThrow({ where: { realm_id: realmId, name: "policies-target" } })).id;
  });
  afterAll(() => server.stop());

  describe("each value admits exactly its roles", () => {
    test("edit_topic_policy (1-6): retitling someone else's message; 6 nobody, administrators included", async () => {
      for (const value of [1, 2, 3, 4, 5, 6]) {
        await setRealm({ edit_topic_policy: value });
        const id = await sendStreamMessage(server.owner, "policies", unique("retitle"));
        const ok = await admitted((user) => user.client.patch(`/messages/${id}`, { topic: unique("renamed") }).then((r) => r.body), ["You don't have permission to edit this message"]);
        expect({ value, ok }).toEqual({ value, ok: ADMITS[value] });
      }
      await setRealm({ edit_topic_policy: 5 });
    });

    test("anyone names a (no topic) message, whatever edit_topic_policy says", async () => {
      await setRealm({ edit_topic_policy: 6 });
      const id = await sendStreamMessage(server.owner, "policies", "");
      expect((await users.newbie.client.patch(`/messages/${id}`, { topic: "named" })).body.result).toBe("success");
      await setRealm({ edit_topic_policy: 5 });
    });

    test("move_messages_between_streams_policy (1, 2, 3, 4, 6): moving one's own message to another stream", async () => {
      for (const value of [1, 2, 3, 4, 6]) {
        await setRealm({ move_messages_between_streams_policy: value });
        const ok = await admitted(async (user) => {
          const id = await sendStreamMessage(user.client, "policies", unique("moving"));
          return (await user.client.patch(`/messages/${id}`, { stream_id: targetId })).body;
        }, ["You don't have permission to move this message"]);
        expect({ value, ok }).toEqual({ value, ok: ADMITS[value] });
      }
      await setRealm({ move_messages_between_streams_policy: 2 });
    });

    test("delete_own_message_policy (1-5): deleting one's own message", async () => {
      for (const value of [1, 2, 3, 4, 5]) {
        await setRealm({ delete_own_message_policy: value });
        const ok = await admitted(async (user) => {
          const id = await sendStreamMessage(user.client, "policies", "deleting");
          return (await user.client.delete(`/messages/${id}`)).body;
        }, ["You don't have permission to delete this message"]);
        expect({ value, ok }).toEqual({ value, ok: ADMITS[value] });
      }
    });

    test("only administrators delete others' messages, moderators not", async () => {
      await setRealm({ delete_own_message_policy: 5 });
      const id = await sendStreamMessage(users.member.client, "policies", "not yours");
      expect((await users.moderator.client.delete(`/messages/${id}`)).body.msg).toBe("You don't have permission to delete this message");
      expect((await users.admin.client.delete(`/messages/${id}`)).body.result).toBe("success");
    });

    test("add_custom_emoji_policy (1-4): adding a custom emoji", async () => {
      const png = await makePng(32, 32);
      for (const value of [1, 2, 3, 4]) {
        await setRealm({ add_custom_emoji_policy: value });
        const ok = await admitted(
          (user) => uploadFiles(user.client, `/realm/emoji/${unique("policy_emoji")}`, [imagePart(png)]).then((r) => r.json),
          ["Insufficient permission", "Not allowed for guest users"],
        );
        expect({ value, ok }).toEqual({ value, ok: ADMITS[value].filter((w) => w !== "guest") });
      }
      await setRealm({ add_custom_emoji_policy: 1 });
    });

    test("user_group_edit_policy (1-4): creating a user group", async () => {
      for (const value of [1, 2, 3, 4]) {
        await setRealm({ user_group_edit_policy: value });
        const ok = await admitted(
          (user) => user.client.post("/user_groups/create", { name: unique("policy-group"), description: "d", members: JSON.stringify([user.id]) }).then((r) => r.body),
          ["Insufficient permission", "Not allowed for guest users"],
        );
        expect({ value, ok }).toEqual({ value, ok: ADMITS[value] });
      }
      await setRealm({ user_group_edit_policy: 1 });
    });

    test("invite_to_stream_policy (1-4): subscribing someone else", async () => {
      for (const value of [1, 2, 3, 4]) {
        await setRealm({ invite_to_stream_policy: value });
        const ok = await admitted(
          (user) => user.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "policies" }]), principals: JSON.stringify([users.owner.email]) }).then((r) => r.body),
          ["You can't subscribe other users to streams.", "Insufficient permission"],
        );
        expect({ value, ok }).toEqual({ value, ok: ADMITS[value] });
      }
      await setRealm({ invite_to_stream_policy: 1 });
    });

    test("stream_post_policy (1 any, 2 admins, 3 full members, 4 moderators): posting to the stream", async () => {
      const streamId = (await prisma().stream.findFirstOrThrow({ where: { realm_id: realmId, name: "policies" } })).id;
      const refusals = [
        "Only organization administrators can send to this channel.",
        "Only organization administrators and moderators can send to this channel.",
        "Guests cannot send to this channel.",
        "New members cannot send to this channel.",
        // Zulip 10.0: the policy is can_send_message_group's system group (feature level 333).
        "You do not have permission to post in this channel.",
      ];
      for (const [value, admits] of [[1, 5], [2, 2], [3, 3], [4, 4]] as const) {
        expect((await users.admin.client.patch(`/streams/${streamId}`, { stream_post_policy: value })).body.result).toBe("success");
        const ok = await admitted((user) => user.client.post("/messages", { type: "stream", to: "policies", topic: "posting", content: "hi" }).then((r) => r.body), refusals);
        expect({ value, ok }).toEqual({ value, ok: ADMITS[admits] });
      }
      expect((await users.admin.client.patch(`/streams/${streamId}`, { stream_post_policy: 5 })).body.msg).toBe("Invalid stream_post_policy");
      expect((await users.admin.client.patch(`/streams/${streamId}`, { stream_post_policy: 1 })).body.result).toBe("success");
    });

    test("wildcard_mention_policy (1, 2, 3, 5, 6, 7 moderators) in a stream past 15 subscribers", async () => {
      const crowd = await Promise.all(Array.from({ length: 11 }, (_, i) => createTestUser(server, `Crowd ${mode} ${i}`)));
      await subscribeTo(server.owner, ["crowded"], { principals: JSON.stringify([...EVERYONE.map((w) => users[w].email), ...crowd.map((u) => u.email)]) });
      // 1 everyone, 2 members, 3 full members, 4 (3.x's stream administrators) and 5 administrators, 6 nobody, 7 moderators.
      const admitsOf: Record<number, Who[]> = { 1: EVERYONE, 2: ADMITS[1], 3: ADMITS[3], 4: ADMITS[2], 5: ADMITS[2], 6: [], 7: ADMITS[4] };
      for (const value of [1, 2, 3, 4, 5, 6, 7]) {
        await setRealm({ wildcard_mention_policy: value });
        const ok = await admitted(
          (user) => user.client.post("/messages", { type: "stream", to: "crowded", topic: "all", content: "@**all** hello" }).then((r) => r.body),
          ["You do not have permission to use channel wildcard mentions in this channel."],
        );
        expect({ value, ok }).toEqual({ value, ok: admitsOf[value] });
      }
      await setRealm({ wildcard_mention_policy: 1 });
    });
  });

  describe("time limits", () => {
    test("message_content_edit_limit_seconds holds everyone editing their own content, 20 s of grace; unlimited", async () => {
      await setRealm({ message_content_edit_limit_seconds: 100 });
      for (const who of ["admin", "moderator", "member"] as const) {
        const id = await sendStreamMessage(users[who].client, "policies", "limits");
        await backdate(id, 130);
        expect((await users[who].client.patch(`/messages/${id}`, { content: "late" })).body).toEqual({ result: "error", msg: "The time limit for editing this message has passed", code: "BAD_REQUEST" });
        await backdate(id, 110);
        expect((await users[who].client.patch(`/messages/${id}`, { content: "in time" })).body.result).toBe("success");
      }
      await setRealm({ message_content_edit_limit_seconds: "unlimited" });
      const id = await sendStreamMessage(users.member.client, "policies", "limits");
      await backdate(id, 86_400 * 365);
      expect((await users.member.client.patch(`/messages/${id}`, { content: "much later" })).body.result).toBe("success");
      await setRealm({ message_content_edit_limit_seconds: 600 });
    });

    test("allow_message_editing off stops content edits, not topic edits (Zulip 9.0)", async () => {
      await setRealm({ allow_message_editing: false });
      try {
        const id = await sendStreamMessage(users.member.client, "policies", "frozen");
        expect((await users.member.client.patch(`/messages/${id}`, { content: "x" })).body.msg).toBe("Your organization has turned off message editing");
        expect((await users.member.client.patch(`/messages/${id}`, { topic: "frozen 2" })).body.result).toBe("success");
      } finally {
        await setRealm({ allow_message_editing: true });
      }
    });

    test("move_messages_within_stream_limit_seconds: topics of older messages only administrators and moderators change; unlimited", async () => {
      await setRealm({ edit_topic_policy: 5, move_messages_within_stream_limit_seconds: 100 });
      const id = await sendStreamMessage(users.member.client, "policies", unique("old topic"));
      await backdate(id, 130);
      const ok = await admitted((user) => user.client.patch(`/messages/${id}`, { topic: unique("retitled") }).then((r) => r.body), ["The time limit for editing this message's topic has passed."]);
      expect(ok).toEqual(["owner", "admin", "moderator"]);
      await setRealm({ move_messages_within_stream_limit_seconds: "unlimited" });
      expect((await users.member.client.patch(`/messages/${id}`, { topic: unique("retitled") })).body.result).toBe("success");
      await setRealm({ move_messages_within_stream_limit_seconds: 259_200 });
    });

    test("move_messages_between_streams_limit_seconds: older messages only administrators and moderators move", async () => {
      await setRealm({ move_messages_between_streams_policy: 1, move_messages_between_streams_limit_seconds: 100 });
      const ok = await admitted(async (user) => {
        const id = await sendStreamMessage(user.client, "policies", unique("old move"));
        await backdate(id, 130);
        return (await user.client.patch(`/messages/${id}`, { stream_id: targetId })).body;
      }, ["The time limit for editing this message's channel has passed", "You don't have permission to move this message"]);
      expect(ok).toEqual(["owner", "admin", "moderator"]);
      await setRealm({ move_messages_between_streams_policy: 2, move_messages_between_streams_limit_seconds: 604_800 });
    });

    test("message_content_delete_limit_seconds holds all but administrators, moderators too", async () => {
      await setRealm({ delete_own_message_policy: 5, message_content_delete_limit_seconds: 100 });
      const ok = await admitted(async (user) => {
        const id = await sendStreamMessage(user.client, "policies", "old deletion");
        await backdate(id, 130);
        return (await user.client.delete(`/messages/${id}`)).body;
      }, ["The time limit for deleting this message has passed"]);
      expect(ok).toEqual(["owner", "admin"]);
      await setRealm({ message_content_delete_limit_seconds: "unlimited" });
      const id = await sendStreamMessage(users.member.client, "policies", "old deletion");
      await backdate(id, 86_400 * 30);
      expect((await users.member.client.delete(`/messages/${id}`)).body.result).toBe("success");
    });
  });

  describe("PATCH /realm", () => {
    test("refuses a value a policy does not take, changing nothing", async () => {
      const before = await prisma().realm.findUniqueOrThrow({ where: { id: realmId } });
      for (const [property, value] of [
        ["edit_topic_policy", 7],
        ["edit_topic_policy", 0],
        ["move_messages_between_streams_policy", 5],
        ["delete_own_message_policy", 6],
        ["add_custom_emoji_policy", 5],
        ["user_group_edit_policy", 6],
        ["invite_to_stream_policy", 5],
        ["wildcard_mention_policy", 8],
      ] as const) {
        const res = await server.owner.patch("/realm", { [property]: value, name: "Should not change" });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: `Invalid ${property}`, code: "BAD_REQUEST" });
      }
      for (const [property, value] of [
        ["move_messages_within_stream_limit_seconds", "0"],
        ["move_messages_between_streams_limit_seconds", "-5"],
        ["move_messages_within_stream_limit_seconds", "soon"],
        ["message_content_delete_limit_seconds", "99999999999"],
      ] as const) {
        const res = await server.owner.patch("/realm", { [property]: value });
        expect(res.body).toEqual({ result: "error", msg: `Bad value for '${property}': ${value}`, code: "BAD_REQUEST" });
      }
      expect(await prisma().realm.findUniqueOrThrow({ where: { id: realmId } })).toEqual(before);
    });

    test("moderators and members may not change policies", async () => {
      for (const who of ["moderator", "member"] as const) {
        expect((await users[who].client.patch("/realm", { edit_topic_policy: 1 })).body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
      }
    });

    test("answers with each changed setting, unlimited as null", async () => {
      const res = await users.admin.client.patch("/realm", { edit_topic_policy: 4, move_messages_within_stream_limit_seconds: "unlimited" });
      // Only what changed (feature level 150), the 3.x boolean the policy moved with included.
      expect(res.body).toEqual({ result: "success", msg: "", edit_topic_policy: 4, allow_community_topic_editing: false, move_messages_within_stream_limit_seconds: null });
      await setRealm({ edit_topic_policy: 5, move_messages_within_stream_limit_seconds: 259_200 });
    });
  });

  describe("today's clients and 3.x clients", () => {
    test("/register: today's clients get the groups the policies set (Zulip 10.0), 3.x clients their booleans only", async () => {
      await setRealm({ edit_topic_policy: 4, delete_own_message_policy: 3, add_custom_emoji_policy: 4, move_messages_between_streams_policy: 6, move_messages_between_streams_limit_seconds: "unlimited" });
      const groups = Object.fromEntries((await prisma().userGroup.findMany({ where: { realm_id: realmId, is_system_group: true } })).map((g) => [g.name, g.id]));
      const modern = (await registerState(users.member.client, ["realm"], MODERN)).state;
      expect(modern).toMatchObject({
        realm_can_move_messages_between_topics_group: groups["role:moderators"],
        realm_can_delete_own_message_group: groups["role:fullmembers"],
        realm_can_add_custom_emoji_group: groups["role:moderators"],
        realm_can_move_messages_between_channels_group: groups["role:nobody"],
        realm_move_messages_within_stream_limit_seconds: 259_200,
        realm_move_messages_between_streams_limit_seconds: null,
      });
      // Zulip 10.0 sends none of the integer policies these replaced (feature levels 291 to 316).
      for (const key of ["realm_edit_topic_policy", "realm_delete_own_message_policy", "realm_add_custom_emoji_policy", "realm_move_messages_between_streams_policy"]) {
        expect(modern).not.toHaveProperty(key);
      }
      const legacy = (await registerState(users.member.client, ["realm"])).state;
      expect(legacy).toMatchObject({ realm_allow_community_topic_editing: false, realm_allow_message_deleting: true, realm_add_emoji_by_admins_only: true });
      for (const key of ["realm_edit_topic_policy", "realm_delete_own_message_policy", "realm_add_custom_emoji_policy", "realm_move_messages_between_streams_policy", "realm_move_messages_within_stream_limit_seconds"]) {
        expect(legacy).not.toHaveProperty(key);
      }
      await setRealm({ edit_topic_policy: 5, delete_own_message_policy: 2, add_custom_emoji_policy: 1, move_messages_between_streams_policy: 2, move_messages_between_streams_limit_seconds: 604_800 });
    });

    test("a policy change reaches both kinds of client as each reads it (events applied = state fetched)", async () => {
      for (const params of [{}, MODERN]) {
        const events = await verifyAction(users.member.client, ["realm"], () => users.admin.client.patch("/realm", { edit_topic_policy: 1, delete_own_message_policy: 5 }), 5000, params);
        // Everyone gets the groups' update_dict (feature levels 291, 316).
        expect(events).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ type: "realm", op: "update_dict", property: "default", data: { can_move_messages_between_topics_group: expect.any(Number) } }),
            expect.objectContaining({ type: "realm", op: "update_dict", property: "default", data: { can_delete_own_message_group: expect.any(Number) } }),
          ]),
        );
        if (params === MODERN) {
          // Zulip 10.0 removed these properties from events.
          const removed = ["edit_topic_policy", "delete_own_message_policy"];
          expect(events.filter((e) => removed.includes(e.property) || removed.some((key) => key in (e.data ?? {})))).toEqual([]);
        } else {
          expect(events).toEqual(
            expect.arrayContaining([
              // As Zulip 9.0 announced the message editing settings (feature level 150).
              expect.objectContaining({ type: "realm", op: "update_dict", property: "default", data: { edit_topic_policy: 1 } }),
              expect.objectContaining({ type: "realm", op: "update", property: "allow_message_deleting", value: true }),
            ]),
          );
        }
        await verifyAction(users.member.client, ["realm"], () => users.admin.client.patch("/realm", { edit_topic_policy: 5, delete_own_message_policy: 2 }), 5000, params);
      }
    });

    test("a 3.x client's booleans set the policies that replaced them, which are then enforced", async () => {
      const policies = () => prisma().realm.findUniqueOrThrow({ where: { id: realmId }, select: { edit_topic_policy: true, delete_own_message_policy: true, add_custom_emoji_policy: true } });
      await setRealm({ allow_community_topic_editing: false, allow_message_deleting: true, add_emoji_by_admins_only: true });
      expect(await policies()).toEqual({ edit_topic_policy: 2, delete_own_message_policy: 5, add_custom_emoji_policy: 2 });
      const id = await sendStreamMessage(server.owner, "policies", "legacy");
      expect((await users.member.client.patch(`/messages/${id}`, { topic: "legacy 2" })).body.msg).toBe("You don't have permission to edit this message");
      // A boolean that says what the policy already does leaves a finer policy alone.
      await setRealm({ delete_own_message_policy: 1 });
      await setRealm({ allow_message_deleting: true });
      expect((await policies()).delete_own_message_policy).toBe(1);
      await setRealm({ allow_community_topic_editing: true, allow_message_deleting: false, add_emoji_by_admins_only: false });
      expect(await policies()).toEqual({ edit_topic_policy: 5, delete_own_message_policy: 2, add_custom_emoji_policy: 1 });
    });

    test("migration 0030 gives existing organizations the policies their 3.x settings had", async () => {
      const sql = readFileSync(path.resolve(__dirname, "../../prisma/migrations/0030_realm_policies/migration.sql"), "utf8");
      const update = sql.slice(sql.indexOf("UPDATE"));
      const restore = await prisma().realm.findUniqueOrThrow({ where: { id: realmId } });
      try {
        for (const [legacy, expected] of [
          [{ allow_community_topic_editing: true, allow_message_deleting: false, add_emoji_by_admins_only: false }, { edit_topic_policy: 5, delete_own_message_policy: 2, add_custom_emoji_policy: 1 }],
          [{ allow_community_topic_editing: false, allow_message_deleting: true, add_emoji_by_admins_only: true }, { edit_topic_policy: 2, delete_own_message_policy: 5, add_custom_emoji_policy: 2 }],
        ] as const) {
          await prisma().realm.update({ where: { id: realmId }, data: { ...legacy, edit_topic_policy: 3, delete_own_message_policy: 3, add_custom_emoji_policy: 3 } });
          await prisma().$executeRawUnsafe(update);
          const realm = await prisma().realm.findUniqueOrThrow({ where: { id: realmId } });
          expect(realm).toMatchObject({ ...expected, move_messages_within_stream_limit_seconds: 86_400, move_messages_between_streams_policy: restore.move_messages_between_streams_policy });
        }
      } finally {
        const { id: _id, ...data } = restore;
        await prisma().realm.update({ where: { id: realmId }, data: { edit_topic_policy: data.edit_topic_policy, delete_own_message_policy: data.delete_own_message_policy, add_custom_emoji_policy: data.add_custom_emoji_policy, allow_community_topic_editing: data.allow_community_topic_editing, allow_message_deleting: data.allow_message_deleting, add_emoji_by_admins_only: data.add_emoji_by_admins_only, move_messages_within_stream_limit_seconds: data.move_messages_within_stream_limit_seconds } });
      }
    });
  });
});
