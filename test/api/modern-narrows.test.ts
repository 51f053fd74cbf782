// Narrows as zulip-flutter builds them (dict form, ids, today's operator names: spec modern-clients.md
// §2.7, §3.4) beside zulip-terminal's legacy pairs: channel, channels, dm (with self), dm-including,
// is:dm, with, is:resolved, has:reaction, id as a string, negation, and bounds.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

type Term = { operator: string; operand: unknown; negated?: boolean } | [string, unknown];

describe.each(MODES)("narrows of today's clients (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let generalId: number;
  const ids: Record<string, number> = {};

  const send = async (user: TestUser, params: Record<string, unknown>, key: string) => {
    const res = await user.client.post("/messages", params);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    ids[key] = res.body.id;
  };
  const fetch = (user: TestUser, narrow: Term[], extra: Record<string, unknown> = {}) =>
    user.client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: JSON.stringify(narrow), ...extra });
  const idsOf = async (user: TestUser, narrow: Term[]) => {
    const res = await fetch(user, narrow);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    return (res.body.messages as Array<{ id: number }>).map((m) => m.id);
  };
  const keys = (...names: string[]) => names.map((name) => ids[name]).sort((a, b) => a - b);

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Narrow");
    bob = await createTestUser(server, "Bob Narrow");
    carol = await createTestUser(server, "Carol Narrow");
    const streams = (await alice.client.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
    generalId = streams.find((s) => s.name === "general")!.stream_id;
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "narrow-other" }] });
    await send(alice, { type: "channel", to: generalId, topic: "plans", content: "plan one" }, "plans1");
    await send(bob, { type: "channel", to: generalId, topic: "plans", content: "plan two" }, "plans2");
    await send(alice, { type: "channel", to: generalId, topic: "✔ fixed bug", content: "resolved it" }, "resolved");
    await send(alice, { type: "stream", to: "narrow-other", topic: "elsewhere", content: "other stream" }, "other");
    await send(alice, { type: "direct", to: [bob.id], content: "alice to bob" }, "ab");
    await send(bob, { type: "direct", to: [alice.id], content: "bob to alice" }, "ba");
    await send(alice, { type: "direct", to: [alice.id], content: "note to self" }, "self");
    await send(alice, { type: "direct", to: [bob.id, carol.id], content: "group" }, "group");
    await send(alice, { type: "direct", to: [carol.id], content: "alice to carol" }, "ac");
    const reacted = await bob.client.post(`/messages/${ids.plans1}/reactions`, { emoji_name: "smile" });
    expect(reacted.body.result).toBe("success");
  });
  afterAll(() => server.stop());

  test("channel by id or name, and stream (legacy pair) alike", async () => {
    const byId = await idsOf(alice, [{ operator: "channel", operand: generalId }]);
    expect(byId).toEqual(expect.arrayContaining(keys("plans1", "plans2", "resolved")));
    expect(byId).not.toContain(ids.other);
    expect(await idsOf(alice, [{ operator: "channel", operand: "general" }])).toEqual(byId);
    expect(await idsOf(alice, [["stream", "general"]])).toEqual(byId);
    expect(await idsOf(alice, [{ operator: "channel", operand: generalId }, { operator: "topic", operand: "plans" }])).toEqual(keys("plans1", "plans2"));
  });

  test("channels:public, negated channel", async () => {
    const all = await idsOf(carol, [{ operator: "channels", operand: "public" }]);
    expect(all).toEqual(expect.arrayContaining(keys("plans1", "other")));
    expect(all).not.toContain(ids.ab);
    const notGeneral = await idsOf(alice, [{ operator: "channel", operand: generalId, negated: true }]);
    expect(notGeneral).toContain(ids.other);
    expect(notGeneral).toContain(ids.ab);
    expect(notGeneral).not.toContain(ids.plans1);
    expect(await idsOf(carol, [{ operator: "channels", operand: "web-public" }])).toEqual([]);
  });

  test("dm with ids including oneself (as zulip-flutter sends), with emails, and alone with oneself", async () => {
    expect(await idsOf(alice, [{ operator: "dm", operand: [alice.id, bob.id] }])).toEqual(keys("ab", "ba"));
    expect(await idsOf(alice, [{ operator: "dm", operand: [bob.id] }])).toEqual(keys("ab", "ba"));
    expect(await idsOf(alice, [{ operator: "dm", operand: bob.email }])).toEqual(keys("ab", "ba"));
    expect(await idsOf(alice, [["pm-with", bob.email]])).toEqual(keys("ab", "ba"));
    expect(await idsOf(alice, [{ operator: "dm", operand: [alice.id] }])).toEqual(keys("self"));
    expect(await idsOf(alice, [{ operator: "dm", operand: [alice.id, bob.id, carol.id] }])).toEqual(keys("group"));
  });

  test("is:dm is is:private", async () => {
    const dms = keys("ab", "ba", "self", "group", "ac");
    expect(await idsOf(alice, [{ operator: "is", operand: "dm" }])).toEqual(dms);
    expect(await idsOf(alice, [["is", "private"]])).toEqual(dms);
  });

  test("dm-including: one-to-one both ways and group conversations with that user; oneself means every DM", async () => {
    expect(await idsOf(alice, [{ operator: "dm-including", operand: bob.id }])).toEqual(keys("ab", "ba", "group"));
    expect(await idsOf(alice, [{ operator: "dm-including", operand: carol.email }])).toEqual(keys("group", "ac"));
    expect(await idsOf(alice, [{ operator: "dm-including", operand: alice.id }])).toEqual(keys("ab", "ba", "self", "group", "ac"));
  });

  test("with: the narrow becomes the message's conversation, where it is now", async () => {
    const topic = await idsOf(alice, [{ operator: "channel", operand: "narrow-other" }, { operator: "topic", operand: "wrong" }, { operator: "with", operand: ids.plans2 }]);
    expect(topic).toEqual(keys("plans1", "plans2"));
    expect(await idsOf(alice, [{ operator: "with", operand: String(ids.ba) }])).toEqual(keys("ab", "ba"));
    expect(await idsOf(carol, [{ operator: "with", operand: ids.group }])).toEqual(keys("group"));
  });

  test("with a message the user cannot read: kept narrow if it names a conversation, else BAD_NARROW", async () => {
    const kept = await idsOf(carol, [{ operator: "channel", operand: generalId }, { operator: "topic", operand: "plans" }, { operator: "with", operand: ids.ab }]);
    expect(kept).toEqual(keys("plans1", "plans2"));
    const res = await fetch(carol, [{ operator: "with", operand: ids.ab }]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("BAD_NARROW");
  });

  test("with cannot be negated or repeated", async () => {
    expect((await fetch(alice, [{ operator: "with", operand: ids.ab, negated: true }])).body.code).toBe("BAD_NARROW");
    expect((await fetch(alice, [{ operator: "with", operand: ids.ab }, { operator: "with", operand: ids.ba }])).body.code).toBe("BAD_NARROW");
    expect((await fetch(alice, [{ operator: "with", operand: "not-a-number" }])).body.code).toBe("BAD_NARROW");
  });

  test("is:resolved, and its negation", async () => {
    expect(await idsOf(alice, [{ operator: "channel", operand: generalId }, { operator: "is", operand: "resolved" }])).toEqual(keys("resolved"));
    const unresolved = await idsOf(alice, [{ operator: "channel", operand: generalId }, { operator: "is", operand: "resolved", negated: true }]);
    expect(unresolved).toEqual(expect.arrayContaining(keys("plans1", "plans2")));
    expect(unresolved).not.toContain(ids.resolved);
  });

  test("has:reaction", async () => {
    expect(await idsOf(alice, [{ operator: "has", operand: "reaction" }])).toEqual(keys("plans1"));
  });

  test("id as a string operand (feature level 194) or a number", async () => {
    expect(await idsOf(alice, [{ operator: "id", operand: String(ids.ab) }])).toEqual(keys("ab"));
    expect(await idsOf(alice, [{ operator: "id", operand: ids.ab }])).toEqual(keys("ab"));
  });

  test("bounds: an unknown operand, an overlong operand, too many dm ids", async () => {
    expect((await fetch(alice, [{ operator: "is", operand: "bogus" }])).body.code).toBe("BAD_NARROW");
    expect((await fetch(alice, [{ operator: "channels", operand: "private" }])).body.code).toBe("BAD_NARROW");
    const long = await fetch(alice, [{ operator: "topic", operand: "x".repeat(10_001) }]);
    expect(long.status).toBe(400);
    expect(long.body.result).toBe("error");
    const many = Array.from({ length: 101 }, (_, i) => i + 1);
    const res = await fetch(alice, [{ operator: "dm", operand: many }]);
    expect(res.status).toBe(400);
    expect(res.body.result).toBe("error");
  });
});
