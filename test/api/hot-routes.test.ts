// Hot routes answer before Express (hot-routes.ts) and decline anything but their happy path, which
// Express then answers from the start. GET /messages is one: it serves a user this node keeps a
// copy of, and every other request, every error included, comes from the ordinary route.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Router } from "express";
import request from "supertest";
import { createHttpApp, hotRoute, sendJsonBody, withHotRoutes, type HotRoute } from "@chat/http";
import type { ApiClient } from "../support/client.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser } from "../support/users.ts";
import { responsesOutsideTheApiDocument } from "../support/check-all-responses.ts";

// Its apps of made-up routes are not the API the document describes (ApiClient still checks its own).
responsesOutsideTheApiDocument();

describe("withHotRoutes", () => {
  let server: http.Server;
  let baseUrl: string;
  let behaviour: "serve" | "decline" | "throw" | "outage" = "serve";
  const handle: HotRoute["handle"] = async ({ query, body }, res) => {
    if (behaviour === "decline") return false;
    if (behaviour === "throw") throw new Error("hot route failed");
    // As ioredis reports a command to a server that does not answer.
    if (behaviour === "outage") throw new Error("Command timed out");
    sendJsonBody(res, 200, JSON.stringify({ from: "hot", query, body: body ?? null }));
    return true;
  };
  const routes = [hotRoute({ method: "GET", path: "/api/v1/hot", handle }), hotRoute({ method: "POST", path: "/api/v1/hot", handle })];
  const stats = () => routes.map((route) => route.stats);

  beforeAll(async () => {
    // The product's own Express app (body parsers, error handler) behind the hot routes.
    const api = Router();
    api.all("/hot", (req, res) => {
      res.json({ from: "express", query: req.query, body: req.body ?? null });
    });
    server = http.createServer(withHotRoutes(createHttpApp({ api }), routes));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    behaviour = "serve";
    for (const route of routes) Object.assign(route.stats, { served: 0, declined: 0 });
  });

  test("a matching GET is answered by the hot route, with the query parsed as Express parses it", async () => {
    const res = await request(baseUrl).get("/api/v1/hot?a=1&a=2&b=x%20y");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.body).toEqual({ from: "hot", query: { a: ["1", "2"], b: "x y" }, body: null });
    behaviour = "decline";
    expect((await request(baseUrl).get("/api/v1/hot?a=1&a=2&b=x%20y")).body).toEqual({ from: "express", query: { a: ["1", "2"], b: "x y" }, body: null });
    expect(stats()).toEqual([{ served: 1, declined: 1 }, { served: 0, declined: 0 }]);
  });

  test("a POST form is read once: the hot route and, when it declines, Express get the same parameters", async () => {
    const form = "to=general&to=random&content=caf%C3%A9+%26+more&weird=%E9&__proto__=x&a%5Bb%5D=1";
    const hot = await request(baseUrl).post("/api/v1/hot?q=1").type("form").send(form);
    behaviour = "decline";
    const declined = await request(baseUrl).post("/api/v1/hot?q=1").type("form").send(form);
    behaviour = "throw";
    const failed = await request(baseUrl).post("/api/v1/hot?q=1").type("form").send(form);
    // What Express's own body parser makes of the same form, with no hot route in the way.
    const plain = await request(baseUrl).post("/api/v1/hot/?q=1").type("form").send(form);
    expect(plain.body).toEqual({ from: "express", query: { q: "1" }, body: { to: ["general", "random"], content: "café & more", weird: "%E9", "a[b]": "1" } });
    expect(hot.body).toEqual({ ...plain.body, from: "hot" });
    expect(declined.body).toEqual(plain.body);
    expect(failed.body).toEqual(plain.body);
    expect(stats()).toEqual([{ served: 0, declined: 0 }, { served: 1, declined: 2 }]);
  });

  test("a backing service unreachable gets the 503 at once, not a second wait in the ordinary route", async () => {
    behaviour = "outage";
    for (const res of [await request(baseUrl).get("/api/v1/hot?a=1"), await request(baseUrl).post("/api/v1/hot").type("form").send("a=1")]) {
      expect([res.status, res.headers["retry-after"], res.headers["content-type"]]).toEqual([503, "5", "application/json; charset=utf-8"]);
      expect(res.body).toEqual({ result: "error", msg: "Service temporarily unavailable", code: "SERVICE_UNAVAILABLE" });
    }
    expect(stats()).toEqual([{ served: 1, declined: 0 }, { served: 1, declined: 0 }]);
  });

  test("a form past the parameter limit gets Express's answer", async () => {
    const form = Array.from({ length: 10_001 }, (_, i) => `p${i}=1`).join("&");
    const plain = await request(baseUrl).post("/api/v1/hot/").type("form").send(form);
    const hot = await request(baseUrl).post("/api/v1/hot").type("form").send(form);
    expect(plain.status).toBe(413);
    expect([hot.status, hot.body]).toEqual([plain.status, plain.body]);
  });

  test("other methods, other paths, other bodies and a GET with a body go to Express untouched", async () => {
    expect((await request(baseUrl).patch("/api/v1/hot").type("form").send({ x: "1" })).body).toMatchObject({ from: "express", body: { x: "1" } });
    expect((await request(baseUrl).post("/api/v1/hot").field("x", "multipart")).body).toMatchObject({ from: "express", body: { x: "multipart" } });
    expect((await request(baseUrl).post("/api/v1/hot").set("Content-Type", "application/x-www-form-urlencoded; charset=iso-8859-1").send("x=caf%E9")).body).toMatchObject({ from: "express", body: { x: "café" } });
    // A GET's form body is a parameter source too (Zulip reads both), so only Express may read it.
    expect((await request(baseUrl).get("/api/v1/hot").type("form").send("x=2")).body).toMatchObject({ from: "express", body: { x: "2" } });
    expect((await request(baseUrl).get("/api/v1/hot/")).body).toMatchObject({ from: "express" });
    expect(stats()).toEqual([{ served: 0, declined: 0 }, { served: 0, declined: 0 }]);
  });
});

