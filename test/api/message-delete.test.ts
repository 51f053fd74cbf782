// DELETE /messages/{id}: who may delete (Zulip 3.0 rules), what goes with the message, and the
// `delete_message` event to exactly its recipients, bulk or one per message by client capability.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { waitForEvent } from "../support/events.ts";
import { verifyAction } from "../support/verify-action.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";

describe.each(MODES)("DELETE /messages/{id} (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  let admin: TestUser;
  let realmId: number;

  const prisma = () => server.running.services.db.prisma;
  // The 3.x setting, a shorthand for the group that replaced it and is enforced (Zulip 10.0's
  // can_delete_own_message_group); the time limit written as it is stored.
  const setRealm = async (data: { allow_message_deleting?: boolean; message_content_delete_limit_seconds?: number | null }) => {
    const { allow_message_deleting, ...rest } = data;
    if (allow_message_deleting !== undefined) expect((await server.owner.patch("/realm", { allow_message_deleting })).body.result).toBe("success");
    if (Object.keys(rest).length > 0) await prisma().realm.update({ where: { id: realmId }, data: rest });
  };
  const del = (user: TestUser, id: number) => user.client.delete(`/messages/${id}`);

  beforeAll(async () => {
    server = await startTestServer(mode);
    [alice, bob, carol, guest, admin] = await Promise.all([
      createTestUser(server, "Alice Deletes"),
      createTestUser(server, "Bob Deletes"),
      createTestUser(server, "Carol Deletes"),
      createTestUser(server, "Gina Guest", "guest"),
      createTestUser(server, "Adam Admin", "admin"),
    ]);
    realmId = (await prisma().userProfile.findUniqueOrThrow({ where: { id: alice.id } })).realm_id;
    await subscribeTo(alice.client, ["deleting"], { principals: [alice.email, bob.email, guest.email] });
  });
  afterAll(() => server.stop());
  beforeEach(() => setRealm({ allow_message_deleting: true, message_content_delete_limit_seconds: null }));

  const denied = { result: "error", msg: "You don't have permission to delete this message", code: "BAD_REQUEST" };

  test("a sender deletes their own message only when the realm allows it", async () => {
    await setRealm({ allow_message_deleting: false });
    const id = await sendStreamMessage(alice.client, "deleting", "t");
    expect((await del(alice, id)).body).toEqual(denied);
    await setRealm({ allow_message_deleting: true });
    expect((await del(alice, id)).body).toEqual({ result: "success", msg: "" });
    expect(await prisma().message.findUnique({ where: { id } })).toBeNull();
    expect(await prisma().userMessage.count({ where: { message_id: id } })).toBe(0);
  });

  test("within the realm's time limit only; administrators have no limit", async () => {
    await setRealm({ message_content_delete_limit_seconds: 60 });
    const recent = await sendStreamMessage(alice.client, "deleting", "t");
    const old = await sendStreamMessage(alice.client, "deleting", "t");
    await prisma().message.update({ where: { id: old }, data: { date_sent: new Date(Date.now() - 120_000) } });
    expect((await del(alice, old)).body).toEqual({ result: "error", msg: "The time limit for deleting this message has passed", code: "BAD_REQUEST" });
    expect((await del(alice, recent)).body.result).toBe("success");
    expect((await del(admin, old)).body.result).toBe("success");
  });

  test("other members and guests may not delete someone else's message; administrators may, even when deleting is off", async () => {
    const id = await sendStreamMessage(alice.client, "deleting", "t");
    expect((await del(bob, id)).body).toEqual(denied);
    expect((await del(guest, id)).body).toEqual(denied);
    await setRealm({ allow_message_deleting: false });
    expect((await del(admin, id)).body.result).toBe("success");
  });

  test("unknown and inaccessible messages are Invalid message(s)", async () => {
    const invalid = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };
    const privateId = await sendPrivateMessage(alice.client, [bob.id]);
    expect((await del(alice, 2_000_000_000)).body).toEqual(invalid);
    expect((await del(carol, privateId)).body).toEqual(invalid);
    expect((await del(admin, privateId)).body).toEqual(invalid);
    expect((await alice.client.delete("/messages/abc")).status).toBe(404);
    expect(await prisma().message.findUnique({ where: { id: privateId } })).not.toBeNull();
  });

  test("stream delete: bulk clients get message_ids, others message_id, and nobody without the message hears of it", async () => {
    const aliceQueue = await registerQueue(alice.client, ["delete_message"], { client_capabilities: { bulk_message_deletion: true } });
    const bobQueue = await registerQueue(bob.client, ["delete_message"]);
    const carolQueue = await registerQueue(carol.client, ["delete_message", "message"]);
    const id = await sendStreamMessage(alice.client, "deleting", "gone soon");
    await prisma().reaction.create({ data: { message_id: id, user_id: bob.id, emoji_name: "octopus", emoji_code: "1f419" } });
    expect((await del(alice, id)).body.result).toBe("success");
    expect(await prisma().reaction.count({ where: { message_id: id } })).toBe(0);
    const common = { type: "delete_message", message_type: "stream", stream_id: expect.any(Number), topic: "gone soon", id: expect.any(Number) };
    expect(await waitForEvent(alice.client, aliceQueue, (e) => e.type === "delete_message")).toEqual({ ...common, message_ids: [id] });
    expect(await waitForEvent(bob.client, bobQueue, (e) => e.type === "delete_message")).toEqual({ ...common, message_id: id });
    await sendPrivateMessage(alice.client, [carol.id], "marker");
    const carolEvents = await eventsUntil(carol.client, carolQueue, (e) => e.type === "message");
    expect(carolEvents.filter((e) => e.type === "delete_message")).toEqual([]);
  });

  test("private delete carries recipient_id and sender_id and reaches only the participants", async () => {
    const bobQueue = await registerQueue(bob.client, ["delete_message"], { client_capabilities: { bulk_message_deletion: true } });
    const carolQueue = await registerQueue(carol.client, ["delete_message", "message"]);
    const id = await sendPrivateMessage(alice.client, [bob.id], "oops");
    const recipientId = (await prisma().message.findUniqueOrThrow({ where: { id } })).recipient_id;
    expect((await del(alice, id)).body.result).toBe("success");
    expect(await waitForEvent(bob.client, bobQueue, (e) => e.type === "delete_message")).toEqual({
      type: "delete_message",
      message_ids: [id],
      message_type: "private",
      recipient_id: recipientId,
      sender_id: alice.id,
      id: expect.any(Number),
    });
    await sendPrivateMessage(alice.client, [carol.id], "marker");
    expect((await eventsUntil(carol.client, carolQueue, (e) => e.type === "message")).filter((e) => e.type === "delete_message")).toEqual([]);
  });

  test("deleting a stream's first message moves first_message_id to the next one", async () => {
    await subscribeTo(alice.client, ["deleting-first"]);
    const first = await sendStreamMessage(alice.client, "deleting-first", "t");
    const second = await sendStreamMessage(alice.client, "deleting-first", "t");
    const stream = () => prisma().stream.findFirstOrThrow({ where: { name: "deleting-first" } });
    expect((await stream()).first_message_id).toBe(first);
    await del(alice, first);
    expect((await stream()).first_message_id).toBe(second);
    await del(alice, second);
    expect((await stream()).first_message_id).toBeNull();
  });

  test("verifyAction: the events keep a registered state in step", async () => {
    const id = await sendStreamMessage(alice.client, "deleting", "t");
    await sendStreamMessage(alice.client, "deleting", "t"); // the newest stays, so max_message_id holds
    const events = await verifyAction(bob.client, ["message", "delete_message"], () => del(alice, id));
    expect(events).toEqual([expect.objectContaining({ type: "delete_message", message_id: id })]);
  });
});
