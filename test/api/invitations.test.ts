// Invitations (Zulip 9.0's /invites endpoints) and registering through one: email invitations
// sent through the worker to a real SMTP server, reusable links, the list, revoking, resending,
// the permissions (invite_to_realm_policy, roles), Zulip's INVITATION_FAILED answers and the daily
// limit; then the link's JSON endpoints (/api/v1/invitations/{key}) and pages (/join/<key>/).
import request from "supertest";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { startSmtpServer, type ReceivedEmail, type TestSmtpServer } from "../support/smtp-server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { drainEvents } from "../support/events.ts";
import { verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

jest.setTimeout(60_000);

const STRONG = "Correct-Horse-Battery-77";

function keyIn(email: ReceivedEmail): string {
  const match = /http:\/\/chat\.test\/join\/([a-z2-7]{24})\//.exec(email.text);
  if (!match) throw new Error(`no join link in: ${email.text}`);
  return match[1];
}

describe.each(MODES)("invitations (%s)", (mode) => {
  let smtp: TestSmtpServer;
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let guest: TestUser;
  let streamA: number;
  let streamB: number;
  let defaultStream: number;

  const prisma = () => server.running.services.db.prisma;

  async function makeStream(name: string): Promise<number> {
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }] })).body.result).toBe("success");
    return (await server.owner.get("/get_stream_id", { stream: name })).body.stream_id;
  }

  /** Sends invitations as `client` and returns the emails the worker delivered for them. */
  async function invite(client: ApiClient, params: Record<string, unknown>, count: number): Promise<{ body: Record<string, any>; emails: ReceivedEmail[] }> {
    const before = smtp.received.length;
    const res = await client.post("/invites", params);
    const emails = count === 0 ? [] : (await smtp.waitForEmails(before + count)).slice(before);
    return { body: res.body, emails };
  }

  async function inviteRows() {
    return prisma().invite.findMany({ orderBy: { id: "asc" } });
  }

  async function subscribedNames(client: ApiClient): Promise<string[]> {
    return (await client.get("/users/me/subscriptions")).body.subscriptions.map((s: { name: string }) => s.name).sort();
  }

  beforeAll(async () => {
    smtp = await startSmtpServer();
    server = await startTestServer(mode, { EMAIL_HOST: smtp.host, EMAIL_PORT: String(smtp.port), EMAIL_USE_TLS: "false" });
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Otto Other");
    guest = await createTestUser(server, "Gil Guest", "guest");
    streamA = await makeStream("invited-a");
    streamB = await makeStream("invited-b");
    defaultStream = await makeStream("everyone-here");
    expect((await server.owner.post("/default_streams", { stream_id: defaultStream })).body.result).toBe("success");
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
  });

  test("a member's invitation: invites_changed to administrators and the sender only, an email with a link, listed for both", async () => {
    const otherQueue = (await other.client.post("/register", { event_types: ["invites_changed"] })).body.queue_id;
    const adminQueue = (await admin.client.post("/register", { event_types: ["invites_changed"] })).body.queue_id;
    let result: { body: Record<string, any>; emails: ReceivedEmail[] } | undefined;
    const events = await verifyAction(member.client, ["invites_changed"], async () => {
      result = await invite(member.client, { invitee_emails: "New Person <new.person@example.com>", stream_ids: [streamA], notify_referrer_on_join: true }, 1);
    });
    expect(events).toEqual([{ id: expect.any(Number), type: "invites_changed" }]);
    expect(result!.body).toEqual({ result: "success", msg: "" });
    const [email] = result!.emails;
    expect(email.rcptTo).toEqual(["new.person@example.com"]);
    expect(email.headers.subject).toBe("Mia Member invited you to join Team Chat");
    expect(keyIn(email)).toMatch(/^[a-z2-7]{24}$/);
    expect((await drainEvents(admin.client, adminQueue)).map((e) => e.type)).toContain("invites_changed");
    expect(await drainEvents(other.client, otherQueue)).toEqual([]);

    const mine = (await member.client.get("/invites")).body.invites;
    expect(mine).toEqual([
      {
        id: expect.any(Number),
        invited_by_user_id: member.id,
        invited: expect.any(Number),
        expiry_date: expect.any(Number),
        invited_as: 400,
        email: "new.person@example.com",
        notify_referrer_on_join: true,
        is_multiuse: false,
      },
    ]);
    // 10 days by default.
    expect(mine[0].expiry_date - mine[0].invited).toBeGreaterThanOrEqual(10 * 86400 - 5);
    expect((await admin.client.get("/invites")).body.invites.map((i: { id: number }) => i.id)).toContain(mine[0].id);
    expect((await other.client.get("/invites")).body.invites).toEqual([]);
    // Only the key's hash is stored.
    const row = (await inviteRows()).find((r) => r.id === mine[0].id)!;
    expect(row.key_hash).not.toContain(keyIn(email));
    expect(row.link_key).toBeNull();
  });

  test("the link's JSON endpoints: what it opens, then the account with the invited role and streams, once", async () => {
    const { emails } = await invite(admin.client, { invitee_emails: "joiner@example.com", stream_ids: [streamA, streamB], invite_as: 600 }, 1);
    const key = keyIn(emails[0]);
    const info = await server.anonymous.get(`/invitations/${key}`);
    expect(info.body).toEqual({
      result: "success",
      msg: "",
      realm_name: "Team Chat",
      realm_url: "http://chat.test",
      email: "joiner@example.com",
      is_multiuse: false,
      invited_as: 600,
      invited_by: { user_id: admin.id, full_name: "Ada Admin" },
      expiry_date: expect.any(Number),
    });
    const weak = await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Jo Joiner", password: "abc" });
    expect(weak.status).toBe(400);
    expect((await server.anonymous.get(`/invitations/${key}`)).status).toBe(200);

    const adminQueue = (await admin.client.post("/register", { event_types: ["realm_user", "invites_changed"] })).body.queue_id;
    const accepted = await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Jo Joiner", password: STRONG, email: "ignored@example.com" });
    expect(accepted.body).toEqual({ result: "success", msg: "", api_key: expect.any(String), email: "joiner@example.com", user_id: expect.any(Number) });
    const joiner = server.client("joiner@example.com", accepted.body.api_key);
    const me = (await joiner.get("/users/me")).body;
    expect(me).toMatchObject({ full_name: "Jo Joiner", role: 600, is_guest: true });
    // The invitation's streams only: it did not ask for the default streams.
    expect(await subscribedNames(joiner)).toEqual(["invited-a", "invited-b"]);
    const types = (await drainEvents(admin.client, adminQueue)).map((e) => `${e.type}${e.op ? `:${e.op}` : ""}`);
    expect(types).toEqual(expect.arrayContaining(["realm_user:add", "invites_changed"]));
    // Logging in with the password works.
    expect((await server.anonymous.post("/fetch_api_key", { username: "joiner@example.com", password: STRONG })).status).toBe(200);

    // Once.
    const again = await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Jo Again", password: STRONG });
    expect(again.body).toEqual({ result: "error", msg: "The invitation link has already been used.", code: "BAD_REQUEST" });
    expect((await server.anonymous.get(`/invitations/${key}`)).body.msg).toBe("The invitation link has already been used.");
    expect((await admin.client.get("/invites")).body.invites.map((i: { email?: string }) => i.email)).not.toContain("joiner@example.com");
    // Unknown and malformed keys.
    for (const bad of ["a".repeat(24), "short", "A".repeat(24), "%00"]) {
      const res = await server.anonymous.get(`/invitations/${bad}`);
      expect(res.status).toBe(404);
      expect(res.body.msg).toBe("Invalid invitation link.");
    }
  });

  test("accepting notifies the sender by a Notification Bot message if asked, and ends other invitations of the address", async () => {
    const first = await invite(member.client, { invitee_emails: "twice@example.com", notify_referrer_on_join: true, include_realm_default_subscriptions: true }, 1);
    const second = await invite(other.client, { invitee_emails: "TWICE@example.com" }, 1);
    const key = keyIn(first.emails[0]);
    let accepted: { body: Record<string, any> } | undefined;
    // The new user reaches everyone's realm_users, and the invitation leaves the sender's list.
    const events = await verifyAction(member.client, ["realm_user", "invites_changed"], async () => {
      accepted = await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Tess Twice", password: STRONG });
    });
    expect(accepted!.body.result).toBe("success");
    expect(events.map((e) => `${e.type}:${e.op ?? ""}`)).toEqual(expect.arrayContaining(["realm_user:add", "invites_changed:"]));
    const tess = server.client("twice@example.com", accepted!.body.api_key);
    // The realm's default streams ("general" from the start, and the one added above).
    expect(await subscribedNames(tess)).toEqual(["everyone-here", "general"]);
    const messages = (await member.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0 })).body.messages;
    const note = messages.find((m: { content: string }) => m.content.includes("accepted your invitation"));
    expect(note).toBeDefined();
    expect(note.sender_email).toMatch(/^notification-bot@/);
    expect(note.content).toContain("Tess Twice");
    // The other invitation of the address is revoked.
    const dead = await server.anonymous.get(`/invitations/${keyIn(second.emails[0])}`);
    expect(dead.body.msg).toBe("The invitation link has been revoked.");
    expect((await other.client.get("/invites")).body.invites).toEqual([]);
  });

  test("no notification when notify_referrer_on_join is false", async () => {
    const { emails } = await invite(other.client, { invitee_emails: "quiet.join@example.com", notify_referrer_on_join: false }, 1);
    const before = (await other.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).body.messages.map((m: { id: number }) => m.id);
    expect((await server.anonymous.post(`/invitations/${keyIn(emails[0])}/accept`, { full_name: "Quiet Joiner", password: STRONG })).body.result).toBe("success");
    const after = (await other.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).body.messages.map((m: { id: number }) => m.id);
    expect(after).toEqual(before);
  });

  test("addresses already in use are skipped, the others invited (INVITATION_FAILED with sent_invitations)", async () => {
    const before = (await inviteRows()).length;
    const res = await invite(member.client, { invitee_emails: `fresh.one@example.com, ${other.email}\nfresh.two@example.com` }, 2);
    expect(res.body).toEqual({
      result: "error",
      msg: "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      code: "INVITATION_FAILED",
      errors: [[other.email, "Already has an account.", false]],
      sent_invitations: true,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    expect(res.emails.map((e) => e.rcptTo[0]).sort()).toEqual(["fresh.one@example.com", "fresh.two@example.com"]);
    expect((await inviteRows()).length).toBe(before + 2);
  });

  test("a deactivated account's address is skipped as such; a deactivated sender's invitations end", async () => {
    const leaver = await createTestUser(server, "Lee Leaver");
    const { emails } = await invite(leaver.client, { invitee_emails: "left.behind@example.com" }, 1);
    expect((await server.owner.delete(`/users/${leaver.id}`)).body.result).toBe("success");
    const res = await member.client.post("/invites", { invitee_emails: leaver.email });
    expect(res.body).toMatchObject({ code: "INVITATION_FAILED", msg: "We weren't able to invite anyone.", errors: [[leaver.email, "Account has been deactivated.", true]], sent_invitations: false });
    expect((await server.anonymous.get(`/invitations/${keyIn(emails[0])}`)).body.msg).toBe("The invitation link has been revoked.");
    expect((await admin.client.get("/invites")).body.invites.map((i: { email?: string }) => i.email)).not.toContain("left.behind@example.com");
  });

  test("refusals change nothing and send nothing", async () => {
    const before = await inviteRows();
    const sent = smtp.received.length;
    const cases: Array<[ApiClient, Record<string, unknown>, Record<string, unknown>]> = [
      [guest.client, { invitee_emails: "g@example.com" }, { msg: "Not allowed for guest users", code: "BAD_REQUEST" }],
      [member.client, { invitee_emails: "" }, { msg: "You must specify at least one email address." }],
      [member.client, { invitee_emails: " , \n" }, { msg: "You must specify at least one email address." }],
      [member.client, { invitee_emails: "x@example.com", invite_as: 200 }, { msg: "Must be an organization administrator" }],
      [member.client, { invitee_emails: "x@example.com", invite_as: 300 }, { msg: "Must be an organization administrator" }],
      [admin.client, { invitee_emails: "x@example.com", invite_as: 100 }, { msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" }],
      [admin.client, { invitee_emails: "x@example.com", invite_as: 123 }, { msg: "Invalid invite_as" }],
      [member.client, { invitee_emails: "x@example.com", stream_ids: [987654] }, { msg: "Invalid channel ID 987654. No invites were sent." }],
      [member.client, { invitee_emails: "x@example.com", invite_expires_in_minutes: 0 }, { code: "BAD_REQUEST" }],
      [member.client, { invitee_emails: "x@example.com", stream_ids: "nope" }, { code: "BAD_REQUEST" }],
      [
        member.client,
        { invitee_emails: "ok@example.com, not-an-address, y@mailinator.com" },
        {
          msg: "Some emails did not validate, so we didn't send any invitations.",
          code: "INVITATION_FAILED",
          errors: [
            ["not-an-address", "Invalid address.", false],
            ["y@mailinator.com", "Please use your real email address.", false],
          ],
          sent_invitations: false,
          daily_limit_reached: false,
        },
      ],
      [
        member.client,
        { invitee_emails: `${other.email}` },
        { msg: "We weren't able to invite anyone.", code: "INVITATION_FAILED", errors: [[other.email, "Already has an account.", false]], sent_invitations: false },
      ],
    ];
    for (const [client, params, expected] of cases) {
      const res = await client.post("/invites", params);
      expect(res.status).toBe(expected.code === "UNAUTHORIZED_PRINCIPAL" ? 400 : 400);
      expect(res.body).toMatchObject({ result: "error", ...expected });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await inviteRows()).toEqual(before);
    expect(smtp.received.length).toBe(sent);
  });

  test("invite_to_realm_policy decides who may invite; can_invite_others_to_realm follows it", async () => {
    const canInvite = async (client: ApiClient) => (await client.post("/register", { fetch_event_types: ["realm_user"] })).body.can_invite_others_to_realm;
    expect(await canInvite(member.client)).toBe(true);
    expect(await canInvite(guest.client)).toBe(false);
    // Owners alone change it (Zulip's update_realm).
    expect((await admin.client.patch("/realm", { invite_to_realm_policy: 2 })).body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
    expect(await canInvite(member.client)).toBe(true);
    await verifyAction(member.client, ["realm", "realm_user"], () => server.owner.patch("/realm", { invite_to_realm_policy: 2 }));
    expect(await canInvite(member.client)).toBe(false);
    expect(await canInvite(admin.client)).toBe(true);
    expect((await member.client.post("/invites", { invitee_emails: "x@example.com" })).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    await verifyAction(admin.client, ["realm", "realm_user"], () => server.owner.patch("/realm", { invite_to_realm_policy: 6 }));
    expect(await canInvite(admin.client)).toBe(false);
    expect((await admin.client.post("/invites", { invitee_emails: "x@example.com" })).body.msg).toBe("Insufficient permission");
    expect((await server.owner.patch("/realm", { invite_to_realm_policy: 5 })).body.msg).toBe("Invalid invite_to_realm_policy");
    // Moderators: administrators and moderators, not members.
    await verifyAction(member.client, ["realm", "realm_user"], () => server.owner.patch("/realm", { invite_to_realm_policy: 4 }));
    expect(await canInvite(member.client)).toBe(false);
    expect(await canInvite(admin.client)).toBe(true);
    const moderator = await createTestUser(server, "Mo Moderator");
    expect((await server.owner.patch(`/users/${moderator.id}`, { role: 300 })).body.result).toBe("success");
    expect(await canInvite(moderator.client)).toBe(true);
    expect((await invite(moderator.client, { invitee_emails: "by.moderator@example.com" }, 1)).body.result).toBe("success");
    expect((await moderator.client.post("/invites", { invitee_emails: "as.moderator@example.com", invite_as: 300 })).body.msg).toBe("Must be an organization administrator");
    await verifyAction(member.client, ["realm", "realm_user"], () => server.owner.patch("/realm", { invite_to_realm_policy: 1 }));
    expect(await canInvite(member.client)).toBe(true);
    expect((await member.client.post("/register", { fetch_event_types: ["realm"] })).body.realm_invite_to_realm_policy).toBe(1);
  });

  test("revoking: the sender or an administrator; the link then opens nothing", async () => {
    const { emails } = await invite(member.client, { invitee_emails: "revoke.me@example.com" }, 1);
    const id = (await member.client.get("/invites")).body.invites.find((i: { email?: string }) => i.email === "revoke.me@example.com").id;
    expect((await other.client.delete(`/invites/${id}`)).body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "BAD_REQUEST" });
    expect((await member.client.delete(`/invites/multiuse/${id}`)).body.msg).toBe("No such invitation");
    expect((await member.client.delete(`/invites/987654`)).body.msg).toBe("No such invitation");
    const events = await verifyAction(member.client, ["invites_changed"], () => member.client.delete(`/invites/${id}`));
    expect(events.map((e) => e.type)).toEqual(["invites_changed"]);
    expect((await member.client.delete(`/invites/${id}`)).body.msg).toBe("No such invitation");
    const key = keyIn(emails[0]);
    expect((await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Rev Oked", password: STRONG })).body.msg).toBe("The invitation link has been revoked.");
    // An administrator revokes a member's; an owner's invitation only an owner.
    await invite(member.client, { invitee_emails: "admin.revokes@example.com" }, 1);
    const id2 = (await member.client.get("/invites")).body.invites.find((i: { email?: string }) => i.email === "admin.revokes@example.com").id;
    expect((await admin.client.delete(`/invites/${id2}`)).body.result).toBe("success");
    await invite(server.owner, { invitee_emails: "new.owner@example.com", invite_as: 100 }, 1);
    const id3 = (await admin.client.get("/invites")).body.invites.find((i: { email?: string }) => i.email === "new.owner@example.com").id;
    expect((await admin.client.delete(`/invites/${id3}`)).body.msg).toBe("Must be an organization owner");
    expect((await server.owner.delete(`/invites/${id3}`)).body.result).toBe("success");
  });

  test("resending sends a new link and ends the old one", async () => {
    const { emails } = await invite(member.client, { invitee_emails: "resend.me@example.com" }, 1);
    const id = (await member.client.get("/invites")).body.invites.find((i: { email?: string }) => i.email === "resend.me@example.com").id;
    expect((await other.client.post(`/invites/${id}/resend`)).body.msg).toBe("Must be an organization administrator");
    const before = smtp.received.length;
    expect((await member.client.post(`/invites/${id}/resend`)).body).toEqual({ result: "success", msg: "" });
    const [again] = (await smtp.waitForEmails(before + 1)).slice(before);
    expect(again.rcptTo).toEqual(["resend.me@example.com"]);
    const oldKey = keyIn(emails[0]);
    const newKey = keyIn(again);
    expect(newKey).not.toBe(oldKey);
    expect((await server.anonymous.get(`/invitations/${oldKey}`)).status).toBe(404);
    expect((await server.anonymous.get(`/invitations/${newKey}`)).body.email).toBe("resend.me@example.com");
  });

  test("an expired invitation opens nothing", async () => {
    const { emails } = await invite(member.client, { invitee_emails: "late@example.com", invite_expires_in_minutes: 60 }, 1);
    const key = keyIn(emails[0]);
    await prisma().invite.updateMany({ where: { email: "late@example.com" }, data: { expires_at: new Date(Date.now() - 1000) } });
    expect((await server.anonymous.get(`/invitations/${key}`)).body).toEqual({ result: "error", msg: "The invitation link has expired.", code: "BAD_REQUEST" });
    expect((await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Late", password: STRONG })).body.msg).toBe("The invitation link has expired.");
    expect((await member.client.get("/invites")).body.invites.map((i: { email?: string }) => i.email)).not.toContain("late@example.com");
    expect(await prisma().userProfile.count({ where: { delivery_email: "late@example.com" } })).toBe(0);
  });

  test("reusable links: administrators make them, many people use them, revoked once", async () => {
    expect((await member.client.post("/invites/multiuse", {})).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    expect((await guest.client.post("/invites/multiuse", {})).body.msg).toBe("Not allowed for guest users");
    let link = "";
    await verifyAction(admin.client, ["invites_changed"], async () => {
      const res = await admin.client.post("/invites/multiuse", { stream_ids: [streamB], include_realm_default_subscriptions: true, invite_expires_in_minutes: null });
      expect(res.body).toEqual({ result: "success", msg: "", invite_link: expect.stringMatching(/^http:\/\/chat\.test\/join\/[a-z2-7]{24}\/$/) });
      link = res.body.invite_link;
    });
    const key = /join\/([a-z2-7]{24})\//.exec(link)![1];
    const listed = (await admin.client.get("/invites")).body.invites.find((i: { is_multiuse: boolean; link_url?: string }) => i.is_multiuse && i.link_url === link);
    expect(listed).toEqual({ id: expect.any(Number), invited_by_user_id: admin.id, invited: expect.any(Number), expiry_date: null, invited_as: 400, link_url: link, is_multiuse: true });
    expect((await server.anonymous.get(`/invitations/${key}`)).body).toMatchObject({ email: null, is_multiuse: true, expiry_date: null });

    expect((await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "No Email", password: STRONG })).body.msg).toBe("Please enter a valid email address.");
    expect((await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Throwaway", password: STRONG, email: "x@mailinator.com" })).body.msg).toBe(
      "Disposable email addresses are not allowed in this organization",
    );
    expect((await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Taken", password: STRONG, email: member.email.toUpperCase() })).body.msg).toBe(
      "This email address is already in use in this organization.",
    );
    for (const name of ["Link One", "Link Two"]) {
      const email = `${name.toLowerCase().replace(" ", ".")}@example.com`;
      const res = await server.anonymous.post(`/invitations/${key}/accept`, { full_name: name, password: STRONG, email });
      expect(res.body).toMatchObject({ result: "success", email });
      expect(await subscribedNames(server.client(email, res.body.api_key))).toEqual(["everyone-here", "general", "invited-b"]);
    }
    const id = listed.id;
    expect((await member.client.delete(`/invites/${id}`)).body.msg).toBe("No such invitation");
    expect((await member.client.delete(`/invites/multiuse/${id}`)).body.msg).toBe("Must be an organization administrator");
    expect((await admin.client.delete(`/invites/multiuse/${id}`)).body).toEqual({ result: "success", msg: "" });
    expect((await admin.client.delete(`/invites/multiuse/${id}`)).body.msg).toBe("Invitation has already been revoked");
    expect((await server.anonymous.post(`/invitations/${key}/accept`, { full_name: "Link Three", password: STRONG, email: "link.three@example.com" })).body.msg).toBe(
      "The invitation link has been revoked.",
    );
    expect((await admin.client.get("/invites")).body.invites.some((i: { id: number }) => i.id === id)).toBe(false);
    expect((await admin.client.post("/invites/multiuse", { invite_as: 100 })).body.msg).toBe("Must be an organization owner");
  });

  test("create_multiuse_invite_group decides who else may make links; a member then lists and revokes their own", async () => {
    const realmId = (await prisma().userProfile.findFirstOrThrow({ where: { id: member.id } })).realm_id;
    const groupId = async (name: string) => (await prisma().userGroup.findFirstOrThrow({ where: { realm_id: realmId, name } })).id;
    const admins = await groupId("role:administrators");
    expect((await prisma().realm.findUniqueOrThrow({ where: { id: realmId } })).create_multiuse_invite_group_id).toBe(admins);
    await prisma().realm.update({ where: { id: realmId }, data: { create_multiuse_invite_group_id: await groupId("role:members") } });
    try {
      const res = await member.client.post("/invites/multiuse", { invite_expires_in_minutes: 30 });
      expect(res.body.result).toBe("success");
      const mine = (await member.client.get("/invites")).body.invites.filter((i: { is_multiuse: boolean }) => i.is_multiuse);
      expect(mine).toEqual([expect.objectContaining({ link_url: res.body.invite_link, invited_by_user_id: member.id })]);
      expect(mine[0].expiry_date - mine[0].invited).toBeLessThanOrEqual(30 * 60 + 1);
      // Still only administrators make links for administrators, and a guest never.
      expect((await member.client.post("/invites/multiuse", { invite_as: 200 })).body.msg).toBe("Must be an organization administrator");
      expect((await guest.client.post("/invites/multiuse", {})).body.msg).toBe("Not allowed for guest users");
      expect((await other.client.delete(`/invites/multiuse/${mine[0].id}`)).body.msg).toBe("Must be an organization administrator");
      expect((await member.client.delete(`/invites/multiuse/${mine[0].id}`)).body.result).toBe("success");
    } finally {
      await prisma().realm.update({ where: { id: realmId }, data: { create_multiuse_invite_group_id: admins } });
    }
    expect((await member.client.post("/invites/multiuse", {})).body.msg).toBe("Insufficient permission");
  });

  test("the organization's daily limit of email invitations", async () => {
    const realmId = (await prisma().userProfile.findFirstOrThrow({ where: { id: member.id } })).realm_id;
    const since = new Date(Date.now() - 24 * 3600 * 1000);
    const today = await prisma().invite.count({ where: { realm_id: realmId, is_multiuse: false, invited_at: { gte: since } } });
    await prisma().realm.update({ where: { id: realmId }, data: { max_invites: today + 1 } });
    try {
      const res = await member.client.post("/invites", { invitee_emails: "limit.a@example.com, limit.b@example.com" });
      expect(res.body).toEqual({
        result: "error",
        msg: "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
        code: "INVITATION_FAILED",
        errors: [],
        sent_invitations: false,
        license_limit_reached: false,
        daily_limit_reached: true,
      });
      expect((await invite(member.client, { invitee_emails: "limit.a@example.com" }, 1)).body.result).toBe("success");
      expect((await member.client.post("/invites", { invitee_emails: "limit.c@example.com" })).body.daily_limit_reached).toBe(true);
    } finally {
      await prisma().realm.update({ where: { id: realmId }, data: { max_invites: null } });
    }
  });

  describe("the link's pages (/join/<key>/)", () => {
    async function page(key: string) {
      const res = await request(server.baseUrl).get(`/join/${key}/`);
      const cookie = (res.headers["set-cookie"] as unknown as string[] | undefined)?.find((c) => c.startsWith("csrftoken="));
      const token = cookie ? /^csrftoken=([^;]+)/.exec(cookie)![1] : "";
      return { res, token };
    }

    test("the form, then the account created, the browser logged in and sent to the web client", async () => {
      const { emails } = await invite(member.client, { invitee_emails: "browser.join@example.com", stream_ids: [streamA] }, 1);
      const key = keyIn(emails[0]);
      const { res, token } = await page(key);
      expect(res.status).toBe(200);
      expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(res.text).toContain("Mia Member invited you to join Team Chat");
      expect(res.text).toContain("browser.join@example.com");
      expect(res.text).not.toContain("<script");
      const post = (fields: Record<string, string>, cookie = `csrftoken=${token}`) =>
        request(server.baseUrl).post(`/join/${key}/`).set("Cookie", cookie).type("form").send(fields);
      const good = { full_name: "Bea Browser", password: STRONG, password_confirm: STRONG, csrfmiddlewaretoken: token };

      expect((await post(good, "csrftoken=other-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")).status).toBe(403);
      expect((await request(server.baseUrl).post(`/join/${key}/`).set("Cookie", `csrftoken=${token}`).set("Origin", "http://evil.example").type("form").send(good)).status).toBe(403);
      const mismatch = await post({ ...good, password_confirm: "something-else-99" });
      expect(mismatch.status).toBe(400);
      expect(mismatch.text).toContain("The two passwords do not match.");
      const weak = await post({ ...good, password: "abc", password_confirm: "abc" });
      expect(weak.status).toBe(400);
      const xss = await post({ ...good, full_name: "<script>x</script>", password: "abc", password_confirm: "abc" });
      expect(xss.text).not.toContain("<script>x</script>");
      expect(await prisma().userProfile.count({ where: { delivery_email: "browser.join@example.com" } })).toBe(0);

      const done = await post(good);
      expect(done.status).toBe(302);
      expect(done.headers.location).toBe("/");
      const cookies = done.headers["set-cookie"] as unknown as string[];
      expect(cookies.some((c) => c.startsWith("sessionid="))).toBe(true);
      const user = await prisma().userProfile.findFirstOrThrow({ where: { delivery_email: "browser.join@example.com" } });
      expect(user.full_name).toBe("Bea Browser");
      expect(await prisma().browserSession.count({ where: { user_id: user.id } })).toBe(1);
      expect((await server.anonymous.post("/fetch_api_key", { username: "browser.join@example.com", password: STRONG })).status).toBe(200);

      // The link is used up.
      const used = await page(key);
      expect(used.res.status).toBe(400);
      expect(used.res.text).toContain("The invitation link has already been used.");
      expect((await request(server.baseUrl).get(`/join/${"b".repeat(24)}/`)).status).toBe(404);
    });

    test("a reusable link's form asks for the address", async () => {
      const link = (await admin.client.post("/invites/multiuse", {})).body.invite_link as string;
      const key = /join\/([a-z2-7]{24})\//.exec(link)![1];
      const { res, token } = await page(key);
      expect(res.text).toMatch(/<input type="email" id="email" name="email"/);
      const done = await request(server.baseUrl)
        .post(`/join/${key}/`)
        .set("Cookie", `csrftoken=${token}`)
        .type("form")
        .send({ full_name: "Lin Link", email: "lin.link@example.com", password: STRONG, password_confirm: STRONG, csrfmiddlewaretoken: token });
      expect(done.status).toBe(302);
      expect(await prisma().userProfile.count({ where: { delivery_email: "lin.link@example.com", role: 400 } })).toBe(1);
    });
  });
});
