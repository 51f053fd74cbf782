// POST /mark_all_as_read as Zulip 9.0 (feature level 153): batches that each commit, each with an
// `all: true` read event, and `complete: false` when the time limit passed first.
import { MARK_ALL_AS_READ } from "@chat/core";
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { drainEvents } from "../support/events.ts";
import { registerQueue } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";

describe.each(MODES)("mark all as read in batches (%s)", (mode) => {
  let server: TestServer;
  let sender: TestUser;
  let reader: TestUser;

  const unread = async () =>
    (await server.running.services.db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM user_message WHERE user_id = ${reader.id} AND (flags & 1) = 0`)[0].n;

  beforeAll(async () => {
    server = await startTestServer(mode);
    sender = await createTestUser(server, "Sam Sender");
    reader = await createTestUser(server, "Rae Reader");
    await subscribeTo(sender.client, ["batches"], { principals: JSON.stringify([sender.email, reader.email]) });
    // What a new user starts with unread (the welcome) is read first.
    await reader.client.post("/mark_all_as_read");
  });
  afterAll(() => {
    Object.assign(MARK_ALL_AS_READ, { batchSize: 2000, timeLimitMs: 50_000 });
    return server.stop();
  });

  test("out of time before the first batch: complete false, nothing read", async () => {
    for (let i = 0; i < 5; i++) await sendStreamMessage(sender.client, "batches", "t");
    expect(await unread()).toBe(5);
    MARK_ALL_AS_READ.timeLimitMs = 0;
    const res = await reader.client.post("/mark_all_as_read");
    MARK_ALL_AS_READ.timeLimitMs = 50_000;
    expect(res.body).toEqual({ result: "success", msg: "", complete: false });
    expect(await unread()).toBe(5);
  });

  test("batches until none is left, each announced", async () => {
    const queue = await registerQueue(reader.client, ["update_message_flags"]);
    MARK_ALL_AS_READ.batchSize = 2;
    const res = await reader.client.post("/mark_all_as_read");
    MARK_ALL_AS_READ.batchSize = 2000;
    expect(res.body).toEqual({ result: "success", msg: "", complete: true });
    expect(await unread()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    const events = (await drainEvents(reader.client, queue)).filter((e) => e.type === "update_message_flags");
    // 2 + 2 + 1: the short batch is the last.
    expect(events).toHaveLength(3);
    for (const event of events) expect(event).toMatchObject({ op: "add", flag: "read", messages: [], all: true });
  });
});
