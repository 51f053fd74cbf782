// GET /messages serves messages from each node's message cache, valid while a message's
// cache_version is what the page query read (triggers bump it on every change a fetch shows) and,
// for senders and reactors, while the realm's user_generation is. Every change must show on the
// very next fetch, on this node and on another one.
import { ApiClient } from "../support/client.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startSecondNode, startTestServer, type SecondNode, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

type Fetched = { id: number; content: string; subject: string; sender_full_name: string; avatar_url: string; reactions: Array<{ emoji_name: string; user: { full_name: string } }> };

async function fetchOne(client: ApiClient, stream: string, id: number): Promise<Fetched> {
  const res = await client.get("/messages", { anchor: id, num_before: 0, num_after: 0, narrow: JSON.stringify([["stream", stream]]) });
  expect(res.body.result).toBe("success");
  expect(res.body.messages).toHaveLength(1);
  return res.body.messages[0];
}

/** Changes a message's rendered content behind the triggers' back, leaving its version alone. */
async function rewriteWithoutVersion(server: TestServer, id: number, rendered: string): Promise<void> {
  await server.running.services.db.prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL session_replication_role = replica");
    await tx.$executeRaw`UPDATE message SET rendered_content = ${rendered} WHERE id = ${id}`;
  });
}

describe.each(MODES)("the message cache of GET /messages (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    [alice, bob] = await Promise.all([createTestUser(server, "Alice Cached"), createTestUser(server, "Bob Cached")]);
    await subscribeTo(alice.client, ["cache"], { principals: [alice.email, bob.email] });
  });
  afterAll(() => server.stop());

  test("a cached message is served from memory until its version changes", async () => {
    const id = await sendStreamMessage(alice.client, "cache", "memory", "original");
    expect((await fetchOne(bob.client, "cache", id)).content).toBe("<p>original</p>");
    await rewriteWithoutVersion(server, id, "<p>behind the cache</p>");
    // Same version: the node's copy answers.
    expect((await fetchOne(bob.client, "cache", id)).content).toBe("<p>original</p>");
    await server.running.services.db.prisma.$executeRaw`UPDATE message SET cache_version = cache_version + 1 WHERE id = ${id}`;
    expect((await fetchOne(bob.client, "cache", id)).content).toBe("<p>behind the cache</p>");
  });

  test("an edit of content and topic shows on the next fetch", async () => {
    const id = await sendStreamMessage(alice.client, "cache", "before", "first words");
    expect((await fetchOne(bob.client, "cache", id)).content).toBe("<p>first words</p>");
    expect((await alice.client.patch(`/messages/${id}`, { content: "second words", topic: "after" })).body.result).toBe("success");
    const fetched = await fetchOne(bob.client, "cache", id);
    expect(fetched).toMatchObject({ content: "<p>second words</p>", subject: "after" });
    expect(fetched).toHaveProperty("last_edit_timestamp");
  });

  test("adding and removing a reaction shows on the next fetch", async () => {
    const id = await sendStreamMessage(alice.client, "cache", "reactions");
    expect((await fetchOne(bob.client, "cache", id)).reactions).toEqual([]);
    expect((await bob.client.post(`/messages/${id}/reactions`, { emoji_name: "octopus" })).body.result).toBe("success");
    expect((await fetchOne(alice.client, "cache", id)).reactions).toMatchObject([{ emoji_name: "octopus", user: { full_name: "Bob Cached" } }]);
    expect((await bob.client.delete(`/messages/${id}/reactions`, { emoji_name: "octopus" })).body.result).toBe("success");
    expect((await fetchOne(alice.client, "cache", id)).reactions).toEqual([]);
  });

  test("a sender's or reactor's new name and avatar show on the next fetch", async () => {
    const id = await sendStreamMessage(alice.client, "cache", "people");
    expect((await bob.client.post(`/messages/${id}/reactions`, { emoji_name: "tada" })).body.result).toBe("success");
    const before = await fetchOne(bob.client, "cache", id);
    expect(before.sender_full_name).toBe("Alice Cached");
    expect((await server.owner.patch(`/users/${alice.id}`, { full_name: "Alice Renamed" })).body.result).toBe("success");
    expect((await server.owner.patch(`/users/${bob.id}`, { full_name: "Bob Renamed" })).body.result).toBe("success");
    const renamed = await fetchOne(bob.client, "cache", id);
    expect(renamed.sender_full_name).toBe("Alice Renamed");
    expect(renamed.reactions[0].user.full_name).toBe("Bob Renamed");
    await server.running.services.db.prisma.userProfile.update({ where: { id: alice.id }, data: { avatar_version: { increment: 1 } } });
    const avatar = (await fetchOne(bob.client, "cache", id)).avatar_url;
    expect(avatar).not.toBe(renamed.avatar_url);
    expect(avatar).toMatch(/version=\d+$/);
  });

  test("a deleted message is gone from the next fetch", async () => {
    const id = await sendStreamMessage(alice.client, "cache", "deleted");
    await fetchOne(bob.client, "cache", id);
    expect((await server.owner.delete(`/messages/${id}`)).body.result).toBe("success");
    const res = await bob.client.get("/messages", { anchor: id, num_before: 0, num_after: 0, narrow: JSON.stringify([["stream", "cache"]]) });
    expect(res.body).toMatchObject({ result: "success", found_anchor: false, messages: [] });
  });
});

describe("the message cache turned off (MESSAGE_CACHE_MB=0)", () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer("embedded", { MESSAGE_CACHE_MB: "0" });
    alice = await createTestUser(server, "Alice Uncached");
    await subscribeTo(alice.client, ["uncached"]);
  });
  afterAll(() => server.stop());

  test("every fetch reads the message from the database", async () => {
    const id = await sendStreamMessage(alice.client, "uncached", "t", "original");
    expect((await fetchOne(alice.client, "uncached", id)).content).toBe("<p>original</p>");
    await rewriteWithoutVersion(server, id, "<p>read again</p>");
    expect((await fetchOne(alice.client, "uncached", id)).content).toBe("<p>read again</p>");
  });
});

