// Zulip's rate limits, with small limits so the tests stay fast: requests per user per minute (hot
// routes included, GET /events not), shared by every node through Redis; failed logins per account
// and per client address; RATE_LIMITING=false turns it all off.
import { Redis } from "ioredis";
import request from "supertest";
import { createRedisClient } from "@chat/bus";
import { isExemptFromRateLimit, RateLimits } from "@chat/http";
import type { ApiClient, ApiResponse } from "../support/client.ts";
import { startRedisCluster } from "../support/redis-cluster.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startSecondNode, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser } from "../support/users.ts";

const PER_USER = 10;
const LIMITS = {
  RATE_LIMITING: "true",
  RATE_LIMIT_USER_REQUESTS_PER_MINUTE: String(PER_USER),
  RATE_LIMIT_IP_REQUESTS_PER_MINUTE: "20",
  RATE_LIMIT_LOGIN_FAILURES_PER_ACCOUNT: "3",
  RATE_LIMIT_LOGIN_FAILURES_PER_IP: "6",
  // Long enough that a loaded machine's slow logins stay in one window; the test of the window
  // passing has a server of its own with a short one.
  RATE_LIMIT_LOGIN_WINDOW_SECONDS: "600",
};

function expectRateLimited(res: ApiResponse, windowSeconds: number): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ result: "error", msg: "API usage exceeded rate limit", code: "RATE_LIMIT_HIT", "retry-after": expect.any(Number) });
  expect(res.body["retry-after"]).toBeGreaterThan(0);
  expect(res.body["retry-after"]).toBeLessThanOrEqual(windowSeconds);
  const header = Number(res.headers["retry-after"]);
  expect(Number.isInteger(header)).toBe(true);
  expect(header).toBe(Math.ceil(res.body["retry-after"]));
}

/** As a request from behind the (trusted, loopback) proxy, for a client address of its own. */
function fetchApiKeyFrom(server: TestServer, ip: string, username: string, password: string): Promise<ApiResponse> {
  return server.anonymous
    .raw("post", "/fetch_api_key")
    .set("X-Forwarded-For", ip)
    .type("form")
    .send({ username, password })
    .then((res) => ({ status: res.status, body: res.body, headers: res.headers as Record<string, string> }));
}

async function spend(client: ApiClient, requests: number): Promise<void> {
  for (let i = 0; i < requests; i++) expect((await client.get("/users/me")).status).toBe(200);
}

