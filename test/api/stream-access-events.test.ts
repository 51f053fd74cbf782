// The stream events a user gets when the streams they can see change (Zulip's feature levels 192,
// 205, 220): a role change sends `stream create` (with `peer_add` for the subscribers) for streams
// now listed and `stream delete` for streams no longer listed; a guest subscribed to a public stream
// learns of it first; guests get peer events of web-public streams. Each is checked with
// verifyAction: the state after the events equals a new /register.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

const STATE = ["stream", "subscription"];
const WITH_SUBSCRIBERS = { include_subscribers: true };

function ok<T extends { body: Record<string, any> }>(res: T): T {
  if (res.body.result !== "success") throw new Error(`expected success: ${JSON.stringify(res.body)}`);
  return res;
}

type Event = Record<string, any>;
/** Peer events as [op, stream id, user ids]: lists (modern queues) or one stream and user (3.x queues, as the test client's). */
const peerEvents = (events: Event[]) =>
  events.filter((e) => e.type === "subscription" && (e.op === "peer_add" || e.op === "peer_remove")).map((e) => [e.op, e.stream_ids ?? [e.stream_id], e.user_ids ?? [e.user_id]]);
const streamEvents = (events: Event[], op: string) => events.filter((e) => e.type === "stream" && e.op === op).flatMap((e) => e.streams.map((s: { name: string }) => s.name));

