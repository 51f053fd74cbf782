// The bulk seeding the web tests and benchmark use (test/support/seed-realm.ts) writes rows the
// server reads as its own: seeded users sign in with the seeded password, see their streams and
// their unread messages, and read a stream's history.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { seedRealm, seedStreamMessages, serverSql, type SeededRealm } from "../support/seed-realm.ts";

describe.each(MODES)("bulk seeding (%s)", (mode) => {
  let server: TestServer;
  let realm: SeededRealm;

  beforeAll(async () => {
    server = await startTestServer(mode);
    realm = await seedRealm(serverSql(server), {
      users: 40,
      streams: 6,
      subscribersPerStream: [5, 10],
      password: "seeded-password-1",
      firstUserEverywhere: true,
      messages: 300,
      unreadMessages: 20,
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("seeds users who sign in, with their subscriptions and unread messages", async () => {
    const first = realm.users[0];
    const login = await server.anonymous.post("/fetch_api_key", { username: first.email, password: "seeded-password-1" });
    expect(login.body).toMatchObject({ result: "success", api_key: first.apiKey });
    const client = server.client(first.email, first.apiKey);
    const registered = await client.post("/register", { fetch_event_types: ["subscription", "message", "update_message_flags", "realm_user"] });
    expect(registered.body.result).toBe("success");
    const subscribed = (registered.body.subscriptions as Array<{ name: string }>).map((s) => s.name).sort();
    expect(subscribed).toEqual(realm.streams.map((s) => s.name).sort());
    expect(registered.body.realm_users.length).toBeGreaterThanOrEqual(41);
    // Every message the first user has (all of them: subscribed everywhere) among the newest 20 is unread.
    expect(registered.body.unread_msgs.count).toBe(20);
  });

  it("seeds a stream's history that a subscriber reads without user_message rows", async () => {
    const stream = realm.streams[1];
    const reader = realm.users[0];
    const ids = await seedStreamMessages(serverSql(server), {
      realmId: realm.realmId,
      recipientIds: [stream.recipientId],
      senderIds: realm.users.slice(0, 3).map((u) => u.id),
      count: 500,
      userMessages: "none",
      content: (n) => `history <${n}> & more`,
    });
    expect(ids).toHaveLength(500);
    const client = server.client(reader.email, reader.apiKey);
    const page = await client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "channel", operand: stream.id }] });
    expect(page.body.result).toBe("success");
    expect(page.body.messages.map((m: { id: number }) => m.id)).toEqual(ids.slice(-50));
    expect(page.body.messages.at(-1).content).toBe("<p>history &lt;500&gt; &amp; more</p>");
  });
});
