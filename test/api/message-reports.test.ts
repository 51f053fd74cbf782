// Reporting messages to moderators: the realm's moderation_request_channel_id (Zulip's feature
// level 331) and POST /messages/{message_id}/report (feature level 382), which has the
// Notification Bot post the report in that private channel, in Zulip's words.
import { sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("message reports (%s)", (mode) => {
  let server: TestServer;
  let mod: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let publicId: number;
  let moderationId: number;
  let secretId: number;

  const streamId = async (name: string) => ((await server.owner.get("/get_stream_id", { stream: name })).body.stream_id as number);
  /** The newest message in the moderation channel, as the owner (subscribed) reads it. */
  const lastReport = async () => {
    const res = await server.owner.get("/messages", {
      anchor: "newest",
      num_before: 1,
      num_after: 0,
      apply_markdown: false,
      narrow: JSON.stringify([{ operator: "stream", operand: moderationId }]),
    });
    return res.body.messages[0] as Record<string, any>;
  };
  const unixToGlobal = (ts: number) => `<time:${new Date(ts * 1000).toISOString().replace(".000Z", "+00:00")}>`;
  const messageTimestamp = async (id: number) => ((await server.owner.get(`/messages/${id}`)).body.message.timestamp as number);

  beforeAll(async () => {
    server = await startTestServer(mode);
    mod = await createTestUser(server, "Moe Moderator", "moderator");
    alice = await createTestUser(server, "Alice Reporter");
    bob = await createTestUser(server, "Bob Reported");
    carol = await createTestUser(server, "Carol Third");
    await subscribeTo(server.owner, ["report town"]);
    await subscribeTo(server.owner, ["moderation"], { invite_only: true });
    await subscribeTo(server.owner, ["owner secrets"], { invite_only: true });
    publicId = await streamId("report town");
    moderationId = await streamId("moderation");
    secretId = await streamId("owner secrets");
  });
  afterAll(() => server.stop());

  test("with no moderation channel, /register says -1 and a report is refused", async () => {
    const state = (await alice.client.post("/register", { fetch_event_types: ["realm"] })).body;
    expect(state.realm_moderation_request_channel_id).toBe(-1);
    const id = await sendStreamMessage(bob.client, "report town", "t", "spam spam");
    const res = await alice.client.post(`/messages/${id}/report`, { report_type: "spam" });
    expect([res.status, res.body]).toEqual([400, { result: "error", msg: "Message reporting is not enabled in this organization.", code: "BAD_REQUEST" }]);
  });

  test("the moderation channel must be a private channel the administrator can reach; only administrators set it", async () => {
    const pub = await server.owner.patch("/realm", { moderation_request_channel_id: publicId });
    expect(pub.body).toEqual({ result: "error", msg: "Moderation request channel must be private.", code: "BAD_REQUEST" });
    const missing = await server.owner.patch("/realm", { moderation_request_channel_id: 999999 });
    expect(missing.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    const member = await alice.client.patch("/realm", { moderation_request_channel_id: moderationId });
    expect(member.body).toMatchObject({ result: "error", msg: "Must be an organization administrator" });
    expect((await alice.client.post("/register", { fetch_event_types: ["realm"] })).body.realm_moderation_request_channel_id).toBe(-1);

    const events = await verifyAction(alice.client, ["realm"], () => server.owner.patch("/realm", { moderation_request_channel_id: moderationId }));
    expect(events).toEqual([{ id: expect.any(Number), type: "realm", op: "update", property: "moderation_request_channel_id", value: moderationId }]);
    expect((await alice.client.post("/register", { fetch_event_types: ["realm"] })).body.realm_moderation_request_channel_id).toBe(moderationId);
  });

  test("a report of a channel message, as Zulip writes it, by the Notification Bot in the reported user's topic", async () => {
    const id = await sendStreamMessage(bob.client, "report town", "greetings", "Buy cheap things!");
    const res = await alice.client.post(`/messages/${id}/report`, { report_type: "spam", description: "Again and again." });
    expect(res.body).toEqual({ result: "success", msg: "" });
    const report = await lastReport();
    expect(report.sender_email).toMatch(/^notification-bot@/);
    expect(report.subject).toBe("Bob Reported moderation");
    const when = unixToGlobal(await messageTimestamp(id));
    expect(report.content).toBe(
      `@_**Alice Reporter|${alice.id}** reported a message sent by @_**Bob Reported|${bob.id}** at ${when}.\n` +
        "```quote\n**Spam**. Again and again.\n```\n\n" +
        `\`\`\` spoiler Original message at #**report town>greetings@${id}**\n` +
        "Buy cheap things!\n```\n",
    );
  });

  test("each report type is named as Zulip names it; a fence longer than the message's own", async () => {
    const id = await sendStreamMessage(bob.client, "report town", "code*stars", "look:\n```\ncode\n```");
    for (const [type, reason] of [
      ["harassment", "Harassment"],
      ["inappropriate", "Inappropriate content"],
      ["norms", "Violates community norms"],
      ["other", "Other reason"],
    ]) {
      expect((await alice.client.post(`/messages/${id}/report`, { report_type: type, description: "why" })).body.result).toBe("success");
      const report = await lastReport();
      expect(report.content).toContain(`\`\`\`quote\n**${reason}**. why\n\`\`\``);
      // A topic that would break the #** syntax is linked plainly, and the message fenced with four backticks.
      expect(report.content).toContain(`\`\`\`\` spoiler Original message at [#report town > code&#42;stars @ 💬](#narrow/channel/${publicId}-report-town/topic/code.2Astars/near/${id})\nlook:\n\`\`\`\ncode\n\`\`\`\n\`\`\`\`\n`);
    }
  });

  test("reports of direct messages say whom they went to and link the conversation", async () => {
    const toAlice = await sendPrivateMessage(bob.client, [alice.id], "psst");
    expect((await alice.client.post(`/messages/${toAlice}/report`, { report_type: "harassment" })).body.result).toBe("success");
    let report = await lastReport();
    const pair = [alice.id, bob.id].sort((a, b) => a - b).join(",");
    expect(report.content).toMatch(new RegExp(`^@_\\*\\*Alice Reporter\\|${alice.id}\\*\\* reported a message sent by @_\\*\\*Bob Reported\\|${bob.id}\\*\\* at <time:[^>]+>\\.\\n`));
    expect(report.content).toMatch(new RegExp(`\`\`\` spoiler \\[Original message\\]\\(https?://[^/]+/#narrow/dm/${pair}/near/${toAlice}\\)\npsst\n`));

    // One's own message names its recipient.
    const own = await sendPrivateMessage(alice.client, [bob.id], "mine");
    expect((await alice.client.post(`/messages/${own}/report`, { report_type: "norms" })).body.result).toBe("success");
    report = await lastReport();
    expect(report.content).toMatch(new RegExp(`reported a message sent by @_\\*\\*Alice Reporter\\|${alice.id}\\*\\* to @_\\*\\*Bob Reported\\|${bob.id}\\*\\* at `));
    expect(report.subject).toBe("Alice Reporter moderation");

    // A group conversation lists the others.
    const group = await sendPrivateMessage(bob.client, [alice.id, carol.id], "all of us");
    expect((await alice.client.post(`/messages/${group}/report`, { report_type: "spam" })).body.result).toBe("success");
    report = await lastReport();
    expect(report.content).toContain(`sent by @_**Bob Reported|${bob.id}** to @_**Alice Reporter|${alice.id}** and @_**Carol Third|${carol.id}** at `);
    const trio = [alice.id, bob.id, carol.id].sort((a, b) => a - b).join(",");
    expect(report.content).toContain(`/#narrow/dm/${trio}-group/near/${group}`);
  });

  test.each([
    ["no report_type", {}, "Missing 'report_type' argument"],
    ["an unknown report_type", { report_type: "boring" }, "Invalid report_type"],
    ["`other` with no explanation", { report_type: "other" }, "An explanation is required."],
    ["a description over 1000 characters", { report_type: "spam", description: "x".repeat(1001) }, "description is too long (limit: 1000 characters)"],
  ])("%s is refused and nothing is posted", async (_name, body, msg) => {
    const id = await sendStreamMessage(bob.client, "report town", "refusals", "hm");
    const before = (await lastReport()).id;
    const res = await alice.client.post(`/messages/${id}/report`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect((await lastReport()).id).toBe(before);
  });

  test("a message the reporter cannot read is an invalid message; so is one that does not exist", async () => {
    const secret = await sendStreamMessage(server.owner, "owner secrets", "t", "hidden");
    const dm = await sendPrivateMessage(bob.client, [carol.id], "between us");
    const before = (await lastReport()).id;
    for (const id of [secret, dm, 999999]) {
      const res = await alice.client.post(`/messages/${id}/report`, { report_type: "spam" });
      expect(res.body).toEqual({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
    }
    expect((await lastReport()).id).toBe(before);
    expect(secretId).toBeGreaterThan(0);
  });

  test("a moderator subscribed to the channel sees the report; turning reporting off with -1 refuses again", async () => {
    await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "moderation" }]), principals: JSON.stringify([mod.id]) });
    const id = await sendStreamMessage(bob.client, "report town", "late", "again");
    expect((await alice.client.post(`/messages/${id}/report`, { report_type: "spam" })).body.result).toBe("success");
    const seen = await mod.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: moderationId }]) });
    expect(seen.body.messages[0].content).toContain("reported a message");
    // Alice, not subscribed to the private channel, cannot read reports.
    const hidden = await alice.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: moderationId }]) });
    expect(hidden.body.messages ?? []).toEqual([]);

    expect((await server.owner.patch("/realm", { moderation_request_channel_id: -1 })).body.result).toBe("success");
    const res = await alice.client.post(`/messages/${id}/report`, { report_type: "spam" });
    expect(res.body).toMatchObject({ result: "error", msg: "Message reporting is not enabled in this organization." });
  });
});
