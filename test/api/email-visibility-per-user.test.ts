// email_address_visibility as each user's own setting (feature level 163): a user's shown `email`
// is their real address only under "everyone"; delivery_email reaches the viewers that user's
// setting admits (everyone, members, moderators, administrators, nobody), null for the others in
// today's clients and left out for Zulip 3.x's; a change reaches connected clients as Zulip's
// do_change_user_setting sends it. Whatever the setting, a member or guest never learns a hidden
// address through users, registration, events, messages or narrows.
import type { ApiClient } from "../support/client.ts";
import { drainEvents } from "../support/events.ts";
import { registerQueue } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

const dummy = (id: number) => `user${id}@chat.test`;
const MODERN = { client_capabilities: JSON.stringify({ user_settings_object: true }) };

type Viewer = "owner" | "admin" | "moderator" | "member" | "guest";
const VIEWERS: Viewer[] = ["owner", "admin", "moderator", "member", "guest"];
/** Who may see a user's delivery_email under each of their settings (Zulip's can_access_delivery_email). */
const ACCESS: Array<[string, number, Viewer[]]> = [
  ["everyone", 1, ["owner", "admin", "moderator", "member", "guest"]],
  ["members", 2, ["owner", "admin", "moderator", "member"]],
  ["administrators", 3, ["owner", "admin"]],
  ["nobody", 4, []],
  ["moderators", 5, ["owner", "admin", "moderator"]],
];
/** Zulip 3.x clients: delivery_email given under "everyone" to administrators only, as 3.x did. */
const legacySees = (viewer: Viewer, value: number) => (value === 1 ? viewer === "owner" || viewer === "admin" : ACCESS.find(([, v]) => v === value)![2].includes(viewer));

