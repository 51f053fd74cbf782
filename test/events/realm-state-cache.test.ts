// The event node's copies of what /register shows every member of a realm (realm-state-cache.ts):
// whatever changes a user or the organization's groups, default streams, profile fields, emoji or
// linkifiers, through any code path (here even plain SQL statements), the next /register from the
// same node shows it; each view gets its own copy; and an event that reaches a new queue while its
// state is read changes the copy's text only in that registration's answer.
import { applyEvents, JsonText, RealmStateCache, type RealmState, type State } from "@chat/core";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

type Person = Record<string, unknown> & { user_id: number };

describe.each(MODES)("realm_users from the event node's copy (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Cached");
    bob = await createTestUser(server, "Bob Cached");
  });
  afterAll(() => server.stop());

  async function realmUsers(client = alice.client, extra: Record<string, unknown> = {}): Promise<{ active: Person[]; inactive: Person[] }> {
    const res = await client.post("/register", { event_types: ["realm_user"], ...extra });
    expect(res.body.result).toBe("success");
    return { active: res.body.realm_users, inactive: res.body.realm_non_active_users };
  }
  const person = (list: Person[], id: number) => list.find((p) => p.user_id === id);

  // Every column realm_users shows, changed behind the server's back: the triggers of 0016 are
  // the only thing that can tell the node its copy is old.
  test.each([
    ["full_name", "'Bob Renamed'", (p: Person) => p.full_name === "Bob Renamed"],
    ["timezone", "'Europe/Paris'", (p: Person) => p.timezone === "Europe/Paris"],
    ["role", "200", (p: Person) => p.role === 200 && p.is_admin === true],
    ["avatar_version", "avatar_version + 1", (p: Person) => p.avatar_version === 2],
    ["email", "'bob.new@example.com'", (p: Person) => p.email === "bob.new@example.com"],
    ["date_joined", "'2020-01-02T03:04:05Z'", (p: Person) => p.date_joined === "2020-01-02T03:04:05.000Z"],
  ])("a change of %s shows in the next /register", async (column, value, shows) => {
    await realmUsers(); // the node keeps a copy
    await server.running.services.db.prisma.$executeRawUnsafe(`UPDATE user_profile SET ${column} = ${value} WHERE id = $1`, bob.id);
    expect(shows(person((await realmUsers()).active, bob.id)!)).toBe(true);
  });

  test("deactivation and reactivation move a user between the lists", async () => {
    await realmUsers();
    const prisma = server.running.services.db.prisma;
    await prisma.userProfile.update({ where: { id: bob.id }, data: { is_active: false } });
    let lists = await realmUsers();
    expect(person(lists.active, bob.id)).toBeUndefined();
    expect(person(lists.inactive, bob.id)).toMatchObject({ is_active: false });
    await prisma.userProfile.update({ where: { id: bob.id }, data: { is_active: true } });
    lists = await realmUsers();
    expect(person(lists.active, bob.id)).toMatchObject({ is_active: true });
  });

  test("a new user, and a custom profile field value set, changed and removed", async () => {
    await realmUsers();
    const carol = await createTestUser(server, "Carol Newcomer");
    expect(person((await realmUsers()).active, carol.id)).toMatchObject({ full_name: "Carol Newcomer" });

    const field = await server.owner.post("/realm/profile_fields", { name: "Team", field_type: 1 });
    expect(field.body.result).toBe("success");
    const prisma = server.running.services.db.prisma;
    await prisma.customProfileFieldValue.create({ data: { user_id: carol.id, field_id: field.body.id, value: "Blue" } });
    expect(person((await realmUsers()).active, carol.id)!.profile_data).toMatchObject({ [field.body.id]: { value: "Blue" } });
    await prisma.customProfileFieldValue.updateMany({ where: { user_id: carol.id }, data: { value: "Green" } });
    expect(person((await realmUsers()).active, carol.id)!.profile_data).toMatchObject({ [field.body.id]: { value: "Green" } });
    await prisma.customProfileFieldValue.deleteMany({ where: { user_id: carol.id } });
    expect(person((await realmUsers()).active, carol.id)!.profile_data).toEqual({});
  });

  test("each view has its own copy: administrators see delivery_email; client_gravatar leaves gravatars out", async () => {
    const member = await realmUsers(alice.client);
    const admin = await realmUsers(server.owner);
    expect(person(member.active, bob.id)).not.toHaveProperty("delivery_email");
    expect(person(admin.active, bob.id)).toHaveProperty("delivery_email");
    // Asked again, in the other order: neither view is served the other's copy.
    expect(person((await realmUsers(server.owner)).active, bob.id)).toHaveProperty("delivery_email");
    expect(person((await realmUsers(alice.client)).active, bob.id)).not.toHaveProperty("delivery_email");
    expect(person((await realmUsers(alice.client, { client_gravatar: true })).active, bob.id)!.avatar_url).toBeNull();
    expect(typeof person((await realmUsers(alice.client)).active, bob.id)!.avatar_url).toBe("string");
  });
});

