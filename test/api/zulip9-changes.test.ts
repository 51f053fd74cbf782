// Smaller API changes up to Zulip 9.0 that have no area of their own: who may POST /users (36,
// granted by the operator's CLI), a bot's role by PATCH
// /bots (feature level 130), a stream's retention and unsubscribers group set when it is made (17,
// 91, 161), a status's `away` as presence_enabled turned over (148), a member unsubscribing their own bot (145), delete events for the deleter who has no copy of the message (274),
// and the email a deactivated user gets when the administrator leaves a comment (135), sent by the
// worker to an SMTP server the test runs.
import request from "supertest";
import { runCli } from "../../apps/server/src/cli-commands.ts";
import { verifyAction } from "../support/verify-action.ts";
import { waitForEvent } from "../support/events.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp-server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("Zulip 9.0 API changes (%s)", (mode) => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let admin: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    server = await startTestServer(mode, { EMAIL_HOST: smtp.host, EMAIL_PORT: String(smtp.port), EMAIL_USE_TLS: "false" });
    admin = await createTestUser(server, "Ada Changes", "admin");
    member = await createTestUser(server, "Mel Changes");
  });
  afterAll(async () => {
    await server.stop();
    await smtp.close();
  });

  test("POST /users needs the can_create_users permission, which the operator grants (feature level 36)", async () => {
    const params = { email: "made.by.admin@example.com", password: "member-pass", full_name: "Made By Admin", short_name: "made" };
    const refused = await admin.client.post("/users", params);
    expect(refused.body).toEqual({ result: "error", msg: "User not authorized to create users", code: "BAD_REQUEST" });
    expect(await server.running.services.db.prisma.userProfile.count({ where: { delivery_email: params.email } })).toBe(0);

    let output = "";
    const cli = (argv: string[]) => runCli(argv, server.running.services, { out: (text) => (output += text), input: {} });
    await cli(["grant-create-users", "--email", admin.email]);
    expect(output).toContain("may create accounts");
    expect((await admin.client.post("/users", params)).body).toEqual({ result: "success", msg: "", user_id: expect.any(Number) });
    await cli(["grant-create-users", "--email", admin.email, "--revoke"]);
    const again = await admin.client.post("/users", { ...params, email: "second.made@example.com" });
    expect(again.body.msg).toBe("User not authorized to create users");
    // The organization's first owner may, as its creator.
    expect((await server.owner.post("/users", { ...params, email: "by.owner@example.com" })).body.result).toBe("success");
  });

  describe("PATCH /bots/{bot_id} with role (feature level 130)", () => {
    let botId: number;

    beforeAll(async () => {
      const created = await member.client.post("/bots", { full_name: "Role Bot", short_name: "rolebot", bot_type: 1 });
      expect(created.body.result).toBe("success");
      botId = created.body.user_id;
    });

    test("an administrator changes a bot's role, and everyone hears of it", async () => {
      const queue = (await member.client.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      const res = await admin.client.patch(`/bots/${botId}`, { role: 200 });
      expect(res.body.result).toBe("success");
      const event = await waitForEvent(member.client, queue, (e) => e.type === "realm_user" && e.person?.role !== undefined);
      expect(event.person).toEqual({ user_id: botId, role: 200 });
      const row = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: botId } });
      expect(row.role).toBe(200);
      expect((await admin.client.patch(`/bots/${botId}`, { role: 400 })).body.result).toBe("success");
    });

    test("the bot's owner, not an administrator, may not; nor may anyone set an unknown role", async () => {
      const res = await member.client.patch(`/bots/${botId}`, { role: 200 });
      expect(res.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
      expect((await admin.client.patch(`/bots/${botId}`, { role: 150 })).body).toMatchObject({ result: "error", msg: "Invalid role" });
      expect((await admin.client.patch(`/bots/${botId}`, { role: 100 })).body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
      const row = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: botId } });
      expect(row.role).toBe(400);
    });
  });

  test("a status's away is presence_enabled turned over, both ways, with the events that keep the state (feature level 148)", async () => {
    const user = await createTestUser(server, "Ava Away");
    const sections = ["user_status", "user_settings"];
    const events = await verifyAction(user.client, sections, () => user.client.post("/users/me/status", { away: true }));
    expect(events).toEqual(expect.arrayContaining([expect.objectContaining({ type: "user_settings", property: "presence_enabled", value: false })]));
    expect((await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: user.id } })).presence_enabled).toBe(false);
    expect((await member.client.get(`/users/${user.id}/status`)).body.status).toEqual({ away: true });
    await verifyAction(user.client, sections, () => user.client.patch("/settings", { presence_enabled: true }));
    expect((await member.client.get(`/users/${user.id}/status`)).body.status).toEqual({});
    await verifyAction(user.client, sections, () => user.client.patch("/settings", { presence_enabled: false }));
    const seen = (await member.client.post("/register", { event_types: ["user_status"] })).body.user_status;
    expect(seen[String(user.id)]).toEqual({ away: true });
  });

  test("streams take message_retention_days (owners; no deletion here, so no number of days) and can_remove_subscribers_group when made", async () => {
    const prisma = server.running.services.db.prisma;
    const groups = (await admin.client.get("/user_groups")).body.user_groups as Array<{ id: number; name: string }>;
    const moderators = groups.find((g) => g.name === "role:moderators")!.id;
    const made = await server.owner.post("/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "kept forever" }]),
      message_retention_days: JSON.stringify("unlimited"),
      can_remove_subscribers_group: moderators,
    });
    expect(made.body.result).toBe("success");
    const stream = await prisma.stream.findFirstOrThrow({ where: { name: "kept forever" } });
    expect(stream).toMatchObject({ message_retention_days: -1, can_remove_subscribers_group_id: moderators });

    // An administrator who is not an owner may not; a number of days is not offered; nothing changes.
    expect((await admin.client.patch(`/streams/${stream.id}`, { message_retention_days: JSON.stringify("realm_default") })).body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
    expect((await server.owner.patch(`/streams/${stream.id}`, { message_retention_days: "30" })).body.msg).toBe("Message retention is not available on this server.");
    expect((await server.owner.patch(`/streams/${stream.id}`, { message_retention_days: "soon" })).body.msg).toBe("Bad value for 'message_retention_days': soon");
    const refused = await admin.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "never made" }]), message_retention_days: "7" });
    expect(refused.body.msg).toBe("Must be an organization owner");
    expect(await prisma.stream.count({ where: { name: "never made" } })).toBe(0);
    expect((await prisma.stream.findUniqueOrThrow({ where: { id: stream.id } })).message_retention_days).toBe(-1);

    const events = await verifyAction(member.client, ["stream"], () => server.owner.patch(`/streams/${stream.id}`, { message_retention_days: JSON.stringify("realm_default") }));
    expect(events).toEqual([expect.objectContaining({ type: "stream", op: "update", property: "message_retention_days", value: null, stream_id: stream.id })]);
  });

  test("the avatar of a user a guest may not see is served where Zulip has it (feature level 232)", async () => {
    const res = await request(server.baseUrl).get("/static/images/unknown-user-avatar.png").buffer(true);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("image/png");
    expect((res.body as Buffer).subarray(1, 4).toString()).toBe("PNG");
  });

  test("a member may unsubscribe a bot they own, but not another member (feature level 145)", async () => {
    const created = await member.client.post("/bots", { full_name: "Own Bot", short_name: "ownbot", bot_type: 1 });
    expect(created.body.result).toBe("success");
    const botId = created.body.user_id as number;
    const other = await createTestUser(server, "Otto Other");
    // The owner makes the room: its creator would administer it (feature level 325), and so could unsubscribe anyone.
    await subscribeTo(server.owner, ["bot room"], { principals: JSON.stringify([botId, other.id, member.id]) });
    const res = await member.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["bot room"]), principals: JSON.stringify([botId]) });
    expect(res.body).toMatchObject({ result: "success", removed: ["bot room"], not_removed: [] });
    const refused = await member.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["bot room"]), principals: JSON.stringify([botId, other.id]) });
    expect(refused.body).toMatchObject({ result: "error", msg: "Insufficient permission" });
    const prisma = server.running.services.db.prisma;
    const stream = await prisma.stream.findFirstOrThrow({ where: { name: "bot room" } });
    const active = await prisma.subscription.findMany({ where: { recipient_id: stream.recipient_id!, active: true }, select: { user_id: true } });
    expect(active.map((s) => s.user_id).sort()).toEqual([member.id, other.id].sort());
  });

  test("an administrator who deletes a message they never received gets the delete event (feature level 274)", async () => {
    await subscribeTo(member.client, ["far away"]);
    const messageId = await sendStreamMessage(member.client, "far away", "gone soon");
    const copy = await server.running.services.db.prisma.userMessage.findFirst({ where: { user_id: admin.id, message_id: messageId } });
    expect(copy).toBeNull();
    const queue = (await admin.client.post("/register", { event_types: ["delete_message"], client_capabilities: JSON.stringify({ bulk_message_deletion: true }) })).body.queue_id;
    expect((await admin.client.delete(`/messages/${messageId}`)).body.result).toBe("success");
    const event = await waitForEvent(admin.client, queue, (e) => e.type === "delete_message");
    expect(event).toMatchObject({ type: "delete_message", message_ids: [messageId], message_type: "stream" });
  });

  describe("DELETE /users/{user_id} with deactivation_notification_comment (feature level 135)", () => {
    test("the user is emailed the comment; without one, no email", async () => {
      const quiet = await createTestUser(server, "Quinn Quiet");
      const before = smtp.received.length;
      expect((await admin.client.delete(`/users/${quiet.id}`)).body.result).toBe("success");
      const noisy = await createTestUser(server, "Nora Notified");
      expect((await admin.client.delete(`/users/${noisy.id}`, { deactivation_notification_comment: "  Thanks for your help!  " })).body.result).toBe("success");
      const [email] = (await smtp.waitForEmails(before + 1, 30_000)).slice(before);
      expect(email.rcptTo).toEqual([noisy.email]);
      expect(email.headers.subject).toBe("Your account on Team Chat has been deactivated");
      expect(email.text).toContain("The administrators left this comment:");
      expect(email.text).toContain("Thanks for your help!");
      await new Promise((r) => setTimeout(r, 500));
      expect(smtp.received.slice(before).map((e) => e.rcptTo[0])).toEqual([noisy.email]);
    });

    test("a comment past 2,000 characters is refused and deactivates nobody", async () => {
      const kept = await createTestUser(server, "Kim Kept");
      const res = await admin.client.delete(`/users/${kept.id}`, { deactivation_notification_comment: "x".repeat(2001) });
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe("deactivation_notification_comment is too long (limit: 2000 characters)");
      expect((await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: kept.id } })).is_active).toBe(true);
    });
  });
});