describe.each(MODES)("rate limits (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode, LIMITS);
  });
  afterAll(() => server.stop());

  test("a user's request past the limit in a minute is 429 with Zulip's fields and Retry-After; other users go on", async () => {
    const alice = await createTestUser(server, "Alice Limited");
    const bob = await createTestUser(server, "Bob Unaffected");
    await spend(alice.client, PER_USER);
    expectRateLimited(await alice.client.get("/users/me"), 60);
    expectRateLimited(await alice.client.post("/users/me/presence", { status: "active" }), 60);
    expect((await bob.client.get("/users/me")).status).toBe(200);
  });

  test("the hot routes count too, and a limited user does not get through them", async () => {
    const hot = await createTestUser(server, "Hana Hot");
    const fetchRoute = server.running.hotRoutes.find((route) => route.method === "GET")!;
    const sendRoute = server.running.hotRoutes.find((route) => route.method === "POST")!;
    const page = { anchor: "newest", num_before: 1, num_after: 0 };
    const served = { fetch: fetchRoute.stats.served, send: sendRoute.stats.served };
    // The first fetch keeps a copy of the user; the next ones are served by the hot route.
    for (let i = 0; i < PER_USER / 2; i++) expect((await hot.client.get("/messages", page)).status).toBe(200);
    for (let i = 0; i < PER_USER / 2; i++) expect((await hot.client.post("/messages", { type: "private", to: JSON.stringify([hot.id]), content: `m${i}` })).status).toBe(200);
    expect(fetchRoute.stats.served - served.fetch).toBe(PER_USER / 2 - 1);
    expect(sendRoute.stats.served - served.send).toBe(PER_USER / 2);
    expectRateLimited(await hot.client.get("/messages", page), 60);
    expectRateLimited(await hot.client.post("/messages", { type: "private", to: JSON.stringify([hot.id]), content: "one too many" }), 60);
    expect(fetchRoute.stats.served - served.fetch).toBe(PER_USER / 2 - 1);
    expect(sendRoute.stats.served - served.send).toBe(PER_USER / 2);
  });

  test("GET /events is not counted; /register is", async () => {
    const poller = await createTestUser(server, "Polly Poller");
    const registered = await poller.client.post("/register", { event_types: JSON.stringify(["message"]) });
    expect(registered.status).toBe(200);
    for (let i = 0; i < PER_USER * 2; i++) {
      const res = await poller.client.get("/events", { queue_id: registered.body.queue_id, last_event_id: -1, dont_block: true });
      expect(res.status).toBe(200);
    }
    await spend(poller.client, PER_USER - 1);
    expectRateLimited(await poller.client.get("/users/me"), 60);
  });

  test("file downloads and their temporary URLs are not counted; the upload is", async () => {
    const reader = await createTestUser(server, "Dora Downloader");
    const uploaded = await reader.client.raw("post", "/user_uploads").attach("file", Buffer.from("counted once"), "c.txt");
    expect(uploaded.body.result).toBe("success");
    const { email, apiKey } = reader.client.credentials!;
    for (let i = 0; i < PER_USER; i++) {
      expect((await request(server.baseUrl).get(uploaded.body.uri).auth(email, apiKey)).status).toBe(200);
      expect((await reader.client.get(uploaded.body.uri)).status).toBe(200);
    }
    await spend(reader.client, PER_USER - 1);
    expectRateLimited(await reader.client.get("/users/me"), 60);
  });

  test("requests without credentials count per client address", async () => {
    for (let i = 0; i < 20; i++) expect((await server.anonymous.raw("get", "/server_settings").set("X-Forwarded-For", "203.0.113.9")).status).toBe(200);
    const limited = await server.anonymous.raw("get", "/server_settings").set("X-Forwarded-For", "203.0.113.9");
    expectRateLimited({ status: limited.status, body: limited.body, headers: limited.headers as Record<string, string> }, 60);
    expect((await server.anonymous.raw("get", "/users/me").set("X-Forwarded-For", "203.0.113.9")).status).toBe(429);
    expect((await server.anonymous.raw("get", "/server_settings").set("X-Forwarded-For", "203.0.113.10")).status).toBe(200);
  });

  test("avatars, custom emoji and static images are not counted: a page shows dozens", async () => {
    const ip = "203.0.113.77";
    const fetch = (path: string) => request(server.baseUrl).get(path).set("X-Forwarded-For", ip);
    for (let i = 0; i < 30; i++) expect((await fetch("/static/images/logo/zulip-icon-128x128.png")).status).toBe(200);
    for (let i = 0; i < 30; i++) expect((await fetch("/user_avatars/1/1.png?version=2")).status).toBe(404);
    for (let i = 0; i < 30; i++) expect((await fetch("/user_avatars/1/emoji/images/1.png")).status).toBe(404);
    // The address's own count is untouched.
    expect((await server.anonymous.raw("get", "/server_settings").set("X-Forwarded-For", ip)).status).toBe(200);
    expect(isExemptFromRateLimit("GET", "/user_avatars/1/2.png?version=3")).toBe(true);
    expect(isExemptFromRateLimit("GET", "/static/images/logo/zulip-icon-128x128.png")).toBe(true);
    expect(isExemptFromRateLimit("POST", "/api/v1/users/me/avatar")).toBe(false);
    expect(isExemptFromRateLimit("POST", "/api/v1/realm/emoji/party")).toBe(false);
  });

  test("failed logins are throttled per account, even with the right password, from any address", async () => {
    const victim = await createTestUser(server, "Vic Victim");
    const ip = "198.51.100.1";
    for (let i = 0; i < 3; i++) {
      const failed = await fetchApiKeyFrom(server, ip, victim.email, "wrong-password");
      expect(failed).toMatchObject({ status: 401, body: { code: "AUTHENTICATION_FAILED" } });
    }
    expectRateLimited(await fetchApiKeyFrom(server, "198.51.100.2", victim.email, "member-pass"), 600);
    // Other accounts from the same address go on.
    expect((await fetchApiKeyFrom(server, ip, OWNER_EMAIL, OWNER_PASSWORD)).status).toBe(200);
  });

  test("failed logins are throttled per address, whatever accounts they name", async () => {
    const ip = "198.51.100.3";
    for (let i = 0; i < 6; i++) expect((await fetchApiKeyFrom(server, ip, `nobody${i}@example.com`, "guess")).status).toBe(401);
    expectRateLimited(await fetchApiKeyFrom(server, ip, OWNER_EMAIL, OWNER_PASSWORD), 600);
    expect((await fetchApiKeyFrom(server, "198.51.100.4", OWNER_EMAIL, OWNER_PASSWORD)).status).toBe(200);
    const dev = await server.anonymous.raw("post", "/dev_fetch_api_key").set("X-Forwarded-For", ip).type("form").send({ username: OWNER_EMAIL });
    expect(dev.status).toBe(429);
  });

  test("wrong API keys count as failed logins; the right key still works", async () => {
    const kim = await createTestUser(server, "Kim Keys");
    const wrong = server.client(kim.email, "x".repeat(32));
    for (let i = 0; i < 3; i++) expect((await wrong.raw("get", "/users/me").set("X-Forwarded-For", "198.51.100.5")).status).toBe(401);
    const limited = await wrong.raw("get", "/users/me").set("X-Forwarded-For", "198.51.100.6");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMIT_HIT");
    // Anyone who knows an email could otherwise lock its owner's apps out.
    expect((await kim.client.get("/users/me")).status).toBe(200);
    expectRateLimited(await fetchApiKeyFrom(server, "198.51.100.7", kim.email, "member-pass"), 600);
  });

  if (mode === "postgres") {
    test("every node on the same Redis shares the counts", async () => {
      const second = await startSecondNode(server);
      try {
        const shared = await createTestUser(server, "Sam Shared");
        const other = second.client(shared.client.credentials);
        await spend(shared.client, PER_USER / 2);
        await spend(other, PER_USER / 2);
        expectRateLimited(await other.get("/users/me"), 60);
        expectRateLimited(await shared.client.get("/users/me"), 60);
      } finally {
        await second.stop();
      }
    });
  }
});

