// A user status's emoji (feature level 86): POST /users/me/status with emoji_name, emoji_code and
// reaction_type, the `user_status` event and /register's user_status.
import { createTestUser, type TestUser } from "../support/users.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("user status emoji (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;
  let other: TestUser;

  const statusOf = async (user: TestUser) => (await other.client.post("/register", { fetch_event_types: ["user_status"] })).body.user_status[String(user.id)];

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Mel Member");
    other = await createTestUser(server, "Olly Other");
  });
  afterAll(() => server.stop());

  test("verifyAction: an emoji by name alone gets its code and type", async () => {
    const events = await verifyAction(other.client, ["user_status"], () => member.client.post("/users/me/status", { status_text: "on vacation", emoji_name: "car" }));
    expect(events).toEqual([
      { id: expect.any(Number), type: "user_status", user_id: member.id, status_text: "on vacation", emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" },
    ]);
    expect(await statusOf(member)).toEqual({ status_text: "on vacation", emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" });
    expect((await other.client.get(`/users/${member.id}/status`)).body.status).toEqual({ status_text: "on vacation", emoji_name: "car", emoji_code: "1f697", reaction_type: "unicode_emoji" });
  });

  test("verifyAction: changing only the text keeps the emoji; an empty name clears it", async () => {
    await verifyAction(other.client, ["user_status"], () => member.client.post("/users/me/status", { status_text: "back soon" }));
    expect(await statusOf(member)).toMatchObject({ status_text: "back soon", emoji_name: "car" });
    const events = await verifyAction(other.client, ["user_status"], () => member.client.post("/users/me/status", { emoji_name: "" }));
    expect(events[0]).toMatchObject({ emoji_name: "", emoji_code: "", reaction_type: "unicode_emoji" });
    expect(await statusOf(member)).toEqual({ status_text: "back soon" });
  });

  test("the Zulip emoji, with its code and type", async () => {
    const res = await member.client.post("/users/me/status", { emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" });
    expect(res.body.result).toBe("success");
    expect(await statusOf(member)).toMatchObject({ emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" });
  });

  test.each([
    [{ emoji_name: "no_such_emoji" }, "Emoji 'no_such_emoji' does not exist"],
    [{ emoji_name: "car", emoji_code: "1f600", reaction_type: "unicode_emoji" }, "Invalid emoji name"],
    [{ emoji_name: "car", emoji_code: "1f697", reaction_type: "moji" }, "Invalid emoji type."],
    [{ emoji_name: "party", emoji_code: "99999", reaction_type: "realm_emoji" }, "Invalid custom emoji."],
  ] as Array<[Record<string, string>, string]>)("%j is refused and changes nothing", async (params, msg) => {
    const before = await statusOf(member);
    const res = await member.client.post("/users/me/status", { status_text: "changed?", ...params });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await statusOf(member)).toEqual(before);
  });
});
