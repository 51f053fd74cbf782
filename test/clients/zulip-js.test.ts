// The official JavaScript client, unmodified, against a running server: it sends multipart bodies,
// reads /server_settings and uses the event queue the way apps built on it do. Its answers are
// checked against the API document as every test's are, through its own fetch.
import sharp from "sharp";
import zulipInit from "zulip-js";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";

jest.mock("isomorphic-fetch", () => jest.requireActual("../support/checked-node-fetch.ts").checkedNodeFetch);

describe.each(MODES)("zulip-js client (%s)", (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("logs in with a password, reads its profile, sends and receives a message through the event queue", async () => {
    // zulip-js fetches the API key itself from username and password.
    const client = await zulipInit({ username: OWNER_EMAIL, password: OWNER_PASSWORD, realm: server.baseUrl });
    expect(client.config.apiKey).toBe(server.owner.credentials!.apiKey);

    const settings = await client.server.settings();
    expect(settings).toMatchObject({ result: "success", zulip_version: "10.0", zulip_feature_level: 371, zulip_merge_base: "10.0" });

    const me = await client.users.me.getProfile();
    expect(me).toMatchObject({ result: "success", email: OWNER_EMAIL, is_owner: true });

    const users = await client.users.retrieve();
    expect(users.members.map((u: { email: string }) => u.email)).toContain(OWNER_EMAIL);

    const queue = await client.queues.register({ event_types: ["message"] });
    expect(queue).toMatchObject({ result: "success", last_event_id: -1 });

    const sent = await client.messages.send({ to: "general", type: "stream", topic: "zulip-js", content: "Hello from zulip-js" });
    expect(sent).toMatchObject({ result: "success", id: expect.any(Number) });

    // A long poll, as apps do: the fan-out may reach the queue a moment after the send answers.
    const events = await client.events.retrieve({ queue_id: queue.queue_id, last_event_id: -1 });
    expect(events.result).toBe("success");
    expect(events.events).toEqual([expect.objectContaining({ type: "message", message: expect.objectContaining({ id: sent.id, content: "Hello from zulip-js" }) })]);

    const pm = await client.messages.send({ to: [me.user_id], type: "private", content: "note to self" });
    expect(pm.result).toBe("success");

    const deleted = await client.queues.deregister({ queue_id: queue.queue_id });
    expect(deleted.result).toBe("success");
  });

  test("emojis.retrieve lists a custom emoji uploaded through the API, with the URL that serves it", async () => {
    const png = await sharp({ create: { width: 48, height: 48, channels: 4, background: { r: 200, g: 40, b: 40, alpha: 1 } } }).png().toBuffer();
    const added = await server.owner.raw("post", "/realm/emoji/js_red").attach("file", png, "red.png");
    expect(added.body.result).toBe("success");
    const client = await zulipInit({ username: OWNER_EMAIL, apiKey: server.owner.credentials!.apiKey, realm: server.baseUrl });
    const listed = await client.emojis.retrieve();
    expect(listed.result).toBe("success");
    const emoji = Object.values(listed.emoji as Record<string, { name: string; source_url: string; deactivated: boolean }>).find((e) => e.name === "js_red");
    expect(emoji).toMatchObject({ deactivated: false, source_url: expect.stringMatching(/^\/user_avatars\/\d+\/emoji\/images\/\d+\.png$/) });
    const served = await fetch(`${server.baseUrl}${emoji!.source_url}`);
    expect(served.status).toBe(200);
    expect((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width).toBe(64);
  });

  test("errors reach the client as Zulip error objects", async () => {
    const client = await zulipInit({ username: OWNER_EMAIL, apiKey: "wrong-key", realm: server.baseUrl });
    expect(await client.users.me.getProfile()).toEqual({ result: "error", msg: "Invalid API key" });
    const good = await zulipInit({ username: OWNER_EMAIL, apiKey: server.owner.credentials!.apiKey, realm: server.baseUrl });
    expect(await good.messages.send({ to: "nowhere", type: "stream", topic: "t", content: "x" })).toMatchObject({ code: "STREAM_DOES_NOT_EXIST", stream: "nowhere" });
  });
});
