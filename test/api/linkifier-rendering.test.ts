// Linkifiers applied by the message renderer: links in content (never inside code or existing
// links) and topic_links for the topic, shown to clients in the message event.
import { waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";

describe.each(MODES)("linkifiers in messages (%s)", (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(mode);
    const res = await server.owner.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_format_string: "https://tracker.example/issues/%(id)s" });
    expect(res.body.result).toBe("success");
  });
  afterAll(() => server.stop());

  test("links matches in text and topic, but not in code or inside links", async () => {
    const queue = (await server.owner.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    const content = "Fixes #123, not `#456`, and [see #789](https://other.example/x).";
    const sent = await server.owner.post("/messages", { type: "stream", to: "general", topic: "bug #42", content });
    expect(sent.body.result).toBe("success");
    const event = await waitForEvent(server.owner, queue, (e) => e.type === "message");
    const html: string = event.message.content;
    expect(html).toContain('<a href="https://tracker.example/issues/123"');
    expect(html).toContain(">#123</a>");
    expect(html).toContain("<code>#456</code>");
    expect(html).not.toContain("issues/456");
    expect(html).not.toContain("issues/789");
    // Zulip 3.x's form (feature level 1): the URLs alone.
    expect(event.message.topic_links).toEqual(["https://tracker.example/issues/42"]);
    expect(event.message.subject_links).toEqual(event.message.topic_links);
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.id } });
    expect(stored.rendered_content).toBe(html);
  });

  test("hostile text around a match cannot inject markup", async () => {
    const queue = (await server.owner.post("/register", { event_types: ["message"], apply_markdown: true })).body.queue_id;
    await server.owner.post("/messages", { type: "stream", to: "general", topic: "x", content: '#1"><script>alert(1)</script> <img src=x onerror=alert(1)>' });
    const event = await waitForEvent(server.owner, queue, (e) => e.type === "message");
    const html: string = event.message.content;
    // Tags and attributes only count as markup; the same words escaped are text.
    expect(html).not.toMatch(/<(script|img)\b/i);
    expect(html).not.toMatch(/<[^>]*\sonerror=/i);
    expect(html).toContain("&lt;script&gt;");
    expect(html).toContain('href="https://tracker.example/issues/1"');
  });

  test("linkifiers that backtrack catastrophically elsewhere cannot stall sending or fetching", async () => {
    // The first passed the old safe-regex2 screen; on 25 digits it took 0.27 s, doubling per digit.
    for (const pattern of ["(?P<id>(?:\\w|\\d)+)!", "(?P<id>(\\w+\\s?)*)$", "(?P<id>a(?:[a ]*z)?)"]) {
      const res = await server.owner.post("/realm/filters", { pattern, url_format_string: "https://evil.example/%(id)s" });
      expect(res.body).toMatchObject({ result: "success" });
    }
    const content = ["1".repeat(5000), "a ".repeat(2498)].join("\n\n"); // 10,000 bytes, the limit
    const started = performance.now();
    const sent = await server.owner.post("/messages", { type: "stream", to: "general", topic: "1".repeat(60), content });
    expect(sent.body).toMatchObject({ result: "success", msg: "" });
    const fetched = await server.owner.get("/messages", { anchor: sent.body.id, num_before: 0, num_after: 0, apply_markdown: true });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(fetched.body.messages[0].id).toBe(sent.body.id);
    // `(\\w+\\s?)*$` matches the whole topic, in linear time.
    expect(fetched.body.messages[0].topic_links).toEqual([`https://evil.example/${"1".repeat(60)}`]);
  });
});