describe.each(MODES)("a throttled account's window (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode, { ...LIMITS, RATE_LIMIT_LOGIN_WINDOW_SECONDS: "5" });
  });
  afterAll(() => server.stop());

  test("the right password works again once the window has passed", async () => {
    for (let i = 0; i < 3; i++) expect((await fetchApiKeyFrom(server, "198.51.100.9", OWNER_EMAIL, "wrong-password")).status).toBe(401);
    const throttled = await fetchApiKeyFrom(server, "198.51.100.9", OWNER_EMAIL, OWNER_PASSWORD);
    expectRateLimited(throttled, 5);
    await new Promise((resolve) => setTimeout(resolve, throttled.body["retry-after"] * 1000 + 100));
    expect((await fetchApiKeyFrom(server, "198.51.100.9", OWNER_EMAIL, OWNER_PASSWORD)).status).toBe(200);
  });
});

describe.each(MODES)("RATE_LIMITING=false (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode, { ...LIMITS, RATE_LIMITING: "false" });
  });
  afterAll(() => server.stop());

  test("nothing is limited", async () => {
    await spend(server.owner, PER_USER * 3);
    for (let i = 0; i < 10; i++) expect((await fetchApiKeyFrom(server, "198.51.100.8", OWNER_EMAIL, "wrong-password")).status).toBe(401);
    expect((await fetchApiKeyFrom(server, "198.51.100.8", OWNER_EMAIL, OWNER_PASSWORD)).status).toBe(200);
  });
});

describe("counters that cannot be reached", () => {
  test("let every request through rather than fail it", async () => {
    // Nothing listens on port 1; as services.ts configures it, a command fails at once.
    const redis = new Redis("redis://127.0.0.1:1", { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    redis.on("error", () => {});
    const limits = new RateLimits(
      { enabled: true, userRequestsPerMinute: 1, ipRequestsPerMinute: 1, loginFailuresPerAccount: 1, loginFailuresPerIp: 1, loginFailureWindowSeconds: 60 },
      { redis, prefix: "unreachable:" },
    );
    try {
      for (let i = 0; i < 3; i++) {
        expect(await limits.countUser(1)).toBeNull();
        expect(await limits.countIp("192.0.2.1")).toBeNull();
        expect(await limits.countLoginFailure("a@example.com", "192.0.2.1")).toBeNull();
        expect(await limits.loginThrottled("a@example.com", "192.0.2.1")).toBeNull();
      }
    } finally {
      redis.disconnect();
    }
  });
});

describe("counters on a Redis Cluster", () => {
  test("count and limit as on one server, through the client services.ts makes for REDIS_CLUSTER_NODES", async () => {
    const cluster = await startRedisCluster();
    const redis = createRedisClient({ clusterNodes: cluster.nodes }, { enableOfflineQueue: false, commandTimeout: 1000, maxRetriesPerRequest: 1 });
    try {
      await new Promise<void>((resolve) => redis.once("ready", () => resolve()));
      const limits = new RateLimits(
        { enabled: true, userRequestsPerMinute: 2, ipRequestsPerMinute: 1, loginFailuresPerAccount: 1, loginFailuresPerIp: 5, loginFailureWindowSeconds: 60 },
        { redis, prefix: "cluster:" },
      );
      // Users' counters are keys of their own, spread over the masters.
      for (const user of [1, 2, 3, 4, 5, 6]) {
        expect(await limits.countUser(user)).toBeNull();
        expect(await limits.countUser(user)).toBeNull();
        expect(await limits.countUser(user)).toBeGreaterThan(0);
      }
      // The account's one allowed failure, then it waits, from any address.
      expect(await limits.countLoginFailure("a@example.com", "192.0.2.1")).toBeNull();
      expect(await limits.loginThrottled("a@example.com", "192.0.2.9")).toBeGreaterThan(0);
      expect(await limits.loginThrottled("b@example.com", "192.0.2.9")).toBeNull();
    } finally {
      redis.disconnect();
      await cluster.stop();
    }
  });
});
