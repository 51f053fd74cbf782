// GET /events before Express (events-hot-route.ts): plain polls are served there, with the node's
// copy of the user checked against the database (many polls in one statement), or trusted until
// Postgres notifies a change to its rows (poll-auth.test.ts), so a new API key, a deactivation or
// another user's queue is refused as the ordinary route refuses it.
import type { HotRoute } from "@chat/http";
import { actorRowNotified } from "../support/actor-rows.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("GET /events before Express (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Poller");
  });
  afterAll(() => server.stop());

  const hotRoute = (): HotRoute => server.running.hotRoutes.find((route) => route.method === "GET" && route.path === "/api/v1/events")!;
  async function register(user: TestUser): Promise<string> {
    const res = await user.client.post("/register", { event_types: ["message"] });
    expect(res.body.result).toBe("success");
    return res.body.queue_id as string;
  }
  const poll = (user: TestUser, queueId: string, extra: Record<string, unknown> = {}) => user.client.get("/events", { queue_id: queueId, last_event_id: -1, dont_block: true, ...extra });

  test("plain polls, and a held poll woken by a message, are served before Express", async () => {
    const queueId = await register(alice);
    const before = { ...hotRoute().stats };
    expect((await poll(alice, queueId)).body).toEqual({ result: "success", msg: "", events: [], queue_id: queueId });
    const held = alice.client.get("/events", { queue_id: queueId, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 100));
    await alice.client.post("/messages", { type: "private", to: JSON.stringify([alice.id]), content: "wake up" });
    const woken = await held;
    expect(woken.body.events.map((e: { type: string; message?: { content: string } }) => [e.type, e.message?.content])).toEqual([["message", "wake up"]]);
    expect(hotRoute().stats.served).toBe(before.served + 2);
    expect(hotRoute().stats.declined).toBe(before.declined);
  });

  test("a new API key refuses the old one as soon as the node hears of it, though it kept a copy of the user", async () => {
    const user = await createTestUser(server, "Rekeyed Poller");
    const queueId = await register(user);
    expect((await poll(user, queueId)).status).toBe(200);
    expect((await poll(user, queueId)).status).toBe(200);
    const heard = actorRowNotified(server, `u${user.id}`);
    const renewed = await user.client.post("/users/me/api_key/regenerate");
    expect(renewed.body.result).toBe("success");
    await heard;
    const refused = await poll(user, queueId);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ result: "error", msg: "Invalid API key" });
    expect((await poll({ ...user, client: server.client(user.email, renewed.body.api_key) }, queueId)).status).toBe(200);
  });

  test("a deactivated user is refused as soon as the node hears of it; a change to the realm only renews the copy", async () => {
    const user = await createTestUser(server, "Deactivated Poller");
    const queueId = await register(user);
    expect((await poll(user, queueId)).status).toBe(200);
    expect((await server.owner.patch("/realm", { description: "renewed" })).body.result).toBe("success");
    expect((await poll(user, queueId)).status).toBe(200);
    const heard = actorRowNotified(server, `u${user.id}`);
    expect((await server.owner.delete(`/users/${user.id}`)).body.result).toBe("success");
    await heard;
    const refused = await poll(user, queueId);
    expect(refused.body).toMatchObject({ result: "error", code: "USER_DEACTIVATED" });
  });

  test("another user's queue, a bad parameter and no credentials get the ordinary route's errors", async () => {
    const queueId = await register(alice);
    const bob = await createTestUser(server, "Bob Intruder");
    const declined = hotRoute().stats.declined;
    expect((await poll(bob, queueId)).body).toEqual({ result: "error", msg: `Bad event queue id: ${queueId}`, code: "BAD_EVENT_QUEUE_ID", queue_id: queueId });
    expect((await poll(alice, queueId, { last_event_id: "soon" })).body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    expect((await server.anonymous.get("/events", { queue_id: queueId })).status).toBe(401);
    expect(hotRoute().stats.declined).toBe(declined + 3);
    // Bob's attempt left Alice's queue as it was.
    expect((await poll(alice, queueId)).body.result).toBe("success");
  });

  test("the query is read as the ordinary route reads it; anything unusual is the ordinary route's, with the same answer", async () => {
    const queueId = await register(alice);
    const empty = { result: "success", msg: "", events: [], queue_id: queueId };
    const rawPoll = (search: string) => alice.client.raw("get", `/events?${search}`).set("X-Request-Id", "hot-query-1");
    const encoded = encodeURIComponent(queueId);
    const { served, declined } = hotRoute().stats;
    // Served here: the id encoded or not, parameters in any order, empty pieces.
    for (const search of [`queue_id=${encoded}&last_event_id=-1&dont_block=true`, `dont_block=true&&queue_id=${queueId}&`]) {
      const res = await rawPoll(search);
      expect(res.body).toEqual(empty);
      expect(res.headers["x-request-id"]).toBe("hot-query-1");
    }
    expect(hotRoute().stats).toMatchObject({ served: served + 2, declined });
    // Declined, and answered by Express as it always was: an encoded name, a parameter given
    // twice, one the hot route does not know, a value that does not decode, a "+" for a space.
    const unusual = [
      `queue%5Fid=${encoded}&dont_block=true`,
      `queue_id=${encoded}&queue_id=${encoded}&dont_block=true`,
      `queue_id=${encoded}&dont_block=true&client=test`,
      `queue_id=${encoded}&dont_block=%E0%A4%A`,
      `queue_id=${encoded}&dont_block=true+`,
    ];
    const answers: unknown[] = [];
    for (const search of unusual) {
      const res = await rawPoll(search);
      expect(res.headers["x-request-id"]).toBe("hot-query-1");
      answers.push(res.body.result === "success" ? res.body : res.body.code);
    }
    expect(answers).toEqual([empty, empty, empty, "BAD_REQUEST", empty]);
    expect(hotRoute().stats).toMatchObject({ served: served + 2, declined: declined + unusual.length });
  });

  test("a poll answered from its announcement carries the request's id, and every event once", async () => {
    const queueId = await register(alice);
    const held = alice.client.raw("get", `/events?queue_id=${encodeURIComponent(queueId)}&last_event_id=-1`).set("X-Request-Id", "held-poll-1");
    await new Promise((r) => setTimeout(r, 100));
    await alice.client.post("/messages", { type: "private", to: JSON.stringify([alice.id]), content: "caf\u00e9 \u2028 \ud83d\ude00" });
    const woken = await held;
    expect(woken.headers["x-request-id"]).toBe("held-poll-1");
    expect(Number(woken.headers["content-length"])).toBe(Buffer.byteLength(woken.text));
    expect(woken.body.queue_id).toBe(queueId);
    expect(woken.body.events.map((e: { id: number; message: { content: string } }) => [e.id, e.message.content])).toEqual([[0, "caf\u00e9 \u2028 \ud83d\ude00"]]);
  });

  test("DELETE /events: the plain request (its queue id in the query or the body) is served before Express; anything else is the ordinary route's", async () => {
    const deleteRoute = server.running.hotRoutes.find((route) => route.method === "DELETE" && route.path === "/api/v1/events")!;
    const bob = await createTestUser(server, "Bob Deleter");
    const [inQuery, inBody, bobs, extra] = [await register(alice), await register(alice), await register(bob), await register(alice)];
    const { served, declined } = deleteRoute.stats;
    const byQuery = await alice.client.raw("delete", `/events?queue_id=${encodeURIComponent(inQuery)}`).set("X-Request-Id", "delete-1");
    expect([byQuery.status, byQuery.body, byQuery.headers["x-request-id"]]).toEqual([200, { result: "success", msg: "" }, "delete-1"]);
    expect((await alice.client.delete("/events", { queue_id: inBody })).body).toEqual({ result: "success", msg: "" });
    expect(deleteRoute.stats).toMatchObject({ served: served + 2, declined });
    for (const gone of [inQuery, inBody]) expect((await poll(alice, gone)).body.code).toBe("BAD_EVENT_QUEUE_ID");
    // Another's queue, one already gone, and another parameter: Express answers, as it always did.
    expect((await alice.client.delete("/events", { queue_id: bobs })).body).toMatchObject({ result: "error", code: "BAD_EVENT_QUEUE_ID" });
    expect((await alice.client.delete("/events", { queue_id: inBody })).body).toMatchObject({ result: "error", code: "BAD_EVENT_QUEUE_ID" });
    expect((await alice.client.delete("/events", { queue_id: extra, client: "test" })).body).toEqual({ result: "success", msg: "" });
    expect(deleteRoute.stats).toMatchObject({ served: served + 2, declined: declined + 3 });
    expect((await poll(bob, bobs)).body.result).toBe("success");
    expect((await poll(alice, extra)).body.code).toBe("BAD_EVENT_QUEUE_ID");
  });

  test("many polls at once are answered, each with its own queue", async () => {
    // Created one after another: what is at once here is the polls. Twenty user creations at once
    // waited out the database pool's 1.5 s on a loaded CI machine and were answered 503.
    const users: TestUser[] = [];
    for (let i = 0; i < 20; i++) users.push(await createTestUser(server, `Crowd Member ${i}`));
    const queues = await Promise.all(users.map(register));
    const answers = await Promise.all(users.map((user, i) => poll(user, queues[i])));
    expect(answers.map((res) => res.body.queue_id)).toEqual(queues);
  });
});
