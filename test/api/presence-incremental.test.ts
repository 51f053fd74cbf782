// Incremental presence (Zulip's feature level 263): /register and POST /users/me/presence give the
// newest change's update id, and a client that sends it back gets only the users changed since,
// in the modern (slim) form. And presence without client names for today's clients (178).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { waitForEvent } from "../support/events.ts";

const MODERN = { client_capabilities: JSON.stringify({ notification_settings_null: true, user_settings_object: true }) };

describe.each(MODES)("incremental presence (%s)", (mode) => {
  let server: TestServer;
  let ann: TestUser;
  let ben: TestUser;
  let cy: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    ann = await createTestUser(server, "Ann Inc");
    ben = await createTestUser(server, "Ben Inc");
    cy = await createTestUser(server, "Cy Inc");
  });
  afterAll(() => server.stop());

  const report = (user: TestUser, extra: Record<string, unknown> = {}) => user.client.post("/users/me/presence", { status: "active", ...extra });

  test("/register reports the newest update id; sending it back gives only what changed since", async () => {
    expect((await report(ann)).body.result).toBe("success");
    const first = (await cy.client.post("/register", { event_types: ["presence"], slim_presence: true })).body;
    expect(first.presence_last_update_id).toBeGreaterThan(0);
    expect(Object.keys(first.presences)).toContain(String(ann.id));
    expect(typeof first.server_timestamp).toBe("number");

    expect((await report(ben)).body.result).toBe("success");
    const next = (await cy.client.post("/register", { event_types: ["presence"], presence_last_update_id: first.presence_last_update_id })).body;
    expect(Object.keys(next.presences)).toEqual([String(ben.id)]);
    expect(next.presences[String(ben.id)]).toEqual({ active_timestamp: expect.any(Number), idle_timestamp: expect.any(Number) });
    expect(next.presence_last_update_id).toBeGreaterThan(first.presence_last_update_id);

    // Nothing new: no presences, and the same id back.
    const none = (await cy.client.post("/register", { event_types: ["presence"], presence_last_update_id: next.presence_last_update_id })).body;
    expect(none.presences).toEqual({});
    expect(none.presence_last_update_id).toBe(next.presence_last_update_id);
  });

  test("POST /users/me/presence with last_update_id: -1 gives everyone, then only changes", async () => {
    const all = (await report(cy, { last_update_id: -1 })).body;
    expect(all).toMatchObject({ result: "success", presences: expect.any(Object), presence_last_update_id: expect.any(Number) });
    expect(Object.keys(all.presences).sort()).toEqual([String(ann.id), String(ben.id), String(cy.id)].sort());
    // The reporter's own report is a change (its last connection moved), and nobody else's is.
    const again = (await report(cy, { last_update_id: all.presence_last_update_id })).body;
    expect(Object.keys(again.presences)).toEqual([String(cy.id)]);
    expect(again.presence_last_update_id).toBeGreaterThan(all.presence_last_update_id);
    expect((await report(ann)).body.result).toBe("success");
    const changed = (await cy.client.get("/realm/presence")).body;
    expect(changed.result).toBe("success");
    const polled = (await report(cy, { last_update_id: again.presence_last_update_id, ping_only: false })).body;
    expect(Object.keys(polled.presences).sort()).toEqual([String(ann.id), String(cy.id)].sort());
  });

  test("a legacy client's answers keep their shape", async () => {
    const res = (await report(ben)).body;
    expect(res.presence_last_update_id).toBeUndefined();
    expect(Object.keys(res.presences)).toContain(ben.email);
  });

  test("today's clients get presence under `website` only, in /register and events (feature level 178); 3.x clients by client", async () => {
    const viaApp = await ann.client.raw("post", "/users/me/presence").set("User-Agent", "ZulipMobile/27.1 (Android 12)").type("form").send("status=active");
    expect(viaApp.body.result).toBe("success");
    const modern = (await cy.client.post("/register", { event_types: ["presence"], ...MODERN })).body;
    expect(Object.keys(modern.presences[ann.email]).sort()).toEqual(["aggregated", "website"]);
    expect(modern.presences[ann.email].website).toEqual({ client: "website", status: "active", timestamp: expect.any(Number), pushable: false });
    const legacy = (await cy.client.post("/register", { event_types: ["presence"] })).body;
    expect(Object.keys(legacy.presences[ann.email])).toContain("ZulipMobile");

    const queue = modern.queue_id as string;
    const legacyQueue = legacy.queue_id as string;
    // A new client of Ben's is news to everyone.
    const res = await ben.client.raw("post", "/users/me/presence").set("User-Agent", "ZulipElectron/5.11.1").type("form").send("status=active");
    expect(res.body.result).toBe("success");
    const event = await waitForEvent(cy.client, queue, (e) => e.type === "presence" && e.user_id === ben.id);
    expect(Object.keys(event.presence)).toEqual(["website"]);
    const legacyEvent = await waitForEvent(cy.client, legacyQueue, (e) => e.type === "presence" && e.user_id === ben.id);
    expect(Object.keys(legacyEvent.presence)).toEqual(["ZulipElectron"]);
  });

  test.each([[{ last_update_id: "soon" }, "last_update_id is not an integer"]])("%j is refused", async (params, msg) => {
    const res = await report(ann, params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
  });
});
