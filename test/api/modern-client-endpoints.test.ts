// The small endpoints today's Zulip clients call around login and loading, in the shapes
// zulip-flutter parses: /server_settings, /fetch_api_key, the emoji names document
// (server_emoji_data_url), upload replies, and the legacy push registration.
import request from "supertest";
import { SERVER_EMOJI_DATA_PATH } from "@chat/core";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createMember } from "../support/users.ts";

const API_KEY = /^[A-Za-z0-9]{32}$/;

describe.each(MODES)("endpoints today's clients call (%s)", (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  describe("GET /server_settings", () => {
    test("at the host of the organization at the root: every key zulip-flutter requires, with its type", async () => {
      const res = await server.anonymous.get("/server_settings");
      expect(res.status).toBe(200);
      const body = res.body;
      expect(typeof body.zulip_version).toBe("string");
      expect(typeof body.zulip_feature_level).toBe("number");
      expect(typeof body.zulip_merge_base).toBe("string");
      expect(body.zulip_merge_base).not.toBe("");
      expect(body.authentication_methods.ldap).toBe(false);
      expect(body.authentication_methods.password).toBe(true);
      expect(body.external_authentication_methods).toEqual([]);
      for (const key of ["push_notifications_enabled", "is_incompatible", "email_auth_enabled", "require_email_format_usernames", "realm_web_public_access_enabled"]) {
        expect([key, typeof body[key]]).toEqual([key, "boolean"]);
      }
      expect(body.push_notifications_enabled).toBe(false);
      expect(body.realm_web_public_access_enabled).toBe(false);
      // realm_url since feature level 257; zulip-flutter and zulip-terminal read realm_uri.
      expect(body.realm_uri).toBe("http://chat.test");
      expect(body.realm_url).toBe(body.realm_uri);
      for (const key of ["realm_name", "realm_icon", "realm_description"]) expect([key, typeof body[key]]).toEqual([key, "string"]);
    });

    test("the version fields are the ones /register reports", async () => {
      const settings = (await server.anonymous.get("/server_settings")).body;
      const register = (await server.owner.post("/register", { event_types: ["message"] })).body;
      expect([settings.zulip_version, settings.zulip_feature_level, settings.zulip_merge_base]).toEqual([register.zulip_version, register.zulip_feature_level, register.zulip_merge_base]);
    });
  });

  describe("POST /fetch_api_key", () => {
    test("answers api_key (32 characters), email and user_id (feature level 171)", async () => {
      const res = await server.anonymous.post("/fetch_api_key", { username: OWNER_EMAIL, password: OWNER_PASSWORD });
      expect(res.status).toBe(200);
      const me = await server.owner.get("/users/me");
      expect(res.body).toEqual({ result: "success", msg: "", api_key: server.owner.credentials!.apiKey, email: OWNER_EMAIL, user_id: me.body.user_id });
      expect(res.body.api_key).toMatch(API_KEY);
    });

    test("a deactivated user's right password is HTTP 401 (feature level 76)", async () => {
      const leaver = await createMember(server, "leaving@example.com", "Lee Leaving");
      expect((await leaver.client.delete("/users/me")).body.result).toBe("success");
      const res = await server.anonymous.post("/fetch_api_key", { username: "leaving@example.com", password: "member-pass" });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ result: "error", msg: "Account is deactivated", code: "USER_DEACTIVATED" });
    });

    test("a deactivated organization's users are refused with HTTP 401", async () => {
      const { prisma } = server.running.services.db;
      await server.running.services.actions.run(0, async (tx, events) => {
        const { createRealm } = await import("@chat/core");
        await createRealm(tx, events, server.running.services.ctx, { subdomain: "shut", name: "Shut Inc", owner: { email: "boss@shut.example", fullName: "Boss", password: "boss-password" } });
      });
      await prisma.realm.update({ where: { string_id: "shut" }, data: { deactivated: true } });
      const res = await server.anonymousAt("shut.chat.test").post("/fetch_api_key", { username: "boss@shut.example", password: "boss-password" });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ result: "error", msg: "This organization has been deactivated", code: "REALM_DEACTIVATED" });
    });

    test("every way a key is made gives 32 characters: a new user, a bot, a regenerated key", async () => {
      const member = await createMember(server, "keys@example.com", "Kay Keys");
      expect(member.client.credentials!.apiKey).toMatch(API_KEY);
      const bot = await server.owner.post("/bots", { full_name: "Key Bot", short_name: "keybot" });
      expect(bot.body.api_key).toMatch(API_KEY);
      const regenerated = await member.client.post("/users/me/api_key/regenerate");
      expect(regenerated.body.api_key).toMatch(API_KEY);
      expect(regenerated.body.api_key).not.toBe(member.client.credentials!.apiKey);
    });
  });

  describe("server_emoji_data_url", () => {
    test("the emoji names by code, without credentials, cacheable", async () => {
      const res = await request(server.baseUrl).get(SERVER_EMOJI_DATA_PATH);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(res.headers["cache-control"]).toMatch(/^public, max-age=\d+$/);
      const names = res.body.code_to_names as Record<string, string[]>;
      expect(names["1f600"]).toContain("grinning");
      expect(names["1f44d"]).toContain("+1");
      for (const [code, list] of Object.entries(names)) {
        expect([code, list.length > 0, new Set(list).size === list.length]).toEqual([code, true, true]);
      }
    });

    test("every organization's host serves it", async () => {
      const res = await request(server.baseUrl).get(SERVER_EMOJI_DATA_PATH).set("Host", "shut.chat.test");
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.code_to_names).length).toBeGreaterThan(1000);
    });
  });

  test("POST /user_uploads answers url, uri (its older name) and filename", async () => {
    const res = await server.owner.raw("post", "/user_uploads").attach("file", Buffer.from("hello"), "notes.txt");
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/^\/user_uploads\/\d+\/.+\/notes\.txt$/);
    expect(res.body.uri).toBe(res.body.url);
    expect(res.body.filename).toBe("notes.txt");
  });

  describe("push registration (accepted, not kept: this server sends no push notifications)", () => {
    test("an Android registration id and an Apple device token are accepted and removed", async () => {
      expect((await server.owner.post("/users/me/android_gcm_reg_id", { token: "fcm-token:APA91b" })).body).toEqual({ result: "success", msg: "" });
      expect((await server.owner.delete("/users/me/android_gcm_reg_id", { token: "fcm-token:APA91b" })).body).toEqual({ result: "success", msg: "" });
      const apns = "c0ffee".repeat(10) + "abcd";
      expect((await server.owner.post("/users/me/apns_device_token", { token: apns, appid: "com.zulip.flutter" })).body).toEqual({ result: "success", msg: "" });
      expect((await server.owner.delete("/users/me/apns_device_token", { token: apns })).body).toEqual({ result: "success", msg: "" });
      const settings = await server.anonymous.get("/server_settings");
      expect(settings.body.push_notifications_enabled).toBe(false);
    });

    test("tokens are checked as Zulip checks them", async () => {
      for (const [path, params, msg] of [
        ["/users/me/android_gcm_reg_id", { token: "" }, "Empty or invalid length token"],
        ["/users/me/android_gcm_reg_id", { token: "x".repeat(4097) }, "Empty or invalid length token"],
        ["/users/me/apns_device_token", { token: "not-hex", appid: "com.zulip.flutter" }, "Invalid APNS token"],
        ["/users/me/apns_device_token", { token: "abcd", appid: "bad app id!" }, "Invalid app ID"],
      ] as const) {
        const res = await server.owner.post(path, params);
        expect([path, res.status, res.body.msg]).toEqual([path, 400, msg]);
      }
      const missing = await server.owner.post("/users/me/apns_device_token", {});
      expect(missing.body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "token" });
    });

    test("bots may not register devices", async () => {
      const bot = await server.owner.post("/bots", { full_name: "Push Bot", short_name: "pushbot" });
      const row = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: bot.body.user_id } });
      const client = server.client(row.delivery_email, bot.body.api_key);
      const res = await client.post("/users/me/android_gcm_reg_id", { token: "abc" });
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe("This endpoint does not accept bot requests.");
    });
  });
});
