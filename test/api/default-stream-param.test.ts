// `is_default_stream` (Zulip's feature level 200): on PATCH /streams/{id}, administrators make a
// stream a default stream for new users or stop; on POST /users/me/subscriptions, the streams the
// request creates become default streams. A default stream is never private.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

const PRIVATE_DEFAULT = { result: "error", msg: "A default channel cannot be private.", code: "BAD_REQUEST" };

function ok<T extends { body: Record<string, any> }>(res: T): T {
  if (res.body.result !== "success") throw new Error(`expected success: ${JSON.stringify(res.body)}`);
  return res;
}

describe.each(MODES)("is_default_stream parameter (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let count = 0;

  const newName = () => `defaults ${++count}`;
  const streamId = async (name: string) => ok(await admin.client.get("/get_stream_id", { stream: name })).body.stream_id as number;
  const stream = async (id: number) => ok(await admin.client.get(`/streams/${id}`)).body.stream as Record<string, unknown>;
  const defaultIds = async (): Promise<number[]> =>
    ((await registerState(member.client, ["default_streams"])).state.realm_default_streams as Array<{ stream_id: number }>).map((s) => s.stream_id).sort((a, b) => a - b);
  const createStream = async (client: ApiClient, name: string, extra: Record<string, unknown> = {}) =>
    streamId((ok(await client.post("/users/me/subscriptions", { subscriptions: [{ name }], ...extra })), name));

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
  });
  afterAll(() => server.stop());

  test("PATCH: an administrator makes a public stream default, and back; non-guests get default_streams", async () => {
    const id = await createStream(admin.client, newName());
    const added = await verifyAction(member.client, ["default_streams"], async () => ok(await admin.client.patch(`/streams/${id}`, { is_default_stream: true })));
    expect(added).toEqual([expect.objectContaining({ type: "default_streams", default_streams: expect.arrayContaining([expect.objectContaining({ stream_id: id })]) })]);
    expect(await defaultIds()).toContain(id);
    // Asking again changes nothing.
    ok(await admin.client.patch(`/streams/${id}`, { is_default_stream: true }));
    expect((await defaultIds()).filter((d) => d === id)).toEqual([id]);

    const removed = await verifyAction(member.client, ["default_streams"], async () => ok(await admin.client.patch(`/streams/${id}`, { is_default_stream: false })));
    expect(removed[0].default_streams.map((s: { stream_id: number }) => s.stream_id)).not.toContain(id);
    expect(await defaultIds()).not.toContain(id);
  });

  test("PATCH: a new user joins a stream made default this way", async () => {
    const name = newName();
    const id = await createStream(admin.client, name);
    ok(await admin.client.patch(`/streams/${id}`, { is_default_stream: true, description: "for all" }));
    expect(await stream(id)).toMatchObject({ description: "for all" });
    const newcomer = await createTestUser(server, `Nell Newcomer ${count}`);
    const subs = ok(await newcomer.client.get("/users/me/subscriptions")).body.subscriptions as Array<{ name: string }>;
    expect(subs.map((s) => s.name)).toContain(name);
  });

  test("PATCH: members may not, and nothing changes", async () => {
    const id = await createStream(admin.client, newName());
    const res = await member.client.patch(`/streams/${id}`, { is_default_stream: true });
    expect(res.status).toBe(400);
    // Zulip 10.0 asks first whether they administer the channel (feature level 325).
    expect(res.body).toEqual({ result: "error", msg: "You do not have permission to administer this channel.", code: "UNAUTHORIZED_PRINCIPAL" });
    expect(await defaultIds()).not.toContain(id);
  });

  test("PATCH: a private stream cannot become default", async () => {
    const id = await createStream(admin.client, newName(), { invite_only: true });
    expect((await admin.client.patch(`/streams/${id}`, { is_default_stream: true })).body).toEqual(PRIVATE_DEFAULT);
    expect(await defaultIds()).not.toContain(id);
  });

  test("PATCH: a default stream cannot become private unless it stops being default in the same request", async () => {
    const id = await createStream(admin.client, newName());
    ok(await admin.client.patch(`/streams/${id}`, { is_default_stream: true }));
    expect((await admin.client.patch(`/streams/${id}`, { is_private: true })).body).toEqual(PRIVATE_DEFAULT);
    expect((await admin.client.patch(`/streams/${id}`, { is_private: true, is_default_stream: true })).body).toEqual(PRIVATE_DEFAULT);
    expect(await stream(id)).toMatchObject({ invite_only: false });
    expect(await defaultIds()).toContain(id);

    ok(await admin.client.patch(`/streams/${id}`, { is_private: true, is_default_stream: false }));
    expect(await stream(id)).toMatchObject({ invite_only: true });
    expect(await defaultIds()).not.toContain(id);
  });

  test("PATCH: a private stream made public in the same request may become default", async () => {
    const id = await createStream(admin.client, newName(), { invite_only: true });
    ok(await admin.client.patch(`/streams/${id}`, { is_private: false, is_default_stream: true }));
    expect(await stream(id)).toMatchObject({ invite_only: false });
    expect(await defaultIds()).toContain(id);
  });

  test("PATCH: a value that is not a boolean is refused", async () => {
    const id = await createStream(admin.client, newName());
    const res = await admin.client.patch(`/streams/${id}`, { is_default_stream: "maybe" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: expect.stringContaining("is_default_stream") });
    expect(await defaultIds()).not.toContain(id);
  });

  test("POST subscriptions: streams the request creates become default, existing ones do not", async () => {
    const existing = await createStream(admin.client, newName());
    const fresh = newName();
    const events = await verifyAction(member.client, ["default_streams"], async () =>
      ok(await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: `defaults ${count - 1}` }, { name: fresh }], is_default_stream: true })),
    );
    const freshId = await streamId(fresh);
    expect(events.at(-1)!.default_streams.map((s: { stream_id: number }) => s.stream_id)).toContain(freshId);
    const ids = await defaultIds();
    expect(ids).toContain(freshId);
    expect(ids).not.toContain(existing);
  });

  test("POST subscriptions: only administrators may create default streams", async () => {
    const name = newName();
    const res = await member.client.post("/users/me/subscriptions", { subscriptions: [{ name }], is_default_stream: true });
    expect(res.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    expect((await admin.client.get("/get_stream_id", { stream: name })).status).toBe(400);
  });

  test("POST subscriptions: a member subscribing to existing streams only is not refused", async () => {
    const name = newName();
    const id = await createStream(admin.client, name);
    ok(await member.client.post("/users/me/subscriptions", { subscriptions: [{ name }], is_default_stream: true }));
    expect(await defaultIds()).not.toContain(id);
  });

  test("POST subscriptions: a new private stream cannot be default, and is not created", async () => {
    const name = newName();
    const res = await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name }], invite_only: true, is_default_stream: true });
    expect(res.body).toEqual(PRIVATE_DEFAULT);
    expect((await admin.client.get("/get_stream_id", { stream: name })).status).toBe(400);
  });
});
