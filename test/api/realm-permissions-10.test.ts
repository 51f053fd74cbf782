// Zulip 10.0's realm permissions as group-setting values, enforced on the paths each governs
// (feature levels 281 to 367). Each setting is given an anonymous group of one direct member and
// one named subgroup (with its own member), with a guest among the direct members too; then every
// role tries what the setting governs. Only the group's members may, administrators included only
// where Zulip gives them the permission otherwise, and the guest only where the setting may be
// role:everyone.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { imagePart, makePng, uploadFiles } from "../support/images.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";

type Who = "owner" | "admin" | "member" | "direct" | "sub" | "guest";
const EVERYONE: Who[] = ["owner", "admin", "member", "direct", "sub", "guest"];

describe.each(MODES)("Zulip 10.0 realm permissions (%s)", (mode) => {
  let server: TestServer;
  let users: Record<Who, TestUser>;
  let mallory: TestUser;
  let crew: number;
  let groups: Record<string, number>;
  let otherStreamId: number;
  let counter = 0;
  const unique = (prefix: string) => `${prefix}${++counter}`;
  const prisma = () => server.running.services.db.prisma;

  /** The anonymous group: `direct` and the guest directly, and `crew` (whose member is `sub`). */
  const anonymous = () => ({ direct_members: [users.direct.id, users.guest.id], direct_subgroups: [crew] });

  async function setRealm(data: Record<string, unknown>): Promise<void> {
    const body = Object.fromEntries(Object.entries(data).map(([key, value]) => [key, JSON.stringify(key.endsWith("_group") || key.startsWith("can_") ? { new: value } : value)]));
    const res = await server.owner.patch("/realm", body);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
  }

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
    const [admin, member, direct, sub, guest, other] = await Promise.all([
      createTestUser(server, "Perm Admin", "admin"),
      createTestUser(server, "Perm Member"),
      createTestUser(server, "Perm Direct"),
      createTestUser(server, "Perm Sub"),
      createTestUser(server, "Perm Guest", "guest"),
      createTestUser(server, "Perm Mallory"),
    ]);
    users = { owner, admin, member, direct, sub, guest };
    mallory = other;
    const made = await server.owner.post("/user_groups/create", { name: "crew", description: "the subgroup", members: JSON.stringify([sub.id]) });
    expect(made.body.result).toBe("success");
    const all = (await server.owner.post("/register", { fetch_event_types: ["realm_user_groups"] })).body.realm_user_groups as Array<{ id: number; name: string }>;
    groups = Object.fromEntries(all.map((g) => [g.name, g.id]));
    crew = groups.crew;
    await subscribeTo(server.owner, ["perms", "perms-other"], { principals: JSON.stringify([...EVERYONE.map((w) => users[w].email), mallory.email]) });
    otherStreamId = (await server.owner.get("/get_stream_id", { stream: "perms-other" })).body.stream_id;
  });
  afterAll(() => server.stop());

  test("can_delete_any_message_group (281): only its members delete others' messages, administrators too only when in it; guests never", async () => {
    await setRealm({ can_delete_any_message_group: anonymous(), can_delete_own_message_group: groups["role:nobody"] });
    const ok = await admitted(async (user) => {
      const id = await sendStreamMessage(mallory.client, "perms", "mallory's");
      return (await user.client.delete(`/messages/${id}`)).body;
    }, ["You don't have permission to delete this message"]);
    expect(ok).toEqual(["direct", "sub"]);
    // Whenever sent: the realm's time limit does not hold them.
    await setRealm({ message_content_delete_limit_seconds: 60 });
    const old = await sendStreamMessage(mallory.client, "perms", "old");
    await prisma().message.update({ where: { id: old }, data: { date_sent: new Date(Date.now() - 3_600_000) } });
    expect((await users.sub.client.delete(`/messages/${old}`)).body.result).toBe("success");
    await server.owner.patch("/realm", { message_content_delete_limit_seconds: JSON.stringify("unlimited") });
    await setRealm({ can_delete_any_message_group: groups["role:administrators"], can_delete_own_message_group: groups["role:everyone"] });
  });

  test("can_delete_own_message_group (291): its members (a guest too: it may be role:everyone) delete their own, within the time limit", async () => {
    await setRealm({ can_delete_any_message_group: groups["role:nobody"], can_delete_own_message_group: anonymous() });
    const ok = await admitted(async (user) => {
      const id = await sendStreamMessage(user.client, "perms", "mine");
      return (await user.client.delete(`/messages/${id}`)).body;
    }, ["You don't have permission to delete this message"]);
    expect(ok).toEqual(["direct", "sub", "guest"]);
    await setRealm({ message_content_delete_limit_seconds: 60 });
    const old = await sendStreamMessage(users.direct.client, "perms", "old");
    await prisma().message.update({ where: { id: old }, data: { date_sent: new Date(Date.now() - 3_600_000) } });
    expect((await users.direct.client.delete(`/messages/${old}`)).body.msg).toBe("The time limit for deleting this message has passed");
    await server.owner.patch("/realm", { message_content_delete_limit_seconds: JSON.stringify("unlimited") });
    await setRealm({ can_delete_any_message_group: groups["role:administrators"], can_delete_own_message_group: groups["role:everyone"] });
  });

  test("can_add_custom_emoji_group (307)", async () => {
    await setRealm({ can_add_custom_emoji_group: anonymous() });
    const png = await makePng(32, 32);
    const ok = await admitted((user) => uploadFiles(user.client, `/realm/emoji/${unique("perm_emoji")}`, [imagePart(png)]).then((r) => r.json), ["Insufficient permission", "Not allowed for guest users"]);
    expect(ok).toEqual(["direct", "sub"]);
    await setRealm({ can_add_custom_emoji_group: groups["role:members"] });
  });

  test("can_move_messages_between_channels_group (310): moving one's own message to another channel", async () => {
    await setRealm({ can_move_messages_between_channels_group: anonymous() });
    const ok = await admitted(async (user) => {
      const id = await sendStreamMessage(user.client, "perms", unique("moving"));
      return (await user.client.patch(`/messages/${id}`, { stream_id: otherStreamId })).body;
    }, ["You don't have permission to move this message"]);
    expect(ok).toEqual(["direct", "sub"]);
    await setRealm({ can_move_messages_between_channels_group: groups["role:members"] });
  });

  test("can_move_messages_between_topics_group (316): retitling someone else's message (a guest too: it may be role:everyone)", async () => {
    await setRealm({ can_move_messages_between_topics_group: anonymous() });
    const ok = await admitted(async (user) => {
      const id = await sendStreamMessage(mallory.client, "perms", unique("retitle"));
      return (await user.client.patch(`/messages/${id}`, { topic: unique("renamed") })).body;
    }, ["You don't have permission to edit this message"]);
    expect(ok).toEqual(["direct", "sub", "guest"]);
    await setRealm({ can_move_messages_between_topics_group: groups["role:everyone"] });
  });

  test("can_resolve_topics_group (367): resolving and unresolving take it, moving a topic does not give it", async () => {
    await setRealm({ can_resolve_topics_group: anonymous(), can_move_messages_between_topics_group: groups["role:nobody"] });
    const ok = await admitted(async (user) => {
      const topic = unique("to resolve ");
      const id = await sendStreamMessage(mallory.client, "perms", topic);
      const resolved = (await user.client.patch(`/messages/${id}`, { topic: `✔ ${topic}`, propagate_mode: "change_all" })).body;
      if (resolved.result !== "success") return resolved;
      return (await user.client.patch(`/messages/${id}`, { topic, propagate_mode: "change_all" })).body;
    }, ["You don't have permission to resolve topics."]);
    expect(ok).toEqual(["direct", "sub", "guest"]);
    // Resolving is not renaming: a member of the resolve group still may not retitle.
    const id = await sendStreamMessage(mallory.client, "perms", unique("not a resolve"));
    expect((await users.direct.client.patch(`/messages/${id}`, { topic: "something else" })).body.msg).toBe("You don't have permission to edit this message");
    // And the move permission alone no longer resolves (feature level 367).
    await setRealm({ can_resolve_topics_group: groups["role:nobody"], can_move_messages_between_topics_group: groups["role:everyone"] });
    const other = await sendStreamMessage(mallory.client, "perms", "plain topic");
    expect((await users.owner.client.patch(`/messages/${other}`, { topic: "✔ plain topic" })).body.msg).toBe("You don't have permission to resolve topics.");
    await setRealm({ can_resolve_topics_group: groups["role:everyone"] });
  });

  test("can_invite_users_group (321): email invitations", async () => {
    await setRealm({ can_invite_users_group: anonymous() });
    const ok = await admitted((user) => user.client.post("/invites", { invitee_emails: `${unique("invitee")}@example.com`, stream_ids: JSON.stringify([]) }).then((r) => r.body), [
      "Insufficient permission",
      "Not allowed for guest users",
    ]);
    expect(ok).toEqual(["direct", "sub"]);
    const registered = (await users.sub.client.post("/register", { fetch_event_types: ["realm_user"] })).body;
    expect(registered.can_invite_others_to_realm).toBe(true);
    expect((await users.admin.client.post("/register", { fetch_event_types: ["realm_user"] })).body.can_invite_others_to_realm).toBe(false);
    await setRealm({ can_invite_users_group: groups["role:members"] });
  });

  test("create_multiuse_invite_group (314): reusable invitation links, any group now", async () => {
    await setRealm({ create_multiuse_invite_group: anonymous() });
    const ok = await admitted((user) => user.client.post("/invites/multiuse", { invite_expires_in_minutes: 60 }).then((r) => r.body), [
      "Insufficient permission",
      "Must be an organization administrator",
      "Not allowed for guest users",
    ]);
    expect(ok).toEqual(["direct", "sub"]);
    await setRealm({ create_multiuse_invite_group: groups["role:administrators"] });
  });

  test("can_add_subscribers_group (341): subscribing others (administrators administer every channel)", async () => {
    await setRealm({ can_add_subscribers_group: anonymous() });
    const ok = await admitted(async (user) => {
      const stream = unique("subs-");
      // Made by the owner with the user in it; then the user adds Mallory.
      await subscribeTo(server.owner, [stream], { principals: JSON.stringify([user.id]) });
      return (await user.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: stream }]), principals: JSON.stringify([mallory.id]) })).body;
    }, ["You can't subscribe other users to streams.", "Insufficient permission", "Not allowed for guest users", "Invalid channel name", "You do not have permission to subscribe other users to channels."]);
    expect(ok).toEqual(["owner", "admin", "direct", "sub"]);
    // 3.x clients still read it as can_subscribe_other_users; today's clients no longer get it.
    expect((await users.sub.client.post("/register", { fetch_event_types: ["realm_user"] })).body.can_subscribe_other_users).toBe(true);
    expect((await users.member.client.post("/register", { fetch_event_types: ["realm_user"] })).body.can_subscribe_other_users).toBe(false);
    await setRealm({ can_add_subscribers_group: groups["role:members"] });
  });

  test("can_create_bots_group and can_create_write_only_bots_group (344): which bots each may add", async () => {
    const bot = (type: number) => ({ full_name: unique("Perm Bot "), short_name: unique("permbot"), bot_type: type });
    const refusals = ["Must be an organization administrator", "Not allowed for guest users"];
    await setRealm({ can_create_bots_group: anonymous(), can_create_write_only_bots_group: groups["role:nobody"] });
    expect(await admitted((user) => user.client.post("/bots", bot(1)).then((r) => r.body), refusals)).toEqual(["direct", "sub"]);
    await setRealm({ can_create_bots_group: groups["role:nobody"], can_create_write_only_bots_group: anonymous() });
    // Write-only bots are incoming webhooks, which can only send.
    expect(await admitted((user) => user.client.post("/bots", bot(2)).then((r) => r.body), refusals)).toEqual(["direct", "sub"]);
    expect(await admitted((user) => user.client.post("/bots", bot(1)).then((r) => r.body), refusals)).toEqual([]);
    await setRealm({ can_create_bots_group: groups["role:members"], can_create_write_only_bots_group: groups["role:members"] });
  });

  test("can_create_groups (299)", async () => {
    await setRealm({ can_create_groups: anonymous() });
    const ok = await admitted(
      (user) => user.client.post("/user_groups/create", { name: unique("perm-group-"), description: "d", members: JSON.stringify([user.id]) }).then((r) => r.body),
      ["Insufficient permission", "Not allowed for guest users"],
    );
    expect(ok).toEqual(["direct", "sub"]);
    await setRealm({ can_create_groups: groups["role:members"] });
  });

  test("can_mention_many_users_group (352): wildcard mentions in a channel past 15 subscribers (a guest too: it may be role:everyone)", async () => {
    const crowd = await Promise.all(Array.from({ length: 10 }, (_, i) => createTestUser(server, `Crowd ${i}`)));
    await subscribeTo(server.owner, ["perms-crowd"], { principals: JSON.stringify([...EVERYONE.map((w) => users[w].email), mallory.email, ...crowd.map((u) => u.email)]) });
    await setRealm({ can_mention_many_users_group: anonymous() });
    const ok = await admitted(
      (user) => user.client.post("/messages", { type: "stream", to: "perms-crowd", topic: "all", content: "hello @**all**" }).then((r) => r.body),
      ["You do not have permission to use channel wildcard mentions in this channel."],
    );
    expect(ok).toEqual(["direct", "sub", "guest"]);
    // A small channel takes them from anyone.
    expect((await users.member.client.post("/messages", { type: "stream", to: "perms", topic: "all", content: "hello @**all**" })).body.result).toBe("success");
    await setRealm({ can_mention_many_users_group: groups["role:administrators"] });
  });

  test("can_summarize_topics_group (350) and can_manage_billing_group (363): taken and shown, nothing here to use them", async () => {
    await setRealm({ can_summarize_topics_group: anonymous() });
    const state = (await users.member.client.post("/register", { fetch_event_types: ["realm"] })).body;
    expect(state.realm_can_summarize_topics_group).toEqual({ direct_members: [users.direct.id, users.guest.id].sort((a, b) => a - b), direct_subgroups: [crew] });
    // Billing may not be nobody's.
    const refused = await server.owner.patch("/realm", { can_manage_billing_group: JSON.stringify({ new: groups["role:nobody"] }) });
    expect(refused.body).toEqual({ result: "error", msg: "'can_manage_billing_group' setting cannot be set to 'role:nobody' group.", code: "BAD_REQUEST" });
    await setRealm({ can_summarize_topics_group: groups["role:everyone"] });
  });

  test("only owners change who invites, creates and manages groups, and billing; administrators the rest", async () => {
    for (const setting of ["can_invite_users_group", "can_create_groups", "can_manage_all_groups", "can_manage_billing_group"]) {
      const res = await users.admin.client.patch("/realm", { [setting]: JSON.stringify({ new: groups["role:administrators"] }) });
      expect(res.body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    expect((await users.admin.client.patch("/realm", { can_resolve_topics_group: JSON.stringify({ new: groups["role:members"] }) })).body.result).toBe("success");
    for (const who of ["member", "guest", "direct"] as const) {
      expect((await users[who].client.patch("/realm", { can_resolve_topics_group: JSON.stringify({ new: groups["role:everyone"] }) })).body.result).toBe("error");
    }
    await setRealm({ can_resolve_topics_group: groups["role:everyone"] });
  });
});