describe.each(MODES)("per-user email address visibility (%s)", (mode) => {
  let server: TestServer;
  let viewers: Record<Viewer, TestUser>;
  let subject: TestUser;

  async function setOwn(user: TestUser, value: number): Promise<void> {
    const res = await user.client.patch("/settings", { email_address_visibility: value });
    expect(res.body).toEqual({ result: "success", msg: "" });
  }

  /** A registration once the subject's setting shows in it (an events node follows a commit within milliseconds). */
  async function settled(client: ApiClient, value: number, extra: Record<string, unknown>) {
    for (const deadline = Date.now() + 5000; ; ) {
      const { state } = await registerState(client, ["realm_user"], extra);
      const entry = (state.realm_users as Array<Record<string, unknown>>).find((u) => u.user_id === subject.id)!;
      const shown = entry.email === (value === 1 ? subject.email : dummy(subject.id));
      if (shown || Date.now() > deadline) return state;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    const ownerId = (await server.owner.get("/users/me")).body.user_id as number;
    viewers = {
      owner: { id: ownerId, email: OWNER_EMAIL, client: server.owner } as TestUser,
      admin: await createTestUser(server, "Ada Admin", "admin"),
      moderator: await createTestUser(server, "Mo Moderator", "moderator"),
      member: await createTestUser(server, "Mel Member"),
      guest: await createTestUser(server, "Gus Guest", "guest"),
    };
    subject = await createTestUser(server, "Sam Subject");
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("PATCH /settings checks the value, changes nothing on a bad one, and the setting is in user_settings", async () => {
    for (const bad of [0, 6, -1, 99999]) {
      expect((await subject.client.patch("/settings", { email_address_visibility: bad })).body).toMatchObject({ result: "error", msg: "Invalid email_address_visibility" });
    }
    expect((await subject.client.patch("/settings", { email_address_visibility: "x" })).body.result).toBe("error");
    const { state } = await registerState(subject.client, ["user_settings", "realm"], MODERN);
    expect((state.user_settings as Record<string, unknown>).email_address_visibility).toBe(1);
    // Zulip 9.0 has no organization-wide setting: today's clients are not told one.
    expect(state).not.toHaveProperty("realm_email_address_visibility");
    // Zulip 3.x clients still are.
    expect((await registerState(subject.client, ["realm"])).state.realm_email_address_visibility).toBe(1);
  });

  describe.each(ACCESS)("a user whose setting is %s", (_name, value, allowed) => {
    beforeAll(() => setOwn(subject, value));
    afterAll(() => setOwn(subject, 1));

    test("their shown email, and delivery_email by viewer role, in /users, /users/{id}, /users/{email}, and /register of today's and 3.x clients", async () => {
      const shown = value === 1 ? subject.email : dummy(subject.id);
      for (const viewer of VIEWERS) {
        const { client } = viewers[viewer];
        const sees = allowed.includes(viewer);
        const modern = await settled(client, value, MODERN);
        const modernEntry = (modern.realm_users as Array<Record<string, unknown>>).find((u) => u.user_id === subject.id)!;
        expect(modernEntry.email).toBe(shown);
        expect(modernEntry.delivery_email).toBe(sees ? subject.email : null);
        const legacy = await settled(client, value, {});
        const legacyEntry = (legacy.realm_users as Array<Record<string, unknown>>).find((u) => u.user_id === subject.id)!;
        expect(legacyEntry.email).toBe(shown);
        if (legacySees(viewer, value)) expect(legacyEntry.delivery_email).toBe(subject.email);
        else expect(legacyEntry).not.toHaveProperty("delivery_email");
        const list = ((await client.get("/users")).body.members as Array<Record<string, unknown>>).find((u) => u.user_id === subject.id)!;
        const single = (await client.get(`/users/${subject.id}`)).body.user;
        for (const entry of [list, single]) {
          expect(entry.email).toBe(shown);
          if (legacySees(viewer, value)) expect(entry.delivery_email).toBe(subject.email);
          else expect(entry).not.toHaveProperty("delivery_email");
        }
        // A real address names the user only for those who may see it.
        const byReal = await client.get(`/users/${encodeURIComponent(subject.email)}`);
        if (sees) expect(byReal.body.user.user_id).toBe(subject.id);
        else expect(byReal.body).toMatchObject({ result: "error", msg: "No such user" });
        expect((await client.get(`/users/${encodeURIComponent(shown)}`)).body.user.user_id).toBe(subject.id);
        if (!sees) {
          const text = JSON.stringify([modern, legacy, list, single]).toLowerCase();
          expect(text.includes(subject.email.toLowerCase())).toBe(false);
        }
      }
      // The user's own address is theirs whatever the setting: in their own realm_users entry too (today's clients).
      expect((await subject.client.get("/users/me")).body).toMatchObject({ email: shown, delivery_email: subject.email });
      const own = await settled(subject.client, value, MODERN);
      expect((own.realm_users as Array<Record<string, unknown>>).find((u) => u.user_id === subject.id)).toMatchObject({ email: shown, delivery_email: subject.email });
      expect(own).toMatchObject({ email: shown, delivery_email: subject.email });
    });

    test("messages carry the shown sender_email; narrowing by a hidden real address finds nothing for those who may not see it", async () => {
      const sent = await subject.client.post("/messages", { type: "private", to: JSON.stringify([viewers.member.id, viewers.guest.id]), content: `visibility ${value}` });
      expect(sent.body.result).toBe("success");
      for (const viewer of ["member", "guest"] as Viewer[]) {
        const { client } = viewers[viewer];
        const fetched = await client.get("/messages", { anchor: sent.body.id, num_before: 0, num_after: 0, narrow: JSON.stringify([{ operator: "id", operand: sent.body.id }]) });
        const message = fetched.body.messages[0];
        expect(message.sender_email).toBe(value === 1 ? subject.email : dummy(subject.id));
        const byReal = await client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "sender", operand: subject.email }]) });
        if (allowed.includes(viewer)) expect(byReal.body.messages.map((m: { id: number }) => m.id)).toContain(sent.body.id);
        else expect(JSON.stringify(byReal.body).toLowerCase().includes(subject.email.toLowerCase()) && byReal.body.result === "success" && byReal.body.messages.length > 0).toBe(false);
      }
    });
  });

  test("a change reaches the user (user_settings) and everyone (email; delivery_email to who gains or loses it), and events keep every viewer's state as /register gives it", async () => {
    // 1 → 3 → 2 → 5 → 4 → 1: the address hidden, shown to more, to fewer, to nobody, to all.
    const steps: Array<[number, number]> = [
      [1, 3],
      [3, 2],
      [2, 5],
      [5, 4],
      [4, 1],
    ];
    for (const [before, after] of steps) {
      // Today's clients of each role: the events turn their state into a new registration's.
      for (const viewer of ["admin", "moderator", "member", "guest"] as Viewer[]) {
        await setOwn(subject, before);
        await settled(viewers[viewer].client, before, MODERN);
        const could = ACCESS.find(([, v]) => v === before)![2].includes(viewer);
        const can = ACCESS.find(([, v]) => v === after)![2].includes(viewer);
        if (could === can && (before === 1) === (after === 1)) {
          // Nothing this viewer is shown changes: no event about the user reaches them.
          const queue = await registerQueue(viewers[viewer].client, ["realm_user"], MODERN);
          await setOwn(subject, after);
          await new Promise((r) => setTimeout(r, 300));
          expect((await drainEvents(viewers[viewer].client, queue)).filter((e) => e.type === "realm_user" && e.person?.user_id === subject.id)).toEqual([]);
          continue;
        }
        const received = await verifyAction(viewers[viewer].client, ["realm_user"], () => setOwn(subject, after), 5000, MODERN);
        const updates = received.filter((e) => e.type === "realm_user" && e.op === "update" && e.person.user_id === subject.id);
        const deliveries = updates.filter((e) => "delivery_email" in e.person).map((e) => e.person.delivery_email);
        expect(deliveries).toEqual(could === can ? [] : [can ? subject.email : null]);
        const emails = updates.filter((e) => "new_email" in e.person).map((e) => e.person.new_email);
        expect(emails).toEqual((before === 1) === (after === 1) ? [] : [after === 1 ? subject.email : dummy(subject.id)]);
        if (!can) expect(JSON.stringify(received).toLowerCase().includes(subject.email.toLowerCase())).toBe(false);
      }
    }
    // The user's own clients: the setting's event.
    await setOwn(subject, 1);
    const own = await verifyAction(subject.client, ["user_settings"], () => setOwn(subject, 4), 5000, MODERN);
    expect(own).toContainEqual(expect.objectContaining({ type: "user_settings", op: "update", property: "email_address_visibility", value: 4 }));
    await setOwn(subject, 1);
  });

  test("Zulip 3.x clients keep their shapes: no null delivery_email where 3.x sent none", async () => {
    await setOwn(subject, 1);
    const queue = await registerQueue(viewers.member.client, ["realm_user"]);
    await setOwn(subject, 2);
    await setOwn(subject, 1);
    let events: Array<Record<string, any>> = [];
    for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
      events = (await drainEvents(viewers.member.client, queue, -1)).filter((e) => e.type === "realm_user");
      if (events.filter((e) => "new_email" in e.person).length >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // 1 → 2 hides the address (the member may still see it, but 3.x gave members none under "everyone").
    const deliveries = events.filter((e) => "delivery_email" in e.person);
    expect(deliveries.map((e) => e.person.delivery_email)).toEqual([subject.email]);
    expect(events.filter((e) => "new_email" in e.person).map((e) => e.person.new_email)).toEqual([dummy(subject.id), subject.email]);
  });

  test("the organization's setting (Zulip 3.x's PATCH /realm) sets everyone's, and is what new users start with", async () => {
    await setOwn(subject, 5);
    const modernQueue = await registerQueue(subject.client, ["realm", "user_settings"], MODERN);
    const legacyQueue = await registerQueue(subject.client, ["realm"]);
    expect((await server.owner.patch("/realm", { email_address_visibility: 3 })).body.result).toBe("success");
    // Today's clients learn their own setting changed, and of no organization-wide one; 3.x's of the realm's.
    let modernEvents: Array<Record<string, any>> = [];
    for (const deadline = Date.now() + 5000; Date.now() < deadline && modernEvents.length === 0; await new Promise((r) => setTimeout(r, 50))) {
      modernEvents = (await drainEvents(subject.client, modernQueue)).filter((e) => e.type !== "heartbeat");
    }
    expect(modernEvents).toEqual([expect.objectContaining({ type: "user_settings", op: "update", property: "email_address_visibility", value: 3 })]);
    expect((await drainEvents(subject.client, legacyQueue)).filter((e) => e.type === "realm")).toEqual([expect.objectContaining({ property: "email_address_visibility", value: 3 })]);
    for (const viewer of VIEWERS) {
      const { state } = await registerState(viewers[viewer].client, ["user_settings"], MODERN);
      expect((state.user_settings as Record<string, unknown>).email_address_visibility).toBe(3);
    }
    expect((await viewers.member.client.get(`/users/${subject.id}`)).body.user.email).toBe(dummy(subject.id));
    const newcomer = await createTestUser(server, "New Comer");
    expect((await registerState(newcomer.client, ["user_settings"], MODERN)).state.user_settings).toMatchObject({ email_address_visibility: 3 });
    expect((await newcomer.client.get("/users/me")).body.email).toBe(dummy(newcomer.id));
    // realm_user_settings_defaults says it, and changes it without changing anyone's own.
    expect((await server.owner.patch("/realm/user_settings_defaults", { email_address_visibility: 6 })).body).toMatchObject({ result: "error", msg: "Invalid email_address_visibility" });
    expect((await viewers.member.client.patch("/realm/user_settings_defaults", { email_address_visibility: 1 })).body.result).toBe("error");
    expect((await server.owner.patch("/realm/user_settings_defaults", { email_address_visibility: 1 })).body.result).toBe("success");
    expect((await registerState(newcomer.client, ["realm_user_settings_defaults"], MODERN)).state.realm_user_settings_defaults).toMatchObject({ email_address_visibility: 1 });
    expect((await registerState(newcomer.client, ["user_settings"], MODERN)).state.user_settings).toMatchObject({ email_address_visibility: 3 });
    expect((await server.owner.patch("/realm", { email_address_visibility: 1 })).body.result).toBe("success");
  });
});
