// /realm/domains (feature levels 63 and 143) and what emails_restricted_to_domains does with them.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("realm domains (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Domain Admin", "admin");
    member = await createTestUser(server, "Domain Member");
  });
  afterAll(() => server.stop());

  const domains = async () => (await member.client.get("/realm/domains")).body.domains;

  test("starts empty, for anyone, and /register says the same", async () => {
    expect((await member.client.get("/realm/domains")).body).toEqual({ result: "success", msg: "", domains: [] });
    expect((await member.client.post("/register", { fetch_event_types: ["realm_domains"] })).body.realm_domains).toEqual([]);
  });

  test("an owner adds a domain, lowered and trimmed: new_domain, an event to everyone, the state follows", async () => {
    let added: Record<string, any> = {};
    const events = await verifyAction(member.client, ["realm_domains"], async () => {
      added = (await server.owner.post("/realm/domains", { domain: "  Example.ORG ", allow_subdomains: false })).body;
    });
    expect(added).toEqual({ result: "success", msg: "", new_domain: [expect.any(Number), "example.org"] });
    expect(events).toEqual([{ id: expect.any(Number), type: "realm_domains", op: "add", realm_domain: { domain: "example.org", allow_subdomains: false } }]);
    expect(await domains()).toEqual([{ domain: "example.org", allow_subdomains: false }]);
  });

  test("a domain already there is Zulip's error", async () => {
    const res = await server.owner.post("/realm/domains", { domain: "EXAMPLE.org", allow_subdomains: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "The domain example.org is already a part of your organization.", code: "BAD_REQUEST" });
  });

  test.each([
    ["", "Invalid domain: Domain can't be empty."],
    ["localhost", "Invalid domain: Domain must have at least one dot (.)"],
    [".example.com", "Invalid domain: Domain cannot start or end with a dot (.)"],
    ["a..b", "Invalid domain: Consecutive '.' are not allowed."],
    ["-a.b", "Invalid domain: Subdomains cannot start or end with a '-'."],
    ["exa_mple.com", "Invalid domain: Domain can only have letters, numbers, '.' and '-'s."],
    [`${"a".repeat(300)}.com`, "Invalid domain: Domain is too long"],
  ])("an invalid domain %j is refused", async (domain, msg) => {
    const res = await server.owner.post("/realm/domains", { domain, allow_subdomains: false });
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await domains()).toEqual([{ domain: "example.org", allow_subdomains: false }]);
  });

  test("administrators and members may not change them (owners only since feature level 143)", async () => {
    for (const user of [admin, member]) {
      for (const res of [
        await user.client.post("/realm/domains", { domain: "other.org", allow_subdomains: false }),
        await user.client.patch("/realm/domains/example.org", { allow_subdomains: true }),
        await user.client.delete("/realm/domains/example.org"),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization owner" });
      }
    }
    expect(await domains()).toEqual([{ domain: "example.org", allow_subdomains: false }]);
  });

  test("PATCH changes allow_subdomains, with a change event; an unknown domain is Zulip's error", async () => {
    const events = await verifyAction(member.client, ["realm_domains"], () => server.owner.patch("/realm/domains/example.org", { allow_subdomains: true }));
    expect(events).toEqual([{ id: expect.any(Number), type: "realm_domains", op: "change", realm_domain: { domain: "example.org", allow_subdomains: true } }]);
    const unknown = await server.owner.patch("/realm/domains/nowhere.org", { allow_subdomains: true });
    expect(unknown.body).toEqual({ result: "error", msg: "No entry found for domain nowhere.org.", code: "BAD_REQUEST" });
    expect((await server.owner.delete("/realm/domains/nowhere.org")).body.msg).toBe("No entry found for domain nowhere.org.");
    expect((await server.owner.patch("/realm/domains/example.org", { allow_subdomains: "yes" })).status).toBe(400);
  });

  test("with emails_restricted_to_domains, only those domains (and subdomains where allowed) may join", async () => {
    expect((await server.owner.patch("/realm", { emails_restricted_to_domains: true })).body.result).toBe("success");
    const outside = await server.owner.post("/users", { email: "someone@elsewhere.net", password: "member-pass", full_name: "Outside Person" });
    expect(outside.body).toEqual({ result: "error", msg: "Email 'someone@elsewhere.net' not allowed in this organization", code: "BAD_REQUEST" });
    const plus = await server.owner.post("/users", { email: "some+one@example.org", password: "member-pass", full_name: "Plus Person" });
    expect(plus.body.msg).toBe("Email addresses containing + are not allowed.");
    const sub = await server.owner.post("/users", { email: "sub.person@team.example.org", password: "member-pass", full_name: "Sub Person" });
    expect(sub.body.result).toBe("success");
    const exact = await server.owner.post("/users", { email: "exact.person@EXAMPLE.org", password: "member-pass", full_name: "Exact Person" });
    expect(exact.body.result).toBe("success");
    // Not a subdomain: a domain that merely ends the same way.
    const lookalike = await server.owner.post("/users", { email: "x@badexample.org", password: "member-pass", full_name: "Lookalike Person" });
    expect(lookalike.body.result).toBe("error");

    // Invitations too, in Zulip's words, and none is sent.
    const invite = await server.owner.post("/invites", { invitee_emails: "ok@example.org, no@elsewhere.net", stream_ids: "[]" });
    expect(invite.body).toMatchObject({
      result: "error",
      msg: "Some emails did not validate, so we didn't send any invitations.",
      errors: [["no@elsewhere.net", "Outside your domain.", false]],
    });

    await server.owner.patch("/realm/domains/example.org", { allow_subdomains: false });
    const noLongerSub = await server.owner.post("/users", { email: "sub.two@team.example.org", password: "member-pass", full_name: "Sub Two" });
    expect(noLongerSub.body.result).toBe("error");
  });

  test("removing the last domain lifts emails_restricted_to_domains, with both events", async () => {
    const events = await verifyAction(member.client, ["realm_domains", "realm"], () => server.owner.delete("/realm/domains/example.org"));
    expect(events).toEqual([
      { id: expect.any(Number), type: "realm", op: "update", property: "emails_restricted_to_domains", value: false },
      { id: expect.any(Number), type: "realm_domains", op: "remove", domain: "example.org" },
    ]);
    expect(await domains()).toEqual([]);
    const state = (await member.client.post("/register", { fetch_event_types: ["realm"] })).body;
    expect(state.realm_emails_restricted_to_domains).toBe(false);
    const anywhere = await server.owner.post("/users", { email: "anyone@elsewhere.net", password: "member-pass", full_name: "Anyone Anywhere" });
    expect(anywhere.body.result).toBe("success");
  });

  test("removing one of several keeps the restriction; events go to every active user", async () => {
    const queue = (await member.client.post("/register", { event_types: ["realm_domains", "realm"] })).body.queue_id;
    await server.owner.post("/realm/domains", { domain: "one.org", allow_subdomains: false });
    await server.owner.post("/realm/domains", { domain: "two.org", allow_subdomains: true });
    await server.owner.patch("/realm", { emails_restricted_to_domains: true });
    expect((await server.owner.delete("/realm/domains/one.org")).body.result).toBe("success");
    await waitForEvent(member.client, queue, (e) => e.type === "realm_domains" && e.op === "remove", { acknowledge: false });
    const events = await drainEvents(member.client, queue);
    expect(events.filter((e) => e.type === "realm" && e.property === "emails_restricted_to_domains").map((e) => e.value)).toEqual([true]);
    expect(await domains()).toEqual([{ domain: "two.org", allow_subdomains: true }]);
    await server.owner.delete("/realm/domains/two.org");
  });
});
