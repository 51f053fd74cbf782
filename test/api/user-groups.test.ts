import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("user groups (%s)", (mode) => {
  let server: TestServer;
  let ownerId: number;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let guest: TestUser;

  async function groupNamed(name: string): Promise<Record<string, any>> {
    const res = await server.owner.get("/user_groups");
    return res.body.user_groups.find((g: { name: string }) => g.name === name);
  }

  async function createGroup(name: string, members: number[]): Promise<number> {
    const res = await server.owner.post("/user_groups/create", { name, description: `${name} team`, members });
    expect(res.body).toEqual({ result: "success", msg: "", group_id: expect.any(Number) });
    expect((await groupNamed(name)).id).toBe(res.body.group_id);
    return res.body.group_id;
  }

  /** Zulip 10.0's realm can_create_groups and can_manage_all_groups (feature level 299) replace user_group_edit_policy: 1 members, 2 administrators. */
  async function setPolicy(value: number): Promise<void> {
    const { prisma } = server.running.services.db;
    const realmId = (await prisma.userProfile.findUniqueOrThrow({ where: { id: ownerId } })).realm_id;
    const group = await prisma.userGroup.findFirstOrThrow({ where: { realm_id: realmId, is_system_group: true, name: value === 2 ? "role:administrators" : "role:members" } });
    await prisma.realm.update({ where: { id: realmId }, data: { user_group_edit_policy: value, can_create_groups_id: group.id, can_manage_all_groups_id: group.id } });
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    ownerId = (await server.owner.get("/users/me")).body.user_id;
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    guest = await createTestUser(server, "Gil Guest", "guest");
  });
  afterAll(() => server.stop());
  afterEach(() => setPolicy(1));

  describe("POST /user_groups/create and GET /user_groups", () => {
    test("creates a group that everyone in the realm hears about", async () => {
      const queues = await Promise.all([member, guest].map(async (u) => (await u.client.post("/register", { event_types: ["user_group"] })).body.queue_id));
      const res = await member.client.post("/user_groups/create", { name: "backend", description: "Backend team", members: [other.id, member.id] });
      expect(res.body).toEqual({ result: "success", msg: "", group_id: expect.any(Number) });
      const group = await groupNamed("backend");
      expect(group).toEqual({
        id: res.body.group_id,
        name: "backend",
        description: "Backend team",
        members: [member.id, other.id],
        direct_subgroup_ids: [],
        is_system_group: false,
        deactivated: false,
        creator_id: member.id,
        date_created: expect.any(Number),
        can_add_members_group: { direct_members: [member.id], direct_subgroups: [] },
        can_join_group: expect.any(Number),
        can_leave_group: expect.any(Number),
        can_manage_group: { direct_members: [member.id], direct_subgroups: [] },
        can_mention_group: expect.any(Number),
        can_remove_members_group: expect.any(Number),
      });
      for (const [i, user] of [member, guest].entries()) {
        const event = await waitForEvent(user.client, queues[i], (e) => e.type === "user_group");
        expect(event).toEqual({ id: expect.any(Number), type: "user_group", op: "add", group });
      }
      const listed = await member.client.get("/user_groups");
      expect(listed.body.result).toBe("success");
      expect(listed.body.user_groups).toContainEqual(group);
    });

    test("a group's name is unique in the realm", async () => {
      await createGroup("unique-name", []);
      const res = await server.owner.post("/user_groups/create", { name: "unique-name", description: "again", members: [] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "User group 'unique-name' already exists.", code: "BAD_REQUEST" });
    });

    test.each([
      [[987654], "Invalid user ID: 987654"],
      [[1, 987654], "Invalid user ID: 987654"],
    ])("refuses members %j that are not users of the realm", async (members, msg) => {
      const res = await server.owner.post("/user_groups/create", { name: `bad-${members.length}`, description: "x", members });
      expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
      expect(await groupNamed(`bad-${members.length}`)).toBeUndefined();
    });

    test("refuses missing and malformed parameters", async () => {
      expect((await server.owner.post("/user_groups/create", { name: "x", description: "y" })).body).toMatchObject({
        result: "error",
        msg: "Missing 'members' argument",
        code: "REQUEST_VARIABLE_MISSING",
      });
      expect((await server.owner.post("/user_groups/create", { name: "x", description: "y", members: ["a"] })).body).toMatchObject({
        result: "error",
        msg: "members[0] is not an integer",
      });
      expect((await server.owner.post("/user_groups/create", { name: "  ", description: "y", members: [] })).body.result).toBe("error");
    });

    test("guests can neither create nor list groups", async () => {
      const res = await guest.client.post("/user_groups/create", { name: "guests", description: "x", members: [] });
      expect(res.body).toEqual({ result: "error", msg: "Not allowed for guest users", code: "BAD_REQUEST" });
      expect((await guest.client.get("/user_groups")).body.msg).toBe("Not allowed for guest users");
      expect(await groupNamed("guests")).toBeUndefined();
    });

    test("with can_create_groups = administrators, members cannot create groups but admins can", async () => {
      await setPolicy(2);
      const res = await member.client.post("/user_groups/create", { name: "admins-only", description: "x", members: [] });
      expect(res.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      expect((await admin.client.post("/user_groups/create", { name: "admins-only", description: "x", members: [] })).body.result).toBe("success");
    });
  });

  describe("PATCH /user_groups/{id}", () => {
    test("renames and redescribes a group, one update event per change", async () => {
      const id = await createGroup("frontend", [member.id]);
      const queue = (await other.client.post("/register", { event_types: ["user_group"] })).body.queue_id;
      const res = await member.client.patch(`/user_groups/${id}`, { name: "web", description: "Web team" });
      expect(res.body).toEqual({ result: "success", msg: "" });
      await waitForEvent(other.client, queue, (e) => e.op === "update" && "description" in e.data);
      const events = await drainEvents(other.client, queue);
      expect(events.map(({ id: _id, ...e }) => e)).toEqual([
        { type: "user_group", op: "update", group_id: id, data: { name: "web" } },
        { type: "user_group", op: "update", group_id: id, data: { description: "Web team" } },
      ]);
      expect(await groupNamed("web")).toMatchObject({ id, description: "Web team", members: [member.id] });
    });

    test("errors: unknown group, another realm's id, no data, a taken name", async () => {
      const id = await createGroup("patch-errors", []);
      await createGroup("taken", []);
      expect((await server.owner.patch("/user_groups/987654", { name: "x" })).body).toEqual({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
      expect((await server.owner.patch(`/user_groups/${id}`, {})).body).toEqual({ result: "error", msg: "No new data supplied", code: "BAD_REQUEST" });
      expect((await server.owner.patch(`/user_groups/${id}`, { name: "taken" })).body).toEqual({
        result: "error",
        msg: "User group 'taken' already exists.",
        code: "BAD_REQUEST",
      });
      expect((await server.owner.patch("/user_groups/abc", { name: "x" })).status).toBe(404);
      expect(await groupNamed("patch-errors")).toMatchObject({ id, name: "patch-errors" });
    });

    test("guests cannot edit; members cannot when the policy is administrators", async () => {
      const id = await createGroup("locked", []);
      expect((await guest.client.patch(`/user_groups/${id}`, { name: "x" })).body.msg).toBe("Not allowed for guest users");
      await setPolicy(2);
      expect((await member.client.patch(`/user_groups/${id}`, { name: "x" })).body.msg).toBe("Insufficient permission");
      expect((await admin.client.patch(`/user_groups/${id}`, { description: "by admin" })).body.result).toBe("success");
      expect(await groupNamed("locked")).toMatchObject({ description: "by admin" });
    });
  });

  // Removed in Zulip 10.0 (feature level 294) but in the 3.x contract: it deactivates the group,
  // which 3.x clients no longer see (test/api/user-groups-10.test.ts).
  describe("DELETE /user_groups/{id}", () => {
    test("deletes a group and sends remove to the realm", async () => {
      const id = await createGroup("doomed", [member.id]);
      const queue = (await guest.client.post("/register", { event_types: ["user_group"] })).body.queue_id;
      expect((await member.client.delete(`/user_groups/${id}`)).body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(guest.client, queue, (e) => e.type === "user_group");
      expect(event).toEqual({ id: expect.any(Number), type: "user_group", op: "remove", group_id: id });
      expect(await groupNamed("doomed")).toBeUndefined();
      expect((await member.client.delete(`/user_groups/${id}`)).body).toEqual({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
    });

    test("guests and (under the admin policy) members cannot delete", async () => {
      const id = await createGroup("keeper", []);
      expect((await guest.client.delete(`/user_groups/${id}`)).body.msg).toBe("Not allowed for guest users");
      await setPolicy(2);
      expect((await member.client.delete(`/user_groups/${id}`)).body.msg).toBe("Insufficient permission");
      expect(await groupNamed("keeper")).toBeDefined();
    });
  });

  describe("POST /user_groups/{id}/members", () => {
    test("adds and removes members with add_members / remove_members events", async () => {
      const id = await createGroup("members", [member.id]);
      const queue = (await other.client.post("/register", { event_types: ["user_group"] })).body.queue_id;
      const res = await member.client.post(`/user_groups/${id}/members`, { add: [other.id, ownerId], delete: [member.id] });
      expect(res.body).toEqual({ result: "success", msg: "" });
      await waitForEvent(other.client, queue, (e) => e.op === "remove_members");
      const events = (await drainEvents(other.client, queue)).map(({ id: _id, ...e }) => e);
      expect(events).toEqual([
        { type: "user_group", op: "add_members", group_id: id, user_ids: [ownerId, other.id] },
        { type: "user_group", op: "remove_members", group_id: id, user_ids: [member.id] },
      ]);
      expect((await groupNamed("members")).members).toEqual([ownerId, other.id]);
    });

    test("errors change nothing and send nothing", async () => {
      const id = await createGroup("strict", [member.id]);
      const queue = (await other.client.post("/register", { event_types: ["user_group"] })).body.queue_id;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ add: [member.id] }, `User ${member.id} is already a member of this group`],
        [{ delete: [other.id] }, `There is no member '${other.id}' in this user group`],
        [{ add: [987654] }, "Invalid user ID: 987654"],
        [{ add: [other.id], delete: [ownerId] }, `There is no member '${ownerId}' in this user group`],
        [{}, 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'],
      ];
      for (const [params, msg] of cases) {
        expect((await server.owner.post(`/user_groups/${id}/members`, params)).body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
      }
      expect((await server.owner.post("/user_groups/987654/members", { add: [other.id] })).body.msg).toBe("Invalid user group");
      expect((await groupNamed("strict")).members).toEqual([member.id]);
      expect(await drainEvents(other.client, queue)).toEqual([]);
    });

    test("guests cannot change members", async () => {
      const id = await createGroup("closed", []);
      expect((await guest.client.post(`/user_groups/${id}/members`, { add: [guest.id] })).body.msg).toBe("Not allowed for guest users");
      expect((await groupNamed("closed")).members).toEqual([]);
    });
  });

  test("groups and their events stay in their realm", async () => {
    const { createRealm } = await import("@chat/core");
    const { services } = server.running;
    const { owner } = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: `groups${mode}`, name: "Elsewhere", owner: { email: "boss@else.example", fullName: "Boss", password: "boss-password" } }),
    );
    const elsewhere = server.client("boss@else.example", owner.api_key, `groups${mode}.chat.test`);
    const queue = (await elsewhere.post("/register", { event_types: ["user_group"] })).body.queue_id;
    const id = await createGroup("home-only", []);
    // The other realm has its own system groups only (test/api/system-groups.test.ts).
    expect((await elsewhere.get("/user_groups")).body.user_groups.filter((g: { is_system_group: boolean }) => !g.is_system_group)).toEqual([]);
    expect((await elsewhere.delete(`/user_groups/${id}`)).body.msg).toBe("Invalid user group");
    expect((await elsewhere.post("/user_groups/create", { name: "x", description: "y", members: [member.id] })).body.msg).toBe(`Invalid user ID: ${member.id}`);
    expect(await drainEvents(elsewhere, queue)).toEqual([]);
  });

  describe("register state", () => {
    test("realm_user_groups plus the events equals a fresh register", async () => {
      let id = 0;
      await verifyAction(member.client, ["user_group"], async () => {
        expect((await member.client.post("/user_groups/create", { name: "verify", description: "v", members: [member.id] })).body.result).toBe("success");
        id = (await groupNamed("verify")).id;
      });
      await verifyAction(member.client, ["user_group"], () => member.client.patch(`/user_groups/${id}`, { name: "verified", description: "w" }));
      await verifyAction(member.client, ["user_group"], () => member.client.post(`/user_groups/${id}/members`, { add: [other.id, ownerId] }));
      await verifyAction(member.client, ["user_group"], () => member.client.post(`/user_groups/${id}/members`, { delete: [ownerId] }));
      await verifyAction(member.client, ["user_group"], () => member.client.delete(`/user_groups/${id}`));
    });
  });
});
