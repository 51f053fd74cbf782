// POST/DELETE /messages/{id}/reactions: emoji validation in Zulip's words, votes on an existing
// reaction, historical rows, and `reaction` events to exactly the users who have the message.
import { reactionsForMessages } from "@chat/core";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { waitForEvent } from "../support/events.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";

describe.each(MODES)("reactions (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  let streamMessage: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    [alice, bob, carol, guest] = await Promise.all([
      createTestUser(server, "Alice Reacts"),
      createTestUser(server, "Bob Reacts"),
      createTestUser(server, "Carol Reacts"),
      createTestUser(server, "Gus Guest", "guest"),
    ]);
    await subscribeTo(alice.client, ["reacting"], { principals: [alice.email, bob.email] });
    await subscribeTo(alice.client, ["reacting-secret"], { principals: [alice.email, bob.email], invite_only: true });
  });
  afterAll(() => server.stop());

  beforeEach(async () => {
    streamMessage = await sendStreamMessage(alice.client, "reacting", "emoji");
  });

  const react = (user: TestUser, id: number, params: Record<string, unknown>) => user.client.post(`/messages/${id}/reactions`, params);
  const unreact = (user: TestUser, id: number, params: Record<string, unknown>) => user.client.delete(`/messages/${id}/reactions`, params);
  const stored = (id: number) => server.running.services.db.prisma.reaction.findMany({ where: { message_id: id }, orderBy: { id: "asc" } });

  test("adding by name stores the reaction and tells exactly the users who have the message", async () => {
    const queues = await Promise.all([alice, bob, carol].map((u) => registerQueue(u.client, ["reaction", "message"])));
    expect((await react(bob, streamMessage, { emoji_name: "octopus" })).body).toEqual({ result: "success", msg: "" });
    expect(await stored(streamMessage)).toEqual([
      expect.objectContaining({ user_id: bob.id, emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji" }),
    ]);
    const expected = {
      type: "reaction",
      op: "add",
      user_id: bob.id,
      user: { user_id: bob.id, email: bob.email, full_name: "Bob Reacts" },
      message_id: streamMessage,
      emoji_name: "octopus",
      emoji_code: "1f419",
      reaction_type: "unicode_emoji",
      id: expect.any(Number),
    };
    for (const [i, user] of [alice, bob].entries()) {
      expect(await waitForEvent(user.client, queues[i], (e) => e.type === "reaction")).toEqual(expected);
    }
    // Carol has no row for the message: a private message sent to her afterwards arrives alone.
    await sendPrivateMessage(alice.client, [carol.id], "marker");
    const carolEvents = await eventsUntil(carol.client, queues[2], (e) => e.type === "message");
    expect(carolEvents.filter((e) => e.type === "reaction")).toEqual([]);
  });

  test("emoji_code and reaction_type are checked against the name, in Zulip's words", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ emoji_name: "no_such_emoji" }, "Emoji 'no_such_emoji' does not exist"],
      [{ emoji_name: "octopus", emoji_code: "zzzz", reaction_type: "unicode_emoji" }, "Invalid emoji code"],
      [{ emoji_name: "octopus", emoji_code: "1F419", reaction_type: "unicode_emoji" }, "Invalid emoji code"],
      [{ emoji_name: "grinning", emoji_code: "1f419", reaction_type: "unicode_emoji" }, "Invalid emoji name"],
      [{ emoji_name: "octopus", emoji_code: "1f419", reaction_type: "weird_emoji" }, "Invalid emoji type."],
      [{ emoji_name: "zulip", emoji_code: "octopus", reaction_type: "zulip_extra_emoji" }, "Invalid emoji code"],
      [{ emoji_name: "octopus", emoji_code: "99999", reaction_type: "realm_emoji" }, "Invalid custom emoji."],
    ];
    for (const [params, msg] of cases) {
      const res = await react(alice, streamMessage, params);
      expect({ params, status: res.status, body: res.body }).toEqual({ params, status: 400, body: { result: "error", msg, code: "BAD_REQUEST" } });
    }
    expect(await stored(streamMessage)).toEqual([]);
    expect((await react(alice, streamMessage, { emoji_name: "thumbsup", emoji_code: "1f44d", reaction_type: "unicode_emoji" })).body.result).toBe("success");
    expect((await react(alice, streamMessage, { emoji_name: "zulip" })).body.result).toBe("success");
    expect((await stored(streamMessage)).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type])).toEqual([
      ["thumbsup", "1f44d", "unicode_emoji"],
      ["zulip", "zulip", "zulip_extra_emoji"],
    ]);
  });

  test("a duplicate is refused; another user's same emoji is a vote that keeps the first name", async () => {
    const thumbsup = { emoji_name: "thumbsup", emoji_code: "1f44d", reaction_type: "unicode_emoji" };
    expect((await react(alice, streamMessage, thumbsup)).body.result).toBe("success");
    const dup = await react(alice, streamMessage, { emoji_name: "+1" });
    expect(dup.body).toEqual({ result: "error", msg: "Reaction already exists.", code: "REACTION_ALREADY_EXISTS" });
    const queue = await registerQueue(alice.client, ["reaction"]);
    // By name alone a reaction would be named +1 (`like`'s canonical name), but a vote takes the
    // name the message's reaction already has, so clients show one reaction, not two.
    expect((await react(bob, streamMessage, { emoji_name: "like" })).body.result).toBe("success");
    expect((await react(carol, streamMessage, { emoji_name: "+1", emoji_code: "1f44d", reaction_type: "unicode_emoji" })).body.result).toBe("success");
    expect((await stored(streamMessage)).map((r) => [r.user_id, r.emoji_name, r.emoji_code])).toEqual([
      [alice.id, "thumbsup", "1f44d"],
      [bob.id, "thumbsup", "1f44d"],
      [carol.id, "thumbsup", "1f44d"],
    ]);
    expect(await waitForEvent(alice.client, queue, (e) => e.user_id === bob.id)).toMatchObject({ op: "add", emoji_name: "thumbsup", emoji_code: "1f44d" });
  });

  test("by name alone, any of Zulip's names gives the emoji's canonical name, stored and sent", async () => {
    const queue = await registerQueue(bob.client, ["reaction"]);
    const cases: Array<[TestUser, string, string, string]> = [
      [alice, "thumbs_up", "+1", "1f44d"],
      [bob, "like", "+1", "1f44d"],
      [alice, "tools", "working_on_it", "1f6e0"],
      [bob, "working_on_it", "working_on_it", "1f6e0"],
      [alice, "smile", "slight_smile", "1f642"],
      [alice, "star_struck", "star_struck", "1f929"],
    ];
    const messages: number[] = [];
    for (const [user, name] of cases) {
      const id = await sendStreamMessage(alice.client, "reacting", "emoji", name);
      messages.push(id);
      expect((await react(user, id, { emoji_name: name })).body).toEqual({ result: "success", msg: "" });
    }
    for (const [i, [user, name, canonical, code]] of cases.entries()) {
      const expected = { user_id: user.id, emoji_name: canonical, emoji_code: code, reaction_type: "unicode_emoji" };
      expect([name, await stored(messages[i])]).toEqual([name, [expect.objectContaining(expected)]]);
      const event = await waitForEvent(bob.client, queue, (e) => e.op === "add" && e.message_id === messages[i]);
      expect([name, event]).toEqual([name, expect.objectContaining({ ...expected, type: "reaction", message_id: messages[i] })]);
    }
  });

  test("name and code as zulip-terminal sends them: the name must be one of the code's, and is kept", async () => {
    const queue = await registerQueue(bob.client, ["reaction"]);
    const unicode = (emoji_name: string, emoji_code: string) => ({ emoji_name, emoji_code, reaction_type: "unicode_emoji" });
    expect((await react(alice, streamMessage, unicode("thumbs_up", "1f44d"))).body).toEqual({ result: "success", msg: "" });
    expect(await waitForEvent(bob.client, queue, (e) => e.op === "add")).toMatchObject({ emoji_name: "thumbs_up", emoji_code: "1f44d" });
    expect((await react(alice, streamMessage, unicode("working_on_it", "1f6e0"))).body.result).toBe("success");
    expect((await react(alice, streamMessage, unicode("smile", "1f642"))).body.result).toBe("success");
    // `smile` is 🙂 for Zulip clients; iamcal's 😄 is big_smile.
    expect((await react(alice, streamMessage, unicode("smile", "1f604"))).body.msg).toBe("Invalid emoji name");
    expect((await react(alice, streamMessage, unicode("big_smile", "1f604"))).body.result).toBe("success");
    expect((await stored(streamMessage)).map((r) => [r.emoji_name, r.emoji_code])).toEqual([
      ["thumbs_up", "1f44d"],
      ["working_on_it", "1f6e0"],
      ["smile", "1f642"],
      ["big_smile", "1f604"],
    ]);
  });

  test("removing by any of the emoji's names", async () => {
    const queue = await registerQueue(bob.client, ["reaction"]);
    await react(alice, streamMessage, { emoji_name: "+1" });
    await react(alice, streamMessage, { emoji_name: "working_on_it", emoji_code: "1f6e0", reaction_type: "unicode_emoji" });
    expect((await unreact(alice, streamMessage, { emoji_name: "thumbs_up" })).body).toEqual({ result: "success", msg: "" });
    expect((await unreact(alice, streamMessage, { emoji_name: "hammer_and_wrench" })).body.result).toBe("success");
    expect(await stored(streamMessage)).toEqual([]);
    // The removal names the reaction as it was stored, whichever name removed it.
    expect(await waitForEvent(bob.client, queue, (e) => e.op === "remove" && e.emoji_code === "1f44d")).toMatchObject({ emoji_name: "+1" });
    expect(await waitForEvent(bob.client, queue, (e) => e.op === "remove" && e.emoji_code === "1f6e0")).toMatchObject({ emoji_name: "working_on_it" });
  });

  test("removing by name or by code, and the errors for a missing reaction or missing arguments", async () => {
    const queue = await registerQueue(bob.client, ["reaction"]);
    await react(alice, streamMessage, { emoji_name: "octopus" });
    await react(alice, streamMessage, { emoji_name: "heart" });
    expect((await unreact(alice, streamMessage, { emoji_name: "octopus" })).body).toEqual({ result: "success", msg: "" });
    expect((await unreact(alice, streamMessage, { emoji_code: "2764" })).body.result).toBe("success");
    expect(await stored(streamMessage)).toEqual([]);
    const removal = await waitForEvent(bob.client, queue, (e) => e.op === "remove" && e.emoji_code === "2764");
    expect(removal).toMatchObject({ type: "reaction", user_id: alice.id, message_id: streamMessage, emoji_name: "heart", reaction_type: "unicode_emoji" });

    const missing = await unreact(alice, streamMessage, { emoji_name: "octopus" });
    expect(missing.body).toEqual({ result: "error", msg: "Reaction doesn't exist.", code: "REACTION_DOES_NOT_EXIST" });
    await react(bob, streamMessage, { emoji_name: "octopus" });
    // Only one's own reaction can be removed.
    expect((await unreact(alice, streamMessage, { emoji_code: "1f419" })).body.msg).toBe("Reaction doesn't exist.");
    expect((await unreact(alice, streamMessage, {})).body.msg).toBe("At least one of the following arguments must be present: emoji_name, emoji_code");
    expect((await unreact(alice, streamMessage, { emoji_name: "no_such_emoji" })).body.msg).toBe("Emoji 'no_such_emoji' does not exist");
  });

  test("messages the user may not read are Invalid message(s)", async () => {
    const privateId = await sendPrivateMessage(alice.client, [bob.id]);
    const secretId = await sendStreamMessage(alice.client, "reacting-secret", "hush");
    const invalid = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };
    expect((await react(carol, privateId, { emoji_name: "octopus" })).body).toEqual(invalid);
    expect((await react(carol, secretId, { emoji_name: "octopus" })).body).toEqual(invalid);
    expect((await react(guest, streamMessage, { emoji_name: "octopus" })).body).toEqual(invalid);
    expect((await react(alice, 2_000_000_000, { emoji_name: "octopus" })).body).toEqual(invalid);
    expect((await unreact(carol, privateId, { emoji_name: "octopus" })).body).toEqual(invalid);
    expect((await alice.client.post(`/messages/abc/reactions`, { emoji_name: "octopus" })).status).toBe(404);
    // The participants may.
    expect((await react(bob, privateId, { emoji_name: "octopus" })).body.result).toBe("success");
    expect((await react(bob, secretId, { emoji_name: "octopus" })).body.result).toBe("success");
  });

  test("a member reacting to a public stream message they never received gets a historical row and later events", async () => {
    const { prisma } = server.running.services.db;
    expect(await prisma.userMessage.findUnique({ where: { user_id_message_id: { user_id: carol.id, message_id: streamMessage } } })).toBeNull();
    const queue = await registerQueue(carol.client, ["reaction"]);
    expect((await react(carol, streamMessage, { emoji_name: "octopus" })).body.result).toBe("success");
    const row = await prisma.userMessage.findUniqueOrThrow({ where: { user_id_message_id: { user_id: carol.id, message_id: streamMessage } } });
    expect(row.flags).toBe(1 | 1024); // read | historical
    await waitForEvent(carol.client, queue, (e) => e.op === "add" && e.user_id === carol.id);
    await react(bob, streamMessage, { emoji_name: "heart" });
    expect(await waitForEvent(carol.client, queue, (e) => e.user_id === bob.id)).toMatchObject({ op: "add", emoji_name: "heart" });
  });

  test("custom emoji: by name, by id, and deactivated ones", async () => {
    const { prisma } = server.running.services.db;
    const realmId = (await prisma.userProfile.findUniqueOrThrow({ where: { id: alice.id } })).realm_id;
    const parrot = await prisma.realmEmoji.create({ data: { realm_id: realmId, name: "parrot", file_name: "parrot.png", author_id: alice.id } });
    const old = await prisma.realmEmoji.create({ data: { realm_id: realmId, name: "oldparrot", file_name: "old.png", deactivated: true } });
    expect((await react(alice, streamMessage, { emoji_name: "parrot" })).body.result).toBe("success");
    expect((await stored(streamMessage)).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type])).toEqual([["parrot", String(parrot.id), "realm_emoji"]]);
    expect((await react(bob, streamMessage, { emoji_name: "octopus", emoji_code: String(parrot.id), reaction_type: "realm_emoji" })).body.result).toBe("success"); // a vote
    expect((await react(alice, streamMessage, { emoji_name: "oldparrot" })).body.msg).toBe("Emoji 'oldparrot' does not exist");
    const deactivated = await react(alice, streamMessage, { emoji_name: "oldparrot", emoji_code: String(old.id), reaction_type: "realm_emoji" });
    expect(deactivated.body.msg).toBe("This custom emoji has been deactivated.");
    expect((await react(alice, streamMessage, { emoji_name: "wrong", emoji_code: String(parrot.id), reaction_type: "realm_emoji" })).body.msg).toBe("Reaction already exists.");
    expect((await unreact(alice, streamMessage, { emoji_name: "parrot" })).body.result).toBe("success");
    expect((await unreact(bob, streamMessage, { emoji_code: String(parrot.id), reaction_type: "realm_emoji" })).body.result).toBe("success");
    expect(await stored(streamMessage)).toEqual([]);
  });

  test("reactionsForMessages gives each message its reactions in the contract's shape", async () => {
    const other = await sendStreamMessage(alice.client, "reacting", "emoji");
    await react(alice, streamMessage, { emoji_name: "octopus" });
    await react(bob, streamMessage, { emoji_name: "zulip" });
    const map = await reactionsForMessages(server.running.services.db.prisma, [streamMessage, other]);
    expect(map.get(other)).toBeUndefined();
    expect(map.get(streamMessage)).toEqual([
      { emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji", user_id: alice.id, user: { user_id: alice.id, email: alice.email, full_name: "Alice Reacts" } },
      { emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji", user_id: bob.id, user: { user_id: bob.id, email: bob.email, full_name: "Bob Reacts" } },
    ]);
    expect((await reactionsForMessages(server.running.services.db.prisma, [])).size).toBe(0);
  });
});
