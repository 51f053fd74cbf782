// Stream metadata of Zulip 9.0: creator_id (feature level 254), date_created (30),
// realm_date_created (203), stream_weekly_traffic (199, refreshed by the worker's job) and
// first_message_id with its `stream` update after deletions (256).
import { refreshStreamWeeklyTraffic } from "@chat/core";
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

const DAY = 24 * 60 * 60 * 1000;

describe.each(MODES)("stream metadata (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;

  const prisma = () => server.running.services.db.prisma;
  const subscription = async (name: string) =>
    ((await member.client.post("/register", { fetch_event_types: ["subscription"] })).body.subscriptions as Array<Record<string, any>>).find((s) => s.name === name)!;
  const streamObject = async (streamId: number) => (await member.client.get(`/streams/${streamId}`)).body.stream;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Mel Member");
  });
  afterAll(() => server.stop());

  test("creator_id and date_created: who made a stream and when; null for the organization's own", async () => {
    const before = Math.floor(Date.now() / 1000) - 5;
    await subscribeTo(member.client, ["made by mel"]);
    const sub = await subscription("made by mel");
    expect(sub.creator_id).toBe(member.id);
    expect(sub.date_created).toBeGreaterThanOrEqual(before);
    expect((await streamObject(sub.stream_id)).creator_id).toBe(member.id);
    await subscribeTo(member.client, ["general"]);
    expect((await subscription("general")).creator_id).toBeNull();
  });

  test("realm_date_created is the organization's creation time", async () => {
    const body = (await member.client.post("/register", { fetch_event_types: ["realm"] })).body;
    const realm = await prisma().realm.findFirstOrThrow({ where: {} , orderBy: { id: "asc" } });
    expect(body.realm_date_created).toBe(Math.floor(realm.date_created.getTime() / 1000));
  });

  test("stream_weekly_traffic: null under a week old, then the last four weeks' messages a week", async () => {
    await subscribeTo(member.client, ["busy", "young", "quiet"]);
    for (let i = 0; i < 10; i++) await sendStreamMessage(member.client, "busy", "t");
    await sendStreamMessage(member.client, "young", "t");
    const busy = await subscription("busy");
    const quiet = await subscription("quiet");
    expect(busy.stream_weekly_traffic).toBeNull();
    await prisma().stream.update({ where: { id: busy.stream_id }, data: { date_created: new Date(Date.now() - 40 * DAY) } });
    await prisma().stream.update({ where: { id: quiet.stream_id }, data: { date_created: new Date(Date.now() - 14 * DAY) } });
    await refreshStreamWeeklyTraffic(prisma());
    // 10 messages in four weeks: 10 // 4; a fortnight-old stream with none: 0; a new one: still null.
    expect((await subscription("busy")).stream_weekly_traffic).toBe(2);
    expect((await subscription("quiet")).stream_weekly_traffic).toBe(0);
    expect((await subscription("young")).stream_weekly_traffic).toBeNull();
    expect((await streamObject(busy.stream_id)).stream_weekly_traffic).toBe(2);

    // Messages older than four weeks do not count; one recent message is at least 1 a week.
    await prisma().message.updateMany({ where: { recipient_id: (await prisma().stream.findUniqueOrThrow({ where: { id: busy.stream_id } })).recipient_id! }, data: { date_sent: new Date(Date.now() - 30 * DAY) } });
    await sendStreamMessage(member.client, "busy", "t");
    await refreshStreamWeeklyTraffic(prisma());
    expect((await subscription("busy")).stream_weekly_traffic).toBe(1);
  });

  test("verifyAction: deleting a stream's first message announces its new first_message_id", async () => {
    await subscribeTo(member.client, ["firsts"]);
    const first = await sendStreamMessage(member.client, "firsts", "t");
    const second = await sendStreamMessage(member.client, "firsts", "t");
    const sub = await subscription("firsts");
    expect(sub.first_message_id).toBe(first);
    const events = await verifyAction(member.client, ["subscription", "stream"], () => server.owner.delete(`/messages/${first}`));
    expect(events).toContainEqual({ id: expect.any(Number), type: "stream", op: "update", property: "first_message_id", value: second, stream_id: sub.stream_id, name: "firsts" });
    expect((await subscription("firsts")).first_message_id).toBe(second);

    // Deleting a later message changes nothing of the stream.
    const third = await sendStreamMessage(member.client, "firsts", "t");
    const later = await verifyAction(member.client, ["subscription", "stream", "delete_message"], () => server.owner.delete(`/messages/${third}`));
    expect(later.filter((e) => e.type === "stream")).toEqual([]);
  });
});
