// Read receipts (Zulip's feature level 137): GET /messages/{id}/read_receipts names who has read a
// message, and the organization may turn them off (PATCH /realm enable_read_receipts).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { createMember, type TestUser } from "../support/users.ts";

describe.each(MODES)("read receipts (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createMember(server, "alice@example.com", "Alice Reader");
    bob = await createMember(server, "bob@example.com", "Bob Reader");
    carol = await createMember(server, "carol@example.com", "Carol Private");
    dave = await createMember(server, "dave@example.com", "Dave Leaving");
    for (const user of [alice, bob, carol, dave]) await subscribeTo(user.client, ["receipts"]);
    // Carol does not tell others what she has read (the personal setting of feature level 105).
    await server.running.services.db.prisma.userProfile.update({ where: { id: carol.id }, data: { send_read_receipts: false } });
  });
  afterAll(() => server.stop());

  const markRead = (user: TestUser, id: number) => user.client.post("/messages/flags", { messages: [id], op: "add", flag: "read" });

  test("the users who have read a message, ascending; not its sender, nor those who keep it private", async () => {
    const id = await sendStreamMessage(alice.client, "receipts", "read", "who reads this?");
    let res = await alice.client.get(`/messages/${id}/read_receipts`);
    expect(res.status).toBe(200);
    // The sender's own message is read, and never listed.
    expect(res.body).toEqual({ result: "success", msg: "", user_ids: [] });
    for (const user of [dave, carol, bob]) expect((await markRead(user, id)).body.result).toBe("success");
    res = await bob.client.get(`/messages/${id}/read_receipts`);
    expect(res.body.user_ids).toEqual([bob.id, dave.id].sort((a, b) => a - b));
    // Marked unread again, it reads as unread.
    await bob.client.post("/messages/flags", { messages: [id], op: "remove", flag: "read" });
    expect((await alice.client.get(`/messages/${id}/read_receipts`)).body.user_ids).toEqual([dave.id]);
  });

  test("deactivated users are not listed", async () => {
    const id = await sendStreamMessage(alice.client, "receipts", "leaving", "bye?");
    await markRead(dave, id);
    expect((await alice.client.get(`/messages/${id}/read_receipts`)).body.user_ids).toEqual([dave.id]);
    const leaver = await createMember(server, "erin@example.com", "Erin Leaver");
    await subscribeTo(leaver.client, ["receipts"]);
    const second = await sendStreamMessage(alice.client, "receipts", "leaving", "bye!");
    await markRead(leaver, second);
    expect((await alice.client.get(`/messages/${second}/read_receipts`)).body.user_ids).toEqual([leaver.id]);
    expect((await leaver.client.delete("/users/me")).body.result).toBe("success");
    expect((await alice.client.get(`/messages/${second}/read_receipts`)).body.user_ids).toEqual([]);
  });

  test("a message the user cannot see is an invalid message", async () => {
    const secret = await sendPrivateMessage(alice.client, [bob.id], "between us");
    const res = await carol.client.get(`/messages/${secret}/read_receipts`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
    expect((await carol.client.get("/messages/99999999999/read_receipts")).body.msg).toBe("Invalid message(s)");
  });

  test("an organization that turns them off: the realm event, /register, and an error", async () => {
    const before = await alice.client.post("/register", { fetch_event_types: ["realm"], event_types: ["realm"] });
    expect(before.body.realm_enable_read_receipts).toBe(true);
    const queueId = await registerQueue(alice.client, ["realm"]);
    const off = await server.owner.patch("/realm", { enable_read_receipts: false });
    expect(off.body).toEqual({ result: "success", msg: "", enable_read_receipts: false });
    const events = await eventsUntil(alice.client, queueId, (event) => event.type === "realm" && event.property === "enable_read_receipts");
    expect(events).toContainEqual(expect.objectContaining({ type: "realm", op: "update", property: "enable_read_receipts", value: false }));
    const after = await alice.client.post("/register", { fetch_event_types: ["realm"], event_types: ["realm"] });
    expect(after.body.realm_enable_read_receipts).toBe(false);

    const id = await sendStreamMessage(alice.client, "receipts", "off", "no receipts");
    const res = await alice.client.get(`/messages/${id}/read_receipts`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Read receipts are disabled in this organization.", code: "BAD_REQUEST" });

    // Only administrators change it.
    const refused = await alice.client.patch("/realm", { enable_read_receipts: true });
    expect(refused.body.result).toBe("error");
    expect((await server.owner.patch("/realm", { enable_read_receipts: true })).body.enable_read_receipts).toBe(true);
    expect((await alice.client.get(`/messages/${id}/read_receipts`)).body.user_ids).toEqual([]);
  });
});
