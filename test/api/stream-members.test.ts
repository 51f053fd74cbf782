// GET /streams/{stream_id}/members (feature level 79; Zulip's get_subscribers_backend).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("GET /streams/{stream_id}/members (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let guest: TestUser;
  let publicId: number;
  let privateId: number;

  const streamId = async (user: TestUser, name: string) =>
    ((await user.client.get("/get_stream_id", { stream: name })).body.stream_id as number);
  const members = (user: TestUser, id: number | string) => user.client.get(`/streams/${id}/members`);

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Members");
    bob = await createTestUser(server, "Bob Members");
    admin = await createTestUser(server, "Ada Members", "admin");
    guest = await createTestUser(server, "Gus Members", "guest");
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "members-public" }], principals: JSON.stringify([alice.id, bob.id]) });
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "members-private" }], invite_only: true });
    publicId = await streamId(alice, "members-public");
    privateId = await streamId(alice, "members-private");
  });
  afterAll(() => server.stop());

  test("a public stream's subscribers, as ids, for any member", async () => {
    for (const user of [alice, bob, admin]) {
      const res = await members(user, publicId);
      expect(res.body).toEqual({ result: "success", msg: "", subscribers: expect.any(Array) });
      expect([...res.body.subscribers].sort((a: number, b: number) => a - b)).toEqual([alice.id, bob.id].sort((a, b) => a - b));
    }
  });

  test("a private stream: its subscribers and administrators; others are told it does not exist", async () => {
    expect((await members(alice, privateId)).body.subscribers).toEqual([alice.id]);
    expect((await members(admin, privateId)).body.subscribers).toEqual([alice.id]);
    const refused = await members(bob, privateId);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
  });

  test("a guest sees the subscribers only of streams they are subscribed to", async () => {
    expect((await members(guest, publicId)).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "members-public" }], principals: JSON.stringify([guest.id]) });
    expect((await members(guest, publicId)).body.subscribers).toContain(guest.id);
  });

  test("an unsubscribed or deactivated user is not listed; unknown ids are refused", async () => {
    await bob.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["members-public"]) });
    expect((await members(alice, publicId)).body.subscribers).not.toContain(bob.id);
    expect((await members(alice, 999_999)).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
    expect((await members(alice, "abc")).status).toBe(404);
    expect((await server.anonymous.get(`/streams/${publicId}/members`)).status).toBe(401);
  });
});
