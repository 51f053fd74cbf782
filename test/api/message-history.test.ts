// GET /messages/{message_id}/history: the original, then one snapshot per edit, with Zulip's
// content_html_diff; disabled by the organization's allow_edit_history.
import { htmlDiff, MAX_DIFF_EDIT_LENGTH } from "@chat/core";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe("htmlDiff", () => {
  test("marks inserted and deleted words and keeps the new markup", () => {
    expect(htmlDiff("<p>hello old world</p>", "<p>hello new world</p>")).toBe(
      '<p>hello <span class="highlight_text_deleted">old</span><span class="highlight_text_inserted">new</span> world</p>',
    );
    expect(htmlDiff("<p>same</p>", "<p>same</p>")).toBe("<p>same</p>");
    expect(htmlDiff("<p>plain</p>", "<p><strong>plain</strong></p>")).toBe("<p><strong>plain</strong></p>");
    expect(htmlDiff("<p>a</p>", "<p>a</p>\n<p>b</p>")).toBe('<p>a</p><span class="highlight_text_inserted">\n</span><p><span class="highlight_text_inserted">b</span></p>');
  });
});

/** `count` words of varied text, different for each seed (repeating words would diff cheaply). */
function prose(seed: number, count: number): string {
  let state = seed;
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    words.push(`${["alpha", "beta", "gamma", "delta", "kappa", "zeta", "theta", "omega"][state % 8]}${state % 97}`);
  }
  return words.join(" ");
}

describe("htmlDiff past its bound", () => {
  test("the changed middle becomes a plain replacement: old text deleted, new text inserted, new markup kept", () => {
    expect(htmlDiff("<p>keep a b</p>", "<p>keep <em>x</em> y</p>", 0)).toBe(
      '<p>keep <span class="highlight_text_deleted">a b</span><em><span class="highlight_text_inserted">x</span></em><span class="highlight_text_inserted"> y</span></p>',
    );
    expect(htmlDiff("<p>a</p>", "<p>a</p>", 0)).toBe("<p>a</p>");
    expect(htmlDiff("", "<p>new</p>", 0)).toBe('<p><span class="highlight_text_inserted">new</span></p>');
  });

  test(`an edit of more than ${MAX_DIFF_EDIT_LENGTH} tokens is not diffed, and takes well under a second`, () => {
    const before = `<p>${prose(1, 1400)}</p>`;
    const after = `<p>${prose(2, 1400)}</p>`;
    const started = performance.now();
    const diff = htmlDiff(before, after);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(diff).toBe(`<p><span class="highlight_text_deleted">${prose(1, 1400)}</span><span class="highlight_text_inserted">${prose(2, 1400)}</span></p>`);
  });
});

