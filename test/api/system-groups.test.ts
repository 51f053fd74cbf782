// Zulip 9.0's system groups: every realm's role:… groups, nested, with memberships that follow
// roles and the waiting period, and that nobody edits through the user group endpoints.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

type Group = { id: number; name: string; description: string; members: number[]; direct_subgroup_ids: number[]; is_system_group: boolean; can_mention_group: number };

const CHAIN = ["role:owners", "role:administrators", "role:moderators", "role:fullmembers", "role:members", "role:everyone", "role:internet"];

describe.each(MODES)("system groups (%s)", (mode) => {
  let server: TestServer;
  let ownerId: number;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;

  async function groups(client = server.owner, extra: Record<string, unknown> = {}): Promise<Map<string, Group>> {
    const res = await client.post("/register", { fetch_event_types: ["realm_user_groups"], ...extra });
    expect(res.body.result).toBe("success");
    return new Map((res.body.realm_user_groups as Group[]).map((g) => [g.name, g]));
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    ownerId = (await server.owner.get("/users/me")).body.user_id;
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    guest = await createTestUser(server, "Gil Guest", "guest");
  });
  afterAll(() => server.stop());

  test("every realm has Zulip's eight system groups, each inside the next", async () => {
    const byName = await groups();
    const system = [...byName.values()].filter((g) => g.is_system_group);
    expect(system.map((g) => g.name).sort()).toEqual([...CHAIN, "role:nobody"].sort());
    expect(byName.get("role:nobody")).toMatchObject({ description: "Nobody", members: [], direct_subgroup_ids: [] });
    expect(byName.get("role:owners")).toMatchObject({ description: "Owners of this organization", direct_subgroup_ids: [] });
    expect(byName.get("role:fullmembers")!.description).toBe("Members of this organization, not including new accounts and guests");
    expect(byName.get("role:internet")).toMatchObject({ description: "Everyone on the Internet", members: [] });
    for (let i = 1; i < CHAIN.length; i++) expect(byName.get(CHAIN[i])!.direct_subgroup_ids).toEqual([byName.get(CHAIN[i - 1])!.id]);
    // Nobody mentions a system group (Zulip's default_for_system_groups).
    for (const g of system) expect(g.can_mention_group).toBe(byName.get("role:nobody")!.id);
  });

  test("each user is a direct member of their role's group; members past the waiting period of role:fullmembers", async () => {
    const byName = await groups();
    expect(byName.get("role:owners")!.members).toEqual([ownerId]);
    expect(byName.get("role:administrators")!.members).toEqual([admin.id]);
    expect(byName.get("role:members")!.members).toEqual(expect.arrayContaining([member.id]));
    expect(byName.get("role:members")!.members).not.toContain(guest.id);
    expect(byName.get("role:everyone")!.members).toEqual([guest.id]);
    // The realm's waiting period is 0 days: every member is a full member.
    expect(byName.get("role:fullmembers")!.members).toEqual(expect.arrayContaining([member.id]));
    expect(byName.get("role:fullmembers")!.members).not.toContain(admin.id);
    // The server's own bots are in no group.
    const bots = (await server.owner.post("/register", { fetch_event_types: ["realm_user"] })).body.cross_realm_bots as Array<{ user_id: number }>;
    for (const g of byName.values()) for (const bot of bots) expect(g.members).not.toContain(bot.user_id);
  });

  test("clients of every era get them: a 3.x client (no capabilities), GET /user_groups, and a guest", async () => {
    const modern = await groups(member.client, { client_capabilities: { user_settings_object: true } });
    const legacy = await groups(member.client);
    expect([...legacy.keys()].sort()).toEqual([...modern.keys()].sort());
    const listed = (await member.client.get("/user_groups")).body.user_groups as Group[];
    expect(listed.filter((g) => g.is_system_group)).toHaveLength(8);
    expect((await groups(guest.client)).get("role:everyone")!.members).toContain(guest.id);
  });

  test("a new user joins their groups, and everyone hears it after the user", async () => {
    const queue = (await member.client.post("/register", { event_types: ["realm_user", "user_group"] })).body.queue_id;
    const newcomer = await createTestUser(server, "Nia Newcomer");
    const byName = await groups();
    const event = await waitForEvent(member.client, queue, (e) => e.type === "user_group" && e.group_id === byName.get("role:members")!.id);
    expect(event).toEqual({ id: expect.any(Number), type: "user_group", op: "add_members", group_id: byName.get("role:members")!.id, user_ids: [newcomer.id] });
    const all = await drainEvents(member.client, queue);
    const userAdd = all.findIndex((e) => e.type === "realm_user" && e.op === "add" && e.person.user_id === newcomer.id);
    expect(all.some((e) => e.type === "user_group" && e.group_id === byName.get("role:fullmembers")!.id && e.user_ids.includes(newcomer.id))).toBe(true);
    expect(userAdd === -1 || userAdd < all.findIndex((e) => e.type === "user_group")).toBe(true);
    expect(byName.get("role:members")!.members).toContain(newcomer.id);
  });

  test("verifyAction: a role change moves the user between groups", async () => {
    const target = await createTestUser(server, "Rolf Role");
    const byName = await groups();
    const events = await verifyAction(server.owner, ["user_group"], () => server.owner.patch(`/users/${target.id}`, { role: 300 }));
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "user_group", op: "remove_members", group_id: byName.get("role:members")!.id, user_ids: [target.id] }),
        expect.objectContaining({ type: "user_group", op: "remove_members", group_id: byName.get("role:fullmembers")!.id, user_ids: [target.id] }),
        expect.objectContaining({ type: "user_group", op: "add_members", group_id: byName.get("role:moderators")!.id, user_ids: [target.id] }),
      ]),
    );
    const after = await groups();
    expect(after.get("role:moderators")!.members).toContain(target.id);
    expect(after.get("role:members")!.members).not.toContain(target.id);
    await verifyAction(server.owner, ["user_group"], () => server.owner.patch(`/users/${target.id}`, { role: 600 }));
    const guestNow = await groups();
    expect(guestNow.get("role:everyone")!.members).toContain(target.id);
    expect(guestNow.get("role:moderators")!.members).not.toContain(target.id);
  });

  test("a deactivated user is in no group, and back in theirs when reactivated (feature level 303)", async () => {
    const leaving = await createTestUser(server, "Lea Leaving");
    expect((await server.owner.delete(`/users/${leaving.id}`)).body.result).toBe("success");
    expect((await groups()).get("role:members")!.members).not.toContain(leaving.id);
    expect((await server.owner.post(`/users/${leaving.id}/reactivate`)).body.result).toBe("success");
    expect((await groups()).get("role:members")!.members).toContain(leaving.id);
    expect((await server.owner.delete(`/users/${leaving.id}`)).body.result).toBe("success");
  });

  test("verifyAction: a longer waiting period takes new members out of role:fullmembers, a shorter one puts them back", async () => {
    const byName = await groups();
    const full = byName.get("role:fullmembers")!.id;
    const out = await verifyAction(server.owner, ["user_group", "realm"], () => server.owner.patch("/realm", { waiting_period_threshold: 30 }));
    const removed = out.find((e) => e.type === "user_group" && e.op === "remove_members" && e.group_id === full);
    expect(removed!.user_ids).toContain(member.id);
    expect((await groups()).get("role:fullmembers")!.members).toEqual([]);
    await verifyAction(server.owner, ["user_group", "realm"], () => server.owner.patch("/realm", { waiting_period_threshold: 0 }));
    expect((await groups()).get("role:fullmembers")!.members).toContain(member.id);
  });

  test("the worker's periodic promotion adds members once they have waited long enough", async () => {
    const { promoteNewFullMembers } = await import("@chat/core");
    const { prisma } = server.running.services.db;
    const full = (await groups()).get("role:fullmembers")!.id;
    expect((await server.owner.patch("/realm", { waiting_period_threshold: 5 })).body.result).toBe("success");
    const joined = (await prisma.userProfile.findUniqueOrThrow({ where: { id: member.id } })).date_joined;
    try {
      expect((await groups()).get("role:fullmembers")!.members).not.toContain(member.id);
      expect(await promoteNewFullMembers(prisma, server.running.services.actions)).toBe(0);
      await prisma.userProfile.update({ where: { id: member.id }, data: { date_joined: new Date(Date.now() - 6 * 86_400_000) } });
      const queue = (await admin.client.post("/register", { event_types: ["user_group"] })).body.queue_id;
      expect(await promoteNewFullMembers(prisma, server.running.services.actions)).toBe(1);
      expect(await waitForEvent(admin.client, queue, (e) => e.type === "user_group")).toEqual({ id: expect.any(Number), type: "user_group", op: "add_members", group_id: full, user_ids: [member.id] });
      expect((await groups()).get("role:fullmembers")!.members).toEqual([member.id]);
      expect(await promoteNewFullMembers(prisma, server.running.services.actions)).toBe(0);
    } finally {
      await prisma.userProfile.update({ where: { id: member.id }, data: { date_joined: joined } });
      expect((await server.owner.patch("/realm", { waiting_period_threshold: 0 })).body.result).toBe("success");
    }
  });

  describe("system groups cannot be changed through the user group endpoints", () => {
    test.each([
      ["patch", (id: number) => `/user_groups/${id}`, { description: "mine now" }],
      ["delete", (id: number) => `/user_groups/${id}`, {}],
      ["post", (id: number) => `/user_groups/${id}/members`, { add: [] as number[], delete: [] as number[] }],
    ] as const)("%s is refused, changing nothing", async (method, path, params) => {
      const before = await groups();
      const target = before.get("role:members")!;
      const body = method === "post" ? { add: [admin.id] } : params;
      const res = await server.owner[method](path(target.id), body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
      expect((await groups()).get("role:members")).toEqual(target);
    });

    test("removing the owner from role:owners is refused too", async () => {
      const owners = (await groups()).get("role:owners")!;
      const res = await server.owner.post(`/user_groups/${owners.id}/members`, { delete: [ownerId] });
      expect(res.body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      expect((await groups()).get("role:owners")!.members).toEqual([ownerId]);
    });

    test.each(["role:members", "role:anything", "@team", "user:x", "stream:x", "channel:x"])("a new group may not be named %s", async (name) => {
      const prefix = ["role:", "@", "user:", "stream:", "channel:"].find((p) => name.startsWith(p))!;
      const res = await member.client.post("/user_groups/create", { name, description: "x", members: [] });
      expect(res.body).toEqual({ result: "error", msg: `User group name cannot start with '${prefix}'.`, code: "BAD_REQUEST" });
    });

    test("a group cannot be renamed into the reserved names", async () => {
      await member.client.post("/user_groups/create", { name: "plain", description: "x", members: [member.id] });
      const plain = (await groups()).get("plain")!;
      const res = await member.client.patch(`/user_groups/${plain.id}`, { name: "role:owners" });
      expect(res.body).toMatchObject({ result: "error", msg: "User group name cannot start with 'role:'." });
      expect((await groups()).get("plain")!.name).toBe("plain");
    });
  });
});
