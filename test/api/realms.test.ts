// Many organizations on one server, as Zulip hosts them: the Host header picks the realm, and
// nothing (users, credentials, streams, events) crosses from one realm to another.
import { createRealm } from "@chat/core";
import { waitForEvent, drainEvents } from "../support/events.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient } from "../support/client.ts";

describe.each(MODES)("realms (%s)", (mode) => {
  let server: TestServer;
  let acme: ApiClient;
  let acmeOwnerId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    const { services } = server.running;
    // The same email as the bootstrap realm's owner, in a second realm.
    const { owner } = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "acme", name: "Acme", owner: { email: OWNER_EMAIL, fullName: "Acme Owner", password: "acme-password" } }),
    );
    acmeOwnerId = owner.id;
    acme = server.client(OWNER_EMAIL, owner.api_key, "acme.chat.test");
  });
  afterAll(() => server.stop());

  test("the same email is two different users in two realms", async () => {
    const root = await server.owner.get("/users/me");
    const other = await acme.get("/users/me");
    expect(root.body.user_id).not.toBe(other.body.user_id);
    expect(other.body).toMatchObject({ user_id: acmeOwnerId, email: OWNER_EMAIL, full_name: "Acme Owner" });
  });

  test("a realm's credentials do not work on another realm's host", async () => {
    const acmeKey = acme.credentials!.apiKey;
    const res = await server.client(OWNER_EMAIL, acmeKey).get("/users/me");
    expect(res.status).toBe(401);
    expect(res.body.msg).toBe("Invalid API key");
    const rootKey = server.owner.credentials!.apiKey;
    expect((await server.client(OWNER_EMAIL, rootKey, "acme.chat.test").get("/users/me")).body.msg).toBe("Invalid API key");
  });

  test("passwords are per realm", async () => {
    const root = await server.anonymous.post("/fetch_api_key", { username: OWNER_EMAIL, password: "acme-password" });
    expect(root.body.code).toBe("AUTHENTICATION_FAILED");
    const login = await server.anonymousAt("acme.chat.test").post("/fetch_api_key", { username: OWNER_EMAIL, password: "acme-password" });
    expect(login.body.api_key).toBe(acme.credentials!.apiKey);
  });

  test("user lists and lookups stay within the realm", async () => {
    const members = (await acme.get("/users")).body.members;
    expect(members.map((u: { user_id: number }) => u.user_id)).toEqual([acmeOwnerId]);
    const rootOwnerId = (await server.owner.get("/users/me")).body.user_id;
    expect((await acme.get(`/users/${rootOwnerId}`)).body.msg).toBe("No such user");
    expect((await acme.delete(`/users/${rootOwnerId}`)).body.msg).toBe("No such user");
  });

  test("stream names resolve within the realm, and events stay within it", async () => {
    const rootQueue = (await server.owner.post("/register", {})).body.queue_id;
    const sent = await acme.post("/messages", { type: "stream", to: "general", topic: "acme only", content: "private to acme" });
    expect(sent.body.result).toBe("success");
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.id }, include: { realm: true } });
    expect(stored.realm.string_id).toBe("acme");
    const acmeQueue = (await acme.post("/register", {})).body.queue_id;
    await acme.post("/users", { email: "worker@acme.example", password: "worker-pass", full_name: "Acme Worker", short_name: "w" });
    await waitForEvent(acme, acmeQueue, (e) => e.type === "realm_user" && e.op === "add");
    expect(await drainEvents(server.owner, rootQueue)).toEqual([]);
    // Private messages cannot address another realm's users either.
    const rootOwnerId = (await server.owner.get("/users/me")).body.user_id;
    const cross = await acme.post("/messages", { type: "private", to: [rootOwnerId], content: "hi" });
    expect(cross.body).toMatchObject({ result: "error", msg: `Invalid user ID ${rootOwnerId}`, code: "BAD_REQUEST" });
  });

  test("a queue belongs to its user: another realm's user with the queue id gets BAD_EVENT_QUEUE_ID", async () => {
    const rootQueue = (await server.owner.post("/register", {})).body.queue_id;
    const res = await acme.get("/events", { queue_id: rootQueue, dont_block: true });
    expect(res.body).toEqual({ result: "error", msg: `Bad event queue id: ${rootQueue}`, code: "BAD_EVENT_QUEUE_ID", queue_id: rootQueue });
  });

  test("a host that names no realm, such as an IP address, is the bootstrap realm", async () => {
    const res = await server.client(OWNER_EMAIL, server.owner.credentials!.apiKey, "127.0.0.1:9991").get("/users/me");
    expect(res.body.full_name).toBe("Olivia Owner");
    const settings = await server.anonymousAt("localhost").get("/server_settings");
    expect(settings.body.realm_name).toBeDefined();
  });

  test("the default stream's description shows its emoji", async () => {
    const streams = (await server.owner.get("/streams")).body.streams as Array<{ name: string; rendered_description: string }>;
    const general = streams.find((s) => s.name === "general");
    expect(general?.rendered_description).toContain('<span aria-label="octopus" class="emoji emoji-1f419" role="img" title="octopus">:octopus:</span>');
  });

  test("a subdomain with no realm is NONEXISTENT_SUBDOMAIN", async () => {
    const res = await server.client(OWNER_EMAIL, server.owner.credentials!.apiKey, "nowhere.chat.test").get("/users/me");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ result: "error", msg: "There is no Zulip organization hosted at this subdomain.", code: "NONEXISTENT_SUBDOMAIN" });
  });

  test("server_settings describes the realm the host names", async () => {
    const root = await server.anonymous.get("/server_settings");
    const other = await server.anonymousAt("acme.chat.test").get("/server_settings");
    expect(other.body).toMatchObject({ result: "success", realm_name: "Acme", realm_uri: "http://acme.chat.test" });
    expect(root.body).toMatchObject({ realm_name: "Team Chat", realm_uri: "http://chat.test" });
  });
});
