// The organization's email_address_visibility (Zulip 3.x's, realm-wide; since feature level 163 it
// sets every user's own, email-visibility-per-user.test.ts): while addresses are
// hidden, every user is shown, to everyone and on every surface, as `user<id>@<host>`, and the real
// address (`delivery_email`) reaches only those the setting allows; clients keep working with what
// they are shown, people keep logging in with their real address, and a change of the setting
// reaches connected clients through events.
import { createHash } from "node:crypto";
import { applyEvents, RealmStateCache } from "@chat/core";
import type { ApiClient } from "../support/client.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { registerQueue } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { canonical, registerState } from "../support/verify-action.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

const dummy = (id: number) => `user${id}@chat.test`;
const md5 = (text: string) => createHash("md5").update(text.toLowerCase()).digest("hex");

type Viewer = "admin" | "member" | "guest";
/** Who is sent delivery_email under each hidden value (Zulip 3.x: administrators under "admins only"). */
const HIDDEN: Array<[string, number, Record<Viewer, boolean>]> = [
  ["members only", 2, { admin: true, member: true, guest: false }],
  ["administrators only", 3, { admin: true, member: false, guest: false }],
  ["nobody", 4, { admin: false, member: false, guest: false }],
];

describe.each(MODES)("email address visibility (%s)", (mode) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let viewers: Record<Viewer, TestUser>;
  let owner: TestUser;
  /** Every person in the realm, with their real address. */
  let people: Array<{ id: number; email: string }>;
  let bot: { id: number; email: string };

  /** The real addresses of people that appear anywhere in `value`. */
  function realAddressesIn(value: unknown): string[] {
    const text = JSON.stringify(value).toLowerCase();
    return people.map((p) => p.email).filter((email) => text.includes(email.toLowerCase()));
  }

  /**
   * A registration's state once it shows this setting: an events node answers as its copy of the
   * user and realm, which follows a change a few milliseconds after the commit (poll-auth.ts).
   */
  async function settledState(client: ApiClient, eventTypes: string[], visibility: number): Promise<{ queueId: string; state: Record<string, unknown> }> {
    for (const deadline = Date.now() + 5000; ; ) {
      const registered = await registerState(client, eventTypes);
      if (registered.state.realm_email_address_visibility === visibility || Date.now() > deadline) return registered;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function setVisibility(value: number): Promise<void> {
    const res = await server.owner.patch("/realm", { email_address_visibility: value });
    expect(res.body.result).toBe("success");
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    receiver = await startWebhookReceiver();
    const ownerId = (await server.owner.get("/users/me")).body.user_id as number;
    owner = { id: ownerId, email: OWNER_EMAIL, client: server.owner };
    viewers = {
      admin: await createTestUser(server, "Ada Admin", "admin"),
      member: await createTestUser(server, "Mel Member"),
      guest: await createTestUser(server, "Gus Guest", "guest"),
    };
    people = [owner, viewers.admin, viewers.member, viewers.guest].map(({ id, email }) => ({ id, email }));
    const created = await viewers.member.client.post("/bots", { bot_type: 3, full_name: "Hook Bot", short_name: "hook", payload_url: receiver.url });
    expect(created.body.result).toBe("success");
    bot = { id: created.body.user_id, email: "hook-bot@chat.test" };
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  test("under `everyone` (the default) the real addresses are shown, and administrators also get delivery_email", async () => {
    const asMember = await viewers.member.client.get("/users");
    for (const person of people) expect(asMember.body.members.find((u: { user_id: number }) => u.user_id === person.id)).toMatchObject({ email: person.email });
    expect(asMember.body.members.some((u: Record<string, unknown>) => "delivery_email" in u)).toBe(false);
    const asAdmin = await viewers.admin.client.get(`/users/${viewers.guest.id}`);
    expect(asAdmin.body.user).toMatchObject({ email: viewers.guest.email, delivery_email: viewers.guest.email });
  });

  describe.each(HIDDEN)("%s", (_name, visibility, allowed) => {
    beforeAll(() => setVisibility(visibility));
    afterAll(() => setVisibility(1));

    test("GET /users, GET /users/{id} and /register show user<id>@host; delivery_email only to those allowed; gravatars from the shown address", async () => {
      for (const viewer of ["admin", "member", "guest"] as Viewer[]) {
        const { client } = viewers[viewer];
        const list = (await client.get("/users")).body.members as Array<Record<string, any>>;
        const { state } = await settledState(client, ["realm", "realm_user"], visibility);
        const single = (await client.get(`/users/${owner.id}`)).body.user;
        for (const users of [list, state.realm_users as Array<Record<string, any>>]) {
          for (const person of people) {
            const shown = users.find((u) => u.user_id === person.id)!;
            expect(shown.email).toBe(dummy(person.id));
            if (allowed[viewer]) expect(shown.delivery_email).toBe(person.email);
            else expect(shown).not.toHaveProperty("delivery_email");
            // A gravatar is the hash of the shown address: the real one's would let anyone confirm a guess.
            expect(shown.avatar_url).toContain(md5(dummy(person.id)));
          }
          // Bots' addresses are shown as they are (Zulip's email_address_is_realm_public).
          expect(users.find((u) => u.user_id === bot.id)!.email).toBe(bot.email);
        }
        expect(single.email).toBe(dummy(owner.id));
        expect("delivery_email" in single).toBe(allowed[viewer]);
        // One's own real address is one's own: /register's delivery_email and GET /users/me.
        expect(state).toMatchObject({ email: dummy(viewers[viewer].id), delivery_email: viewers[viewer].email });
        expect((await client.get("/users/me")).body).toMatchObject({ email: dummy(viewers[viewer].id), delivery_email: viewers[viewer].email });
        if (!allowed[viewer]) {
          expect(realAddressesIn(list)).toEqual([]);
          expect(realAddressesIn(single)).toEqual([]);
          expect(realAddressesIn({ ...state, delivery_email: null })).toEqual([]);
        }
      }
    });

    test("messages, narrows, typing, reactions and presence use the shown address, and take it back", async () => {
      const { member, guest } = viewers;
      const guestQueue = await registerQueue(guest.client, ["message", "typing", "reaction", "presence"]);
      const memberQueue = await registerQueue(member.client, ["reaction"]);

      // A private message to the address the sender was shown.
      const sent = await member.client.post("/messages", { type: "private", to: [dummy(guest.id)], content: `hidden ${visibility}` });
      expect(sent.body.result).toBe("success");
      const event = await waitForEvent(guest.client, guestQueue, (e) => e.type === "message" && e.message.id === sent.body.id);
      expect(event.message.sender_email).toBe(dummy(member.id));
      expect(event.message.display_recipient.map((u: { email: string }) => u.email).sort()).toEqual([dummy(member.id), dummy(guest.id)].sort());
      const fetched = await guest.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "pm-with", operand: dummy(member.id) }] });
      expect(fetched.body.messages.map((m: { id: number }) => m.id)).toContain(sent.body.id);
      expect(fetched.body.messages.find((m: { id: number }) => m.id === sent.body.id).sender_email).toBe(dummy(member.id));
      const bySender = await member.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "sender", operand: dummy(member.id) }] });
      expect(bySender.body.messages.map((m: { id: number }) => m.id)).toContain(sent.body.id);

      // A real address names someone only for those who may see it: trying one tells nothing.
      const toReal = await member.client.post("/messages", { type: "private", to: [guest.email], content: "by the real address" });
      if (allowed.member) expect(toReal.body.result).toBe("success");
      else expect(toReal.body).toEqual({ result: "error", msg: `Invalid email '${guest.email}'`, code: "BAD_REQUEST" });
      // Everyone may name themselves by their own.
      expect((await member.client.post("/messages", { type: "private", to: [member.email], content: "note to self" })).body.result).toBe("success");

      const typing = await member.client.post("/typing", { op: "start", to: [dummy(guest.id)] });
      expect(typing.body.result).toBe("success");
      const typed = await waitForEvent(guest.client, guestQueue, (e) => e.type === "typing");
      expect(typed.sender).toEqual({ user_id: member.id, email: dummy(member.id) });

      const reacted = await guest.client.post(`/messages/${sent.body.id}/reactions`, { emoji_name: "octopus" });
      expect(reacted.body.result).toBe("success");
      const reaction = await waitForEvent(member.client, memberQueue, (e) => e.type === "reaction");
      expect(reaction.user).toMatchObject({ user_id: guest.id, email: dummy(guest.id) });

      // Presence is keyed by email in Zulip 3.x: by the shown one. A client new this round reports, so the realm hears.
      const reported = await member.client.raw("post", "/users/me/presence").set("User-Agent", `Round${visibility}/1.0`).type("form").send({ status: "active" });
      expect(reported.body.result).toBe("success");
      const presence = await waitForEvent(guest.client, guestQueue, (e) => e.type === "presence" && e.user_id === member.id);
      expect(presence.email).toBe(dummy(member.id));
      const realmPresence = await guest.client.get("/realm/presence");
      expect(Object.keys(realmPresence.body.presences)).toContain(dummy(member.id));
      expect(realAddressesIn(realmPresence.body)).toEqual([]);
      expect((await guest.client.get(`/users/${dummy(member.id)}/presence`)).body.result).toBe("success");
      expect((await guest.client.get(`/users/${member.email}/presence`)).body).toEqual({ result: "error", msg: "No such user", code: "BAD_REQUEST" });
      const adminLooksUp = await viewers.admin.client.get(`/users/${member.email}/presence`);
      expect(adminLooksUp.body.result).toBe(allowed.admin ? "success" : "error");

      // Nothing the guest's queue received names anyone by their real address.
      expect(realAddressesIn(await drainEvents(guest.client, guestQueue))).toEqual([]);
    });

    test("an outgoing webhook is sent the shown addresses", async () => {
      receiver.received = [];
      const sent = await viewers.member.client.post("/messages", { type: "private", to: [bot.email], content: `to the hook ${visibility}` });
      expect(sent.body.result).toBe("success");
      const [call] = await receiver.waitForRequests(1);
      expect(call.json!.message).toMatchObject({ id: sent.body.id, sender_email: dummy(viewers.member.id) });
      expect(call.json!.message.display_recipient.map((u: { email: string }) => u.email).sort()).toEqual([bot.email, dummy(viewers.member.id)].sort());
      expect(call.json!.bot_email).toBe(bot.email);
      expect(realAddressesIn(call.json)).toEqual([]);
    });

    test("people log in with their real address, and clients work with what they are given", async () => {
      const { member } = viewers;
      const login = await server.anonymous.post("/fetch_api_key", { username: member.email, password: "member-pass" });
      expect(login.body).toMatchObject({ result: "success", email: member.email, user_id: member.id });
      const dev = await server.anonymous.post("/dev_fetch_api_key", { username: member.email });
      expect(dev.body).toMatchObject({ result: "success", email: member.email });
      // HTTP Basic takes the address fetch_api_key gave (Zulip's delivery_email), not the shown one.
      const client = server.client(login.body.email, login.body.api_key);
      expect((await client.get("/users/me")).body).toMatchObject({ user_id: member.id, email: dummy(member.id), delivery_email: member.email });
      expect((await server.client(dummy(member.id), login.body.api_key).get("/users/me")).status).toBe(401);
    });

    test("a user created while addresses are hidden is shown as user<id>@host from the start", async () => {
      const memberQueue = await registerQueue(viewers.member.client, ["realm_user"]);
      const adminQueue = await registerQueue(viewers.admin.client, ["realm_user"]);
      const newcomer = await createTestUser(server, `New Comer${visibility}`);
      for (const [viewer, queue] of [["member", memberQueue], ["admin", adminQueue]] as const) {
        const added = await waitForEvent(viewers[viewer].client, queue, (e) => e.type === "realm_user" && e.op === "add" && e.person.user_id === newcomer.id);
        expect(added.person.email).toBe(dummy(newcomer.id));
        if (allowed[viewer]) expect(added.person.delivery_email).toBe(newcomer.email);
        else expect(added.person).not.toHaveProperty("delivery_email");
      }
      // They log in with their real address like anyone.
      expect((await newcomer.client.get("/users/me")).body).toMatchObject({ email: dummy(newcomer.id), delivery_email: newcomer.email });
      expect((await server.owner.post("/users", { email: dummy(9999), password: "whatever1", full_name: "Fake", short_name: "fake" })).body).toEqual({
        result: "error",
        msg: `Invalid email '${dummy(9999)}'`,
        code: "BAD_REQUEST",
      });
    });
  });

  /** Whether a viewer is sent others' delivery_email under a value (1: administrators, as before). */
  const sees = (viewer: Viewer, value: number) => (value === 1 ? viewer === "admin" : (HIDDEN.find(([, v]) => v === value)![2][viewer]));

  test("changing the setting reaches connected clients: realm update, then each user's new email and delivery_email as they may see it; who may no longer see addresses registers again", async () => {
    const eventTypes = ["realm", "realm_user"];
    const clients = (["admin", "member", "guest"] as Viewer[]).map((viewer) => ({ viewer, ...viewers[viewer] }));
    // 1 → 3 → 2 → 4 → 1: every kind of change (addresses hidden, gained, lost, shown again).
    for (const [before, after] of [
      [1, 3],
      [3, 2],
      [2, 4],
      [4, 1],
    ]) {
      const registered = await Promise.all(clients.map(async (c) => ({ ...c, ...(await settledState(c.client, eventTypes, before)) })));
      await setVisibility(after);
      for (const { viewer, client, id, queueId, state } of registered) {
        if (sees(viewer, before) && !sees(viewer, after)) {
          // No event of Zulip 3.x takes addresses back: the queue ends, and the client's new
          // registration has none.
          const received: Array<Record<string, any>> = [];
          for (let lastEventId = -1, deadline = Date.now() + 20_000; ; ) {
            const res = await client.get("/events", { queue_id: queueId, last_event_id: lastEventId, dont_block: true });
            if (res.body.code === "BAD_EVENT_QUEUE_ID") break;
            expect(res.body.result).toBe("success");
            for (const event of res.body.events) lastEventId = Math.max(lastEventId, event.id);
            received.push(...res.body.events.filter((e: Record<string, any>) => e.type !== "heartbeat"));
            expect(Date.now()).toBeLessThan(deadline);
            await new Promise((r) => setTimeout(r, 20));
          }
          expect(realAddressesIn(received)).toEqual([]);
          const fresh = (await settledState(client, eventTypes, after)).state;
          expect((fresh.realm_users as Array<Record<string, unknown>>).filter((u) => u.user_id !== id && "delivery_email" in u)).toEqual([]);
          continue;
        }
        // The events turn the state from before into the state a new /register gives (verify-action.ts).
        const received: Array<Record<string, any>> = [];
        let lastEventId = -1;
        let applied: Record<string, unknown> = {};
        let expected: Record<string, unknown> = { fresh: true };
        for (const deadline = Date.now() + 20_000; Date.now() < deadline && canonical(applied) !== canonical(expected); ) {
          for (const event of await drainEvents(client, queueId, lastEventId)) {
            lastEventId = Math.max(lastEventId, event.id);
            if (event.type !== "heartbeat") received.push(event);
          }
          applied = applyEvents(structuredClone(state), received, id);
          expected = (await registerState(client, eventTypes)).state;
        }
        expect(applied).toEqual(expected);
        expect(received[0]).toMatchObject({ type: "realm", op: "update", property: "email_address_visibility", value: after });
        // One change an update, as Zulip sends them: clients apply one (zulip-terminal's if/elif).
        const kinds = [["new_email"], ["delivery_email"], ["avatar_source", "avatar_url", "avatar_url_medium", "avatar_version"]].map((keys) => keys.join());
        for (const e of received.filter((e) => e.type === "realm_user" && e.op === "update")) {
          expect(kinds).toContain(Object.keys(e.person).filter((key) => key !== "user_id").sort().join());
        }
        const emailUpdates = received.filter((e) => e.type === "realm_user" && "new_email" in e.person);
        if ((before === 1) !== (after === 1)) {
          for (const person of people) {
            const update = emailUpdates.find((e) => e.person.user_id === person.id);
            expect(update?.person.new_email).toBe(after === 1 ? person.email : dummy(person.id));
          }
        } else {
          expect(emailUpdates).toEqual([]);
        }
        // Addresses hidden: nothing this viewer received names anyone by a real address they may not see.
        const hidden = HIDDEN.find(([, value]) => value === after);
        if (hidden && !hidden[2][viewer]) expect(realAddressesIn(received)).toEqual([]);
      }
    }
  });

  test("an events node's copy of realm_users follows each user's setting as read with it, kept per class of viewer role", async () => {
    const prisma = server.running.services.db.prisma;
    const realmId = (await prisma.realm.findFirstOrThrow({ where: { string_id: "" } })).id;
    const cache = new RealmStateCache(prisma);
    const shows = async (role: number) => JSON.parse((await cache.realmUsers(realmId, { clientGravatar: false, role })).active.text) as Array<Record<string, unknown>>;
    expect((await shows(400)).some((u) => "delivery_email" in u)).toBe(false);
    expect((await shows(200)).every((u) => "delivery_email" in u)).toBe(true);
    // Behind the server's back: no event, no actor copy told. The next registration's read sees it.
    await prisma.$executeRaw`UPDATE user_profile SET email_address_visibility = 2 WHERE realm_id = ${realmId}`;
    expect((await shows(400)).every((u) => "delivery_email" in u)).toBe(true);
    expect((await shows(600)).some((u) => "delivery_email" in u)).toBe(false);
    await prisma.$executeRaw`UPDATE user_profile SET email_address_visibility = 5 WHERE realm_id = ${realmId}`;
    expect((await shows(300)).every((u) => "delivery_email" in u)).toBe(true);
    expect((await shows(400)).some((u) => "delivery_email" in u)).toBe(false);
    await prisma.$executeRaw`UPDATE user_profile SET email_address_visibility = 4 WHERE realm_id = ${realmId}`;
    expect((await shows(200)).some((u) => "delivery_email" in u)).toBe(false);
    // Today's clients: every user's delivery_email, null where hidden; bots' always.
    const modern = JSON.parse((await cache.realmUsers(realmId, { clientGravatar: false, role: 400, allDeliveryEmails: true })).active.text) as Array<Record<string, unknown>>;
    for (const u of modern) expect(u.delivery_email).toBe(u.is_bot ? u.email : null);
    await prisma.$executeRaw`UPDATE user_profile SET email_address_visibility = 1 WHERE realm_id = ${realmId}`;
  });
});
