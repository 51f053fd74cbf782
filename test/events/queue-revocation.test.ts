// A queue's options are checked at /register only; a change that takes away what a queue was
// registered for ends it (END_QUEUES_EVENT, packages/core/src/events.ts): a member demoted to guest loses
// their all_public_streams queues, a deactivated user every queue (theirs and their bots'), each
// answering BAD_EVENT_QUEUE_ID so the client registers again with what it may now have.
import { waitForEvent } from "../support/events.ts";
import type { ApiClient } from "../support/client.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const GUEST = 600;

describe.each(MODES)("queues a role change or deactivation ends (%s)", (mode) => {
  let server: TestServer;
  let observer: string;

  beforeAll(async () => {
    server = await startTestServer(mode);
    observer = (await server.owner.post("/register", { event_types: ["message", "realm_user"] })).body.queue_id;
    // A public stream only the owner is in: all_public_streams is the only way a member hears it.
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "town square" }] })).body.result).toBe("success");
  });
  afterAll(() => server.stop());

  const register = async (client: ApiClient, options: Record<string, unknown> = {}): Promise<string> => {
    const res = await client.post("/register", { event_types: ["message", "realm_user"], ...options });
    expect(res.body.result).toBe("success");
    return res.body.queue_id;
  };
  const poll = (client: ApiClient, queueId: string) => client.get("/events", { queue_id: queueId, last_event_id: -1, dont_block: true });

  /**
   * Polls until the queue is gone (BAD_EVENT_QUEUE_ID), failing if it ever holds an event `forbidden`
   * matches or is still there after 5 s. The fan-out ends it right after the change's batch.
   */
  async function expectEnded(client: ApiClient, queueId: string, forbidden: (event: Record<string, any>) => boolean = () => false): Promise<void> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const res = await poll(client, queueId);
      if (res.body.code === "BAD_EVENT_QUEUE_ID") {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: `Bad event queue id: ${queueId}`, code: "BAD_EVENT_QUEUE_ID", queue_id: queueId });
        return;
      }
      expect(res.body.result).toBe("success");
      expect((res.body.events as Array<Record<string, any>>).filter(forbidden)).toEqual([]);
      if (Date.now() > deadline) throw new Error(`queue ${queueId} still answers: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  test("a member demoted to guest loses their all_public_streams queues, at once, and keeps the others", async () => {
    const member: TestUser = await createTestUser(server, "Demoted Dana");
    const everywhere = await register(member.client, { all_public_streams: true });
    const own = await register(member.client);
    // A poll held on the queue when the demotion comes.
    const held = member.client.get("/events", { queue_id: everywhere, last_event_id: -1 });

    const before = await server.owner.post("/messages", { type: "stream", to: "town square", topic: "t", content: "while a member" });
    await waitForEvent(member.client, everywhere, (e) => e.type === "message" && e.message.id === before.body.id, { acknowledge: false });

    expect((await server.owner.patch(`/users/${member.id}`, { role: GUEST })).body.result).toBe("success");
    const after = await server.owner.post("/messages", { type: "stream", to: "town square", topic: "t", content: "for members only" });
    await waitForEvent(server.owner, observer, (e) => e.type === "message" && e.message.id === after.body.id);

    const isAfter = (e: Record<string, any>) => e.type === "message" && e.message.id === after.body.id;
    await expectEnded(member.client, everywhere, isAfter);
    const answered = await held;
    // Woken by the message before, or told the queue is gone; never given the message after.
    if (answered.body.result === "success") expect((answered.body.events as Array<Record<string, any>>).filter(isAfter)).toEqual([]);
    else expect(answered.body.code).toBe("BAD_EVENT_QUEUE_ID");

    // The other queue stays, with the change, and without the stream the guest is not in.
    const update = await waitForEvent(member.client, own, (e) => e.type === "realm_user" && e.person.user_id === member.id);
    expect(update.person).toEqual({ user_id: member.id, role: GUEST });
    expect((await poll(member.client, own)).body.events.filter(isAfter)).toEqual([]);
    // Registering again, the guest may not ask for every public stream.
    expect((await member.client.post("/register", { all_public_streams: true })).body.msg).toBe("User not authorized for this query");
    expect((await server.running.services.bus.queues.queuesOfUsers(1, [member.id])).map((q) => q.allPublicStreams)).toEqual([false]);
  });

  test("a role change that leaves the user a member or more keeps every queue", async () => {
    const member = await createTestUser(server, "Promoted Pat");
    const everywhere = await register(member.client, { all_public_streams: true });
    for (const role of [200, 400]) {
      expect((await server.owner.patch(`/users/${member.id}`, { role })).body.result).toBe("success");
      await waitForEvent(member.client, everywhere, (e) => e.type === "realm_user" && e.person.role === role);
    }
    const sent = await server.owner.post("/messages", { type: "stream", to: "town square", topic: "t", content: "still yours" });
    await waitForEvent(member.client, everywhere, (e) => e.type === "message" && e.message.id === sent.body.id);
  });

  test("deactivation ends every queue of the user and of their bots: after a reactivation they register again", async () => {
    const member = await createTestUser(server, "Leaving Lee");
    const bot = await member.client.post("/bots", { full_name: "Lee Bot", short_name: "leebot", bot_type: 1 });
    expect(bot.body.result).toBe("success");
    const botClient = server.client("leebot-bot@chat.test", bot.body.api_key);
    const queues = [await register(member.client), await register(member.client, { all_public_streams: true })];
    const botQueue = await register(botClient);

    expect((await server.owner.delete(`/users/${member.id}`)).body.result).toBe("success");
    for (const id of [member.id, bot.body.user_id]) {
      await waitForEvent(server.owner, observer, (e) => e.type === "realm_user" && e.op === "remove" && e.person.user_id === id);
    }
    // What happens meanwhile never reaches them.
    const missed = await server.owner.post("/messages", { type: "stream", to: "general", topic: "t", content: "while away" });
    await waitForEvent(server.owner, observer, (e) => e.type === "message" && e.message.id === missed.body.id);
    expect((await server.owner.post(`/users/${member.id}/reactivate`)).body.result).toBe("success");
    expect((await server.owner.post(`/users/${bot.body.user_id}/reactivate`)).body.result).toBe("success");

    for (const queue of queues) await expectEnded(member.client, queue);
    await expectEnded(botClient, botQueue);
    const fresh = await register(member.client);
    expect((await poll(member.client, fresh)).body.result).toBe("success");
  });
});