describe.each(MODES)("GET /messages/{message_id}/history (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let outsider: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice History");
    bob = await createTestUser(server, "Bob History");
    outsider = await createTestUser(server, "Olga Outsider");
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "history" }], principals: [alice.email, bob.email] });
  });
  afterEach(async () => {
    expect((await server.owner.patch("/realm", { allow_edit_history: true })).body.result).toBe("success");
  });
  afterAll(() => server.stop());

  test("an unedited message has only its original snapshot", async () => {
    const id = (await alice.client.post("/messages", { type: "stream", to: "history", topic: "t", content: "only *once*" })).body.id;
    const message = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id } });
    const res = await bob.client.get(`/messages/${id}/history`);
    expect(res.body).toEqual({
      result: "success",
      msg: "",
      message_history: [
        { user_id: alice.id, timestamp: Math.floor(message.date_sent.getTime() / 1000), topic: "t", content: "only *once*", rendered_content: "<p>only <em>once</em></p>" },
      ],
    });
  });

  test("snapshots in order: original, a content edit with its diff, a topic edit by someone else, another content edit", async () => {
    const id = (await alice.client.post("/messages", { type: "stream", to: "history", topic: "first topic", content: "hello old world" })).body.id;
    expect((await alice.client.patch(`/messages/${id}`, { content: "hello new world" })).body.result).toBe("success");
    expect((await bob.client.patch(`/messages/${id}`, { topic: "second topic" })).body.result).toBe("success");
    expect((await alice.client.patch(`/messages/${id}`, { content: "hello **new** world", topic: "third topic" })).body.result).toBe("success");
    const { prisma } = server.running.services.db;
    const message = await prisma.message.findUniqueOrThrow({ where: { id } });
    const edits = await prisma.messageEdit.findMany({ where: { message_id: id }, orderBy: { id: "asc" } });
    const at = (date: Date) => Math.floor(date.getTime() / 1000);

    const history = (await alice.client.get(`/messages/${id}/history`)).body.message_history;
    expect(history).toEqual([
      { user_id: alice.id, timestamp: at(message.date_sent), topic: "first topic", content: "hello old world", rendered_content: "<p>hello old world</p>" },
      {
        user_id: alice.id,
        timestamp: at(edits[0].timestamp),
        topic: "first topic",
        content: "hello new world",
        rendered_content: "<p>hello new world</p>",
        prev_content: "hello old world",
        prev_rendered_content: "<p>hello old world</p>",
        content_html_diff: '<p>hello <span class="highlight_text_deleted">old</span><span class="highlight_text_inserted">new</span> world</p>',
      },
      {
        user_id: bob.id,
        timestamp: at(edits[1].timestamp),
        topic: "second topic",
        prev_topic: "first topic",
        content: "hello new world",
        rendered_content: "<p>hello new world</p>",
      },
      {
        user_id: alice.id,
        timestamp: at(edits[2].timestamp),
        topic: "third topic",
        prev_topic: "second topic",
        content: "hello **new** world",
        rendered_content: "<p>hello <strong>new</strong> world</p>",
        prev_content: "hello new world",
        prev_rendered_content: "<p>hello new world</p>",
        content_html_diff: "<p>hello <strong>new</strong> world</p>",
      },
    ]);
    expect(at(message.last_edit_time!)).toBe(history[3].timestamp);
  });

  test("a topic change propagated to other messages shows in their history too", async () => {
    const first = (await alice.client.post("/messages", { type: "stream", to: "history", topic: "spread", content: "one" })).body.id;
    const second = (await bob.client.post("/messages", { type: "stream", to: "history", topic: "spread", content: "two" })).body.id;
    await alice.client.patch(`/messages/${first}`, { topic: "spread wide", propagate_mode: "change_all" });
    const history = (await bob.client.get(`/messages/${second}/history`)).body.message_history;
    expect(history.map((h: Record<string, unknown>) => [h.user_id, h.topic, h.prev_topic])).toEqual([
      [bob.id, "spread", undefined],
      [alice.id, "spread wide", "spread"],
    ]);
  });

  test("disabled edit history is Zulip's error", async () => {
    const id = (await alice.client.post("/messages", { type: "stream", to: "history", topic: "t", content: "x" })).body.id;
    await server.owner.patch("/realm", { allow_edit_history: false });
    const res = await alice.client.get(`/messages/${id}/history`);
    expect(res.body).toEqual({ result: "error", msg: "Message edit history is disabled in this organization", code: "BAD_REQUEST" });
  });

  test("Invalid message(s) for unknown messages and private messages of others", async () => {
    const invalid = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };
    expect((await alice.client.get("/messages/987654/history")).body).toEqual(invalid);
    const pm = (await alice.client.post("/messages", { type: "private", to: [bob.id], content: "secret" })).body.id;
    expect((await outsider.client.get(`/messages/${pm}/history`)).body).toEqual(invalid);
    expect((await bob.client.get(`/messages/${pm}/history`)).body.message_history).toHaveLength(1);
  });

  test("a 10,000-byte message edited twice into very different text answers quickly", async () => {
    // Diffing every edit in full took 11 s here; past the bound each edit is a plain replacement.
    const texts = [1, 2, 3].map((seed) => prose(seed, 10000).slice(0, 10000));
    const id = (await alice.client.post("/messages", { type: "stream", to: "history", topic: "long", content: texts[0] })).body.id;
    for (const content of texts.slice(1)) expect((await alice.client.patch(`/messages/${id}`, { content })).body).toMatchObject({ result: "success" });
    const started = performance.now();
    const res = await alice.client.get(`/messages/${id}/history`);
    expect(performance.now() - started).toBeLessThan(1000);
    const history = res.body.message_history;
    expect(history).toHaveLength(3);
    expect(history[2].content_html_diff).toMatch(/^<p><span class="highlight_text_deleted">[^<]{9000,}<\/span><span class="highlight_text_inserted">[^<]{9000,}<\/span><\/p>$/);
  });
});
