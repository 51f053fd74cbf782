import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("GET /messages (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  const ids: Record<string, number> = {};

  const send = async (user: TestUser, params: Record<string, unknown>, key: string) => {
    const res = await user.client.post("/messages", params);
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    ids[key] = res.body.id;
  };
  const fetch = (user: TestUser, params: Record<string, unknown>) => user.client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, ...params });
  const contents = (res: { body: Record<string, any> }) => (res.body.messages as Array<{ content: string }>).map((m) => m.content);

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Fetch");
    bob = await createTestUser(server, "Bob Fetch");
    carol = await createTestUser(server, "Carol Fetch");
    guest = await createTestUser(server, "Gina Guest", "guest");
    await send(alice, { type: "stream", to: "general", topic: "lunch", content: "pizza today" }, "g1");
    await send(bob, { type: "stream", to: "general", topic: "Lunch", content: "tacos tomorrow, see https://food.example" }, "g2");
    await send(alice, { type: "stream", to: "general", topic: "work", content: "deploy the **release**" }, "g3");
    await send(alice, { type: "private", to: [bob.id], content: "psst bob" }, "pm1");
    await send(bob, { type: "private", to: [alice.id], content: "psst alice" }, "pm2");
    await send(alice, { type: "private", to: [bob.id, carol.id], content: "group chat" }, "huddle");
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "late-public" }] });
    await send(alice, { type: "stream", to: "late-public", topic: "t", content: "before carol joined" }, "lp1");
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "closed" }], invite_only: true });
    await send(alice, { type: "stream", to: "closed", topic: "t", content: "closed history" }, "c1");
    await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "closed" }], principals: [carol.email] });
    await send(alice, { type: "stream", to: "closed", topic: "t", content: "closed after carol" }, "c2");
  });
  afterAll(() => server.stop());

  describe("anchors", () => {
    test("newest: the last messages, oldest first, with found_newest", async () => {
      const res = await fetch(bob, { num_before: 2, narrow: [["stream", "general"]] });
      expect(res.body).toMatchObject({ result: "success", msg: "", anchor: 10000000000000000, found_anchor: false, found_newest: true, found_oldest: false, history_limited: false });
      expect(res.body.messages.map((m: { id: number }) => m.id)).toEqual([ids.g2, ids.g3]);
    });

    test("oldest, and an integer anchor that is found", async () => {
      const oldest = await bob.client.get("/messages", { anchor: "oldest", num_before: 0, num_after: 2, narrow: [["stream", "general"]] });
      expect(oldest.body).toMatchObject({ anchor: 0, found_oldest: true, found_newest: false });
      const around = await bob.client.get("/messages", { anchor: ids.g2, num_before: 1, num_after: 1, narrow: [["stream", "general"]] });
      // g1 is the stream's first message, so the oldest was reached.
      expect(around.body).toMatchObject({ anchor: ids.g2, found_anchor: true, found_oldest: true, found_newest: true });
      const middle = await bob.client.get("/messages", { anchor: ids.g2, num_before: 0, num_after: 0, narrow: [["stream", "general"]] });
      expect(middle.body).toMatchObject({ found_anchor: true, found_oldest: false, found_newest: false });
      expect(around.body.messages.map((m: { id: number }) => m.id)).toEqual([ids.g1, ids.g2, ids.g3]);
    });

    test("an anchor outside the narrow is not found", async () => {
      const res = await bob.client.get("/messages", { anchor: ids.pm1, num_before: 0, num_after: 0, narrow: [["stream", "general"]] });
      expect(res.body).toMatchObject({ found_anchor: false, messages: [] });
    });

    test("first_unread, and the deprecated use_first_unread_anchor", async () => {
      const res = await bob.client.get("/messages", { anchor: "first_unread", num_before: 0, num_after: 1 });
      expect(res.body.anchor).toBe(ids.g1);
      expect(res.body.messages[0].flags).toEqual([]);
      const legacy = await bob.client.get("/messages", { use_first_unread_anchor: true, num_before: 0, num_after: 1 });
      expect(legacy.body.anchor).toBe(ids.g1);
    });

    test("bad requests", async () => {
      expect((await bob.client.get("/messages", { num_before: 1, num_after: 1 })).body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "anchor" });
      expect((await bob.client.get("/messages", { anchor: "latest", num_before: 1, num_after: 1 })).body).toMatchObject({ msg: "Invalid anchor", code: "BAD_REQUEST" });
      // Zulip 10.0 (feature level 300): the counts default to 0.
      expect((await bob.client.get("/messages", { anchor: "newest", num_after: 1 })).body).toMatchObject({ result: "success", found_newest: true });
      expect((await bob.client.get("/messages", { anchor: "newest", num_before: 5001, num_after: 0 })).body.msg).toBe("Too many messages requested (maximum 5000).");
      expect((await bob.client.get("/messages", { anchor: "newest", num_before: -1, num_after: 0 })).body.result).toBe("error");
    });
  });

  describe("narrows", () => {
    test("both encodings, stream and topic (case-insensitive)", async () => {
      expect(contents(await fetch(bob, { narrow: [["stream", "general"], ["topic", "LUNCH"]], apply_markdown: false }))).toEqual(["pizza today", "tacos tomorrow, see https://food.example"]);
      const objects = await fetch(bob, { narrow: [{ operator: "stream", operand: "general" }, { operator: "topic", operand: "work", negated: false }] });
      expect(contents(objects)).toEqual(["<p>deploy the <strong>release</strong></p>"]);
    });

    test("negation", async () => {
      const res = await fetch(bob, { narrow: [{ operator: "stream", operand: "general" }, { operator: "topic", operand: "lunch", negated: true }], apply_markdown: false });
      expect(contents(res)).toEqual(["deploy the **release**"]);
    });

    test("is:private, pm-with by email and by id, group-pm-with", async () => {
      expect(contents(await fetch(bob, { narrow: [["is", "private"]], apply_markdown: false }))).toEqual(["psst bob", "psst alice", "group chat"]);
      expect(contents(await fetch(bob, { narrow: [["pm-with", alice.email]], apply_markdown: false }))).toEqual(["psst bob", "psst alice"]);
      expect(contents(await fetch(bob, { narrow: [{ operator: "pm-with", operand: [alice.id] }], apply_markdown: false }))).toEqual(["psst bob", "psst alice"]);
      expect(contents(await fetch(bob, { narrow: [["pm-with", `${alice.email},${carol.email}`]], apply_markdown: false }))).toEqual(["group chat"]);
      expect(contents(await fetch(carol, { narrow: [["group-pm-with", bob.email]], apply_markdown: false }))).toEqual(["group chat"]);
      const huddle = (await fetch(carol, { narrow: [["group-pm-with", bob.email]] })).body.messages[0];
      expect(huddle.display_recipient.map((u: { id: number }) => u.id)).toEqual([alice.id, bob.id, carol.id].sort((a, b) => a - b));
      expect(huddle.display_recipient[0]).toEqual({ id: expect.any(Number), email: expect.any(String), full_name: expect.any(String), short_name: expect.any(String), is_mirror_dummy: false });
    });

    test("operators in Zulip's other spelling: pm_with, group_pm_with (as zulip-terminal sends)", async () => {
      expect(contents(await fetch(bob, { narrow: [{ operator: "pm_with", operand: alice.email }], apply_markdown: false }))).toEqual(["psst bob", "psst alice"]);
      expect(contents(await fetch(bob, { narrow: [["pm_with", `${alice.email},${carol.email}`]], apply_markdown: false }))).toEqual(["group chat"]);
      expect(contents(await fetch(carol, { narrow: [["group_pm_with", bob.email]], apply_markdown: false }))).toEqual(["group chat"]);
      expect(contents(await fetch(bob, { narrow: [{ operator: "pm_with", operand: alice.email, negated: true }, ["is", "private"]], apply_markdown: false }))).toEqual(["group chat"]);
    });

    test("sender, id, has:link, search with highlighting", async () => {
      expect(contents(await fetch(bob, { narrow: [["sender", bob.email], ["stream", "general"]], apply_markdown: false }))).toEqual(["tacos tomorrow, see https://food.example"]);
      expect((await fetch(bob, { narrow: [["id", String(ids.g3)]] })).body.messages.map((m: { id: number }) => m.id)).toEqual([ids.g3]);
      expect(contents(await fetch(bob, { narrow: [["has", "link"]], apply_markdown: false }))).toEqual(["tacos tomorrow, see https://food.example"]);
      const found = await fetch(bob, { narrow: [["search", "deploy"]] });
      expect(found.body.messages).toHaveLength(1);
      expect(found.body.messages[0].match_content).toContain('<span class="highlight">deploy</span>');
      expect(found.body.messages[0].match_subject).toBe("work");
    });

    test("is:unread, is:starred, is:mentioned read the user's flags", async () => {
      const { prisma } = server.running.services.db;
      await prisma.userMessage.update({ where: { user_id_message_id: { user_id: bob.id, message_id: ids.g1 } }, data: { flags: 2 | 1 } });
      await prisma.userMessage.update({ where: { user_id_message_id: { user_id: bob.id, message_id: ids.g3 } }, data: { flags: 8 } });
      expect((await fetch(bob, { narrow: [["is", "starred"]] })).body.messages.map((m: { id: number }) => m.id)).toEqual([ids.g1]);
      expect((await fetch(bob, { narrow: [["is", "mentioned"]] })).body.messages.map((m: { id: number }) => m.id)).toEqual([ids.g3]);
      expect((await fetch(bob, { narrow: [["is", "unread"], ["stream", "general"]] })).body.messages.map((m: { id: number }) => m.id)).not.toContain(ids.g1);
      expect((await fetch(bob, { narrow: [["is", "starred"]] })).body.messages[0].flags).toEqual(["read", "starred"]);
    });

    test("unknown operators and operands are BAD_NARROW", async () => {
      expect((await fetch(bob, { narrow: [["color", "red"]] })).body).toEqual({ result: "error", msg: "Invalid narrow operator: unknown operator color", code: "BAD_NARROW" });
      expect((await fetch(bob, { narrow: [["stream", "nowhere"]] })).body.code).toBe("BAD_NARROW");
      expect((await fetch(bob, { narrow: [["is", "happy"]] })).body.code).toBe("BAD_NARROW");
      expect((await fetch(bob, { narrow: [["sender", "ghost@example.com"]] })).body.code).toBe("BAD_NARROW");
      expect((await fetch(bob, { narrow: "stream:general" })).body.msg).toBe('Argument "narrow" is not valid JSON.');
      expect((await fetch(bob, { narrow: [["stream"]] })).body.result).toBe("error");
    });
  });

  describe("who sees what", () => {
    test("a public stream's history is readable by members who never received it, flagged historical", async () => {
      const res = await fetch(carol, { narrow: [["stream", "late-public"]] });
      expect(res.body.messages.map((m: { id: number }) => m.id)).toEqual([ids.lp1]);
      expect(res.body.messages[0].flags).toEqual(["read", "historical"]);
      // Without a stream narrow, only one's own messages.
      expect((await fetch(carol, {})).body.messages.map((m: { id: number }) => m.id)).not.toContain(ids.lp1);
      expect((await fetch(carol, { narrow: [["streams", "public"]] })).body.messages.map((m: { id: number }) => m.id)).toContain(ids.lp1);
    });

    test("a private stream without shared history shows a late subscriber only what came after", async () => {
      expect(contents(await fetch(carol, { narrow: [["stream", "closed"]], apply_markdown: false }))).toEqual(["closed after carol"]);
      expect(contents(await fetch(alice, { narrow: [["stream", "closed"]], apply_markdown: false }))).toEqual(["closed history", "closed after carol"]);
      expect((await fetch(bob, { narrow: [["stream", "closed"]] })).body.code).toBe("BAD_NARROW");
    });

    test("guests read only the streams they are in", async () => {
      expect((await fetch(guest, { narrow: [["stream", "late-public"]] })).body.code).toBe("BAD_NARROW");
      // Only what they received: no public stream history for guests.
      expect((await fetch(guest, { narrow: [["streams", "public"]] })).body.messages.map((m: { id: number }) => m.id)).toEqual([ids.g1, ids.g2, ids.g3]);
      expect(contents(await fetch(guest, { narrow: [["stream", "general"], ["topic", "work"]], apply_markdown: false }))).toEqual(["deploy the **release**"]);
    });
  });

  test("messages carry their reactions", async () => {
    expect((await bob.client.post(`/messages/${ids.g3}/reactions`, { emoji_name: "grinning" })).body.result).toBe("success");
    const message = (await fetch(alice, { narrow: [["id", String(ids.g3)]] })).body.messages[0];
    expect(message.reactions).toEqual([
      expect.objectContaining({ emoji_name: "grinning", emoji_code: "1f600", reaction_type: "unicode_emoji", user_id: bob.id, user: expect.objectContaining({ user_id: bob.id, email: bob.email, full_name: "Bob Fetch" }) }),
    ]);
  });

  test("messages carry the contract's fields", async () => {
    const res = await fetch(bob, { narrow: [["id", String(ids.g2)]], client_gravatar: true });
    expect(res.body.messages[0]).toMatchObject({
      id: ids.g2,
      sender_id: bob.id,
      sender_full_name: "Bob Fetch",
      sender_short_name: "Bob",
      sender_email: bob.email,
      sender_realm_str: "",
      recipient_id: expect.any(Number),
      type: "stream",
      stream_id: expect.any(Number),
      display_recipient: "general",
      subject: "Lunch",
      topic_links: [],
      subject_links: [],
      content_type: "text/html",
      timestamp: expect.any(Number),
      client: expect.any(String),
      is_me_message: false,
      reactions: [],
      submessages: [],
      flags: ["read"],
      avatar_url: null,
    });
  });
});
