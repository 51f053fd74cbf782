// POST /streams/{stream_id}/delete_topic (Zulip 9.0: administrators; `complete`, feature level
// 211): deletes a topic's messages in batches, each with its delete_message event.
import { TOPIC_DELETION } from "@chat/core";
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("delete topic (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let streamId: number;

  const streamIdOf = async (name: string) => (await member.client.get("/get_stream_id", { stream: name })).body.stream_id as number;
  const topicMessageIds = async (client: TestUser["client"], stream: string, topic: string) =>
    ((
      await client.get("/messages", {
        anchor: "newest",
        num_before: 100,
        num_after: 0,
        narrow: JSON.stringify([
          { operator: "stream", operand: stream },
          { operator: "topic", operand: topic },
        ]),
      })
    ).body.messages as Array<{ id: number }>).map((m) => m.id);

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mel Member");
    await subscribeTo(member.client, ["deletions"]);
    await subscribeTo(admin.client, ["deletions"]);
    streamId = await streamIdOf("deletions");
  });
  afterAll(() => {
    Object.assign(TOPIC_DELETION, { batchSize: 100, timeLimitMs: 50_000 });
    return server.stop();
  });

  test("verifyAction: a topic goes in batches, newest first, whatever its case; other topics stay", async () => {
    const doomed: number[] = [];
    for (let i = 0; i < 5; i++) doomed.push(await sendStreamMessage(member.client, "deletions", i % 2 ? "Doomed" : "doomed"));
    const kept = await sendStreamMessage(member.client, "deletions", "kept");
    TOPIC_DELETION.batchSize = 2;
    let body: Record<string, unknown> = {};
    const events = await verifyAction(member.client, ["message", "delete_message", "update_message_flags"], async () => {
      body = (await admin.client.post(`/streams/${streamId}/delete_topic`, { topic_name: "DOOMED" })).body;
    }, 5000, { client_capabilities: { bulk_message_deletion: true } });
    TOPIC_DELETION.batchSize = 100;
    expect(body).toEqual({ result: "success", msg: "", complete: true });
    const deletions = events.filter((e) => e.type === "delete_message");
    expect(deletions.map((e) => e.message_ids)).toEqual([doomed.slice(3), doomed.slice(1, 3), doomed.slice(0, 1)]);
    expect(deletions[0]).toMatchObject({ message_type: "stream", stream_id: streamId });
    expect(await topicMessageIds(member.client, "deletions", "doomed")).toEqual([]);
    expect(await topicMessageIds(member.client, "deletions", "kept")).toEqual([kept]);
  });

  test("out of time, it answers complete: false; asking again finishes", async () => {
    const ids = [await sendStreamMessage(member.client, "deletions", "slow"), await sendStreamMessage(member.client, "deletions", "slow")];
    TOPIC_DELETION.timeLimitMs = 0;
    const first = await admin.client.post(`/streams/${streamId}/delete_topic`, { topic_name: "slow" });
    TOPIC_DELETION.timeLimitMs = 50_000;
    expect(first.body).toEqual({ result: "success", msg: "", complete: false });
    expect(await topicMessageIds(member.client, "deletions", "slow")).toEqual(ids);
    const again = await admin.client.post(`/streams/${streamId}/delete_topic`, { topic_name: "slow" });
    expect(again.body).toEqual({ result: "success", msg: "", complete: true });
    expect(await topicMessageIds(member.client, "deletions", "slow")).toEqual([]);
  });

  test("a topic with no messages is complete at once", async () => {
    expect((await admin.client.post(`/streams/${streamId}/delete_topic`, { topic_name: "never" })).body).toEqual({ result: "success", msg: "", complete: true });
  });

  test("members may not delete topics, even their own messages'", async () => {
    const id = await sendStreamMessage(member.client, "deletions", "mine");
    const res = await member.client.post(`/streams/${streamId}/delete_topic`, { topic_name: "mine" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" });
    expect(await topicMessageIds(member.client, "deletions", "mine")).toEqual([id]);
  });

  test("a private stream the administrator is not in is not theirs to see", async () => {
    await subscribeTo(member.client, ["secret"], { invite_only: true });
    const id = await sendStreamMessage(member.client, "secret", "hidden");
    const secretId = await streamIdOf("secret");
    const res = await admin.client.post(`/streams/${secretId}/delete_topic`, { topic_name: "hidden" });
    expect(res.body).toMatchObject({ result: "error", msg: "Invalid stream id" });
    expect(await topicMessageIds(member.client, "secret", "hidden")).toEqual([id]);
  });

  test.each([
    [{}, "Missing 'topic_name' argument"],
    [{ topic_name: "x".repeat(601) }, "topic_name is too long (limit: 600 characters)"],
  ] as Array<[Record<string, string>, string]>)("%j is refused", async (params, msg) => {
    const res = await admin.client.post(`/streams/${streamId}/delete_topic`, params);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
  });
});