describe.each(MODES)("organization sections from the event node's copy (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;
  let guest: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Maria Member");
    guest = await createTestUser(server, "Gita Guest", "guest");
  });
  afterAll(() => server.stop());

  const SECTIONS = ["realm_user_groups", "realm_filters", "default_streams", "default_stream_groups", "custom_profile_fields", "realm_emoji"];
  async function sections(client = member.client): Promise<Record<string, any>> {
    const res = await client.post("/register", { event_types: SECTIONS });
    expect(res.body.result).toBe("success");
    return res.body;
  }
  const sql = (statement: string, ...values: unknown[]) => server.running.services.db.prisma.$executeRawUnsafe(statement, ...values);
  const realmId = async () => (await server.running.services.db.prisma.realm.findFirstOrThrow({ where: { string_id: "" } })).id;
  const streamId = async (name: string) => (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name } })).id;

  test("user groups and their members", async () => {
    const made = await server.owner.post("/user_groups/create", { name: "cachers", description: "d", members: [member.id] });
    expect(made.body.result).toBe("success");
    const group = (await sections()).realm_user_groups.find((g: { name: string }) => g.name === "cachers");
    expect(group.members).toEqual([member.id]);
    await sql(`INSERT INTO user_group_membership (user_group_id, user_id) VALUES ($1, $2)`, group.id, guest.id);
    expect((await sections()).realm_user_groups.find((g: { id: number }) => g.id === group.id).members).toEqual([member.id, guest.id].sort((a, b) => a - b));
    await sql(`UPDATE user_group SET description = 'changed' WHERE id = $1`, group.id);
    expect((await sections()).realm_user_groups.find((g: { id: number }) => g.id === group.id).description).toBe("changed");
  });

  test("default streams and default stream groups, and a default stream renamed", async () => {
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "defaulted" }] });
    const id = await streamId("defaulted");
    await sections();
    await sql(`INSERT INTO default_stream (realm_id, stream_id) VALUES ($1, $2)`, await realmId(), id);
    expect((await sections()).realm_default_streams.map((s: { name: string }) => s.name)).toContain("defaulted");
    // Guests get no default streams, from a copy of their own.
    expect((await sections(guest.client)).realm_default_streams).toEqual([]);
    await sql(`UPDATE stream SET name = 'defaulted too' WHERE id = $1`, id);
    expect((await sections()).realm_default_streams.map((s: { name: string }) => s.name)).toContain("defaulted too");

    await sql(`INSERT INTO default_stream_group (realm_id, name, description) VALUES ($1, 'starters', '')`, await realmId());
    const groupId = (await server.running.services.db.prisma.defaultStreamGroup.findFirstOrThrow({ where: { name: "starters" } })).id;
    expect((await sections()).realm_default_stream_groups.find((g: { name: string }) => g.name === "starters").streams).toEqual([]);
    await sql(`INSERT INTO default_stream_group_stream (group_id, stream_id) VALUES ($1, $2)`, groupId, id);
    expect((await sections()).realm_default_stream_groups.find((g: { name: string }) => g.name === "starters").streams.map((s: { stream_id: number }) => s.stream_id)).toEqual([id]);
  });

  test("custom profile fields, linkifiers and custom emoji with their author", async () => {
    const field = await server.owner.post("/realm/profile_fields", { name: "Desk", field_type: 1 });
    await sections();
    await sql(`UPDATE custom_profile_field SET hint = 'Where you sit' WHERE id = $1`, field.body.id);
    expect((await sections()).custom_profile_fields.find((f: { id: number }) => f.id === field.body.id).hint).toBe("Where you sit");

    await sql(`INSERT INTO realm_filter (realm_id, pattern, url_format_string) VALUES ($1, '#(?P<id>[0-9]+)', 'https://example.com/%(id)s')`, await realmId());
    expect((await sections()).realm_filters.map((f: unknown[]) => f[1])).toContain("https://example.com/%(id)s");

    const owner = await server.running.services.db.prisma.userProfile.findFirstOrThrow({ where: { email: "owner@example.com" } });
    await sql(`INSERT INTO realm_emoji (realm_id, name, author_id, file_name) VALUES ($1, 'cached_emoji', $2, 'x.png')`, await realmId(), owner.id);
    const emoji = () => sections().then((body) => Object.values(body.realm_emoji as Record<string, { name: string; deactivated: boolean; author: { full_name: string } }>).find((e) => e.name === "cached_emoji")!);
    expect((await emoji()).deactivated).toBe(false);
    await sql(`UPDATE realm_emoji SET deactivated = true WHERE name = 'cached_emoji'`);
    expect((await emoji()).deactivated).toBe(true);
    await sql(`UPDATE user_profile SET full_name = 'Olivia Renamed' WHERE id = $1`, owner.id);
    expect((await emoji()).author.full_name).toBe("Olivia Renamed");
  });
});

