import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";

describe.each(MODES)("typing (%s)", (mode) => {
  let server: TestServer;
  const users: Record<string, { id: number; email: string; client: ApiClient }> = {};

  async function createMember(name: string): Promise<void> {
    const email = `${name}@example.com`;
    const res = await server.owner.post("/users", { email, password: "member-pass", full_name: `${name} Typist`, short_name: name });
    expect(res.body.result).toBe("success");
    const key = (await server.anonymous.post("/fetch_api_key", { username: email, password: "member-pass" })).body.api_key;
    users[name] = { id: res.body.user_id, email, client: server.client(email, key) };
  }

  const register = async (name: string) => (await users[name].client.post("/register", { event_types: ["typing"] })).body.queue_id as string;
  const person = (name: string) => ({ user_id: users[name].id, email: users[name].email });

  beforeAll(async () => {
    server = await startTestServer(mode);
    for (const name of ["alice", "bob", "carol", "dave"]) await createMember(name);
    expect((await server.owner.delete(`/users/${users.dave.id}`)).body.result).toBe("success");
  });
  afterAll(() => server.stop());

  test("start reaches the recipient and the sender, and no one else", async () => {
    const [alice, bob, carol] = [await register("alice"), await register("bob"), await register("carol")];
    const res = await users.alice.client.post("/typing", { op: "start", to: [users.bob.id] });
    expect(res.body).toEqual({ result: "success", msg: "" });
    const expected = { type: "typing", op: "start", sender: person("alice"), recipients: [person("bob"), person("alice")] };
    const got = await waitForEvent(users.bob.client, bob, (e) => e.type === "typing");
    expect(got).toEqual({ ...expected, id: expect.any(Number) });
    expect(await waitForEvent(users.alice.client, alice, (e) => e.type === "typing")).toEqual({ ...expected, id: expect.any(Number) });
    await new Promise((r) => setTimeout(r, 200));
    expect(await drainEvents(users.carol.client, carol)).toEqual([]);
  });

  test("stop is sent the same way", async () => {
    const bob = await register("bob");
    await users.alice.client.post("/typing", { op: "stop", to: [users.bob.id] });
    const got = await waitForEvent(users.bob.client, bob, (e) => e.type === "typing");
    expect(got).toMatchObject({ op: "stop", sender: person("alice"), recipients: [person("bob"), person("alice")] });
  });

  test("a group conversation reaches every participant; the sender listed once", async () => {
    const [bob, carol] = [await register("bob"), await register("carol")];
    await users.alice.client.post("/typing", { op: "start", to: [users.bob.id, users.alice.id, users.carol.id] });
    for (const [name, queue] of [["bob", bob], ["carol", carol]] as const) {
      const got = await waitForEvent(users[name].client, queue, (e) => e.type === "typing");
      expect(got.recipients).toEqual([person("bob"), person("alice"), person("carol")]);
    }
  });

  test("old clients may name recipients by email", async () => {
    const bob = await register("bob");
    expect((await users.alice.client.post("/typing", { op: "start", to: "bob@example.com" })).body.result).toBe("success");
    expect(await waitForEvent(users.bob.client, bob, (e) => e.type === "typing")).toMatchObject({ recipients: [person("bob"), person("alice")] });
    expect((await users.alice.client.post("/typing", { op: "start", to: ["BOB@example.com"] })).body.result).toBe("success");
  });

  test("a deactivated participant is listed but not notified", async () => {
    const alice = await register("alice");
    await users.alice.client.post("/typing", { op: "start", to: [users.dave.id] });
    const got = await waitForEvent(users.alice.client, alice, (e) => e.type === "typing");
    expect(got.recipients).toEqual([person("dave"), person("alice")]);
  });

  test.each([
    [{ to: [1] }, "Missing 'op' argument", "REQUEST_VARIABLE_MISSING"],
    [{ op: "pause", to: [1] }, "Invalid 'op' value (should be start or stop)", "BAD_REQUEST"],
    [{ op: "start" }, "Missing parameter: 'to' (recipient)", "BAD_REQUEST"],
    [{ op: "start", to: [] }, "Missing parameter: 'to' (recipient)", "BAD_REQUEST"],
    [{ op: "start", to: [987654] }, "Invalid user ID 987654", "BAD_REQUEST"],
    [{ op: "start", to: ["nobody@example.com"] }, "Invalid email 'nobody@example.com'", "BAD_REQUEST"],
    [{ op: "start", to: [1, "bob@example.com"] }, "Recipient lists may contain emails or user IDs, but not both.", "BAD_REQUEST"],
  ])("refuses %j and sends nothing", async (params, msg, code) => {
    const bob = await register("bob");
    const res = await users.alice.client.post("/typing", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg, code });
    await new Promise((r) => setTimeout(r, 150));
    expect(await drainEvents(users.bob.client, bob)).toEqual([]);
  });

  test("one bad user id refuses the whole request", async () => {
    const bob = await register("bob");
    const res = await users.alice.client.post("/typing", { op: "start", to: [users.bob.id, 987654] });
    expect(res.body).toMatchObject({ result: "error", msg: "Invalid user ID 987654" });
    await new Promise((r) => setTimeout(r, 150));
    expect(await drainEvents(users.bob.client, bob)).toEqual([]);
  });
});
