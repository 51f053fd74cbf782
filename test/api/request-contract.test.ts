// The request contract every endpoint shares: where parameters come from, how typed parameters
// are decoded, and that every failure is a JSON error that changes nothing.
import request from "supertest";
import type { OpenApiDocument } from "@chat/http";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";

describe.each(MODES)("request contract (%s)", (mode) => {
  let server: TestServer;
  let memberId: number;
  beforeAll(async () => {
    server = await startTestServer(mode);
    const res = await server.owner.post("/users", { email: "param@example.com", password: "param-pass", full_name: "Pat Param", short_name: "pat" });
    memberId = res.body.user_id;
  });
  afterAll(() => server.stop());

  test("a missing parameter is REQUEST_VARIABLE_MISSING with var_name", async () => {
    const res = await server.owner.post("/messages", { type: "stream", to: "general", topic: "t" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Missing 'content' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "content" });
  });

  test("a JSON parameter that is not JSON names the argument", async () => {
    const res = await server.owner.patch(`/users/${memberId}`, { is_admin: "yes please" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg: 'Argument "is_admin" is not valid JSON.', code: "BAD_REQUEST" });
  });

  test.each([
    [{ is_admin: "5" }, "is_admin is not a boolean"],
    [{ role: "owner" }, "role is not an integer"],
    [{ role: "99999999999999999999999" }, "role is not an integer"],
    [{ profile_data: '{"id": 1}' }, "profile_data is not a list"],
    [{ profile_data: '[{"id": "x", "value": "v"}]' }, 'profile_data[0]["id"] is not an integer'],
    [{ profile_data: '[{"value": "v"}]' }, "profile_data[0] key is missing: id"],
  ])("a mistyped parameter %j is BAD_REQUEST naming it", async (params, msg) => {
    const res = await server.owner.patch(`/users/${memberId}`, params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg, code: "BAD_REQUEST" });
  });

  test("a value outside a parameter's choices is BAD_REQUEST", async () => {
    const res = await server.owner.post("/messages", { type: "broadcast", to: "general", content: "x" });
    expect(res.body).toMatchObject({ result: "error", msg: "Invalid type", code: "BAD_REQUEST" });
  });

  test("parameters are read from the query string as well as the body", async () => {
    const res = await server.owner
      .raw("post", "/messages?type=stream&to=general&topic=from%20query")
      .type("form")
      .send({ content: "body content" });
    expect(res.body.result).toBe("success");
    const stored = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored.subject).toBe("from query");
    expect(stored.content).toBe("body content");
  });

  test("multipart/form-data bodies are read like forms", async () => {
    const res = await server.owner
      .raw("post", "/messages")
      .field("type", "stream")
      .field("to", "general")
      .field("topic", "multipart")
      .field("content", "sent as multipart");
    expect(res.body.result).toBe("success");
  });

  test("a malformed multipart body is a JSON error", async () => {
    const res = await server.owner
      .raw("post", "/messages")
      .set("Content-Type", "multipart/form-data; boundary=xyz")
      .send("--xyz\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nstream\r\n--xy");
    expect(res.status).toBe(400);
    expect(res.body.result).toBe("error");
    expect(typeof res.body.msg).toBe("string");
  });

  test("an oversized body is a JSON error, not a stack trace", async () => {
    const res = await server.owner.raw("post", "/messages").type("form").send({ type: "stream", to: "general", topic: "big", content: "x".repeat(6 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" });
  });

  test("an unknown endpoint is a JSON 404", async () => {
    const res = await request(server.baseUrl).get("/api/v1/no/such/endpoint").auth(server.owner.credentials!.email, server.owner.credentials!.apiKey);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ result: "error", msg: "Endpoint not found", code: "BAD_REQUEST" });
  });

  test.each([
    ["get", "/api/v1/users/%E0%A4%A"],
    ["get", "/api/v1/messages/%zz"],
    ["patch", "/api/v1/messages/%zz"],
    ["delete", "/api/v1/realm/emoji/%C0%80"],
    ["get", "/user_uploads/1/%zz/file.txt"],
  ] as const)("a path segment that is not percent-encoded UTF-8 (%s %s) is a malformed URL, not a malformed body", async (method, path) => {
    const res = await request(server.baseUrl)[method](path).auth(server.owner.credentials!.email, server.owner.credentials!.apiKey);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Malformed URL path", code: "BAD_REQUEST" });
  });

  test("a body that cannot be read is still a malformed body", async () => {
    const res = await server.owner.raw("post", "/messages").type("form").set("Content-Encoding", "gzip").send("not gzip");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Malformed request body", code: "BAD_REQUEST" });
  });

  test.each([
    ["/api/v1/messages", "GET, HEAD, POST"],
    ["/api/v1/messages/12", "DELETE, GET, HEAD, PATCH"],
    ["/api/v1/messages/flags", "POST"],
    ["/api/v1/users/me", "DELETE, GET, HEAD"],
    ["/api/v1/users/12", "DELETE, GET, HEAD, PATCH"],
    // Any segment that is not an id is an email address, for GET alone (GET /users/{email}).
    ["/api/v1/users/abc@example.com", "GET, HEAD, PATCH"],
    ["/api/v1/users/me/subscriptions", "DELETE, GET, HEAD, PATCH, POST"],
    // GET /users/{user_id_or_email}/presence takes `me` too.
    ["/api/v1/users/me/presence", "GET, HEAD, POST"],
    ["/api/v1/bot_storage", "DELETE, GET, HEAD, PUT"],
    ["/api/v1/register", "POST"],
    ["/api/v1/events", "DELETE, GET, HEAD"],
    ["/user_uploads/1/ab/c.txt", "GET, HEAD"],
    ["/health/ready", "GET, HEAD"],
  ])("OPTIONS %s is Zulip's 204 with Allow: %s, needing no credentials and opening no CORS", async (path, allow) => {
    for (const credentials of [null, server.owner.credentials!]) {
      const options = request(server.baseUrl).options(path).set("Origin", "https://elsewhere.example");
      const res = await (credentials ? options.auth(credentials.email, credentials.apiKey) : options);
      expect([res.status, res.headers.allow, res.text]).toEqual([204, allow, ""]);
      expect(Object.keys(res.headers).filter((name) => name.startsWith("access-control-"))).toEqual([]);
    }
  });

  test("OPTIONS names every method the API document gives a path", async () => {
    const document = (await server.anonymous.get("/openapi.json")).body as OpenApiDocument;
    const sample: Record<string, string> = { file: "1.png", path: "ab/c.txt", emoji_name: "smile", user_id_or_email: "a@example.com", token: "t", filename: "f.txt" };
    for (const [template, item] of Object.entries(document.paths)) {
      const path = template.replace(/\{(\w+)\}/g, (_all, name: string) => sample[name] ?? "1");
      const res = await request(server.baseUrl).options(path);
      const documented = Object.keys(item).filter((method) => method !== "options").map((method) => method.toUpperCase());
      expect([path, res.status]).toEqual([path, 204]);
      expect(res.headers.allow.split(", ")).toEqual(expect.arrayContaining(documented));
    }
  });

  test.each([
    ["/api/v1/no/such/endpoint", 404, "Endpoint not found"],
    ["/nowhere", 404, "Endpoint not found"],
    // No route serves `abc` as a stream id: GET /streams/abc is the same 404.
    ["/api/v1/streams/abc", 404, "Endpoint not found"],
    ["/user_avatars/1/not-an-avatar.txt", 404, "Endpoint not found"],
    ["/api/v1/users/%E0%A4%A", 400, "Malformed URL path"],
  ] as const)("OPTIONS %s, which names nothing served, is the JSON %s every method gets", async (path, status, msg) => {
    const res = await request(server.baseUrl).options(path);
    expect([res.status, res.headers.allow, res.body]).toEqual([status, undefined, { result: "error", msg, code: "BAD_REQUEST" }]);
  });

  test("a failed request changes nothing", async () => {
    const { prisma } = server.running.services.db;
    const before = { messages: await prisma.message.count(), users: await prisma.userProfile.count(), outbox: await prisma.eventOutbox.count() };
    await server.owner.post("/messages", { type: "stream", to: "no such stream", topic: "t", content: "x" });
    await server.owner.post("/users", { email: "param@example.com", password: "whatever1", full_name: "Dup", short_name: "d" });
    await server.owner.patch(`/users/${memberId}`, { full_name: "New Name", is_admin: true, is_guest: true });
    expect({ messages: await prisma.message.count(), users: await prisma.userProfile.count(), outbox: await prisma.eventOutbox.count() }).toEqual(before);
    expect((await prisma.userProfile.findUniqueOrThrow({ where: { id: memberId } })).full_name).toBe("Pat Param");
  });

  test("every response carries result and msg", async () => {
    for (const res of [await server.owner.get("/users/me"), await server.anonymous.get("/server_settings"), await server.owner.get("/users/99999")]) {
      expect(typeof res.body.result).toBe("string");
      expect(typeof res.body.msg).toBe("string");
    }
  });
});
