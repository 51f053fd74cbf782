// Events about users under can_access_all_users_group (Zulip 9.0, feature level 228): with
// role:members a guest hears of a user's changes (realm_user update, user_status) only if they may
// know of the user, as /register shows them; a new user is to them an "Unknown user" placeholder, or
// nothing with user_list_incomplete. With role:everyone (the default) everyone hears everything.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { canonical, registerState, verifyAction } from "../support/verify-action.ts";

const TYPES = ["realm_user", "user_status"];

describe.each(MODES)("events about users a restricted guest may not access (%s)", (mode) => {
  let server: TestServer;
  let guest: TestUser;
  let friend: TestUser;
  let stranger: TestUser;
  let observer: TestUser;
  let groupIds: Record<string, number>;
  let created = 0;

  const setAccess = async (group: string) => expect((await server.owner.patch("/realm", { can_access_all_users_group: groupIds[group] })).body.result).toBe("success");
  const queueOf = async (user: TestUser, capabilities: Record<string, boolean> = {}) =>
    (await user.client.post("/register", { event_types: TYPES, client_capabilities: JSON.stringify(capabilities) })).body.queue_id as string;
  const rename = async (user: TestUser, name: string) => expect((await user.client.patch("/settings", { full_name: name })).body.result).toBe("success");
  const setStatus = async (user: TestUser, text: string) => expect((await user.client.post("/users/me/status", { status_text: text })).body.result).toBe("success");
  const about = (userId: number) => (e: Record<string, any>) => e.user_id === userId || e.person?.user_id === userId;

  beforeAll(async () => {
    server = await startTestServer(mode);
    guest = await createTestUser(server, "Gwen Guest", "guest");
    friend = await createTestUser(server, "Frida Friend");
    stranger = await createTestUser(server, "Stan Stranger");
    observer = await createTestUser(server, "Olga Observer");
    // The guest leaves #general (everyone is there) and shares #shared with Frida only.
    expect((await guest.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["general"]) })).body.result).toBe("success");
    const shared = await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "shared" }]), principals: JSON.stringify([guest.id, friend.id]) });
    expect(shared.body.result).toBe("success");
    expect((await server.owner.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["shared"]) })).body.result).toBe("success");
    const groups = (await server.owner.post("/register", { fetch_event_types: ["realm_user_groups"] })).body.realm_user_groups as Array<{ id: number; name: string }>;
    groupIds = Object.fromEntries(groups.map((g) => [g.name, g.id]));
  });
  afterAll(() => server.stop());

  describe("with role:members", () => {
    beforeAll(() => setAccess("role:members"));
    afterAll(() => setAccess("role:everyone"));

    test("the guest hears nothing about a user they may not access, and all about one they share a stream with", async () => {
      const guestQueue = await queueOf(guest);
      const observerQueue = await queueOf(observer);
      await rename(stranger, "Stan Secret");
      await setStatus(stranger, "secret plans");
      await rename(friend, "Frida Known");
      await setStatus(friend, "visible plans");
      // Others are unaffected: the observer hears of both.
      await waitForEvent(observer.client, observerQueue, (e) => e.type === "user_status" && e.user_id === friend.id);
      const observed = await drainEvents(observer.client, observerQueue);
      expect(observed).toEqual(expect.arrayContaining([
        expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: stranger.id, full_name: "Stan Secret" } }),
        expect.objectContaining({ type: "user_status", user_id: stranger.id, status_text: "secret plans" }),
        expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: friend.id, full_name: "Frida Known" } }),
      ]));
      // Events are in order: once Frida's status is there, Stan's would have been before it.
      await waitForEvent(guest.client, guestQueue, (e) => e.type === "user_status" && e.user_id === friend.id);
      const heard = await drainEvents(guest.client, guestQueue);
      expect(heard.filter(about(stranger.id))).toEqual([]);
      expect(JSON.stringify(heard)).not.toContain("Secret");
      expect(JSON.stringify(heard)).not.toContain("secret plans");
      expect(heard).toEqual(expect.arrayContaining([
        expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: friend.id, full_name: "Frida Known" } }),
        expect.objectContaining({ type: "user_status", user_id: friend.id, status_text: "visible plans" }),
      ]));
    });

    test.each([[{}], [{ user_list_incomplete: true }]])("the guest's state and events agree with a new /register (capabilities %j)", async (capabilities) => {
      const params = { client_capabilities: JSON.stringify(capabilities) };
      const events = await verifyAction(guest.client, TYPES, () => rename(friend, `Frida ${Object.keys(capabilities).length}`), 5000, params);
      expect(events.every(about(friend.id))).toBe(true);
      await verifyAction(guest.client, TYPES, () => setStatus(friend, `plans ${Object.keys(capabilities).length}`), 5000, params);
      // A change of a user they may not access: no event, and a new /register shows nothing new.
      const { queueId, state } = await registerState(guest.client, TYPES, params);
      const observerQueue = await queueOf(observer);
      await rename(stranger, `Stan Hidden ${Object.keys(capabilities).length}`);
      await setStatus(stranger, "hidden plans");
      await waitForEvent(observer.client, observerQueue, (e) => e.type === "user_status" && e.user_id === stranger.id);
      expect(await drainEvents(guest.client, queueId)).toEqual([]);
      expect(canonical((await registerState(guest.client, TYPES, params)).state)).toBe(canonical(state));
    });

    test("a new user is an \"Unknown user\" to the guest, and nothing with user_list_incomplete", async () => {
      const incompleteQueue = await queueOf(guest, { user_list_incomplete: true });
      const { queueId: incompleteStateQueue, state: incompleteState } = await registerState(guest.client, TYPES, { client_capabilities: JSON.stringify({ user_list_incomplete: true }) });
      const observerQueue = await queueOf(observer);
      let newcomer: TestUser | undefined;
      const events = await verifyAction(guest.client, TYPES, async () => {
        newcomer = await createTestUser(server, `Nina Newcomer${++created}`);
      });
      expect(events).toEqual([{ id: expect.any(Number), type: "realm_user", op: "add", person: expect.objectContaining({ user_id: newcomer!.id, full_name: "Unknown user", email: `user${newcomer!.id}@chat.test` }) }]);
      expect(JSON.stringify(events)).not.toContain("Newcomer");
      expect(JSON.stringify(events)).not.toContain("inaccessible");
      const added = await waitForEvent(observer.client, observerQueue, (e) => e.type === "realm_user" && e.op === "add");
      expect(added.person).toMatchObject({ user_id: newcomer!.id, full_name: `Nina Newcomer${created}` });
      expect(await drainEvents(guest.client, incompleteQueue)).toEqual([]);
      expect(await drainEvents(guest.client, incompleteStateQueue)).toEqual([]);
      expect(canonical((await registerState(guest.client, TYPES, { client_capabilities: JSON.stringify({ user_list_incomplete: true }) })).state)).toBe(canonical(incompleteState));
    });
  });

  test("a deactivation they may not know of reaches only the others", async () => {
    await setAccess("role:members");
    try {
      const doomed = await createTestUser(server, "Dora Doomed");
      const { queueId, state } = await registerState(guest.client, TYPES);
      const observerQueue = await queueOf(observer);
      expect((await server.owner.delete(`/users/${doomed.id}`)).body.result).toBe("success");
      await waitForEvent(observer.client, observerQueue, (e) => e.type === "realm_user" && e.person?.user_id === doomed.id && e.op !== "add");
      expect(await drainEvents(guest.client, queueId)).toEqual([]);
      expect(canonical((await registerState(guest.client, TYPES)).state)).toBe(canonical(state));
      // Frida's, whom the guest knows, reaches the guest.
      const events = await verifyAction(guest.client, TYPES, () => server.owner.patch(`/users/${friend.id}`, { role: 300 }));
      expect(events).toEqual([expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: friend.id, role: 300 } })]);
    } finally {
      await setAccess("role:everyone");
    }
  });

  test("presence: the guest hears of those they may access only", async () => {
    await setAccess("role:members");
    try {
      const types = ["presence"];
      const { queueId, state } = await registerState(guest.client, types, { slim_presence: true });
      const presenceQueue = (await observer.client.post("/register", { event_types: types })).body.queue_id as string;
      await stranger.client.post("/users/me/presence", { status: "idle" });
      await stranger.client.post("/users/me/presence", { status: "active" });
      await waitForEvent(observer.client, presenceQueue, (e) => e.type === "presence" && e.user_id === stranger.id);
      expect(await drainEvents(guest.client, queueId)).toEqual([]);
      expect(canonical((await registerState(guest.client, types, { slim_presence: true })).state)).toBe(canonical(state));
      await friend.client.post("/users/me/presence", { status: "idle" });
      await waitForEvent(guest.client, queueId, (e) => e.type === "presence" && e.user_id === friend.id);
    } finally {
      await setAccess("role:everyone");
    }
  });

  test("a new user who joins a stream the guest is in is known to them at once", async () => {
    await setAccess("role:members");
    const streamId = (await server.owner.get("/get_stream_id", { stream: "shared" })).body.stream_id as number;
    expect((await server.owner.post("/default_streams", { stream_id: streamId })).body.result).toBe("success");
    try {
      for (const capabilities of [{}, { user_list_incomplete: true }]) {
        let newcomer: TestUser | undefined;
        const events = await verifyAction(guest.client, TYPES, async () => {
          newcomer = await createTestUser(server, `Jo Joiner${++created}`);
        }, 5000, { client_capabilities: JSON.stringify(capabilities) });
        const adds = events.filter((e) => e.type === "realm_user" && e.op === "add");
        expect(adds.at(-1)!.person).toMatchObject({ user_id: newcomer!.id, full_name: `Jo Joiner${created}` });
        expect(adds.some((e) => e.person.full_name === "Unknown user")).toBe(!("user_list_incomplete" in capabilities));
      }
    } finally {
      await server.owner.delete("/default_streams", { stream_id: streamId });
      await setAccess("role:everyone");
    }
  });

  describe("subscriptions that change whom the guest may access", () => {
    const SUB_TYPES = TYPES;
    let streams = 0;
    const subscribe = async (name: string, principals: number[]) =>
      expect((await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name }]), principals: JSON.stringify(principals) })).body.result).toBe("success");
    const unsubscribe = async (name: string, principals: number[]) =>
      expect((await server.owner.delete("/users/me/subscriptions", { subscriptions: JSON.stringify([name]), principals: JSON.stringify(principals) })).body.result).toBe("success");
    const realmUserEvents = (events: Array<Record<string, any>>) => events.filter((e) => e.type === "realm_user");

    beforeAll(() => setAccess("role:members"));
    afterAll(() => setAccess("role:everyone"));

    test.each([[{}], [{ user_list_incomplete: true }]])("the guest joins and leaves a stream of a user they may not access (capabilities %j)", async (capabilities) => {
      const params = { client_capabilities: JSON.stringify(capabilities) };
      const name = `meeting ${++streams}`;
      await subscribe(name, [stranger.id]);
      // No user_status event comes with the user (none does in Zulip 9.0): realm_user alone is kept.
      const joined = await verifyAction(guest.client, ["realm_user"], () => subscribe(name, [guest.id]), 5000, params);
      // The real user, as /register lists them.
      expect(realmUserEvents(joined)).toEqual([expect.objectContaining({ op: "add", person: expect.objectContaining({ user_id: stranger.id, full_name: expect.stringMatching(/^Stan /) }) })]);
      const left = await verifyAction(guest.client, SUB_TYPES, () => unsubscribe(name, [guest.id]), 5000, params);
      expect(realmUserEvents(left)).toEqual([{ id: expect.any(Number), type: "realm_user", op: "remove", person: { user_id: stranger.id, full_name: "Unknown user" } }]);
      const { state } = await registerState(guest.client, ["realm_user"], params);
      const listed = (state.realm_users as Array<Record<string, unknown>>).find((u) => u.user_id === stranger.id);
      if ("user_list_incomplete" in capabilities) expect(listed).toBeUndefined();
      else expect(listed).toMatchObject({ full_name: "Unknown user", email: `user${stranger.id}@chat.test` });
    });

    test.each([[{}], [{ user_list_incomplete: true }]])("a user joins and leaves a stream the guest is in (capabilities %j)", async (capabilities) => {
      const params = { client_capabilities: JSON.stringify(capabilities) };
      const joined = await verifyAction(guest.client, ["realm_user"], () => subscribe("shared", [stranger.id]), 5000, params);
      expect(realmUserEvents(joined)).toEqual([expect.objectContaining({ op: "add", person: expect.objectContaining({ user_id: stranger.id, full_name: expect.stringMatching(/^Stan /) }) })]);
      // Others hear nothing of it: the observer already knows Stan.
      const observerQueue = await queueOf(observer);
      const left = await verifyAction(guest.client, SUB_TYPES, () => unsubscribe("shared", [stranger.id]), 5000, params);
      expect(realmUserEvents(left)).toEqual([expect.objectContaining({ op: "remove", person: { user_id: stranger.id, full_name: "Unknown user" } })]);
      expect(realmUserEvents(await drainEvents(observer.client, observerQueue))).toEqual([]);
    });

    test("a user the guest knows otherwise stays known when a shared stream goes", async () => {
      const name = `meeting ${++streams}`;
      await subscribe(name, [guest.id, friend.id]);
      const { queueId, state } = await registerState(guest.client, ["realm_user", "subscription"]);
      await unsubscribe(name, [guest.id]);
      await waitForEvent(guest.client, queueId, (e) => e.type === "subscription" && e.op === "remove", { acknowledge: false });
      // Frida is still in #shared with the guest.
      expect(realmUserEvents(await drainEvents(guest.client, queueId))).toEqual([]);
      expect((await registerState(guest.client, ["realm_user"])).state.realm_users).toEqual(state.realm_users);
    });
  });

  describe("with role:everyone (the default)", () => {
    test("subscriptions send no user events", async () => {
      const types = ["realm_user", "subscription"];
      const { queueId } = await registerState(guest.client, types);
      expect((await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "open meeting" }]), principals: JSON.stringify([guest.id, stranger.id]) })).body.result).toBe("success");
      expect((await server.owner.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["open meeting"]), principals: JSON.stringify([guest.id]) })).body.result).toBe("success");
      await waitForEvent(guest.client, queueId, (e) => e.type === "subscription" && e.op === "remove", { acknowledge: false });
      const events = await drainEvents(guest.client, queueId);
      expect(events.filter((e) => e.type === "subscription" && e.op === "add")).toHaveLength(1);
      expect(events.filter((e) => e.type === "realm_user")).toEqual([]);
    });

    test("the guest hears of everyone, and its state agrees with a new /register", async () => {
      const guestQueue = await queueOf(guest);
      await rename(stranger, "Stan Open");
      await waitForEvent(guest.client, guestQueue, (e) => e.type === "realm_user" && e.person?.user_id === stranger.id && e.person.full_name === "Stan Open");
      await verifyAction(guest.client, TYPES, () => setStatus(stranger, "open plans"));
      let newcomer: TestUser | undefined;
      const events = await verifyAction(guest.client, TYPES, async () => {
        newcomer = await createTestUser(server, `Nina Newcomer${++created}`);
      });
      expect(events.find((e) => e.op === "add")!.person).toMatchObject({ user_id: newcomer!.id, full_name: `Nina Newcomer${created}` });
    });
  });
});