describe.each(MODES)("stream access events (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let ownerId: number;
  let users = 0;
  const ids: Record<string, number> = {};

  const newUser = (role: "member" | "guest") => createTestUser(server, `Access User ${++users}`, role);
  const setRole = async (user: TestUser, role: number) => ok(await server.owner.patch(`/users/${user.id}`, { role }));
  const listed = async (user: TestUser) => ((await registerState(user.client, ["stream"])).state.streams as Array<{ name: string }>).map((s) => s.name);

  beforeAll(async () => {
    server = await startTestServer(mode, { WEB_PUBLIC_STREAMS_ENABLED: "true" });
    admin = await createTestUser(server, "Ada Admin", "admin");
    ownerId = ok(await server.owner.get("/users/me")).body.user_id;
    // Streams the owner is in (so occupied, and listed): public, private, web-public.
    for (const [name, extra] of [["open", {}], ["hidden", { invite_only: true }], ["web", { is_web_public: true }]] as const) {
      ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }], ...extra }));
      ids[name] = ok(await server.owner.get("/get_stream_id", { stream: name })).body.stream_id;
    }
  });
  afterAll(() => server.stop());

  test("guest to member: stream create and peer_add for the public streams now visible (feature level 205)", async () => {
    const guest = await newUser("guest");
    expect(await listed(guest)).toEqual(expect.not.arrayContaining(["open"]));
    const events = await verifyAction(guest.client, STATE, () => setRole(guest, 400), 5000, WITH_SUBSCRIBERS);
    expect(streamEvents(events, "create")).toEqual(["open"]);
    expect(streamEvents(events, "delete")).toEqual([]);
    expect(peerEvents(events)).toEqual([["peer_add", [ids.open], [ownerId]]]);
    // The create comes before its peer_add.
    const createAt = events.findIndex((e) => e.type === "stream" && e.op === "create");
    expect(createAt).toBeLessThan(events.findIndex((e) => e.op === "peer_add"));
    expect(await listed(guest)).toEqual(expect.arrayContaining(["open", "web", "general"]));
    expect(await listed(guest)).not.toContain("hidden");
  });

  test("guest to member, without subscribers in the state", async () => {
    const guest = await newUser("guest");
    const events = await verifyAction(guest.client, STATE, () => setRole(guest, 400));
    expect(streamEvents(events, "create")).toEqual(["open"]);
  });

  test("member to guest: stream delete for public streams the user is not in; not for web-public or subscribed ones", async () => {
    const member = await newUser("member");
    const events = await verifyAction(member.client, STATE, () => setRole(member, 600), 5000, WITH_SUBSCRIBERS);
    expect(streamEvents(events, "delete")).toEqual(["open"]);
    expect(streamEvents(events, "create")).toEqual([]);
    expect(await listed(member)).toEqual(expect.arrayContaining(["general", "web"]));
    expect(await listed(member)).not.toContain("open");
  });

  test("member to administrator: the streams listed do not change, and no stream event is sent", async () => {
    const member = await newUser("member");
    const before = await listed(member);
    // With user_group too: the role change's only events here are its system groups' (no stream section changes).
    const events = await verifyAction(member.client, [...STATE, "user_group"], () => setRole(member, 200), 5000, WITH_SUBSCRIBERS);
    expect(events.filter((e) => e.type !== "user_group")).toEqual([]);
    expect(await listed(member)).toEqual(before);
  });

  test("a bot made a guest loses the public streams too", async () => {
    const bot = ok(await admin.client.post("/bots", { full_name: "Access Bot", short_name: "access-bot" })).body;
    const botClient = server.client(ok(await admin.client.get(`/users/${bot.user_id}`)).body.user.email, bot.api_key);
    const queue = ok(await botClient.post("/register", { event_types: ["stream"] })).body.queue_id;
    ok(await admin.client.patch(`/bots/${bot.user_id}`, { role: 600 }));
    let events: Event[] = [];
    for (let i = 0; i < 40 && streamEvents(events, "delete").length === 0; i++) {
      events = ok(await botClient.get("/events", { queue_id: queue, last_event_id: -1, dont_block: true })).body.events;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Bots join no default streams: `general` goes too, `web` stays.
    expect(streamEvents(events, "delete").sort()).toEqual(["general", "open"]);
  });

  test("a guest subscribed to a public stream learns of it first (feature level 192)", async () => {
    const guest = await newUser("guest");
    const events = await verifyAction(
      guest.client,
      STATE,
      async () => ok(await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "open" }], principals: [guest.id] })),
      5000,
      WITH_SUBSCRIBERS,
    );
    const createAt = events.findIndex((e) => e.type === "stream" && e.op === "create");
    const addAt = events.findIndex((e) => e.type === "subscription" && e.op === "add");
    expect(streamEvents(events, "create")).toEqual(["open"]);
    expect(createAt).toBeGreaterThanOrEqual(0);
    expect(createAt).toBeLessThan(addAt);
    expect(await listed(guest)).toContain("open");
  });

  test("a guest subscribed to a web-public stream, which they already see, gets no stream create", async () => {
    const guest = await newUser("guest");
    const events = await verifyAction(
      guest.client,
      STATE,
      async () => ok(await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "web" }], principals: [guest.id] })),
      5000,
      WITH_SUBSCRIBERS,
    );
    expect(streamEvents(events, "create")).toEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: "subscription", op: "add" }));
  });

  test("a member added to a private stream learns of it first", async () => {
    const member = await newUser("member");
    const events = await verifyAction(
      member.client,
      STATE,
      async () => ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "hidden" }], principals: [member.id] })),
      5000,
      WITH_SUBSCRIBERS,
    );
    expect(streamEvents(events, "create")).toEqual(["hidden"]);
    expect(await listed(member)).toContain("hidden");
  });

  test("guests get peer_add and peer_remove for web-public streams, not for public ones they are not in (feature level 220)", async () => {
    const guest = await newUser("guest");
    const other = await newUser("member");
    const added = await verifyAction(
      guest.client,
      STATE,
      async () => {
        ok(await other.client.post("/users/me/subscriptions", { subscriptions: [{ name: "open" }] }));
        ok(await other.client.post("/users/me/subscriptions", { subscriptions: [{ name: "web" }] }));
      },
      5000,
      WITH_SUBSCRIBERS,
    );
    expect(peerEvents(added)).toEqual([["peer_add", [ids.web], [other.id]]]);
    const removed = await verifyAction(
      guest.client,
      STATE,
      async () => ok(await other.client.delete("/users/me/subscriptions", { subscriptions: ["web"] })),
      5000,
      WITH_SUBSCRIBERS,
    );
    expect(peerEvents(removed)).toEqual([["peer_remove", [ids.web], [other.id]]]);
  });
});
