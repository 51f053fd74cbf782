// Hot routes answer before Express (hot-routes.ts) and decline anything but their happy path, which
// Express then answers from the start. GET /messages is one: it serves a user this node keeps a
// copy of, and every other request, every error included, comes from the ordinary route.
import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import request from "supertest";
import { hotRoute, sendJsonBody, withHotRoutes, type HotRoute } from "@chat/http";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser } from "../support/users.ts";

describe("withHotRoutes", () => {
  let server: http.Server;
  let baseUrl: string;
  let behaviour: "serve" | "decline" | "throw" = "serve";
  const route: HotRoute = hotRoute({
    method: "GET",
    path: "/hot",
    async handle({ query }, res) {
      if (behaviour === "decline") return false;
      if (behaviour === "throw") throw new Error("hot route failed");
      sendJsonBody(res, 200, JSON.stringify({ from: "hot", query }));
      return true;
    },
  });

  beforeAll(async () => {
    const app = express();
    app.set("query parser", "simple");
    app.use(express.urlencoded({ extended: false }));
    app.all("/hot", (req, res) => {
      res.json({ from: "express", query: req.query, body: req.body ?? null });
    });
    server = http.createServer(withHotRoutes(app, [route]));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    behaviour = "serve";
    route.stats.served = 0;
    route.stats.declined = 0;
  });

  test("a matching GET is answered by the hot route, with the query parsed as Express parses it", async () => {
    const res = await request(baseUrl).get("/hot?a=1&a=2&b=x%20y");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.body).toEqual({ from: "hot", query: { a: ["1", "2"], b: "x y" } });
    behaviour = "decline";
    expect((await request(baseUrl).get("/hot?a=1&a=2&b=x%20y")).body).toEqual({ from: "express", query: { a: ["1", "2"], b: "x y" }, body: null });
    expect(route.stats).toEqual({ served: 1, declined: 1 });
  });

  test("a route that declines or fails leaves the request to Express", async () => {
    behaviour = "throw";
    const res = await request(baseUrl).get("/hot?q=1");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: "express", query: { q: "1" } });
    expect(route.stats).toEqual({ served: 0, declined: 1 });
  });

  test("other methods, other paths and requests with a body go to Express untouched", async () => {
    expect((await request(baseUrl).post("/hot").type("form").send({ x: "1" })).body).toMatchObject({ from: "express", body: { x: "1" } });
    // A GET's form body is a parameter source too (Zulip reads both), so only Express may read it.
    expect((await request(baseUrl).get("/hot").type("form").send("x=2")).body).toMatchObject({ from: "express", body: { x: "2" } });
    expect((await request(baseUrl).get("/hot/")).body).toMatchObject({ from: "express" });
    expect(route.stats).toEqual({ served: 0, declined: 0 });
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
