// Onboarding steps (feature levels 233 and 259): /register's onboarding_steps and
// POST /users/me/onboarding_steps with its `onboarding_steps` event.
import { createTestUser, type TestUser } from "../support/users.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

const ZULIP_9_NOTICES = [
  "visibility_policy_banner",
  "intro_inbox_view_modal",
  "intro_recent_view_modal",
  "first_stream_created_banner",
  "jump_to_conversation_banner",
  "non_interleaved_view_messages_fading",
  "interleaved_view_messages_fading",
];

describe.each(MODES)("onboarding steps (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;
  let other: TestUser;

  const steps = async (user: TestUser) => (await user.client.post("/register", { fetch_event_types: ["onboarding_steps"] })).body.onboarding_steps;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Mel Member");
    other = await createTestUser(server, "Olly Other");
  });
  afterAll(() => server.stop());

  test("a new user has Zulip 9.0's one-time notices to see", async () => {
    expect(await steps(member)).toEqual(ZULIP_9_NOTICES.map((name) => ({ type: "one_time_notice", name })));
  });

  test("verifyAction: marking one read leaves the others, for this user only", async () => {
    const events = await verifyAction(member.client, ["onboarding_steps"], async () => {
      expect((await member.client.post("/users/me/onboarding_steps", { onboarding_step: "intro_inbox_view_modal" })).body).toEqual({ result: "success", msg: "" });
    });
    const rest = ZULIP_9_NOTICES.filter((name) => name !== "intro_inbox_view_modal").map((name) => ({ type: "one_time_notice", name }));
    expect(events).toEqual([{ id: expect.any(Number), type: "onboarding_steps", onboarding_steps: rest }]);
    expect(await steps(other)).toHaveLength(ZULIP_9_NOTICES.length);
  });

  test("marking one twice is fine", async () => {
    expect((await member.client.post("/users/me/onboarding_steps", { onboarding_step: "intro_inbox_view_modal" })).body.result).toBe("success");
    expect(await steps(member)).toHaveLength(ZULIP_9_NOTICES.length - 1);
  });

  test.each([
    [{ onboarding_step: "intro_streams" }, "Unknown onboarding_step: intro_streams"],
    [{}, "Missing 'onboarding_step' argument"],
    [{ onboarding_step: "x".repeat(101) }, "onboarding_step is too long (limit: 100 characters)"],
  ] as Array<[Record<string, string>, string]>)("%j is refused and changes nothing", async (params, msg) => {
    const before = await steps(member);
    const res = await member.client.post("/users/me/onboarding_steps", params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await steps(member)).toEqual(before);
  });

  test("bots are refused", async () => {
    const bot = await member.client.post("/bots", { full_name: "Step Bot", short_name: "stepbot" });
    expect(bot.body.result).toBe("success");
    const client = server.client(bot.body.email ?? `stepbot-bot@chat.test`, bot.body.api_key);
    const res = await client.post("/users/me/onboarding_steps", { onboarding_step: "visibility_policy_banner" });
    expect(res.body).toMatchObject({ result: "error", msg: "This endpoint does not accept bot requests." });
  });
});
