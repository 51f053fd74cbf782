import { createMember as createSharedMember } from "../support/users.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("user status (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;
  let memberId: number;
  let other: ApiClient;
  let bot: ApiClient;

  const createMember = (email: string, fullName: string) => createSharedMember(server, email, fullName);

  const statuses = async (client: ApiClient) => (await client.post("/register", { event_types: ["user_status"] })).body.user_status;

  beforeAll(async () => {
    server = await startTestServer(mode);
    ({ id: memberId, client: member } = await createMember("status@example.com", "Stella Status"));
    ({ client: other } = await createMember("watcher@example.com", "Walt Watcher"));
    const created = await createMember("status-bot@example.com", "Status Bot");
    await server.running.services.db.prisma.userProfile.update({ where: { id: created.id }, data: { is_bot: true, bot_type: 1 } });
    bot = created.client;
  });
  afterAll(() => server.stop());

  test("setting away and a text sends user_status to the whole organization", async () => {
    const queues = await Promise.all([member, other, server.owner].map(async (c) => (await c.post("/register", { event_types: ["user_status"] })).body.queue_id));
    const res = await member.post("/users/me/status", { away: true, status_text: "  on vacation  " });
    expect(res.body).toEqual({ result: "success", msg: "" });
    for (const [i, client] of [member, other, server.owner].entries()) {
      const event = await waitForEvent(client, queues[i], (e) => e.type === "user_status");
      expect(event).toEqual({ id: expect.any(Number), type: "user_status", user_id: memberId, away: true, status_text: "on vacation" });
    }
    expect((await statuses(other))[String(memberId)]).toEqual({ away: true, status_text: "on vacation" });
  });

  test("only what was sent changes, and only that is in the event", async () => {
    const queue = (await other.post("/register", { event_types: ["user_status"] })).body.queue_id;
    await member.post("/users/me/status", { away: false });
    const event = await waitForEvent(other, queue, (e) => e.type === "user_status");
    expect(event).toEqual({ id: expect.any(Number), type: "user_status", user_id: memberId, away: false });
    expect((await statuses(other))[String(memberId)]).toEqual({ status_text: "on vacation" });
  });

  test("an empty text clears it; a default status is not listed", async () => {
    await member.post("/users/me/status", { status_text: "" });
    expect(await statuses(other)).not.toHaveProperty(String(memberId));
  });

  test.each([
    [{}, "Client did not pass any new values."],
    [{ status_text: "x".repeat(61) }, "status_text is too long (limit: 60 characters)"],
    [{ away: "yes" }, 'Argument "away" is not valid JSON.'],
    [{ away: 1, status_text: "fine" }, "away is not a boolean"],
    [{ away: true, status_text: "y".repeat(61) }, "status_text is too long (limit: 60 characters)"],
  ])("refuses %j and changes nothing", async (params, msg) => {
    const queue = (await other.post("/register", { event_types: ["user_status"] })).body.queue_id;
    const before = await statuses(other);
    const res = await member.post("/users/me/status", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg, code: "BAD_REQUEST" });
    expect(await statuses(other)).toEqual(before);
    await new Promise((r) => setTimeout(r, 150));
    expect(await drainEvents(other, queue)).toEqual([]);
  });

  test("accepts exactly 60 characters", async () => {
    expect((await member.post("/users/me/status", { status_text: "z".repeat(60) })).body.result).toBe("success");
  });

  test("refuses bots", async () => {
    const res = await bot.post("/users/me/status", { away: true });
    expect(res.body).toEqual({ result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" });
  });

  test("a deactivated user's status is not listed", async () => {
    const { id, client } = await createMember("leaving@example.com", "Lee Leaving");
    await client.post("/users/me/status", { away: true });
    expect((await statuses(other))[String(id)]).toEqual({ away: true });
    await server.owner.delete(`/users/${id}`);
    expect(await statuses(other)).not.toHaveProperty(String(id));
  });

  test.each([
    [{ away: true, status_text: "busy" }],
    [{ away: false }],
    [{ status_text: "lunch" }],
    [{ status_text: "" }],
    [{ away: true }],
  ])("verifyAction: %j", async (params) => {
    const events = await verifyAction(other, ["user_status"], () => member.post("/users/me/status", params));
    expect(events).toHaveLength(1);
  });
});
