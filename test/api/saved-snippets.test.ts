// Saved snippets (Zulip's feature levels 297 and 368): GET/POST /saved_snippets, PATCH/DELETE
// /saved_snippets/{id}, the `saved_snippets` section of /register and its events, to the owner only.
import { drainEvents } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createMember, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("saved snippets (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  const snippets = async (user: TestUser) => (await user.client.get("/saved_snippets")).body.saved_snippets as Array<Record<string, unknown>>;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createMember(server, "alice.snippets@example.com", "Alice Snippets");
    bob = await createMember(server, "bob.snippets@example.com", "Bob Snippets");
  });
  afterAll(() => server.stop());

  test("a new user has none, in GET and in /register", async () => {
    expect((await alice.client.get("/saved_snippets")).body).toEqual({ result: "success", msg: "", saved_snippets: [] });
    expect((await alice.client.post("/register", { fetch_event_types: ["saved_snippets"] })).body.saved_snippets).toEqual([]);
  });

  test("created snippets are stripped, listed oldest first, and the owner's alone", async () => {
    const before = Math.floor(Date.now() / 1000);
    const first = await alice.client.post("/saved_snippets", { title: "  Welcome  ", content: "\n Welcome to the team! \n" });
    expect(first.body).toEqual({ result: "success", msg: "", saved_snippet_id: expect.any(Number) });
    const second = await alice.client.post("/saved_snippets", { title: "Bye", content: "See you" });
    const list = await snippets(alice);
    expect(list).toEqual([
      { id: first.body.saved_snippet_id, title: "Welcome", content: "Welcome to the team!", date_created: expect.any(Number) },
      { id: second.body.saved_snippet_id, title: "Bye", content: "See you", date_created: expect.any(Number) },
    ]);
    expect(list[0].date_created).toBeGreaterThanOrEqual(before - 1);
    expect(list[0].date_created).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect((await alice.client.post("/register", { fetch_event_types: ["saved_snippets"] })).body.saved_snippets).toEqual(list);
    expect(await snippets(bob)).toEqual([]);
    for (const id of [first.body.saved_snippet_id, second.body.saved_snippet_id]) expect((await alice.client.delete(`/saved_snippets/${id}`)).body.result).toBe("success");
  });

  test.each([
    ["a blank title", { title: "   ", content: "c" }, "title cannot be blank"],
    ["a blank content", { title: "t", content: " \n " }, "content cannot be blank"],
    ["a title over 60 characters", { title: "t".repeat(61), content: "c" }, "title is too long (limit: 60 characters)"],
    ["content over 10000 characters", { title: "t", content: "c".repeat(10_001) }, "content is too long (limit: 10000 characters)"],
    ["no title", { content: "c" }, "Missing 'title' argument"],
    ["no content", { title: "t" }, "Missing 'content' argument"],
  ])("%s is refused and creates nothing", async (_name, body, msg) => {
    const res = await alice.client.post("/saved_snippets", body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg, code: expect.any(String) });
    expect(await snippets(alice)).toEqual([]);
  });

  test("the bounds count characters after stripping: 60 of them with spaces around pass", async () => {
    const title = "é".repeat(60);
    const res = await alice.client.post("/saved_snippets", { title: `   ${title}   `, content: "x" });
    expect(res.body.result).toBe("success");
    expect((await snippets(alice))[0]).toMatchObject({ title });
    await alice.client.delete(`/saved_snippets/${res.body.saved_snippet_id}`);
  });

  test("editing changes what is given; another user's or a missing snippet is not found", async () => {
    const id = (await alice.client.post("/saved_snippets", { title: "Old", content: "Old content" })).body.saved_snippet_id as number;
    expect((await alice.client.patch(`/saved_snippets/${id}`, { title: " New " })).body).toEqual({ result: "success", msg: "" });
    expect(await snippets(alice)).toEqual([{ id, title: "New", content: "Old content", date_created: expect.any(Number) }]);
    expect((await alice.client.patch(`/saved_snippets/${id}`, { content: "New content" })).body.result).toBe("success");
    expect((await snippets(alice))[0]).toMatchObject({ title: "New", content: "New content" });
    // Nothing to change: success, as Zulip.
    expect((await alice.client.patch(`/saved_snippets/${id}`, {})).body).toEqual({ result: "success", msg: "" });
    const bad = await alice.client.patch(`/saved_snippets/${id}`, { title: "  " });
    expect(bad.body).toMatchObject({ result: "error", msg: "title cannot be blank" });

    const notFound = { result: "error", msg: "Saved snippet does not exist.", code: "BAD_REQUEST" };
    const stolen = await bob.client.patch(`/saved_snippets/${id}`, { title: "Mine" });
    expect([stolen.status, stolen.body]).toEqual([404, notFound]);
    const missing = await alice.client.patch("/saved_snippets/999999", { title: "x" });
    expect([missing.status, missing.body]).toEqual([404, notFound]);
    expect((await bob.client.delete(`/saved_snippets/${id}`)).status).toBe(404);
    expect((await snippets(alice))[0]).toMatchObject({ title: "New", content: "New content" });

    expect((await alice.client.delete(`/saved_snippets/${id}`)).body).toEqual({ result: "success", msg: "" });
    const again = await alice.client.delete(`/saved_snippets/${id}`);
    expect([again.status, again.body]).toEqual([404, notFound]);
    const notAnId = await alice.client.delete("/saved_snippets/abc");
    expect(notAnId.status).toBe(404);
    expect(await snippets(alice)).toEqual([]);
  });

  test("verifyAction: add, update and remove keep a registered state current, for the owner only", async () => {
    const bobQueue = (await bob.client.post("/register", { event_types: ["saved_snippets"] })).body.queue_id;
    const added = await verifyAction(alice.client, ["saved_snippets"], () => alice.client.post("/saved_snippets", { title: "Hi", content: "Hello!" }));
    expect(added).toEqual([{ id: expect.any(Number), type: "saved_snippets", op: "add", saved_snippet: { id: expect.any(Number), title: "Hi", content: "Hello!", date_created: expect.any(Number) } }]);
    const id = added[0].saved_snippet.id as number;
    const second = await verifyAction(alice.client, ["saved_snippets"], () => alice.client.post("/saved_snippets", { title: "Second", content: "2" }));
    const secondId = second[0].saved_snippet.id as number;
    const updated = await verifyAction(alice.client, ["saved_snippets"], () => alice.client.patch(`/saved_snippets/${id}`, { title: "Hey", content: "Hey there" }));
    expect(updated).toEqual([{ id: expect.any(Number), type: "saved_snippets", op: "update", saved_snippet: { id, title: "Hey", content: "Hey there", date_created: added[0].saved_snippet.date_created } }]);
    const removed = await verifyAction(alice.client, ["saved_snippets"], () => alice.client.delete(`/saved_snippets/${id}`));
    expect(removed).toEqual([{ id: expect.any(Number), type: "saved_snippets", op: "remove", saved_snippet_id: id }]);
    await new Promise((r) => setTimeout(r, 150));
    expect(await drainEvents(bob.client, bobQueue)).toEqual([]);
    await alice.client.delete(`/saved_snippets/${secondId}`);
  });
});