describe.each(MODES)("the hot route of GET /messages (%s)", (mode) => {
  let server: TestServer;
  const fetchRoute = () => server.running.hotRoutes.find((route) => route.path === "/api/v1/messages")!;

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("serves a user this node keeps, with the same answer the ordinary route gives", async () => {
    const hana = await createTestUser(server, "Hana Hot");
    await subscribeTo(hana.client, ["hot path"]);
    await sendStreamMessage(hana.client, "hot path", "t", "hello **hot** path");
    const params = { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([["stream", "hot path"]]) };
    const before = { ...fetchRoute().stats };

    const first = await hana.client.get("/messages", params); // no copy yet: the ordinary route keeps one
    expect(fetchRoute().stats).toEqual({ served: before.served, declined: before.declined + 1 });
    const second = await hana.client.get("/messages", params);
    expect(fetchRoute().stats).toEqual({ served: before.served + 1, declined: before.declined + 1 });

    expect(second.status).toBe(200);
    expect(second.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(second.body).toEqual(first.body);
    expect(second.body.messages).toMatchObject([{ content: "<p>hello <strong>hot</strong> path</p>", display_recipient: "hot path", subject: "t" }]);
  });

  test("a kept user's bad requests get the ordinary route's errors, and the next good one is served hot", async () => {
    const ivan = await createTestUser(server, "Ivan Invalid");
    const good = { anchor: "newest", num_before: 1, num_after: 0 };
    expect((await ivan.client.get("/messages", good)).body.result).toBe("success");
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ num_before: 1, num_after: 0 }, { result: "error", msg: "Missing 'anchor' argument", code: "REQUEST_VARIABLE_MISSING" }],
      [{ ...good, anchor: "latest" }, { result: "error", msg: "Invalid anchor", code: "BAD_REQUEST" }],
      [{ ...good, narrow: [["color", "red"]] }, { result: "error", msg: "Invalid narrow operator: unknown operator color", code: "BAD_NARROW" }],
      [{ ...good, narrow: "stream:general" }, { result: "error", msg: 'Argument "narrow" is not valid JSON.' }],
      [{ ...good, narrow: [["stream", "no such stream"]] }, { result: "error", code: "BAD_NARROW" }],
    ];
    for (const [params, error] of cases) {
      const declined = fetchRoute().stats.declined;
      const res = await ivan.client.get("/messages", params);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject(error);
      expect(fetchRoute().stats.declined).toBe(declined + 1);
    }
    const served = fetchRoute().stats.served;
    expect((await ivan.client.get("/messages", good)).body.result).toBe("success");
    expect(fetchRoute().stats.served).toBe(served + 1);
  });

  test("a path beside the hot route's that cannot be decoded gets the ordinary route's 400, the hot route untouched", async () => {
    const before = { ...fetchRoute().stats };
    const res = await server.owner.raw("get", "/messages/%E0%A4%A");
    expect([res.status, res.body]).toEqual([400, { result: "error", msg: "Malformed URL path", code: "BAD_REQUEST" }]);
    expect(fetchRoute().stats).toEqual(before);
  });

  test("OPTIONS on a hot route's path gets the ordinary 204 with the path's methods, the hot routes untouched", async () => {
    const before = server.running.hotRoutes.map((route) => ({ ...route.stats }));
    for (const [path, allow] of [["/api/v1/messages", "GET, HEAD, POST"], ["/api/v1/events", "DELETE, GET, HEAD"]]) {
      const res = await request(server.baseUrl).options(path).auth(server.owner.credentials!.email, server.owner.credentials!.apiKey);
      expect([res.status, res.headers.allow]).toEqual([204, allow]);
    }
    expect(server.running.hotRoutes.map((route) => route.stats)).toEqual(before);
  });

  test("a wrong API key or a wrong email is never served from a kept user", async () => {
    const jo = await createTestUser(server, "Jo Keys");
    expect((await jo.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).body.result).toBe("success");
    const served = fetchRoute().stats.served;
    const wrongKey = server.client(jo.email, "not-the-key");
    expect((await wrongKey.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
    const wrongEmail = server.client("someone.else@example.com", jo.client.credentials!.apiKey);
    expect((await wrongEmail.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
    expect((await server.anonymous.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).status).toBe(401);
    expect(fetchRoute().stats.served).toBe(served);
  });
});

describe.each(MODES)("the hot route of POST /messages (%s)", (mode) => {
  let server: TestServer;
  const sendRoute = () => server.running.hotRoutes.find((route) => route.method === "POST" && route.path === "/api/v1/messages")!;
  const newest = async (client: ApiClient, stream: string) =>
    (await client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([["stream", stream]]) })).body.messages as Array<{ content: string }>;

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("sends once, answering as the ordinary route does", async () => {
    const sam = await createTestUser(server, "Sam Hot Sender");
    await subscribeTo(sam.client, ["hot sends"]);
    const served = sendRoute().stats.served;
    const res = await sam.client.post("/messages", { type: "stream", to: "hot sends", topic: "t", content: "sent **hot**" });
    expect(res.status).toBe(200);
    // Sam starts the topic, which follows it for him (by default).
    expect(res.body).toEqual({ result: "success", msg: "", id: expect.any(Number), automatic_new_visibility_policy: 3 });
    expect(sendRoute().stats.served).toBe(served + 1);
    expect((await newest(sam.client, "hot sends")).map((m) => m.content)).toEqual(["<p>sent <strong>hot</strong></p>"]);
  });

  test("a failed send writes nothing and gets the ordinary route's error", async () => {
    const fay = await createTestUser(server, "Fay Failing");
    await subscribeTo(fay.client, ["hot failures"]);
    const cases: Array<[Record<string, unknown>, number, Record<string, unknown>]> = [
      [{ type: "stream", to: "no such stream", topic: "t", content: "x" }, 400, { result: "error", code: "STREAM_DOES_NOT_EXIST", stream: "no such stream" }],
      [{ type: "stream", to: "hot failures", topic: "t" }, 400, { result: "error", msg: "Missing 'content' argument", code: "REQUEST_VARIABLE_MISSING" }],
      [{ type: "stream", to: "hot failures", topic: "t", content: "   " }, 400, { result: "error", code: "BAD_REQUEST" }],
    ];
    for (const [params, status, error] of cases) {
      const declined = sendRoute().stats.declined;
      const res = await fay.client.post("/messages", params);
      expect([res.status, res.body]).toEqual([status, expect.objectContaining(error)]);
      expect(sendRoute().stats.declined).toBe(declined + 1);
    }
    const wrongKey = server.client(fay.email, "not-the-key");
    const refused = await wrongKey.post("/messages", { type: "stream", to: "hot failures", topic: "t", content: "x" });
    expect([refused.status, refused.body]).toEqual([401, expect.objectContaining({ result: "error", msg: "Invalid API key" })]);
    expect((await server.anonymous.post("/messages", { type: "stream", to: "hot failures", topic: "t", content: "x" })).status).toBe(401);
    expect(await newest(fay.client, "hot failures")).toEqual([]);
  });
});
