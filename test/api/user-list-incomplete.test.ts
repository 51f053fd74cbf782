// can_access_all_users_group (Zulip 9.0, feature levels 225 and 232): with role:members, a guest
// knows only the users they share a stream or a direct conversation with (and bots). Clients with
// the user_list_incomplete capability get only those; others get "Unknown user" for the rest. Tried
// as a guest who wants to learn about the others would.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

type User = { user_id: number; full_name: string; email: string; is_active: boolean; delivery_email?: string | null };

describe.each(MODES)("user_list_incomplete and can_access_all_users_group (%s)", (mode) => {
  let server: TestServer;
  let ownerId: number;
  let guest: TestUser;
  let friend: TestUser;
  let stranger: TestUser;
  let gone: TestUser;
  let ids: Record<string, number>;

  const register = (client: TestUser["client"], capabilities: Record<string, boolean> = {}) =>
    client.post("/register", { fetch_event_types: ["realm_user", "presence", "user_status"], client_capabilities: capabilities });
  const usersOf = (body: Record<string, any>): User[] => [...(body.realm_users as User[]), ...(body.realm_non_active_users as User[])];
  const setAccess = async (group: string) => expect((await server.owner.patch("/realm", { can_access_all_users_group: ids[group] })).body.result).toBe("success");

  beforeAll(async () => {
    server = await startTestServer(mode);
    ownerId = (await server.owner.get("/users/me")).body.user_id;
    guest = await createTestUser(server, "Gia Guest", "guest");
    friend = await createTestUser(server, "Fred Friend");
    stranger = await createTestUser(server, "Sam Secretname");
    gone = await createTestUser(server, "Dee Departed");
    expect((await server.owner.delete(`/users/${gone.id}`)).body.result).toBe("success");
    // The guest leaves #general (everyone is there) and shares #shared with Fred (and its creator).
    expect((await guest.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["general"]) })).body.result).toBe("success");
    const shared = await server.owner.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "shared" }]), principals: JSON.stringify([guest.id, friend.id, ownerId]) });
    expect(shared.body.result).toBe("success");
    await stranger.client.post("/users/me/presence", { status: "active" });
    await stranger.client.post("/users/me/status", { status_text: "secret plans" });
    const groups = (await server.owner.post("/register", { fetch_event_types: ["realm_user_groups"] })).body.realm_user_groups as Array<{ id: number; name: string }>;
    ids = Object.fromEntries(groups.map((g) => [g.name, g.id]));
    await setAccess("role:members");
  });
  afterAll(() => server.stop());

  test("with user_list_incomplete, the guest's lists hold only the users they may access", async () => {
    const res = await register(guest.client, { user_list_incomplete: true });
    expect(res.body.result).toBe("success");
    const seen = usersOf(res.body).map((u) => u.user_id);
    expect(seen).toEqual(expect.arrayContaining([guest.id, friend.id, ownerId]));
    expect(seen).not.toContain(stranger.id);
    expect(seen).not.toContain(gone.id);
    expect(usersOf(res.body).some((u) => u.full_name === "Unknown user")).toBe(false);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain("Secretname");
    expect(text).not.toContain(stranger.email);
    expect(text).not.toContain("secret plans");
    expect(Object.keys(res.body.presences)).not.toContain(stranger.email);
    expect(Object.keys(res.body.user_status)).not.toContain(String(stranger.id));
  });

  test("without it, the others are each an \"Unknown user\" with nothing of their own but the id", async () => {
    for (const capabilities of [{}, { user_settings_object: true }] as Array<Record<string, boolean>>) {
      const res = await register(guest.client, capabilities);
      expect(res.body.result).toBe("success");
      const unknown = (res.body.realm_users as User[]).find((u) => u.user_id === stranger.id);
      expect(unknown).toMatchObject({ user_id: stranger.id, full_name: "Unknown user", email: `user${stranger.id}@chat.test`, is_active: true, is_admin: false, role: 400 });
      expect((res.body.realm_users as User[]).find((u) => u.user_id === gone.id)).toMatchObject({ full_name: "Unknown user", is_active: true });
      expect((res.body.realm_users as User[]).find((u) => u.user_id === friend.id)).toMatchObject({ full_name: "Fred Friend" });
      const text = JSON.stringify(res.body);
      expect(text).not.toContain("Secretname");
      expect(text).not.toContain("Departed");
      expect(text).not.toContain(stranger.email);
    }
  });

  test("GET /users shows them as \"Unknown user\"; one by id or by email is refused", async () => {
    const list = await guest.client.get("/users");
    expect(list.body.result).toBe("success");
    expect((list.body.members as User[]).find((u) => u.user_id === stranger.id)).toMatchObject({ full_name: "Unknown user" });
    expect(JSON.stringify(list.body)).not.toContain("Secretname");
    expect((await guest.client.get(`/users/${stranger.id}`)).body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    expect((await guest.client.get(`/users/${encodeURIComponent(stranger.email)}`)).body).toMatchObject({ result: "error", msg: "No such user" });
    expect((await guest.client.get(`/users/${friend.id}`)).body.user).toMatchObject({ full_name: "Fred Friend" });
  });

  test("the guest may not write to them, and may to those they share a stream with", async () => {
    const res = await guest.client.post("/messages", { type: "private", to: JSON.stringify([stranger.id]), content: "who are you?" });
    expect(res.body).toEqual({ result: "error", msg: "You do not have permission to access some of the recipients.", code: "BAD_REQUEST" });
    const group = await guest.client.post("/messages", { type: "private", to: JSON.stringify([friend.id, stranger.id]), content: "hi both" });
    expect(group.body.msg).toBe("You do not have permission to access some of the recipients.");
    expect((await guest.client.post("/messages", { type: "private", to: JSON.stringify([friend.id]), content: "hi Fred" })).body.result).toBe("success");
  });

  test("members and administrators still see everyone", async () => {
    const res = await register(friend.client, { user_list_incomplete: true });
    expect(usersOf(res.body).map((u) => u.user_id)).toEqual(expect.arrayContaining([stranger.id, gone.id, guest.id]));
    expect((res.body.realm_users as User[]).find((u) => u.user_id === stranger.id)!.full_name).toBe("Sam Secretname");
  });

  test("someone who writes to the guest becomes known to them", async () => {
    expect((await stranger.client.post("/messages", { type: "private", to: JSON.stringify([guest.id]), content: "hello guest" })).body.result).toBe("success");
    const res = await register(guest.client, { user_list_incomplete: true });
    expect((res.body.realm_users as User[]).find((u) => u.user_id === stranger.id)).toMatchObject({ full_name: "Sam Secretname" });
    expect((await guest.client.get(`/users/${stranger.id}`)).body.result).toBe("success");
  });

  test("with role:everyone (the default), guests see everyone again", async () => {
    await setAccess("role:everyone");
    try {
      const res = await register(guest.client, { user_list_incomplete: true });
      expect((res.body.realm_non_active_users as User[]).find((u) => u.user_id === gone.id)).toMatchObject({ full_name: "Dee Departed" });
      expect((await guest.client.get(`/users/${gone.id}`)).body.result).toBe("success");
    } finally {
      await setAccess("role:members");
    }
  });
});
