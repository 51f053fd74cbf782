import request from "supertest";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";

describe.each(MODES)("authentication (%s)", (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("a request without credentials gets 401, a JSON error and WWW-Authenticate", async () => {
    const res = await server.anonymous.get("/users/me");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ result: "error", msg: "Not logged in: API authentication or user session required", code: "UNAUTHORIZED" });
    expect(res.headers["www-authenticate"]).toBe('Basic realm="zulip"');
  });

  test("a wrong API key is `Invalid API key`, without a code", async () => {
    const res = await server.client(OWNER_EMAIL, "x".repeat(32)).get("/users/me");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ result: "error", msg: "Invalid API key" });
  });

  test("a right key with another user's email is refused", async () => {
    const key = server.owner.credentials!.apiKey;
    const res = await server.client("someone@example.com", key).get("/users/me");
    expect(res.body.msg).toBe("Invalid API key");
  });

  test("a malformed Authorization header is treated as missing", async () => {
    const res = await server.anonymous.raw("get", "/users/me").set("Authorization", "Basic !!!notbase64");
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
  });

  test("the email in Basic credentials is case-insensitive", async () => {
    const res = await server.client(OWNER_EMAIL.toUpperCase(), server.owner.credentials!.apiKey).get("/users/me");
    expect(res.status).toBe(200);
    expect(res.body.email).toBe(OWNER_EMAIL);
  });

  test("GET /server_settings needs no credentials and carries what clients check", async () => {
    const res = await server.anonymous.get("/server_settings");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      result: "success",
      msg: "",
      service_version: expect.any(String),
      zulip_version: "10.0",
      zulip_feature_level: 371,
      zulip_merge_base: "10.0",
      email_auth_enabled: true,
      require_email_format_usernames: true,
      authentication_methods: { password: true, dev: true, email: true, ldap: false },
      external_authentication_methods: [],
      realm_name: "Team Chat",
      realm_description: "",
    });
  });

  test("GET /server_settings at a host naming no organization says so", async () => {
    const res = await server.anonymousAt("nowhere.chat.test").get("/server_settings");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ result: "error", msg: "There is no Zulip organization hosted at this subdomain.", code: "NONEXISTENT_SUBDOMAIN" });
  });

  describe("POST /fetch_api_key", () => {
    test("returns the key for the right password, without Basic credentials", async () => {
      const res = await server.anonymous.post("/fetch_api_key", { username: OWNER_EMAIL, password: OWNER_PASSWORD });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ result: "success", msg: "", api_key: server.owner.credentials!.apiKey, email: OWNER_EMAIL });
    });

    test("a wrong password or unknown user is refused alike", async () => {
      for (const params of [
        { username: OWNER_EMAIL, password: "wrong-password" },
        { username: "nobody@example.com", password: OWNER_PASSWORD },
      ]) {
        const res = await server.anonymous.post("/fetch_api_key", params);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ result: "error", msg: "Your username or password is incorrect", code: "AUTHENTICATION_FAILED" });
      }
    });

    test("missing parameters name the variable", async () => {
      const res = await server.anonymous.post("/fetch_api_key", { username: OWNER_EMAIL });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Missing 'password' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "password" });
    });

    test("stores the password as a memory-hard hash, never in clear", async () => {
      const owner = await server.running.services.db.prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
      expect(owner.password_hash).toMatch(/^\$argon2id\$/);
      expect(owner.password_hash).not.toContain(OWNER_PASSWORD);
    });
  });

  describe("POST /dev_fetch_api_key", () => {
    test("returns a key without authentication on a development server", async () => {
      const res = await server.anonymous.post("/dev_fetch_api_key", { username: OWNER_EMAIL });
      expect(res.body).toMatchObject({ result: "success", api_key: server.owner.credentials!.apiKey, email: OWNER_EMAIL });
    });

    test("an unknown user is refused", async () => {
      const res = await server.anonymous.post("/dev_fetch_api_key", { username: "nobody@example.com" });
      expect(res.status).toBe(401);
      expect(res.body.result).toBe("error");
    });
  });

  test("deactivated users are refused with USER_DEACTIVATED", async () => {
    const created = await server.owner.post("/users", { email: "leaver@example.com", password: "leaver-pass", full_name: "Lee Leaver", short_name: "lee" });
    expect(created.body.result).toBe("success");
    const key = (await server.anonymous.post("/fetch_api_key", { username: "leaver@example.com", password: "leaver-pass" })).body.api_key;
    const leaver = server.client("leaver@example.com", key);
    expect((await leaver.get("/users/me")).status).toBe(200);
    expect((await leaver.delete("/users/me")).body.result).toBe("success");
    const res = await leaver.get("/users/me");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ result: "error", msg: "Account is deactivated", code: "USER_DEACTIVATED" });
    const login = await server.anonymous.post("/fetch_api_key", { username: "leaver@example.com", password: "leaver-pass" });
    expect(login.body.code).toBe("USER_DEACTIVATED");
  });

  test("a deactivated realm refuses everyone with REALM_DEACTIVATED", async () => {
    const { prisma } = server.running.services.db;
    await server.running.services.actions.run(0, async (tx, events) => {
      const { createRealm } = await import("@chat/core");
      await createRealm(tx, events, server.running.services.ctx, {
        subdomain: "closed",
        name: "Closed Inc",
        owner: { email: "boss@closed.example", fullName: "Boss", password: "boss-password" },
      });
    });
    const boss = await prisma.userProfile.findFirstOrThrow({ where: { email: "boss@closed.example" } });
    const client = server.client(boss.email, boss.api_key, "closed.chat.test");
    expect((await client.get("/users/me")).status).toBe(200);
    await prisma.realm.update({ where: { string_id: "closed" }, data: { deactivated: true } });
    const res = await client.get("/users/me");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ result: "error", msg: "This organization has been deactivated", code: "REALM_DEACTIVATED" });
  });
});

test("dev_fetch_api_key is an error on a production server", async () => {
  const server = await startTestServer("embedded", { DEV_MODE: "false" });
  try {
    const res = await request(server.baseUrl).post("/api/v1/dev_fetch_api_key").type("form").send({ username: OWNER_EMAIL });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "DevAuthBackend not enabled.", code: "BAD_REQUEST" });
  } finally {
    await server.stop();
  }
});
