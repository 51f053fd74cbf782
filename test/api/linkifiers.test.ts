import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("linkifiers (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    guest = await createTestUser(server, "Gil Guest", "guest");
  });
  afterAll(() => server.stop());

  test("an administrator adds a linkifier; everyone gets realm_filters with the full list", async () => {
    const queue = (await guest.client.post("/register", { event_types: ["realm_filters"] })).body.queue_id;
    const res = await admin.client.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_format_string: "https://github.com/zulip/zulip/issues/%(id)s" });
    expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    const tuple = ["#(?P<id>[0-9]+)", "https://github.com/zulip/zulip/issues/%(id)s", res.body.id];
    expect((await member.client.get("/realm/filters")).body).toEqual({ result: "success", msg: "", filters: [tuple] });
    const event = await waitForEvent(guest.client, queue, (e) => e.type === "realm_filters");
    expect(event).toEqual({ id: expect.any(Number), type: "realm_filters", realm_filters: [tuple] });
  });

  test.each([
    [{ pattern: "#(?P<id>[0-9]+", url_format_string: "https://x.example/%(id)s" }, /^Bad regular expression: /],
    [{ pattern: "#(?P<id>\\d+)(?P=id)", url_format_string: "https://x.example/%(id)s" }, /^Bad regular expression: backreferences .* are not supported$/],
    [{ pattern: "(?<![a-z])#(?P<id>\\d+)", url_format_string: "https://x.example/%(id)s" }, /^Bad regular expression: lookbehind assertions .* are not supported$/],
    [{ pattern: "#(?P<id>\\d+)(?=!)", url_format_string: "https://x.example/%(id)s" }, /^Bad regular expression: lookahead assertions .* are not supported$/],
    [{ pattern: "(?P<id>\\w{1000}\\w{1000}\\w{1000})", url_format_string: "https://x.example/%(id)s" }, /^Bad regular expression: the pattern is too large/],
    [{ pattern: "#(?P<id>\\d+)", url_format_string: "javascript:alert(%(id)s)" }, /^Invalid URL format string\.$/],
    [{ pattern: "#(?P<id>\\d+)", url_format_string: "https://x.example/%(hello)s" }, /^Group 'hello' in URL format string is not present in linkifier pattern\.$/],
    [{ pattern: "T(?P<id>\\d+)-(?P<x>\\d+)", url_format_string: "https://x.example/%(x)s" }, /^Group 'id' in linkifier pattern is not present in URL format string\.$/],
    [{ pattern: "#(?P<id>[0-9]+)", url_format_string: "https://other.example/%(id)s" }, /^Realm filter with this Realm and Pattern already exists\.$/],
  ])("refuses %j with a clear error and no change", async (params, msg) => {
    const before = (await admin.client.get("/realm/filters")).body.filters;
    const res = await admin.client.post("/realm/filters", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    expect(res.body.msg).toMatch(msg);
    expect((await admin.client.get("/realm/filters")).body.filters).toEqual(before);
  });

  test("patterns that backtrack catastrophically elsewhere are accepted: matching is linear", async () => {
    const res = await admin.client.post("/realm/filters", { pattern: "(?P<id>(a+)+)$", url_format_string: "https://x.example/%(id)s" });
    expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    expect((await admin.client.delete(`/realm/filters/${res.body.id}`)).body.result).toBe("success");
  });

  test("missing parameters", async () => {
    expect((await admin.client.post("/realm/filters", { pattern: "x(?P<a>b)" })).body).toMatchObject({ msg: "Missing 'url_template' argument" }); // Zulip 9.0's name; url_format_string is still taken
  });

  test("members and guests can neither add nor delete", async () => {
    const id = (await admin.client.post("/realm/filters", { pattern: "M(?P<n>\\d+)", url_format_string: "https://m.example/%(n)s" })).body.id;
    for (const user of [member, guest]) {
      const add = await user.client.post("/realm/filters", { pattern: "Q(?P<n>\\d+)", url_format_string: "https://q.example/%(n)s" });
      expect(add.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
      expect((await user.client.delete(`/realm/filters/${id}`)).body.msg).toBe("Must be an organization administrator");
    }
    const filters = (await member.client.get("/realm/filters")).body.filters as Array<[string, string, number]>;
    expect(filters.map((f) => f[0])).toContain("M(?P<n>\\d+)");
    expect(filters.map((f) => f[0])).not.toContain("Q(?P<n>\\d+)");
  });

  test("an administrator deletes a linkifier; unknown ids are `Filter not found`", async () => {
    const id = (await admin.client.post("/realm/filters", { pattern: "D(?P<n>\\d+)", url_format_string: "https://d.example/%(n)s" })).body.id;
    const queue = (await member.client.post("/register", { event_types: ["realm_filters"] })).body.queue_id;
    expect((await server.owner.delete(`/realm/filters/${id}`)).body).toEqual({ result: "success", msg: "" });
    const event = await waitForEvent(member.client, queue, (e) => e.type === "realm_filters");
    expect(event.realm_filters.map((f: unknown[]) => f[2])).not.toContain(id);
    expect((await server.owner.delete(`/realm/filters/${id}`)).body).toEqual({ result: "error", msg: "Filter not found", code: "BAD_REQUEST" });
    expect(await drainEvents(member.client, queue, event.id)).toEqual([]);
  });

  test("register state: realm_filters plus the events equals a fresh register", async () => {
    let id = 0;
    await verifyAction(member.client, ["realm_filters"], async () => {
      id = (await admin.client.post("/realm/filters", { pattern: "V(?P<n>\\d+)", url_format_string: "https://v.example/%(n)s" })).body.id;
    });
    await verifyAction(member.client, ["realm_filters"], () => admin.client.delete(`/realm/filters/${id}`));
  });
});
