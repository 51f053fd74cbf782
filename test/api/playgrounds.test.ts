// Code playgrounds (feature levels 49 and 196): POST /realm/playgrounds, DELETE
// /realm/playgrounds/{id}, /register's realm_playgrounds and `realm_playgrounds` events.
import { createTestUser, type TestUser } from "../support/users.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("code playgrounds (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;

  const playgrounds = async () => (await member.client.post("/register", { fetch_event_types: ["realm_playgrounds"] })).body.realm_playgrounds;
  const python = { name: "Python playground", pygments_language: "Python", url_template: "https://python.example.com/?code={code}" };

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mel Member");
  });
  afterAll(() => server.stop());

  test("none at first", async () => {
    expect(await playgrounds()).toEqual([]);
  });

  test("verifyAction: an administrator adds one, everyone gets the list", async () => {
    let id = 0;
    const events = await verifyAction(member.client, ["realm_playgrounds"], async () => {
      const res = await admin.client.post("/realm/playgrounds", { ...python, name: "  Python playground ", url_template: " https://python.example.com/?code={code} " });
      expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
      id = res.body.id;
    });
    const expected = [{ id, ...python }];
    expect(events).toEqual([{ id: expect.any(Number), type: "realm_playgrounds", realm_playgrounds: expected }]);
    expect(await playgrounds()).toEqual(expected);
  });

  test("RFC 6570 operators are fine as long as code is the only variable", async () => {
    const res = await admin.client.post("/realm/playgrounds", { name: "Rust", pygments_language: "Rust", url_template: "https://play.example.org/{?code}" });
    expect(res.body.result).toBe("success");
    expect((await playgrounds()).map((p: { name: string }) => p.name)).toEqual(["Python playground", "Rust"]);
  });

  test.each([
    [{ ...python, pygments_language: "a$b$c" }, "Invalid characters in pygments language"],
    [{ ...python, url_template: "https://template.com{?test,code}" }, '"code" should be the only variable present in the URL template'],
    [{ ...python, url_template: "https://template.com?test={test" }, "Invalid URL template."],
    [{ ...python, url_template: "https://template.com{?test}" }, 'Missing the required variable "code" in the URL template'],
    [{ ...python, url_template: "javascript:alert({code})" }, "Invalid URL template."],
    [python, "Realm playground with this Realm, Pygments language and Name already exists."],
    [{ ...python, name: "   " }, "This field cannot be blank."],
    [{ ...python, pygments_language: "x".repeat(41) }, "pygments_language is too long (limit: 40 characters)"],
    [{ name: "No template", pygments_language: "C" }, "Missing 'url_template' argument"],
  ] as Array<[Record<string, string>, string]>)("%j is refused and changes nothing", async (params, msg) => {
    const before = await playgrounds();
    const res = await admin.client.post("/realm/playgrounds", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await playgrounds()).toEqual(before);
  });

  test("members may neither add nor remove, even with nothing else sent", async () => {
    const before = await playgrounds();
    for (const res of [await member.client.post("/realm/playgrounds", {}), await member.client.delete(`/realm/playgrounds/${before[0].id}`)]) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    expect(await playgrounds()).toEqual(before);
  });

  test("verifyAction: removing one; an unknown id is refused", async () => {
    const [first, second] = await playgrounds();
    const missing = await admin.client.delete(`/realm/playgrounds/${second.id + 1000}`);
    expect(missing.body).toMatchObject({ result: "error", msg: "Invalid playground" });
    const events = await verifyAction(member.client, ["realm_playgrounds"], () => admin.client.delete(`/realm/playgrounds/${first.id}`));
    expect(events).toEqual([{ id: expect.any(Number), type: "realm_playgrounds", realm_playgrounds: [second] }]);
  });
});
