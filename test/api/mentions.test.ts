// The per-recipient flags a message's content sets: `mentioned` for mentioned users and members of
// mentioned groups (not for silent mentions), `wildcard_mentioned` for every recipient of a stream
// message with @**all**, and `has_alert_word` for users whose alert words it contains; in the
// stored rows and in each recipient's message event.
import { createRealm } from "@chat/core";
import { waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const MENTIONED = 8;
const WILDCARD_MENTIONED = 16;
const HAS_ALERT_WORD = 512;

describe.each(MODES)("mention and alert word flags (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let outsider: { id: number; name: string };

  async function flagsOf(messageId: number): Promise<Map<number, number>> {
    const rows = await server.running.services.db.prisma.userMessage.findMany({ where: { message_id: messageId } });
    return new Map(rows.map((r) => [r.user_id, r.flags]));
  }

  async function send(from: TestUser, content: string, to = "mentions"): Promise<number> {
    const res = await from.client.post("/messages", { type: "stream", to, topic: "flags", content });
    expect(res.body.result).toBe("success");
    return res.body.id;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Mention");
    bob = await createTestUser(server, "Bob Mention");
    carol = await createTestUser(server, "Carol Mention");
    const subscribed = await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "mentions" }], principals: [alice.email, bob.email, carol.email] });
    expect(subscribed.body.result).toBe("success");
    const { services } = server.running;
    // A user with a name of their own in another realm.
    const { owner } = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "elsewhere", name: "Elsewhere", owner: { email: "x@elsewhere.test", fullName: "Zed Elsewhere", password: "elsewhere-pass" } }),
    );
    outsider = { id: owner.id, name: owner.full_name };
  });
  afterAll(() => server.stop());

  test("a mention sets `mentioned` for that user only, in the row and in their event", async () => {
    const aliceQueue = (await alice.client.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    const carolQueue = (await carol.client.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    const id = await send(bob, "hey @**Alice Mention**, look");
    const flags = await flagsOf(id);
    expect(flags.get(alice.id)).toBe(MENTIONED);
    expect(flags.get(carol.id)).toBe(0);
    expect(flags.get(bob.id)).toBe(1);
    const aliceEvent = await waitForEvent(alice.client, aliceQueue, (e) => e.type === "message" && e.message.id === id);
    expect(aliceEvent.flags).toEqual(["mentioned"]);
    expect(aliceEvent.message.content).toBe(`<p>hey <span class="user-mention" data-user-id="${alice.id}">@Alice Mention</span>, look</p>`);
    const carolEvent = await waitForEvent(carol.client, carolQueue, (e) => e.type === "message" && e.message.id === id);
    expect(carolEvent.flags).toEqual([]);
  });

  test("a mention by id, and of the sender themself", async () => {
    const id = await send(bob, `@**Alice Mention|${alice.id}** and @**Bob Mention**`);
    const flags = await flagsOf(id);
    expect(flags.get(alice.id)).toBe(MENTIONED);
    expect(flags.get(bob.id)).toBe(1 | MENTIONED);
  });

  test("a silent mention renders but sets no flag", async () => {
    const id = await send(bob, "@_**Alice Mention** thanks");
    expect((await flagsOf(id)).get(alice.id)).toBe(0);
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(stored.rendered_content).toBe(`<p><span class="user-mention silent" data-user-id="${alice.id}">Alice Mention</span> thanks</p>`);
  });

  test.each(["all", "everyone", "stream"])("@**%s** sets `wildcard_mentioned` for every recipient of the stream message", async (name) => {
    const queue = (await carol.client.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    const id = await send(bob, `@**${name}** standup time`);
    const flags = await flagsOf(id);
    expect([...flags.keys()].sort()).toEqual([alice.id, bob.id, carol.id].sort());
    for (const [userId, bits] of flags) {
      expect(bits & WILDCARD_MENTIONED).toBe(WILDCARD_MENTIONED);
      expect(bits & MENTIONED).toBe(0);
      if (userId !== bob.id) expect(bits).toBe(WILDCARD_MENTIONED);
    }
    const event = await waitForEvent(carol.client, queue, (e) => e.type === "message" && e.message.id === id);
    // Zulip 8's name for it, then the deprecated one, as Zulip sends both to every client.
    expect(event.flags).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
  });

  test("a silent wildcard mention sets no flag", async () => {
    const flags = await flagsOf(await send(bob, "@_**all** fyi"));
    expect(flags.get(carol.id)).toBe(0);
  });

  test("a group mention sets `mentioned` for the group's members", async () => {
    const created = await server.owner.post("/user_groups/create", { name: "mention-team", description: "Team", members: [alice.id, carol.id] });
    expect(created.body.result).toBe("success");
    const queue = (await carol.client.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    const id = await send(bob, "ping @*mention-team*");
    const flags = await flagsOf(id);
    expect(flags.get(alice.id)).toBe(MENTIONED);
    expect(flags.get(carol.id)).toBe(MENTIONED);
    expect(flags.get(bob.id)).toBe(1);
    const event = await waitForEvent(carol.client, queue, (e) => e.type === "message" && e.message.id === id);
    expect(event.flags).toEqual(["mentioned"]);
    expect(event.message.content).toMatch(/^<p>ping <span class="user-group-mention" data-user-group-id="\d+">@mention-team<\/span><\/p>$/);
  });

  test("a group mention reaches the members of its subgroups too", async () => {
    const inner = await server.owner.post("/user_groups/create", { name: "mention-inner", description: "Inner", members: [carol.id] });
    expect(inner.body.result).toBe("success");
    const outer = await server.owner.post("/user_groups/create", { name: "mention-outer", description: "Outer", members: [alice.id], subgroups: [inner.body.group_id] });
    expect(outer.body.result).toBe("success");
    const flags = await flagsOf(await send(bob, "ping @*mention-outer*"));
    expect(flags.get(alice.id)).toBe(MENTIONED);
    expect(flags.get(carol.id)).toBe(MENTIONED);
    expect(flags.get(bob.id)).toBe(1);
  });

  test("alert words set `has_alert_word`: case-insensitive, whole words, regex characters literal", async () => {
    expect((await carol.client.post("/users/me/alert_words", { alert_words: ["Pineapple", "c++"] })).body.result).toBe("success");
    expect((await alice.client.post("/users/me/alert_words", { alert_words: ["a.b"] })).body.result).toBe("success");
    const queue = (await carol.client.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    const hit = await send(bob, "Who wants PINEAPPLE?");
    expect((await flagsOf(hit)).get(carol.id)).toBe(HAS_ALERT_WORD);
    expect((await flagsOf(hit)).get(alice.id)).toBe(0);
    const event = await waitForEvent(carol.client, queue, (e) => e.type === "message" && e.message.id === hit);
    expect(event.flags).toEqual(["has_alert_word"]);

    expect((await flagsOf(await send(bob, "pineapples are not the word"))).get(carol.id)).toBe(0);
    expect((await flagsOf(await send(bob, "I write (c++) daily"))).get(carol.id)).toBe(HAS_ALERT_WORD);
    expect((await flagsOf(await send(bob, "I write c+++ daily"))).get(carol.id)).toBe(0);
    // '.' in the word is a literal dot, not any character.
    expect((await flagsOf(await send(bob, "axb"))).get(alice.id)).toBe(0);
    expect((await flagsOf(await send(bob, "see a.b."))).get(alice.id)).toBe(HAS_ALERT_WORD);
  });

  test("mention and alert word flags combine", async () => {
    const flags = await flagsOf(await send(bob, "@**Carol Mention** pineapple"));
    expect(flags.get(carol.id)).toBe(MENTIONED | HAS_ALERT_WORD);
  });

  test("a user of another realm is not mentioned, by name or by id", async () => {
    const id = await send(bob, `@**${outsider.name}** @**${outsider.name}|${outsider.id}** @**|${outsider.id}**`);
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(stored.rendered_content).not.toContain("user-mention");
    const rows = await server.running.services.db.prisma.userMessage.findMany({ where: { message_id: id } });
    expect(rows.some((r) => r.user_id === outsider.id)).toBe(false);
    expect(rows.every((r) => (r.flags & MENTIONED) === 0)).toBe(true);
  });

  test("a deactivated user is not mentioned", async () => {
    const dave = await createTestUser(server, "Dave Gone");
    expect((await server.owner.delete(`/users/${dave.id}`)).body.result).toBe("success");
    const id = await send(bob, "@**Dave Gone** where are you");
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(stored.rendered_content).toBe("<p>@<strong>Dave Gone</strong> where are you</p>");
  });

  test("private messages: mentions flag, wildcards do not", async () => {
    const mention = await bob.client.post("/messages", { type: "private", to: JSON.stringify([alice.id, carol.id]), content: "@**Alice Mention** and @**all**" });
    expect(mention.body.result).toBe("success");
    const flags = await flagsOf(mention.body.id);
    expect(flags.get(alice.id)! & (MENTIONED | WILDCARD_MENTIONED)).toBe(MENTIONED);
    expect(flags.get(carol.id)! & (MENTIONED | WILDCARD_MENTIONED)).toBe(0);
  });

  // Zulip's wildcard_mention_allowed: a stream of more than 15 active subscribers takes @**all**
  // only from those realm.wildcard_mention_policy names; a smaller one from anyone.
  describe("wildcard_mention_policy", () => {
    // Zulip 9.0's texts, with their own code (feature level 229).
    const REFUSED = "You do not have permission to use channel wildcard mentions in this channel.";
    let guest: TestUser;
    let admin: TestUser;

    const setPolicy = async (changes: Record<string, number>) => expect((await server.owner.patch("/realm", changes)).body.result).toBe("success");
    const attempt = (from: TestUser, content: string, to: string) => from.client.post("/messages", { type: "stream", to, topic: "wildcards", content });
    const subscribe = async (name: string, users: TestUser[]) =>
      expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }], principals: users.map((u) => u.email) })).body.result).toBe("success");

    beforeAll(async () => {
      guest = await createTestUser(server, "Gus Wildcard", "guest");
      admin = await createTestUser(server, "Ada Wildcard", "admin");
      const crowd = await Promise.all(Array.from({ length: 11 }, (_, i) => createTestUser(server, `Crowd Wildcard ${i}`)));
      // 16 subscribers in "big", 15 in "fifteen".
      await subscribe("big", [alice, bob, carol, guest, admin, ...crowd]);
      await subscribe("fifteen", [alice, bob, carol, guest, ...crowd]);
    });
    afterEach(() => setPolicy({ wildcard_mention_policy: 1, waiting_period_threshold: 0 }));

    test("nobody: refused past 15 subscribers, administrators included, and nothing is written", async () => {
      await setPolicy({ wildcard_mention_policy: 6 });
      const before = await server.running.services.db.prisma.message.count();
      for (const [user, content] of [[bob, "@**all** hello"], [bob, "@**everyone** hi"], [bob, "@**stream** hey"], [admin, "@**all** hello"]] as const) {
        const res = await attempt(user, content, "big");
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: REFUSED, code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });
      }
      expect(await server.running.services.db.prisma.message.count()).toBe(before);
      // At 15 subscribers anyone may; silent wildcards and other mentions are not wildcard mentions.
      expect((await attempt(bob, "@**all** small room", "fifteen")).body.result).toBe("success");
      expect((await attempt(bob, "@_**all** quietly", "big")).body.result).toBe("success");
      expect((await attempt(bob, "@**Carol Mention** just you", "big")).body.result).toBe("success");
      // Private messages have no wildcard mentions to refuse.
      expect((await bob.client.post("/messages", { type: "private", to: JSON.stringify([alice.id]), content: "@**all**" })).body.result).toBe("success");
    });

    test("a deactivated subscriber does not count", async () => {
      await setPolicy({ wildcard_mention_policy: 6 });
      const extra = await createTestUser(server, "Extra Wildcard");
      await subscribe("fifteen", [extra]);
      expect((await attempt(bob, "@**all** now sixteen", "fifteen")).body.msg).toBe(REFUSED);
      expect((await server.owner.delete(`/users/${extra.id}`)).body.result).toBe("success");
      expect((await attempt(bob, "@**all** fifteen again", "fifteen")).body.result).toBe("success");
    });

    test.each([
      [5, "administrators"],
      [4, "stream administrators (organization administrators here)"],
    ])("policy %i, %s: members refused, administrators allowed", async (policy) => {
      await setPolicy({ wildcard_mention_policy: policy });
      expect((await attempt(bob, "@**all** please", "big")).body.msg).toBe(REFUSED);
      expect((await attempt(admin, "@**all** please", "big")).body.result).toBe("success");
      // The owner is an administrator, though not subscribed.
      expect((await server.owner.post("/messages", { type: "stream", to: "big", topic: "wildcards", content: "@**all** owner" })).body.result).toBe("success");
    });

    test("members: guests refused, members allowed", async () => {
      await setPolicy({ wildcard_mention_policy: 2 });
      expect((await attempt(guest, "@**all** hi", "big")).body.msg).toBe(REFUSED);
      expect((await attempt(bob, "@**all** hi", "big")).body.result).toBe("success");
      await setPolicy({ wildcard_mention_policy: 1 });
      expect((await attempt(guest, "@**all** hi", "big")).body.result).toBe("success");
    });

    test("full members: the waiting period decides, administrators always may", async () => {
      await setPolicy({ wildcard_mention_policy: 3, waiting_period_threshold: 10 });
      expect((await attempt(bob, "@**all** new here", "big")).body.msg).toBe(REFUSED);
      expect((await attempt(admin, "@**all** admin", "big")).body.result).toBe("success");
      const { prisma } = server.running.services.db;
      const joined = (await prisma.userProfile.findUniqueOrThrow({ where: { id: bob.id } })).date_joined;
      await prisma.userProfile.update({ where: { id: bob.id }, data: { date_joined: new Date(Date.now() - 11 * 86_400_000) } });
      try {
        expect((await attempt(bob, "@**all** old hand", "big")).body.result).toBe("success");
      } finally {
        await prisma.userProfile.update({ where: { id: bob.id }, data: { date_joined: joined } });
      }
    });

    test("an edit that mentions everyone is held to the same rule (Zulip 5.0+)", async () => {
      const big = (await attempt(bob, "plain words", "big")).body.id as number;
      const small = (await attempt(bob, "plain words", "fifteen")).body.id as number;
      await setPolicy({ wildcard_mention_policy: 6 });
      const refused = await bob.client.patch(`/messages/${big}`, { content: "now @**all**" });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ result: "error", msg: REFUSED, code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });
      const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: big } });
      expect(stored.content).toBe("plain words");
      expect((await flagsOf(big)).get(carol.id)! & WILDCARD_MENTIONED).toBe(0);
      expect((await bob.client.patch(`/messages/${small}`, { content: "now @**all**" })).body.result).toBe("success");
      expect((await bob.client.patch(`/messages/${big}`, { content: "still plain" })).body.result).toBe("success");
    });
  });
});
