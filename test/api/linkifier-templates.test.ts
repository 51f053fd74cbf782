// Linkifiers as URL templates (feature levels 54, 57, 176, 202): realm_linkifiers for clients with
// linkifier_url_template (realm_filters empty for them), GET /realm/linkifiers, PATCH
// /realm/filters/{id}, PATCH /realm/linkifiers (reorder), and rendering by template.
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

const MODERN = { client_capabilities: JSON.stringify({ linkifier_url_template: true }) };

describe.each(MODES)("linkifier URL templates (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;

  const modernState = async () => (await member.client.post("/register", { fetch_event_types: ["realm_linkifiers", "realm_filters"], ...MODERN })).body;
  const legacyState = async () => (await member.client.post("/register", { fetch_event_types: ["realm_linkifiers", "realm_filters"] })).body;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mel Member");
    await subscribeTo(member.client, ["links"]);
  });
  afterAll(() => server.stop());

  test("verifyAction: adding by url_template; modern clients get templates, 3.x clients tuples", async () => {
    let id = 0;
    const events = await verifyAction(
      member.client,
      ["realm_linkifiers", "realm_filters"],
      async () => {
        const res = await admin.client.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example.com/issues/{id}" });
        expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
        id = res.body.id;
      },
      5000,
      MODERN,
    );
    const linkifier = { id, pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example.com/issues/{id}" };
    expect(events).toContainEqual({ id: expect.any(Number), type: "realm_linkifiers", realm_linkifiers: [linkifier] });
    expect(await modernState()).toMatchObject({ realm_linkifiers: [linkifier], realm_filters: [] });
    expect(await legacyState()).toMatchObject({ realm_linkifiers: [], realm_filters: [["#(?P<id>[0-9]+)", "https://tracker.example.com/issues/%(id)s", id]] });
    expect((await member.client.get("/realm/linkifiers")).body.linkifiers).toEqual([linkifier]);
  });

  test("a 3.x url_format_string is stored as its template", async () => {
    const res = await admin.client.post("/realm/filters", { pattern: "JIRA-(?P<num>[0-9]+)", url_format_string: "https://jira.example.com/browse/JIRA-%(num)s" });
    expect(res.body.result).toBe("success");
    expect((await member.client.get("/realm/linkifiers")).body.linkifiers[1]).toEqual({ id: res.body.id, pattern: "JIRA-(?P<num>[0-9]+)", url_template: "https://jira.example.com/browse/JIRA-{num}" });
  });

  test("messages are linked by the template, with RFC 6570 expansion", async () => {
    await admin.client.post("/realm/filters", { pattern: "wiki:(?P<page>[A-Za-z/]+)", url_template: "https://wiki.example.com/{+page}{?page}" });
    const id = await sendStreamMessage(member.client, "links", "t", "see #42 and wiki:a/b");
    const message = (await member.client.get(`/messages/${id}`)).body.message;
    expect(message.content).toContain('href="https://tracker.example.com/issues/42"');
    expect(message.content).toContain('href="https://wiki.example.com/a/b?page=a%2Fb"');
  });

  test("verifyAction: PATCH /realm/filters/{id} changes pattern and template", async () => {
    const [first] = (await member.client.get("/realm/linkifiers")).body.linkifiers;
    const events = await verifyAction(
      member.client,
      ["realm_linkifiers"],
      () => admin.client.patch(`/realm/filters/${first.id}`, { pattern: "T(?P<id>[0-9]+)", url_template: "https://tracker.example.com/t/{id}" }),
      5000,
      MODERN,
    );
    expect(events[0].realm_linkifiers[0]).toEqual({ id: first.id, pattern: "T(?P<id>[0-9]+)", url_template: "https://tracker.example.com/t/{id}" });
  });

  test("verifyAction: PATCH /realm/linkifiers reorders them", async () => {
    const ids = ((await member.client.get("/realm/linkifiers")).body.linkifiers as Array<{ id: number }>).map((l) => l.id);
    const reversed = [...ids].reverse();
    const events = await verifyAction(member.client, ["realm_linkifiers", "realm_filters"], () => admin.client.patch("/realm/linkifiers", { ordered_linkifier_ids: JSON.stringify(reversed) }), 5000, MODERN);
    expect(events.find((e) => e.type === "realm_linkifiers")!.realm_linkifiers.map((l: { id: number }) => l.id)).toEqual(reversed);
    expect(((await member.client.get("/realm/linkifiers")).body.linkifiers as Array<{ id: number }>).map((l) => l.id)).toEqual(reversed);
    expect(((await legacyState()).realm_filters as Array<[string, string, number]>).map((t) => t[2])).toEqual(reversed);
  });

  test.each([
    ["patch", "/realm/linkifiers", () => ({ ordered_linkifier_ids: "[1, 1]" }), "The ordered list must not contain duplicated linkifiers"],
    ["patch", "/realm/linkifiers", () => ({ ordered_linkifier_ids: "[]" }), "The ordered list must enumerate all existing linkifiers exactly once"],
    ["post", "/realm/filters", () => ({ pattern: "Z(?P<id>[0-9]+)", url_template: "https://x.example/{hello}" }), "Group 'hello' in URL template is not present in linkifier pattern."],
    ["post", "/realm/filters", () => ({ pattern: "Z(?P<id>[0-9]+)-(?P<hello>[0-9]+)", url_template: "https://x.example/{hello}" }), "Group 'id' in linkifier pattern is not present in URL template."],
    ["post", "/realm/filters", () => ({ pattern: "Z(?P<id>[0-9]+)", url_template: "https://x.example/{id" }), "Invalid URL template."],
    ["post", "/realm/filters", () => ({ pattern: "Z(?P<id>[0-9]+)", url_template: "javascript:alert({id})" }), "Invalid URL template."],
    ["post", "/realm/filters", () => ({ pattern: "Z(?P<id>[0-9]+)" }), "Missing 'url_template' argument"],
    ["patch", "/realm/filters/999999", () => ({ pattern: "Z(?P<id>[0-9]+)", url_template: "https://x.example/{id}" }), "Linkifier not found."],
  ] as Array<["post" | "patch", string, () => Record<string, string>, string]>)("%s %s %# is refused and changes nothing", async (method, path, params, msg) => {
    const before = (await member.client.get("/realm/linkifiers")).body.linkifiers;
    const res = await admin.client[method](path, params());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect((await member.client.get("/realm/linkifiers")).body.linkifiers).toEqual(before);
  });

  test("members may not change or reorder linkifiers", async () => {
    const before = (await member.client.get("/realm/linkifiers")).body.linkifiers;
    const ids = JSON.stringify(before.map((l: { id: number }) => l.id));
    for (const res of [
      await member.client.patch("/realm/linkifiers", { ordered_linkifier_ids: ids }),
      await member.client.patch(`/realm/filters/${before[0].id}`, { pattern: "Q(?P<id>[0-9]+)", url_template: "https://x.example/{id}" }),
    ]) {
      expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    expect((await member.client.get("/realm/linkifiers")).body.linkifiers).toEqual(before);
  });
});
