// Zulip 10.0's user groups: group settings as group-setting values (feature levels 283-324),
// creator and date (292), subgroups (311), deactivation and the include_deactivated_groups
// capability (290, 294, 298, 340), can_create_groups / can_manage_all_groups (299, 305),
// deactivated users in no group (303), silent mentions of system groups (333).
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const CAPABLE = { client_capabilities: JSON.stringify({ include_deactivated_groups: true }) };

describe.each(MODES)("user groups, Zulip 10.0 (%s)", (mode) => {
  let server: TestServer;
  let ownerId: number;
  let realmId: number;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let system: Record<string, number>;
  let n = 0;

  const prisma = () => server.running.services.db.prisma;

  async function groups(client = server.owner, params: Record<string, unknown> = {}): Promise<Array<Record<string, any>>> {
    const res = await client.get("/user_groups", params);
    expect(res.body.result).toBe("success");
    return res.body.user_groups;
  }
  async function group(id: number): Promise<Record<string, any>> {
    return (await groups(server.owner, { include_deactivated_groups: true })).find((g) => g.id === id)!;
  }
  async function create(client = server.owner, params: Record<string, unknown> = {}): Promise<number> {
    n += 1;
    const res = await client.post("/user_groups/create", { name: `g10-${n}`, description: "d", members: [], ...params });
    expect(res.body).toEqual({ result: "success", msg: "", group_id: expect.any(Number) });
    return res.body.group_id;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    ownerId = (await server.owner.get("/users/me")).body.user_id;
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    realmId = (await prisma().userProfile.findUniqueOrThrow({ where: { id: ownerId } })).realm_id;
    system = Object.fromEntries((await groups()).filter((g) => g.is_system_group).map((g) => [g.name, g.id]));
  });
  afterAll(() => server.stop());

  describe("group objects and creation", () => {
    test("every group has Zulip 10.0's fields; system groups' settings are role:nobody", async () => {
      for (const g of await groups()) {
        expect(Object.keys(g).sort()).toEqual(
          [
            "can_add_members_group",
            "can_join_group",
            "can_leave_group",
            "can_manage_group",
            "can_mention_group",
            "can_remove_members_group",
            "creator_id",
            "date_created",
            "deactivated",
            "description",
            "direct_subgroup_ids",
            "id",
            "is_system_group",
            "members",
            "name",
          ].sort(),
        );
      }
      const members = (await groups()).find((g) => g.name === "role:members")!;
      expect(members).toMatchObject({ direct_subgroup_ids: [system["role:fullmembers"]], can_manage_group: system["role:nobody"], can_mention_group: system["role:nobody"], creator_id: null });
    });

    test("defaults: the creator manages and adds members, everyone leaves and mentions, nobody joins or removes", async () => {
      const before = Math.floor(Date.now() / 1000) - 5;
      const id = await create(member.client, { members: [other.id] });
      const g = await group(id);
      expect(g).toMatchObject({
        creator_id: member.id,
        members: [other.id],
        can_manage_group: { direct_members: [member.id], direct_subgroups: [] },
        can_add_members_group: { direct_members: [member.id], direct_subgroups: [] },
        can_join_group: system["role:nobody"],
        can_leave_group: system["role:everyone"],
        can_mention_group: system["role:everyone"],
        can_remove_members_group: system["role:nobody"],
      });
      expect(g.date_created).toBeGreaterThanOrEqual(before);
    });

    test("settings as group-setting values and subgroups at creation; errors", async () => {
      const sub = await create();
      const id = await create(server.owner, {
        subgroups: [sub, system["role:moderators"]],
        can_join_group: system["role:members"],
        can_manage_group: JSON.stringify({ direct_members: [member.id], direct_subgroups: [sub] }),
      });
      expect(await group(id)).toMatchObject({
        direct_subgroup_ids: [sub, system["role:moderators"]].sort((a, b) => a - b),
        can_join_group: system["role:members"],
        can_manage_group: { direct_members: [member.id], direct_subgroups: [sub] },
      });
      const bad = (params: Record<string, unknown>) => server.owner.post("/user_groups/create", { name: `bad-${++n}`, description: "d", members: [], ...params });
      expect((await bad({ subgroups: [987654] })).body).toEqual({ result: "error", msg: "Invalid user group ID: 987654", code: "BAD_REQUEST" });
      expect((await bad({ can_join_group: system["role:internet"] })).body).toEqual({ result: "error", msg: "'can_join_group' setting cannot be set to 'role:internet' group.", code: "BAD_REQUEST" });
      expect((await bad({ can_join_group: JSON.stringify({ direct_members: [987654], direct_subgroups: [] }) })).body.msg).toBe("Invalid user ID: 987654");
      expect((await bad({ can_join_group: '{"direct_members": []}' })).body.result).toBe("error");
    });

    test("can_create_groups decides who may create (feature level 299)", async () => {
      await prisma().realm.update({ where: { id: realmId }, data: { can_create_groups_id: system["role:administrators"] } });
      try {
        expect((await member.client.post("/user_groups/create", { name: "nope", description: "d", members: [] })).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
        await create(admin.client);
      } finally {
        await prisma().realm.update({ where: { id: realmId }, data: { can_create_groups_id: system["role:members"] } });
      }
    });

    test("an anonymous group is never listed and never named by id", async () => {
      const id = await create(member.client);
      const anonymousId = (await prisma().userGroup.findUniqueOrThrow({ where: { id } })).can_manage_group_id!;
      expect((await groups()).some((g) => g.id === anonymousId)).toBe(false);
      expect((await server.owner.patch(`/user_groups/${anonymousId}`, { description: "x" })).body.msg).toBe("Invalid user group");
      expect((await server.owner.post(`/user_groups/${id}/members`, { add_subgroups: [anonymousId] })).body.msg).toBe(`Invalid user group ID: ${anonymousId}`);
      expect((await server.owner.patch(`/user_groups/${id}`, { can_join_group: JSON.stringify({ new: anonymousId }) })).body.msg).toBe("Invalid user group");
    });
  });

  describe("PATCH settings as {new, old}", () => {
    test("changes a setting, with EXPECTATION_MISMATCH for a stale old, and an update event", async () => {
      const id = await create(member.client);
      const queue = (await other.client.post("/register", { event_types: ["user_group"] })).body.queue_id;
      const stale = await member.client.patch(`/user_groups/${id}`, { can_join_group: JSON.stringify({ new: system["role:members"], old: system["role:everyone"] }) });
      expect(stale.body).toEqual({ result: "error", msg: "'old' value does not match the expected value.", code: "EXPECTATION_MISMATCH" });
      const ok = await member.client.patch(`/user_groups/${id}`, { can_join_group: JSON.stringify({ new: system["role:members"], old: system["role:nobody"] }) });
      expect(ok.body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(other.client, queue, (e) => e.type === "user_group" && e.op === "update");
      expect(event).toEqual({ id: expect.any(Number), type: "user_group", op: "update", group_id: id, data: { can_join_group: system["role:members"] } });
      // No change, no event.
      expect((await member.client.patch(`/user_groups/${id}`, { can_join_group: JSON.stringify({ new: system["role:members"] }) })).body.result).toBe("success");
      expect(await drainEvents(other.client, queue, event.id)).toEqual([]);
      // An anonymous value: its members and subgroups.
      await verifyAction(other.client, ["user_group"], () =>
        member.client.patch(`/user_groups/${id}`, { can_manage_group: JSON.stringify({ new: { direct_members: [member.id, other.id], direct_subgroups: [system["role:moderators"]] } }) }),
      );
      expect((await group(id)).can_manage_group).toEqual({ direct_members: [member.id, other.id], direct_subgroups: [system["role:moderators"]] });
    });

    test("only can_manage_group or can_manage_all_groups may edit; system groups never", async () => {
      const id = await create(member.client);
      expect((await other.client.patch(`/user_groups/${id}`, { description: "x" })).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      // The owner is in can_manage_all_groups (role:owners by default).
      expect((await server.owner.patch(`/user_groups/${id}`, { description: "by owner" })).body.result).toBe("success");
      expect((await server.owner.patch(`/user_groups/${system["role:members"]}`, { description: "x" })).body.msg).toBe("Insufficient permission");
    });
  });

  describe("membership permissions (301, 305, 308, 324)", () => {
    test("joining takes can_join_group, leaving can_leave_group, adding or removing others their settings", async () => {
      const id = await create(member.client, { members: [member.id] });
      expect((await other.client.post(`/user_groups/${id}/members`, { add: [other.id] })).body.msg).toBe("Insufficient permission");
      await member.client.patch(`/user_groups/${id}`, { can_join_group: JSON.stringify({ new: system["role:members"] }) });
      expect((await other.client.post(`/user_groups/${id}/members`, { add: [other.id] })).body.result).toBe("success");
      // Joining lets no one add others, nor remove them.
      expect((await other.client.post(`/user_groups/${id}/members`, { add: [ownerId] })).body.msg).toBe("Insufficient permission");
      expect((await other.client.post(`/user_groups/${id}/members`, { delete: [member.id] })).body.msg).toBe("Insufficient permission");
      // Leaving: role:everyone by default.
      expect((await other.client.post(`/user_groups/${id}/members`, { delete: [other.id] })).body.result).toBe("success");
      await member.client.patch(`/user_groups/${id}`, { can_leave_group: JSON.stringify({ new: system["role:nobody"] }) });
      await member.client.post(`/user_groups/${id}/members`, { add: [other.id] });
      expect((await other.client.post(`/user_groups/${id}/members`, { delete: [other.id] })).body.msg).toBe("Insufficient permission");
      // can_remove_members_group lets them remove anyone, themselves too.
      await member.client.patch(`/user_groups/${id}`, { can_remove_members_group: JSON.stringify({ new: system["role:members"] }) });
      expect((await other.client.post(`/user_groups/${id}/members`, { delete: [member.id] })).body.result).toBe("success");
      expect((await group(id)).members).toEqual([other.id]);
      expect((await other.client.post(`/user_groups/${id}/members`, { delete: [other.id] })).body.result).toBe("success");
      expect((await group(id)).members).toEqual([]);
    });
  });

  describe("subgroups (311)", () => {
    test("add_subgroups / delete_subgroups and /subgroups, with events; cycles refused", async () => {
      const a = await create();
      const b = await create();
      const events = await verifyAction(member.client, ["user_group"], () => server.owner.post(`/user_groups/${a}/members`, { add_subgroups: [b] }));
      expect(events.map(({ id: _id, ...e }) => e)).toEqual([{ type: "user_group", op: "add_subgroups", group_id: a, direct_subgroup_ids: [b] }]);
      expect((await server.owner.post(`/user_groups/${b}/subgroups`, { add: [a] })).body).toEqual({
        result: "error",
        msg: `User group ${b} is already a subgroup of one of the passed subgroups.`,
        code: "BAD_REQUEST",
      });
      expect((await server.owner.post(`/user_groups/${a}/subgroups`, { add: [a] })).body.msg).toBe(`User group ${a} is already a subgroup of one of the passed subgroups.`);
      expect((await server.owner.post(`/user_groups/${a}/subgroups`, { add: [b] })).body.msg).toBe(`User group ${b} is already a subgroup of this group.`);
      expect((await server.owner.post(`/user_groups/${a}/subgroups`, {})).body.msg).toBe('Nothing to do. Specify at least one of "add" or "delete".');
      await verifyAction(member.client, ["user_group"], () => server.owner.post(`/user_groups/${a}/subgroups`, { delete: [b] }));
      expect((await group(a)).direct_subgroup_ids).toEqual([]);
      expect((await server.owner.post(`/user_groups/${a}/subgroups`, { delete: [b] })).body.msg).toBe(`User group ${b} is not a subgroup of this group.`);
    });
  });

  describe("reading members and subgroups (303)", () => {
    test("GET members (recursive or direct), is-member, subgroups; deactivated users are no members", async () => {
      const gone = await createTestUser(server, "Gus Gone");
      const inner = await create(server.owner, { members: [other.id, gone.id] });
      const outer = await create(server.owner, { members: [member.id], subgroups: [inner] });
      const top = await create(server.owner, { subgroups: [outer] });
      await server.owner.delete(`/users/${gone.id}`);
      const get = async (path: string, params: Record<string, unknown> = {}) => (await member.client.get(path, params)).body;
      expect(await get(`/user_groups/${outer}/members`)).toEqual({ result: "success", msg: "", members: [member.id, other.id].sort((a, b) => a - b) });
      expect(await get(`/user_groups/${outer}/members`, { direct_member_only: true })).toEqual({ result: "success", msg: "", members: [member.id] });
      expect(await get(`/user_groups/${inner}/members`)).toEqual({ result: "success", msg: "", members: [other.id] });
      expect(await get(`/user_groups/${top}/members/${other.id}`)).toEqual({ result: "success", msg: "", is_user_group_member: true });
      expect(await get(`/user_groups/${top}/members/${other.id}`, { direct_member_only: true })).toEqual({ result: "success", msg: "", is_user_group_member: false });
      expect(await get(`/user_groups/${inner}/members/${gone.id}`)).toEqual({ result: "success", msg: "", is_user_group_member: false });
      expect(await get(`/user_groups/${top}/subgroups`)).toEqual({ result: "success", msg: "", subgroups: [outer, inner].sort((a, b) => a - b) });
      expect(await get(`/user_groups/${top}/subgroups`, { direct_subgroup_only: true })).toEqual({ result: "success", msg: "", subgroups: [outer] });
      expect(await get("/user_groups/987654/members")).toEqual({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
      expect(await get(`/user_groups/${top}/members/987654`)).toEqual({ result: "error", msg: "No such user", code: "BAD_REQUEST" });
    });
  });

  describe("deactivation (290, 294, 298, 340)", () => {
    test("refused with the objections while in use", async () => {
      const used = await create();
      const holder = await create();
      await server.owner.post(`/user_groups/${holder}/members`, { add_subgroups: [used] });
      await server.owner.patch(`/user_groups/${holder}`, { can_join_group: JSON.stringify({ new: used }), can_leave_group: JSON.stringify({ new: { direct_members: [member.id], direct_subgroups: [used] } }) });
      await prisma().realm.update({ where: { id: realmId }, data: { can_create_groups_id: used } });
      const streamId = (await server.owner.get("/get_stream_id", { stream: "general" })).body.stream_id as number;
      const before = await prisma().stream.findUniqueOrThrow({ where: { id: streamId } });
      await prisma().stream.update({ where: { id: streamId }, data: { can_administer_channel_group_id: used } });
      try {
        const res = await server.owner.post(`/user_groups/${used}/deactivate`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          result: "error",
          msg: "Cannot deactivate user group in use.",
          code: "CANNOT_DEACTIVATE_GROUP_IN_USE",
          objections: [
            { type: "subgroup", supergroup_ids: [holder] },
            { type: "channel", channel_id: streamId, settings: ["can_administer_channel_group"] },
            { type: "user_group", group_id: holder, settings: ["can_join_group", "can_leave_group"] },
            { type: "realm", settings: ["can_create_groups"] },
          ],
        });
      } finally {
        await prisma().realm.update({ where: { id: realmId }, data: { can_create_groups_id: system["role:members"] } });
        await prisma().stream.update({ where: { id: streamId }, data: { can_administer_channel_group_id: before.can_administer_channel_group_id } });
      }
      expect((await group(used)).deactivated).toBe(false);
      // Once nothing uses it (a deactivated supergroup and its settings object to nothing), it may go.
      await server.owner.post(`/user_groups/${holder}/deactivate`);
      expect((await server.owner.post(`/user_groups/${used}/deactivate`)).body).toEqual({ result: "success", msg: "" });
    });

    test("capable clients get update {deactivated: true}, others remove; GET and /register follow", async () => {
      const id = await create(member.client);
      const capable = await verifyAction(other.client, ["user_group"], () => member.client.post(`/user_groups/${id}/deactivate`), 5000, CAPABLE);
      expect(capable.map(({ id: _id, ...e }) => e)).toEqual([{ type: "user_group", op: "update", group_id: id, data: { deactivated: true } }]);
      expect((await group(id)).deactivated).toBe(true);
      expect((await groups()).some((g) => g.id === id)).toBe(false);
      expect((await groups(server.owner, { allow_deactivated: true })).some((g) => g.id === id)).toBe(true);
      expect((await member.client.post(`/user_groups/${id}/deactivate`)).body.msg).toBe("User group is deactivated.");
      const legacy = (await other.client.post("/register", { event_types: ["user_group"] })).body;
      expect(legacy.realm_user_groups.some((g: { id: number }) => g.id === id)).toBe(false);
      const modern = (await other.client.post("/register", { event_types: ["user_group"], ...CAPABLE })).body;
      expect(modern.realm_user_groups.find((g: { id: number }) => g.id === id)).toMatchObject({ deactivated: true });

      const id2 = await create(member.client);
      const legacyEvents = await verifyAction(other.client, ["user_group"], () => member.client.post(`/user_groups/${id2}/deactivate`));
      expect(legacyEvents.map(({ id: _id, ...e }) => e)).toEqual([{ type: "user_group", op: "remove", group_id: id2 }]);

      // Renaming a deactivated group (and its settings, 340): only capable clients hear of it.
      const queues = await Promise.all([{}, CAPABLE].map(async (extra) => (await other.client.post("/register", { event_types: ["user_group"], ...extra })).body.queue_id as string));
      expect((await member.client.patch(`/user_groups/${id2}`, { name: `renamed-${id2}`, can_join_group: JSON.stringify({ new: system["role:members"] }) })).body.result).toBe("success");
      await waitForEvent(other.client, queues[1], (e) => e.op === "update" && "can_join_group" in e.data);
      expect(await drainEvents(other.client, queues[0])).toEqual([]);
      // No new members, subgroups, mentions or setting values for a deactivated group.
      expect((await member.client.post(`/user_groups/${id2}/members`, { add: [member.id] })).body.msg).toBe("User group is deactivated.");
      expect((await server.owner.post(`/user_groups/${await create()}/members`, { add_subgroups: [id2] })).body.msg).toBe("User group is deactivated.");
      expect((await server.owner.patch(`/user_groups/${await create()}`, { can_join_group: JSON.stringify({ new: id2 }) })).body.msg).toBe("User group is deactivated.");
      const rendered = (await server.owner.post("/messages/render", { content: `@*renamed-${id2}*` })).body.rendered;
      expect(rendered).not.toContain("user-group-mention");
    });

    test("DELETE (removed in 10.0, in the 3.x contract) deactivates", async () => {
      const id = await create(member.client);
      expect((await member.client.delete(`/user_groups/${id}`)).body).toEqual({ result: "success", msg: "" });
      expect((await group(id)).deactivated).toBe(true);
      expect((await member.client.delete(`/user_groups/${id}`)).body).toEqual({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
    });
  });

  describe("deactivated users are in no group (303)", () => {
    test("deactivation sends remove_members, reactivation add_members", async () => {
      const leaving = await createTestUser(server, "Lee Leaving");
      const id = await create(server.owner, { members: [leaving.id, member.id] });
      const events = await verifyAction(member.client, ["user_group", "realm_user"], () => server.owner.delete(`/users/${leaving.id}`));
      expect(events.filter((e) => e.type === "user_group" && e.group_id === id).map(({ id: _id, ...e }) => e)).toEqual([
        { type: "user_group", op: "remove_members", group_id: id, user_ids: [leaving.id] },
      ]);
      expect(events.some((e) => e.type === "user_group" && e.op === "remove_members" && e.group_id === system["role:members"])).toBe(true);
      expect((await group(id)).members).toEqual([member.id]);
      expect((await server.owner.post(`/user_groups/${id}/members`, { delete: [leaving.id] })).body.msg).toBe(`Invalid user ID: ${leaving.id}`);
      const back = await verifyAction(member.client, ["user_group", "realm_user"], () => server.owner.post(`/users/${leaving.id}/reactivate`));
      expect(back.some((e) => e.type === "user_group" && e.op === "add_members" && e.group_id === id)).toBe(true);
      expect((await group(id)).members).toEqual([member.id, leaving.id].sort((a, b) => a - b));
    });
  });

  describe("system group mentions (333)", () => {
    test("silent mentions render with the display name; others are refused", async () => {
      const rendered = (await server.owner.post("/messages/render", { content: "@_*role:administrators*" })).body.rendered;
      expect(rendered).toBe(`<p><span class="user-group-mention silent" data-user-group-id="${system["role:administrators"]}">Administrators</span></p>`);
      const sent = await member.client.post("/messages", { type: "stream", to: "general", topic: "mentions", content: "@*role:members*" });
      expect(sent.body.result).toBe("error");
      expect(sent.body.msg).toMatch(/^You are not allowed to mention user group 'role:members'\./);
    });
  });
});
