// Sending and fetching take public streams from each node's copy of the realm's streams, kept valid
// by realm.stream_generation (bumped by a trigger on any stream change). Every change must show on
// the very next request, on this node and on another one.
import { MODES, startSecondNode, startTestServer, type SecondNode, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("the stream copy of sending and fetching (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let streamId: number;

  const send = (user: TestUser, to: string | number, content = "hi") => user.client.post("/messages", { type: "stream", to, topic: "cache", content });
  const generation = async () => (await server.running.services.db.prisma.realm.findFirstOrThrow({ where: { string_id: "" } })).stream_generation;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Cache");
    bob = await createTestUser(server, "Bob Cache");
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "cached" }], principals: [alice.email] });
    streamId = (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name: "cached" } })).id;
  });
  afterAll(() => server.stop());

  test("a stream change bumps the realm's generation; a message setting first_message_id does not", async () => {
    const before = await generation();
    expect((await server.owner.patch(`/streams/${streamId}`, { description: "changed" })).body.result).toBe("success");
    const afterChange = await generation();
    expect(afterChange).toBeGreaterThan(before);
    expect((await send(alice, "cached")).body.result).toBe("success");
    const stream = await server.running.services.db.prisma.stream.findUniqueOrThrow({ where: { id: streamId } });
    expect(stream.first_message_id).not.toBeNull();
    expect(await generation()).toBe(afterChange);
  });

  test("a rename shows on the next send and fetch: the new name works, the old one does not exist", async () => {
    expect((await send(bob, "cached")).body.result).toBe("success"); // the copy holds "cached"
    expect((await server.owner.patch(`/streams/${streamId}`, { new_name: "renamed" })).body.result).toBe("success");
    expect((await send(bob, "renamed")).body.result).toBe("success");
    expect((await send(bob, "cached")).body).toMatchObject({ result: "error", code: "STREAM_DOES_NOT_EXIST" });
    const fetched = await bob.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([["stream", "renamed"]]) });
    expect(fetched.body.result).toBe("success");
    expect(fetched.body.messages.every((m: { display_recipient: string }) => m.display_recipient === "renamed")).toBe(true);
    expect((await bob.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([["stream", "cached"]]) })).body).toMatchObject({
      result: "error",
      code: "BAD_NARROW",
    });
  });

  test("made private, the stream refuses the non-subscriber at once; archived, nobody may send to it", async () => {
    expect((await send(bob, streamId)).body.result).toBe("success");
    expect((await server.owner.patch(`/streams/${streamId}`, { is_private: true })).body.result).toBe("success");
    expect((await send(bob, streamId)).body).toMatchObject({ result: "error", msg: "Not authorized to send to stream 'renamed'" });
    expect((await send(alice, streamId)).body.result).toBe("success");
    expect((await server.owner.delete(`/streams/${streamId}`)).body.result).toBe("success");
    // Feature level 315: archived, not gone (archived-channels.test.ts).
    expect((await send(alice, streamId)).body).toMatchObject({ result: "error", msg: expect.stringMatching(/^Not authorized to send to channel /) });
  });
});

describe("the stream copy across two nodes (postgres)", () => {
  let server: TestServer;
  let other: SecondNode;

  beforeAll(async () => {
    server = await startTestServer("postgres");
    // Its copy must follow changes made through the first node.
    other = await startSecondNode(server);
  });
  afterAll(async () => {
    await other.stop();
    await server.stop();
  });

  test("a rename through one node shows on the other's next send", async () => {
    const owner = await createTestUser(server, "Olga Owner", "admin");
    const onOther = other.client(owner.client.credentials);
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "two nodes" }], principals: [owner.email] });
    expect((await onOther.post("/messages", { type: "stream", to: "two nodes", topic: "t", content: "x" })).body.result).toBe("success");
    const id = (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name: "two nodes" } })).id;
    expect((await owner.client.patch(`/streams/${id}`, { new_name: "two nodes renamed" })).body.result).toBe("success");
    expect((await onOther.post("/messages", { type: "stream", to: "two nodes", topic: "t", content: "x" })).body).toMatchObject({ code: "STREAM_DOES_NOT_EXIST" });
    expect((await onOther.post("/messages", { type: "stream", to: "two nodes renamed", topic: "t", content: "x" })).body.result).toBe("success");
  });
});
