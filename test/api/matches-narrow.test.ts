// GET /messages/matches_narrow (Zulip's messages_in_narrow_backend; the narrows of feature levels
// 177, 194, 249, 250, 265 and 271): which of some messages the user received match a narrow.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("GET /messages/matches_narrow (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let guest: TestUser;
  let generalId: number;
  const ids: Record<string, number> = {};

  const send = async (user: TestUser, params: Record<string, unknown>, key: string) => {
    const res = await user.client.post("/messages", params);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    ids[key] = res.body.id;
  };
  const matches = (user: TestUser, msgIds: number[], narrow: unknown) => user.client.get("/messages/matches_narrow", { msg_ids: JSON.stringify(msgIds), narrow: JSON.stringify(narrow) });
  const matchedIds = async (user: TestUser, msgIds: number[], narrow: unknown) => {
    const res = await matches(user, msgIds, narrow);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    return Object.keys(res.body.messages).map(Number).sort((a, b) => a - b);
  };
  const all = () => Object.values(ids);

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Matches");
    bob = await createTestUser(server, "Bob Matches");
    guest = await createTestUser(server, "Gus Matches", "guest");
    const streams = (await alice.client.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
    generalId = streams.find((s) => s.name === "general")!.stream_id;
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "matches-secret" }], invite_only: true });
    await send(alice, { type: "channel", to: generalId, topic: "deploys", content: "time to deploy <now>" }, "deploy");
    await send(bob, { type: "channel", to: generalId, topic: "lunch & more", content: "pizza" }, "lunch");
    await send(alice, { type: "stream", to: "matches-secret", topic: "hidden", content: "secret deploy" }, "secret");
    await send(alice, { type: "direct", to: [bob.id], content: "direct deploy" }, "dm");
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "matches-public" }] });
    await send(alice, { type: "stream", to: "matches-public", topic: "history", content: "public but unreceived" }, "history");
    expect((await bob.client.post(`/messages/${ids.lunch}/reactions`, { emoji_name: "smile" })).body.result).toBe("success");
  });
  afterAll(() => server.stop());

  test("without a search, each match is its rendered content and its topic as HTML", async () => {
    const res = await matches(alice, [ids.deploy, ids.lunch], [{ operator: "channel", operand: generalId }]);
    expect(res.body).toEqual({
      result: "success",
      msg: "",
      messages: {
        [ids.deploy]: { match_content: "<p>time to deploy &lt;now&gt;</p>", match_subject: "deploys" },
        [ids.lunch]: { match_content: "<p>pizza</p>", match_subject: "lunch &amp; more" },
      },
    });
  });

  test("a search highlights its words as GET /messages does", async () => {
    const res = await matches(alice, all(), [{ operator: "search", operand: "deploy" }]);
    expect(Object.keys(res.body.messages).map(Number).sort((a, b) => a - b)).toEqual([ids.deploy, ids.secret, ids.dm]);
    expect(res.body.messages[ids.deploy].match_content).toContain('<span class="highlight">deploy</span>');
    expect(res.body.messages[ids.deploy].match_subject).toContain('<span class="highlight">deploys</span>');
    const page = await alice.client.get("/messages", { anchor: ids.deploy, num_before: 0, num_after: 0, narrow: JSON.stringify([["search", "deploy"]]) });
    expect(page.body.messages[0].match_content).toBe(res.body.messages[ids.deploy].match_content);
  });

  test("today's operators: is:dm, dm, dm-including, channel by name, channels, has:reaction, id as a string, with", async () => {
    expect(await matchedIds(alice, all(), [{ operator: "is", operand: "dm" }])).toEqual([ids.dm]);
    expect(await matchedIds(alice, all(), [{ operator: "dm", operand: [bob.id] }])).toEqual([ids.dm]);
    expect(await matchedIds(alice, all(), [{ operator: "dm-including", operand: bob.id }])).toEqual([ids.dm]);
    expect(await matchedIds(alice, all(), [{ operator: "channel", operand: "general" }])).toEqual([ids.deploy, ids.lunch]);
    expect(await matchedIds(alice, all(), [{ operator: "channels", operand: "public" }])).toEqual([ids.deploy, ids.lunch, ids.history]);
    expect(await matchedIds(alice, all(), [{ operator: "has", operand: "reaction" }])).toEqual([ids.lunch]);
    expect(await matchedIds(alice, all(), [{ operator: "id", operand: String(ids.lunch) }])).toEqual([ids.lunch]);
    expect(await matchedIds(alice, all(), [{ operator: "with", operand: ids.deploy }])).toEqual([ids.deploy]);
    expect(await matchedIds(alice, all(), [{ operator: "channel", operand: generalId, negated: true }])).toEqual([ids.secret, ids.dm, ids.history]);
  });

  test("only messages the user received: another's private stream, or a public stream's history, never match", async () => {
    expect(await matchedIds(bob, all(), [])).toEqual([ids.deploy, ids.lunch, ids.dm]);
    expect(await matchedIds(bob, [ids.secret], [{ operator: "search", operand: "secret" }])).toEqual([]);
    // Bob may read it with GET /messages (public history), but did not receive it (as in Zulip).
    expect(await matchedIds(bob, [ids.history], [{ operator: "channel", operand: "matches-public" }])).toEqual([]);
    expect(await matchedIds(guest, all(), [])).toEqual([ids.deploy, ids.lunch]);
  });

  test("bad input is a clear error, and ids past any message are simply no match", async () => {
    expect((await matches(alice, [ids.deploy], [{ operator: "bogus", operand: "x" }])).body).toMatchObject({ result: "error", code: "BAD_NARROW" });
    expect((await matches(alice, [ids.deploy], [{ operator: "channel", operand: "matches-nowhere" }])).body).toMatchObject({ result: "error", code: "BAD_NARROW" });
    expect((await alice.client.get("/messages/matches_narrow", { msg_ids: "[1, \"x\"]", narrow: "[]" })).status).toBe(400);
    // (More than 5,000 ids cannot fit the request line a GET is allowed: Node answers 431 first.)
    expect((await alice.client.get("/messages/matches_narrow", { narrow: "[]" })).body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING" });
    expect((await alice.client.get("/messages/matches_narrow", { msg_ids: "[1]" })).body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING" });
    expect(await matchedIds(alice, [-1, 0, 2 ** 31 - 1], [])).toEqual([]);
    expect((await matches(alice, [2 ** 40], [])).body).toMatchObject({ result: "error", msg: "msg_ids contains a number out of range" });
    expect((await server.anonymous.get("/messages/matches_narrow", { msg_ids: "[1]", narrow: "[]" })).status).toBe(401);
  });
});