describe("one registration's view of the copies", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("postgres");
  });
  afterAll(() => server.stop());

  test("reads the realm's generations once for all its sections and parses the organization once; a new view reads again", async () => {
    const { prisma } = server.running.services.db;
    const realmId = (await prisma.realm.findFirstOrThrow({ where: { string_id: "" } })).id;
    const cache = new RealmStateCache(prisma);
    const generations = jest.spyOn(cache as unknown as { generations(realmId: number): Promise<unknown> }, "generations");
    const view = cache.forRegistration();
    const view2 = cache.forRegistration();
    const read = (v: RealmState) => Promise.all([v.realmUsers(realmId, { clientGravatar: false, role: 400 }), ...Array.from({ length: 6 }, () => v.organizationSections(realmId, false))]);
    const [, first, ...others] = await read(view);
    expect(generations).toHaveBeenCalledTimes(1);
    for (const sections of others) expect(sections).toBe(first);
    expect(Object.keys(first).sort()).toEqual(["custom_profile_fields", "default_stream_groups", "default_streams", "realm_emoji", "realm_filters", "realm_user_groups"]);
    await read(view2);
    expect(generations).toHaveBeenCalledTimes(2);
    // The cache itself reads them for every call, as before.
    await read(cache);
    expect(generations).toHaveBeenCalledTimes(9);
  });
});

describe("realm_users as JSON text", () => {
  test("an event applied to a state whose realm_users are JSON text changes a copy, not the text", () => {
    const users: Person[] = [{ user_id: 1, full_name: "One", email: "one@example.com" }];
    const text = new JsonText(JSON.stringify(users));
    const state: State = { realm_users: text, realm_non_active_users: new JsonText("[]"), cross_realm_bots: [] };
    applyEvents(state, [{ id: 0, type: "realm_user", op: "update", person: { user_id: 1, full_name: "Uno" } }], 1);
    expect(state.realm_users).toEqual([{ user_id: 1, full_name: "Uno", email: "one@example.com" }]);
    expect(state.realm_non_active_users).toEqual([]);
    // The node's copy is text, and still says what it said.
    expect(JSON.parse(text.text)).toEqual(users);
  });
});

