// Spectators: people with no credentials reading an organization's web-public streams (Zulip's
// feature levels 109, 116, 149). Tested as an attacker would: every way a narrow, an id, a file
// link or another organization's host might reach something else, and nothing at all once the
// organization turns spectators off.
import http from "node:http";
import request from "supertest";
import { createRealm } from "@chat/core";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { checkResponse } from "../support/openapi.ts";
import type { ApiClient } from "../support/client.ts";

const WEB_PUBLIC = { operator: "channels", operand: "web-public" };
const NOT_LOGGED_IN = { result: "error", msg: "Not logged in: API authentication or user session required", code: "UNAUTHORIZED" };

/**
 * A request under /json/ as a browser with no session sends it (over plain http: the API document
 * lists /api/v1 only, and /json/ is the same routes).
 */
function browser(server: TestServer, method: string, path: string, options: { query?: Record<string, string>; form?: Record<string, string>; cookie?: string } = {}) {
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  const query = options.query ? `?${new URLSearchParams(options.query)}` : "";
  const headers: Record<string, string> = { Host: "chat.test" };
  if (options.cookie) headers.Cookie = options.cookie;
  if (body !== undefined) Object.assign(headers, { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": String(Buffer.byteLength(body)) });
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Record<string, any> }>((resolve, reject) => {
    const req = http.request(`${server.baseUrl}${path}${query}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function ok<T extends { status: number; body: Record<string, any> }>(res: T): T {
  if (res.body.result !== "success") throw new Error(`expected success: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

describe.each(MODES)("spectators (%s)", (mode) => {
  let server: TestServer;
  let spectator: ApiClient;
  let alice: TestUser;
  let bob: TestUser;
  const ids: Record<string, number> = {};
  const streams: Record<string, number> = {};
  let webFile: string;
  let secretFile: string;

  const fetchAs = (client: ApiClient, narrow: unknown, extra: Record<string, unknown> = {}) =>
    client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow, ...extra });
  const contents = (res: { body: Record<string, any> }) => (res.body.messages as Array<{ content: string }>).map((m) => m.content);
  const send = async (client: ApiClient, params: Record<string, unknown>) => ok(await client.post("/messages", params)).body.id as number;
  const upload = async (client: ApiClient, name: string) => {
    const res = await client.raw("post", "/user_uploads").attach("file", Buffer.from(`contents of ${name}`), name);
    return res.body.uri as string;
  };

  beforeAll(async () => {
    server = await startTestServer(mode, { WEB_PUBLIC_STREAMS_ENABLED: "true" });
    spectator = server.anonymous;
    alice = await createTestUser(server, "Alice Author");
    bob = await createTestUser(server, "Bob Builder");
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "web" }], is_web_public: true, principals: [alice.id, bob.id] }));
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "open" }], principals: [alice.id, bob.id] }));
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "secret" }], invite_only: true, principals: [alice.id, bob.id] }));
    for (const name of ["web", "open", "secret"]) streams[name] = ok(await alice.client.get("/get_stream_id", { stream: name })).body.stream_id;
    webFile = await upload(alice.client, "web.txt");
    secretFile = await upload(alice.client, "secret.txt");
    ids.web = await send(alice.client, { type: "stream", to: "web", topic: "hello", content: `Web message one [file](${webFile})` });
    ids.webBob = await send(bob.client, { type: "stream", to: "web", topic: "other topic", content: "Web message by Bob" });
    ids.open = await send(alice.client, { type: "stream", to: "open", topic: "hello", content: "Open message" });
    ids.secret = await send(alice.client, { type: "stream", to: "secret", topic: "hello", content: `Secret message [file](${secretFile})` });
    ids.dm = await send(alice.client, { type: "private", to: JSON.stringify([bob.id]), content: "Private note" });
    ok(await server.owner.patch("/realm", { enable_spectator_access: true }));
  });
  afterAll(() => server.stop());

  test("a spectator reads the web-public streams' messages, flagged read, with avatars", async () => {
    const res = ok(await fetchAs(spectator, [WEB_PUBLIC], { client_gravatar: true }));
    expect(contents(res)).toEqual([expect.stringContaining("Web message one"), expect.stringContaining("Web message by Bob")]);
    const [first] = res.body.messages;
    expect(first).toMatchObject({ id: ids.web, type: "stream", stream_id: streams.web, display_recipient: "web", subject: "hello", flags: ["read"], sender_id: alice.id });
    // client_gravatar is ignored for spectators: every avatar is a URL.
    expect(typeof first.avatar_url).toBe("string");
    expect(res.body).toMatchObject({ found_newest: true, found_oldest: true, history_limited: false, anchor: 10_000_000_000_000_000 });
  });

  test("the same through /json/, without a session, and the web app's in:home is dropped", async () => {
    const narrow = JSON.stringify([{ operator: "in", operand: "home", negated: false }, WEB_PUBLIC]);
    const res = await browser(server, "GET", "/json/messages", { query: { anchor: "newest", num_before: "10", num_after: "0", narrow } });
    checkResponse("get", "/api/v1/messages", res.status, res.body, res.headers["content-type"]);
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m: { id: number }) => m.id)).toEqual([ids.web, ids.webBob]);
  });

  test.each<[string, unknown]>([
    ["no narrow", []],
    ["a narrow without channels:web-public", [{ operator: "channel", operand: "web" }]],
    ["channels:web-public negated", [{ ...WEB_PUBLIC, negated: true }]],
    ["channels:public only", [{ operator: "channels", operand: "public" }]],
    ["is:dm", [WEB_PUBLIC, { operator: "is", operand: "dm" }]],
    ["is:private", [WEB_PUBLIC, ["is", "private"]]],
    ["is:starred", [WEB_PUBLIC, { operator: "is", operand: "starred" }]],
    ["dm", [WEB_PUBLIC, { operator: "dm", operand: [1] }]],
    ["pm-with", [WEB_PUBLIC, ["pm-with", "owner@example.com"]]],
    ["dm-including", [WEB_PUBLIC, { operator: "dm-including", operand: 1 }]],
    ["group-pm-with", [WEB_PUBLIC, { operator: "group-pm-with", operand: 1 }]],
    ["with", [WEB_PUBLIC, { operator: "with", operand: 1 }]],
    ["in:all", [WEB_PUBLIC, { operator: "in", operand: "all" }]],
  ])("%s is the 401 of a request without credentials", async (_name, narrow) => {
    const res = await fetchAs(spectator, narrow);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_LOGGED_IN);
    expect(res.headers["www-authenticate"]).toBe('Basic realm="zulip"');
  });

  test.each<[string, () => unknown]>([
    ["a public stream that is not web-public", () => "open"],
    ["a private stream, by name", () => "secret"],
    ["a private stream, by id", () => streams.secret],
    ["a stream that does not exist", () => "nowhere"],
  ])("a channel term naming %s is an unknown web-public channel", async (_name, operand) => {
    const res = await fetchAs(spectator, [WEB_PUBLIC, { operator: "channel", operand: operand() }]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: `Invalid narrow operator: unknown web-public channel ${operand()}`, code: "BAD_NARROW" });
  });

  test("terms only ever narrow the web-public messages", async () => {
    const cases: Array<[unknown[], number[]]> = [
      [[WEB_PUBLIC, { operator: "channel", operand: "web" }], [ids.web, ids.webBob]],
      [[WEB_PUBLIC, { operator: "stream", operand: streams.web }, { operator: "topic", operand: "hello" }], [ids.web]],
      // Alice also wrote to open, to secret and to Bob: none of that shows.
      [[WEB_PUBLIC, { operator: "sender", operand: alice.id }], [ids.web]],
      [[WEB_PUBLIC, { operator: "sender", operand: alice.email }], [ids.web]],
      // Negating a term never widens past web-public.
      [[WEB_PUBLIC, { operator: "channel", operand: "web", negated: true }], []],
      [[WEB_PUBLIC, { operator: "sender", operand: alice.id, negated: true }], [ids.webBob]],
      [[WEB_PUBLIC, { operator: "topic", operand: "hello", negated: true }], [ids.webBob]],
      [[WEB_PUBLIC, { operator: "channels", operand: "public" }], [ids.web, ids.webBob]],
      [[WEB_PUBLIC, { operator: "channels", operand: "public", negated: true }], []],
      [[WEB_PUBLIC, { operator: "id", operand: ids.secret }], []],
      [[WEB_PUBLIC, { operator: "id", operand: ids.dm }], []],
      [[WEB_PUBLIC, { operator: "id", operand: ids.open }], []],
      [[WEB_PUBLIC, { operator: "id", operand: ids.web }], [ids.web]],
      [[WEB_PUBLIC, { operator: "id", operand: ids.web, negated: true }], [ids.webBob]],
      [[WEB_PUBLIC, { operator: "near", operand: ids.secret }], [ids.web, ids.webBob]],
      [[WEB_PUBLIC, { operator: "search", operand: "Secret" }], []],
      [[WEB_PUBLIC, { operator: "search", operand: "Private" }], []],
      [[WEB_PUBLIC, { operator: "search", operand: "Open" }], []],
      [[WEB_PUBLIC, { operator: "search", operand: "message", negated: true }], []],
      [[WEB_PUBLIC, { operator: "has", operand: "link" }], [ids.web]],
    ];
    for (const [narrow, expected] of cases) {
      const res = ok(await fetchAs(spectator, narrow));
      expect([JSON.stringify(narrow), res.body.messages.map((m: { id: number }) => m.id)]).toEqual([JSON.stringify(narrow), expected]);
    }
    const search = ok(await fetchAs(spectator, [WEB_PUBLIC, { operator: "search", operand: "Bob" }]));
    expect(search.body.messages).toEqual([expect.objectContaining({ id: ids.webBob, match_content: expect.stringContaining('<span class="highlight">Bob</span>') })]);
  });

  test("a sender is named by the address everyone is shown, never a hidden one", async () => {
    // Only administrators see real addresses (email_address_visibility 2).
    ok(await server.owner.patch("/realm", { email_address_visibility: 2 }));
    try {
      const res = await fetchAs(spectator, [WEB_PUBLIC, { operator: "sender", operand: alice.email }]);
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe(`Invalid narrow operator: unknown user ${alice.email}`);
      const page = ok(await fetchAs(spectator, [WEB_PUBLIC]));
      expect(JSON.stringify(page.body)).not.toContain(alice.email);
      const state = ok(await spectator.post("/register", {})).body;
      expect(JSON.stringify(state)).not.toContain(alice.email);
      expect(JSON.stringify(state)).not.toContain(bob.email);
    } finally {
      ok(await server.owner.patch("/realm", { email_address_visibility: 1 }));
    }
  });

  test("an anchor on a message it may not read finds nothing there", async () => {
    for (const anchor of [ids.secret, ids.dm, ids.open]) {
      const res = ok(await spectator.get("/messages", { anchor, num_before: 0, num_after: 0, narrow: [WEB_PUBLIC] }));
      expect(res.body).toMatchObject({ found_anchor: false, messages: [] });
    }
    const around = ok(await spectator.get("/messages", { anchor: ids.open, num_before: 5, num_after: 5, narrow: [WEB_PUBLIC] }));
    expect(around.body.messages.map((m: { id: number }) => m.id)).toEqual([ids.web, ids.webBob]);
  });

  test("one message by id: a web-public one with its source; anything else is Invalid message(s)", async () => {
    const res = ok(await spectator.get(`/messages/${ids.web}`));
    expect(res.body.raw_content).toBe(`Web message one [file](${webFile})`);
    expect(res.body.message).toMatchObject({ id: ids.web, flags: ["read"], display_recipient: "web" });
    for (const id of [ids.secret, ids.dm, ids.open, 999_999_999]) {
      const denied = await spectator.get(`/messages/${id}`);
      expect(denied.status).toBe(400);
      expect(denied.body).toEqual({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
    }
    // Nothing else under /messages/ answers a spectator.
    expect((await spectator.get(`/messages/${ids.web}/history`)).status).toBe(401);
    expect((await spectator.patch(`/messages/${ids.web}`, { content: "defaced" })).status).toBe(401);
    expect((await spectator.post("/messages", { type: "stream", to: "web", topic: "x", content: "spam" })).status).toBe(401);
  });

  test("a web-public stream's topics, and no other stream's", async () => {
    const res = ok(await spectator.get(`/users/me/${streams.web}/topics`));
    expect(res.body.topics.map((t: { name: string }) => t.name)).toEqual(["other topic", "hello"]);
    for (const id of [streams.open, streams.secret, 999_999]) {
      const denied = await spectator.get(`/users/me/${id}/topics`);
      expect(denied.status).toBe(400);
      expect(denied.body).toEqual({ result: "error", msg: "Invalid channel ID", code: "BAD_REQUEST" });
    }
  });

  test("files linked from web-public messages download; others are the usual 401", async () => {
    const web = await request(server.baseUrl).get(webFile).set("Host", "chat.test");
    expect(web.status).toBe(200);
    expect(web.text ?? web.body.toString()).toBe("contents of web.txt");
    for (const path of [secretFile, webFile.replace(/\/[^/]+$/, "/other.txt"), "/user_uploads/1/ab/abcdefabcdefabcdefabcdef/none.txt"]) {
      const denied = await request(server.baseUrl).get(path).set("Host", "chat.test");
      expect(denied.status).toBe(401);
      expect(denied.body.code).toBe("UNAUTHORIZED");
    }
    // A logged-in member still gets the secret file the ordinary way.
    const { email, apiKey } = alice.client.credentials!;
    const member = await request(server.baseUrl).get(secretFile).set("Host", "chat.test").auth(email, apiKey);
    expect(member.status).toBe(200);
  });

  test("POST /register without credentials: no queue, the web-public streams, nothing of anyone's own", async () => {
    const res = ok(await spectator.post("/register", {}));
    const body = res.body;
    expect(body.queue_id).toBeNull();
    expect(body).not.toHaveProperty("last_event_id");
    expect(body).not.toHaveProperty("streams");
    expect(body.subscriptions.map((s: { name: string }) => s.name)).toEqual(["web"]);
    expect(body.subscriptions[0]).toMatchObject({ stream_id: streams.web, is_web_public: true, email_address: "" });
    expect(body.unsubscribed).toEqual([]);
    expect(body.never_subscribed).toEqual([]);
    expect(body).toMatchObject({ user_id: 0, is_guest: true, full_name: "Anonymous User", max_message_id: -1, realm_enable_spectator_access: true, server_web_public_streams_enabled: true });
    expect(body.presences).toEqual({});
    expect(body.realm_bots).toEqual([]);
    expect(body.recent_private_conversations).toEqual([]);
    expect(body.unread_msgs).toMatchObject({ count: 0 });
    expect(body.realm_users.some((u: Record<string, unknown>) => "profile_data" in u)).toBe(false);
    const text = JSON.stringify(body);
    for (const secret of ["secret", "open", "Private note"]) expect(text).not.toContain(secret);
    // Asked through /json/ with no session, as the web app does.
    const json = await browser(server, "POST", "/json/register", { form: { fetch_event_types: JSON.stringify(["subscription"]) } });
    checkResponse("post", "/api/v1/register", json.status, json.body, json.headers["content-type"]);
    expect(json.status).toBe(200);
    expect(json.body.subscriptions.map((s: { name: string }) => s.name)).toEqual(["web"]);
    expect(json.body.queue_id).toBeNull();
  });

  test.each(["client_gravatar", "include_subscribers"])("%s=true is refused for a spectator (feature level 149)", async (key) => {
    const res = await spectator.post("/register", { [key]: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: `Invalid '${key}' parameter for anonymous request`, code: "BAD_REQUEST" });
  });

  test("a spectator's registration makes no queue to poll", async () => {
    const res = await spectator.get("/events", { queue_id: "anything", last_event_id: -1, dont_block: true });
    expect(res.status).toBe(401);
    expect((await spectator.delete("/events", { queue_id: "anything" })).status).toBe(401);
  });

  test("wrong credentials are never read as a spectator's", async () => {
    const res = await server.client("alice.author@example.com", "wrong-key").get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [WEB_PUBLIC] });
    expect(res.status).toBe(401);
    expect(res.body.msg).toBe("Invalid API key");
    const badCookie = await browser(server, "GET", "/json/messages", { cookie: "sessionid=forged", query: { anchor: "newest", num_before: "5", num_after: "0", narrow: JSON.stringify([WEB_PUBLIC]) } });
    expect(badCookie.status).toBe(401);
    expect(badCookie.body.messages).toBeUndefined();
  });

  test("another organization's web-public streams are its own", async () => {
    const { running } = server;
    const owner = await running.services.actions.run(0, async (tx, events) => {
      const { owner } = await createRealm(tx, events, running.services.ctx, { subdomain: "elsewhere", name: "Elsewhere", owner: { email: "boss@elsewhere.test", fullName: "Else Boss", password: "else-password" } });
      return owner;
    });
    const { prisma } = running.services.db;
    const key = (await prisma.userProfile.findUniqueOrThrow({ where: { id: owner.id } })).api_key;
    const elseOwner = server.client("boss@elsewhere.test", key, "elsewhere.chat.test");
    ok(await elseOwner.post("/users/me/subscriptions", { subscriptions: [{ name: "else-web" }] }));
    await prisma.stream.updateMany({ where: { name: "else-web" }, data: { is_web_public: true } });
    const elseStream = ok(await elseOwner.get("/get_stream_id", { stream: "else-web" })).body.stream_id;
    const elseMessage = await send(elseOwner, { type: "stream", to: "else-web", topic: "t", content: "Elsewhere words" });

    // It has not let spectators in: nothing at all from its host.
    const elseSpectator = server.anonymousAt("elsewhere.chat.test");
    expect((await fetchAs(elseSpectator, [WEB_PUBLIC])).status).toBe(401);
    expect((await elseSpectator.post("/register", {})).status).toBe(401);
    // And this organization's spectators do not reach it by id or name.
    expect((await fetchAs(spectator, [WEB_PUBLIC, { operator: "channel", operand: elseStream }])).body.code).toBe("BAD_NARROW");
    expect(ok(await fetchAs(spectator, [WEB_PUBLIC, { operator: "id", operand: elseMessage }])).body.messages).toEqual([]);
    expect((await spectator.get(`/messages/${elseMessage}`)).body.msg).toBe("Invalid message(s)");
    expect((await spectator.get(`/users/me/${elseStream}/topics`)).body.msg).toBe("Invalid channel ID");

    // Once it lets them in, its spectators read its stream, and only that.
    await prisma.realm.update({ where: { string_id: "elsewhere" }, data: { enable_spectator_access: true } });
    const page = ok(await fetchAs(elseSpectator, [WEB_PUBLIC]));
    expect(page.body.messages.map((m: { id: number }) => m.id)).toEqual([elseMessage]);
    expect(ok(await fetchAs(elseSpectator, [WEB_PUBLIC, { operator: "id", operand: ids.web }])).body.messages).toEqual([]);
    // A host naming no organization is no organization's spectator.
    expect((await fetchAs(server.anonymousAt("nowhere.chat.test"), [WEB_PUBLIC])).status).toBe(404);
  });

  test("a stream that stops being web-public, or a realm that turns spectators off, shows nothing", async () => {
    ok(await server.owner.patch(`/streams/${streams.web}`, { is_web_public: false }));
    try {
      // No web-public stream left: the organization is not web-public (Zulip's allow_web_public_streams_access).
      expect((await fetchAs(spectator, [WEB_PUBLIC])).status).toBe(401);
      expect(ok(await spectator.get("/server_settings")).body.realm_web_public_access_enabled).toBe(false);
    } finally {
      ok(await server.owner.patch(`/streams/${streams.web}`, { is_web_public: true }));
    }
    expect(ok(await spectator.get("/server_settings")).body.realm_web_public_access_enabled).toBe(true);

    ok(await server.owner.patch("/realm", { enable_spectator_access: false }));
    try {
      expect(ok(await spectator.get("/server_settings")).body.realm_web_public_access_enabled).toBe(false);
      const attempts = [
        fetchAs(spectator, [WEB_PUBLIC]),
        spectator.get(`/messages/${ids.web}`),
        spectator.get(`/users/me/${streams.web}/topics`),
        spectator.post("/register", {}),
      ];
      for (const res of await Promise.all(attempts)) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(NOT_LOGGED_IN);
      }
      const file = await request(server.baseUrl).get(webFile).set("Host", "chat.test");
      expect(file.status).toBe(401);
      const json = await browser(server, "POST", "/json/register", { form: {} });
      expect(json.status).toBe(401);
      expect(json.headers["www-authenticate"]).toBe("session");
    } finally {
      ok(await server.owner.patch("/realm", { enable_spectator_access: true }));
    }
  });
});

describe.each(MODES)("spectators are rate limited per address (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode, { WEB_PUBLIC_STREAMS_ENABLED: "true", RATE_LIMITING: "true", RATE_LIMIT_IP_REQUESTS_PER_MINUTE: "5" });
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "web" }], is_web_public: true }));
    ok(await server.owner.patch("/realm", { enable_spectator_access: true }));
  });
  afterAll(() => server.stop());

  test("past the limit a spectator's requests are 429, whichever endpoint they try", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await server.anonymous.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [WEB_PUBLIC] })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await server.anonymous.post("/register", {});
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMIT_HIT");
    expect((await server.anonymous.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [WEB_PUBLIC] })).status).toBe(429);
    // A member is counted apart.
    expect((await server.owner.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [WEB_PUBLIC] })).status).toBe(200);
  });
});
