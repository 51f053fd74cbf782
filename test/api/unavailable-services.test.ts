// Services this server does not offer answer Zulip's own refusal (feature levels 160, 206, 217),
// not a 404: Zoom and BigBlueButton calls, test push notifications, JWT logins.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("unavailable external services (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Sam Services");
  });
  afterAll(() => server.stop());

  test("POST /calls/zoom/create: Zoom credentials have not been configured", async () => {
    for (const params of [{}, { is_video_call: false }]) {
      const res = await member.client.post("/calls/zoom/create", params);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Zoom credentials have not been configured", code: "BAD_REQUEST" });
    }
    expect((await member.client.post("/calls/zoom/create", { is_video_call: "maybe" })).body.msg).not.toBe("Zoom credentials have not been configured");
  });

  test("GET /calls/bigbluebutton/create: BigBlueButton is not configured", async () => {
    const res = await member.client.get("/calls/bigbluebutton/create", { meeting_name: "standup" });
    expect(res.body).toEqual({ result: "error", msg: "BigBlueButton is not configured.", code: "BAD_REQUEST" });
    expect((await member.client.get("/calls/bigbluebutton/create")).body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING" });
  });

  test("POST /mobile_push/test_notification: no device is known; without a token, nothing to send", async () => {
    const withToken = await member.client.post("/mobile_push/test_notification", { token: "c0ffee" });
    expect(withToken.status).toBe(400);
    expect(withToken.body).toEqual({ result: "error", msg: "Device not recognized", code: "INVALID_PUSH_DEVICE_TOKEN" });
    // Even one the app registered: this server keeps none (push-devices.ts).
    expect((await member.client.post("/users/me/apns_device_token", { token: "c0ffee" })).body.result).toBe("success");
    expect((await member.client.post("/mobile_push/test_notification", { token: "c0ffee" })).body.code).toBe("INVALID_PUSH_DEVICE_TOKEN");
    expect((await member.client.post("/mobile_push/test_notification")).body).toEqual({ result: "success", msg: "" });
    const bot = await member.client.post("/bots", { full_name: "Push Bot", short_name: "pushbot" });
    const botClient = server.client("pushbot-bot@chat.test", bot.body.api_key);
    expect((await botClient.post("/mobile_push/test_notification")).body.msg).toBe("This endpoint does not accept bot requests.");
  });

  test("POST /jwt/fetch_api_key: JWT authentication is not enabled, without credentials", async () => {
    const res = await server.anonymous.post("/jwt/fetch_api_key", { token: "a.b.c" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "JWT authentication is not enabled for this organization", code: "BAD_REQUEST" });
    expect((await server.anonymous.post("/jwt/fetch_api_key")).body.msg).toBe("JWT authentication is not enabled for this organization");
    expect((await server.anonymousAt("nowhere.example.test").post("/jwt/fetch_api_key", { token: "a.b.c" })).body.result).toBe("error");
  });

  test("each is unauthenticated-safe: the authenticated ones refuse anonymous requests", async () => {
    expect((await server.anonymous.post("/calls/zoom/create")).status).toBe(401);
    expect((await server.anonymous.post("/mobile_push/test_notification")).status).toBe(401);
  });
});