type StreamEntry = { stream_id: number; name: string; description: string };

describe.each(MODES)("streams from the event node's copy (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Streams");
    bob = await createTestUser(server, "Bob Streams");
  });
  afterAll(() => server.stop());
  afterEach(() => jest.restoreAllMocks());

  const sql = (statement: string, ...values: unknown[]) => server.running.services.db.prisma.$executeRawUnsafe(statement, ...values);
  async function register(client = alice.client) {
    const res = await client.post("/register", { event_types: ["stream", "subscription", "realm"] });
    expect(res.body.result).toBe("success");
    return res.body as { streams: StreamEntry[]; subscriptions: StreamEntry[]; never_subscribed: StreamEntry[]; realm_notifications_stream_id: number };
  }
  const named = (list: StreamEntry[], name: string) => list.find((s) => s.name === name);
  async function createStream(name: string, extra: Record<string, unknown> = {}): Promise<number> {
    const res = await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name }], ...extra });
    expect(res.body.result).toBe("success");
    return (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name } })).id;
  }

  test("a stream changed or deactivated behind the server's back shows in the next /register's streams, subscriptions, never_subscribed and notification stream", async () => {
    const id = await createStream("copied-stream");
    await register(); // the node keeps a copy
    await register(bob.client);
    await sql(`UPDATE stream SET description = 'Changed in SQL' WHERE id = $1`, id);
    const forAlice = await register();
    expect(named(forAlice.streams, "copied-stream")!.description).toBe("Changed in SQL");
    expect(named(forAlice.subscriptions, "copied-stream")!.description).toBe("Changed in SQL");
    expect(named((await register(bob.client)).never_subscribed, "copied-stream")!.description).toBe("Changed in SQL");

    await sql(`UPDATE realm SET notifications_stream_id = $1 WHERE id = (SELECT realm_id FROM stream WHERE id = $1)`, id);
    // The node's copy of the realm row follows Postgres's notification of the change, which comes
    // a few milliseconds after the commit (poll-auth.ts), more on a loaded machine.
    let notificationsStreamId = (await register()).realm_notifications_stream_id;
    for (const deadline = Date.now() + 5000; notificationsStreamId !== id && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      notificationsStreamId = (await register()).realm_notifications_stream_id;
    }
    expect(notificationsStreamId).toBe(id);
    await sql(`UPDATE stream SET deactivated = true WHERE id = $1`, id);
    const after = await register();
    expect(after.realm_notifications_stream_id).toBe(-1);
    expect(named(after.streams, "copied-stream")).toBeUndefined();
    expect(named(after.subscriptions, "copied-stream")).toBeUndefined();
  });

  test("an occupied stream the copy does not have yet is read from the database", async () => {
    const id = await createStream("missing-from-copy", { invite_only: true });
    // A copy older than the stream: as if it was created after the generation the copy is kept under.
    const streamsAt = (RealmStateCache.prototype as unknown as { streamsAt: (...args: unknown[]) => Promise<ReadonlyMap<number, unknown>> }).streamsAt;
    jest.spyOn(RealmStateCache.prototype as unknown as { streamsAt: typeof streamsAt }, "streamsAt").mockImplementation(async function (this: unknown, ...args: unknown[]) {
      const copy = new Map(await streamsAt.apply(this, args));
      copy.delete(id);
      return copy;
    });
    const state = await register();
    expect(named(state.streams, "missing-from-copy")).toMatchObject({ stream_id: id, invite_only: true });
    // A private stream one is not in stays out of the list either way.
    expect(named((await register(bob.client)).streams, "missing-from-copy")).toBeUndefined();
  });
});