describe("the message cache and actor copy across two nodes (postgres)", () => {
  let server: TestServer;
  let other: SecondNode;

  beforeAll(async () => {
    server = await startTestServer("postgres");
    // Its copy must follow changes made through the first node.
    other = await startSecondNode(server);
  });
  afterAll(async () => {
    await other.stop();
    await server.stop();
  });

  test("an edit, a reaction and a rename through one node show on the other's next fetch", async () => {
    const alice = await createTestUser(server, "Alice Two Nodes");
    await subscribeTo(alice.client, ["two node cache"]);
    const onOther = other.client(alice.client.credentials);
    const id = await sendStreamMessage(alice.client, "two node cache", "t", "one");
    expect((await fetchOne(onOther, "two node cache", id)).content).toBe("<p>one</p>");

    expect((await alice.client.patch(`/messages/${id}`, { content: "two" })).body.result).toBe("success");
    expect((await fetchOne(onOther, "two node cache", id)).content).toBe("<p>two</p>");
    expect((await alice.client.post(`/messages/${id}/reactions`, { emoji_name: "octopus" })).body.result).toBe("success");
    expect((await fetchOne(onOther, "two node cache", id)).reactions).toMatchObject([{ emoji_name: "octopus" }]);
    expect((await server.owner.patch(`/users/${alice.id}`, { full_name: "Alice Elsewhere" })).body.result).toBe("success");
    expect((await fetchOne(onOther, "two node cache", id)).sender_full_name).toBe("Alice Elsewhere");
  });

  // The actor copy of GET /messages (actor-cache.ts) is checked inside the page query.
  test("a deactivation or a realm deactivation through one node refuses the other's next fetch", async () => {
    const uma = await createTestUser(server, "Uma Elsewhere");
    const onOther = other.client(uma.client.credentials);
    const fetchOn = (client: ApiClient) => client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: "[]" });
    expect((await fetchOn(onOther)).body.result).toBe("success");
    expect((await server.owner.delete(`/users/${uma.id}`)).body.result).toBe("success");
    expect((await fetchOn(onOther)).body).toMatchObject({ result: "error", code: "USER_DEACTIVATED" });

    const vic = await createTestUser(server, "Vic Elsewhere");
    const vicOnOther = other.client(vic.client.credentials);
    expect((await fetchOn(vicOnOther)).body.result).toBe("success");
    await server.running.services.db.prisma.realm.updateMany({ where: { string_id: "" }, data: { deactivated: true } });
    expect((await fetchOn(vicOnOther)).body).toMatchObject({ result: "error", code: "REALM_DEACTIVATED" });
  });
});

// GET /messages acts as each node's copy of its user, checked inside the page query: every change
// to the user or the realm must count on the very next fetch, on this node and on another one.
describe.each(MODES)("the actor copy of GET /messages (%s)", (mode) => {
  let server: TestServer;

  const fetchNewest = (client: ApiClient, narrow: unknown[] = []) =>
    client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify(narrow) });

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("a deactivated user is refused at once, with or without messages to read", async () => {
    const dora = await createTestUser(server, "Dora Deactivated");
    await subscribeTo(dora.client, ["actor copy"]);
    await sendStreamMessage(dora.client, "actor copy", "t", "hello");
    expect((await fetchNewest(dora.client)).body.result).toBe("success"); // the node keeps Dora
    expect((await fetchNewest(dora.client, [["stream", "actor copy"], ["topic", "nothing here"]])).body.messages).toEqual([]);
    expect((await server.owner.delete(`/users/${dora.id}`)).body.result).toBe("success");
    expect((await fetchNewest(dora.client)).body).toMatchObject({ result: "error", code: "USER_DEACTIVATED" });
    // A page with no rows carries no check: it is asked apart.
    expect((await fetchNewest(dora.client, [["stream", "actor copy"], ["topic", "nothing here"]])).body).toMatchObject({ result: "error", code: "USER_DEACTIVATED" });
  });

  test("a user made a guest loses the public stream's history at once", async () => {
    const gail = await createTestUser(server, "Gail Demoted");
    const sender = await createTestUser(server, "Sam Sender");
    await subscribeTo(sender.client, ["public history"]);
    await sendStreamMessage(sender.client, "public history", "t", "before Gail");
    expect((await fetchNewest(gail.client, [["stream", "public history"]])).body.messages).toHaveLength(1);
    expect((await server.owner.patch(`/users/${gail.id}`, { role: 600 })).body.result).toBe("success");
    expect((await fetchNewest(gail.client, [["stream", "public history"]])).body).toMatchObject({ result: "error", code: "BAD_NARROW" });
  });

  test("a new linkifier and a new stream show on the next fetch", async () => {
    const lena = await createTestUser(server, "Lena Links");
    await subscribeTo(lena.client, ["links"]);
    await sendStreamMessage(lena.client, "links", "ticket #42", "see the ticket");
    expect((await fetchNewest(lena.client, [["stream", "links"]])).body.messages[0].topic_links).toEqual([]);
    expect((await server.owner.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_format_string: "https://tickets.example.com/%(id)s" })).body.result).toBe("success");
    expect((await fetchNewest(lena.client, [["stream", "links"]])).body.messages[0].topic_links).toEqual(["https://tickets.example.com/42"]);
    await subscribeTo(server.owner, ["brand new"]);
    expect((await fetchNewest(lena.client, [["stream", "brand new"]])).body).toMatchObject({ result: "success", messages: [] });
  });
});
