// Web-public streams (Zulip's feature levels 71, 98, 109, 110, 116, 205): who may create one or
// make one web-public, the rules it keeps (public, history public), the events and state members
// and guests see, and a server that does not allow them (WEB_PUBLIC_STREAMS_ENABLED unset).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

const WEB_PUBLIC = { operator: "channels", operand: "web-public" };

function ok<T extends { status: number; body: Record<string, any> }>(res: T): T {
  if (res.body.result !== "success") throw new Error(`expected success: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

function error(msg: string) {
  return { result: "error", msg, code: "BAD_REQUEST" };
}

describe.each(MODES)("web-public streams (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;
  let count = 0;

  const streamId = async (client: ApiClient, name: string) => ok(await client.get("/get_stream_id", { stream: name })).body.stream_id as number;
  const create = (client: ApiClient, name: string, extra: Record<string, unknown> = {}) =>
    client.post("/users/me/subscriptions", { subscriptions: [{ name }], is_web_public: true, ...extra });
  const newName = () => `web ${++count}`;

  beforeAll(async () => {
    server = await startTestServer(mode, { WEB_PUBLIC_STREAMS_ENABLED: "true" });
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mel Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
  });
  afterAll(() => server.stop());

  test("/register says the server allows them and the organization has spectators off", async () => {
    const { state } = await registerState(member.client, ["realm"]);
    expect(state).toMatchObject({ server_web_public_streams_enabled: true, realm_enable_spectator_access: false });
    expect(ok(await server.anonymous.get("/server_settings")).body.realm_web_public_access_enabled).toBe(false);
  });

  test("administrators turn spectator access on and off; members may not", async () => {
    const denied = await member.client.patch("/realm", { enable_spectator_access: true });
    expect(denied.body).toEqual({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    const events = await verifyAction(member.client, ["realm"], async () => {
      expect(ok(await admin.client.patch("/realm", { enable_spectator_access: true })).body.enable_spectator_access).toBe(true);
    });
    expect(events).toEqual([expect.objectContaining({ type: "realm", op: "update", property: "enable_spectator_access", value: true })]);
    ok(await admin.client.patch("/realm", { enable_spectator_access: false }));
    expect((await registerState(member.client, ["realm"])).state.realm_enable_spectator_access).toBe(false);
  });

  test("only owners create web-public streams, by default", async () => {
    const name = newName();
    for (const user of [member, admin]) expect((await create(user.client, name)).body).toEqual(error("Insufficient permission"));
    expect((await create(guest.client, name)).status).toBe(400);
    expect((await member.client.get("/get_stream_id", { stream: name })).status).toBe(400);
    const events = await verifyAction(member.client, ["stream", "subscription"], async () => ok(await create(server.owner, name)));
    expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "create", streams: [expect.objectContaining({ name, is_web_public: true, invite_only: false, history_public_to_subscribers: true })] }));
  });

  test("guests learn of a new web-public stream and see it in their state (feature level 205)", async () => {
    const name = newName();
    await verifyAction(guest.client, ["stream", "subscription"], async () => ok(await create(server.owner, name)));
    const { state } = await registerState(guest.client, ["stream", "subscription"]);
    const id = await streamId(server.owner, name);
    expect((state.streams as Array<{ stream_id: number }>).map((s) => s.stream_id)).toContain(id);
    expect((state.never_subscribed as Array<{ stream_id: number }>).map((s) => s.stream_id)).toContain(id);
  });

  test("a web-public stream is never private", async () => {
    expect((await create(server.owner, newName(), { invite_only: true })).body).toEqual(error("Invalid parameters"));
  });

  test("making a stream web-public: owners only, one invite_only event with is_web_public (feature level 71)", async () => {
    const name = newName();
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }] }));
    const id = await streamId(server.owner, name);
    expect((await admin.client.patch(`/streams/${id}`, { is_web_public: true })).body).toEqual(error("Insufficient permission"));
    expect((await member.client.patch(`/streams/${id}`, { is_web_public: true })).body.code).toBe("UNAUTHORIZED_PRINCIPAL");
    const events = await verifyAction(member.client, ["stream", "subscription"], async () => ok(await server.owner.patch(`/streams/${id}`, { is_web_public: true })));
    expect(events).toEqual([
      { id: expect.any(Number), type: "stream", op: "update", stream_id: id, name, property: "invite_only", value: false, history_public_to_subscribers: true, is_web_public: true },
    ]);
    // An administrator may make it merely public again: only making a stream web-public is restricted.
    await verifyAction(member.client, ["stream", "subscription"], async () => ok(await admin.client.patch(`/streams/${id}`, { is_web_public: false })));
    expect((await server.owner.get(`/streams/${id}`)).body.stream.is_web_public).toBe(false);
  });

  test("guests gain and lose a stream as it becomes web-public and stops being so", async () => {
    const name = newName();
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }] }));
    const id = await streamId(server.owner, name);
    const gained = await verifyAction(guest.client, ["stream", "subscription"], async () => ok(await server.owner.patch(`/streams/${id}`, { is_web_public: true })));
    expect(gained).toEqual([expect.objectContaining({ type: "stream", op: "create", streams: [expect.objectContaining({ stream_id: id, is_web_public: true })] })]);
    const lost = await verifyAction(guest.client, ["stream", "subscription"], async () => ok(await server.owner.patch(`/streams/${id}`, { is_web_public: false })));
    expect(lost).toEqual([expect.objectContaining({ type: "stream", op: "delete", streams: [expect.objectContaining({ stream_id: id })] })]);
  });

  test("a web-public stream keeps public history and is made private only by saying it is no longer web-public", async () => {
    const name = newName();
    ok(await create(server.owner, name));
    const id = await streamId(server.owner, name);
    expect((await server.owner.patch(`/streams/${id}`, { history_public_to_subscribers: false })).body).toEqual(error("Invalid parameters"));
    expect((await server.owner.patch(`/streams/${id}`, { is_private: true })).body).toEqual(error("Invalid parameters"));
    expect((await server.owner.patch(`/streams/${id}`, { is_private: true, is_web_public: true })).body).toEqual(error("Invalid parameters"));
    const events = await verifyAction(server.owner, ["stream", "subscription"], async () =>
      ok(await server.owner.patch(`/streams/${id}`, { is_private: true, is_web_public: false, history_public_to_subscribers: false })),
    );
    expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", property: "invite_only", value: true, is_web_public: false, history_public_to_subscribers: false }));
    const stream = (await server.owner.get(`/streams/${id}`)).body.stream;
    expect(stream).toMatchObject({ invite_only: true, is_web_public: false, history_public_to_subscribers: false });
  });

  test("an archived stream keeps its privacy (feature level 315), but spectators no longer read it", async () => {
    const name = newName();
    ok(await create(server.owner, name));
    const id = await streamId(server.owner, name);
    ok(await server.owner.delete(`/streams/${id}`));
    const row = await server.running.services.db.prisma.stream.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ deactivated: true, is_web_public: true });
    // Spectators read only active web-public streams (lib/web-public.ts's webPublicStreamCondition).
    const page = await server.anonymous.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: id }]) });
    expect(page.body.result).toBe("error");
  });

  test("guests read a web-public stream's history, and no other public stream's", async () => {
    const web = newName();
    ok(await create(server.owner, web));
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "plain public" }] }));
    const webMessage = ok(await server.owner.post("/messages", { type: "stream", to: web, topic: "t", content: "for everyone" })).body.id as number;
    const plainMessage = ok(await server.owner.post("/messages", { type: "stream", to: "plain public", topic: "t", content: "members only" })).body.id as number;
    const page = (narrow: unknown[]) => guest.client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow });
    const byStream = ok(await page([{ operator: "channel", operand: web }]));
    expect(byStream.body.messages.map((m: { id: number }) => m.id)).toEqual([webMessage]);
    expect(byStream.body.messages[0].flags).toEqual(["read", "historical"]);
    const all = ok(await page([WEB_PUBLIC]));
    expect(all.body.messages.map((m: { id: number }) => m.id)).toContain(webMessage);
    expect(all.body.messages.map((m: { id: number }) => m.id)).not.toContain(plainMessage);
    expect((await page([{ operator: "channel", operand: "plain public" }])).body.code).toBe("BAD_NARROW");
    expect(ok(await guest.client.get(`/messages/${webMessage}`)).body.message.id).toBe(webMessage);
    expect((await guest.client.get(`/messages/${plainMessage}`)).body.msg).toBe("Invalid message(s)");
    // Members read both, and channels:web-public narrows to the web-public ones.
    const memberAll = ok(await member.client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [WEB_PUBLIC] }));
    expect(memberAll.body.messages.map((m: { id: number }) => m.id)).toContain(webMessage);
    expect(memberAll.body.messages.map((m: { id: number }) => m.id)).not.toContain(plainMessage);
  });

  test("/server_settings says whether spectators get in: the server, the organization, and a web-public stream", async () => {
    ok(await admin.client.patch("/realm", { enable_spectator_access: true }));
    try {
      expect(ok(await server.anonymous.get("/server_settings")).body.realm_web_public_access_enabled).toBe(true);
    } finally {
      ok(await admin.client.patch("/realm", { enable_spectator_access: false }));
    }
  });
});

describe.each(MODES)("web-public streams on a server that does not allow them (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("nobody creates or makes one, the state says so, and spectators get nothing", async () => {
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "web" }], is_web_public: true })).body).toEqual(error("Web-public channels are not enabled."));
    ok(await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "web" }] }));
    const id = ok(await server.owner.get("/get_stream_id", { stream: "web" })).body.stream_id as number;
    expect((await server.owner.patch(`/streams/${id}`, { is_web_public: true })).body).toEqual(error("Web-public channels are not enabled."));
    // Even an organization with spectators on and a stream marked web-public (say, from before) shows nothing.
    ok(await server.owner.patch("/realm", { enable_spectator_access: true }));
    await server.running.services.db.prisma.stream.update({ where: { id }, data: { is_web_public: true } });
    ok(await server.owner.post("/messages", { type: "stream", to: "web", topic: "t", content: "hello" }));
    const { state } = await registerState(server.owner, ["realm"]);
    expect(state).toMatchObject({ server_web_public_streams_enabled: false, realm_enable_spectator_access: true });
    expect(ok(await server.anonymous.get("/server_settings")).body.realm_web_public_access_enabled).toBe(false);
    const res = await server.anonymous.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [WEB_PUBLIC] });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
    expect((await server.anonymous.post("/register", {})).status).toBe(401);
  });
});
