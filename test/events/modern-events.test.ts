// Events in the shapes zulip-flutter parses (a queue registered as flutter registers: every event
// type, the capabilities of today's clients) beside a queue of a Zulip 3.x client (no capability),
// which keeps 3.x's shapes where today's Zulip changed them without a capability of their own.
// Every event is checked against the API document by ApiClient (event-shapes.ts).
import { applyEvents, zulipVersionFields } from "@chat/core";
import { sendRestartEvents } from "../../apps/events/src/restart-events.ts";
import type { ApiClient } from "../support/client.ts";
import { readAsFlutter } from "../support/flutter-contract.ts";
import { canonical } from "../support/verify-action.ts";
import { FLUTTER_CAPABILITIES } from "../support/flutter-connection.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";


type Event = Record<string, any>;

interface Queue {
  client: ApiClient;
  id: string;
  lastEventId: number;
}

async function register(client: ApiClient, modern: boolean, extra: Record<string, unknown> = {}): Promise<Queue & { state: Record<string, unknown> }> {
  const res = await client.post("/register", modern ? { client_capabilities: FLUTTER_CAPABILITIES, ...extra } : extra);
  if (res.body.result !== "success") throw new Error(`register failed: ${JSON.stringify(res.body)}`);
  return { client, id: res.body.queue_id, lastEventId: res.body.last_event_id, state: res.body };
}

/** The queue's new events matching `predicate`, waiting until there are `count` (and a moment for any more). */
async function take(queue: Queue, predicate: (event: Event) => boolean, count = 1, timeoutMs = 5000): Promise<Event[]> {
  const deadline = Date.now() + timeoutMs;
  const found: Event[] = [];
  let settled = false;
  while (Date.now() < deadline) {
    const res = await queue.client.get("/events", { queue_id: queue.id, last_event_id: queue.lastEventId, dont_block: true });
    if (res.body.result !== "success") throw new Error(`GET /events failed: ${JSON.stringify(res.body)}`);
    for (const event of res.body.events as Event[]) {
      queue.lastEventId = Math.max(queue.lastEventId, event.id);
      if (predicate(event)) found.push(event);
    }
    if (found.length >= count) {
      // One more read, so that an extra event (a 3.x expansion too many) shows.
      if (settled) return found;
      settled = true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${count} matching events within ${timeoutMs} ms, got ${JSON.stringify(found)}`);
}

/** Each event as zulip-flutter's parser reads it: no failure, and the class its dispatch picks. */
function expectFlutterReads(events: Event[], className: string): void {
  for (const event of events) expect(readAsFlutter("Event", event)).toEqual({ failures: [], parsedAs: className });
}

describe.each(MODES)("events for modern and 3.x clients (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let streamId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Modern", "admin");
    alice = await createTestUser(server, "Alice Modern");
    bob = await createTestUser(server, "Bob Modern");
    const created = await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "modern" }], principals: [admin.id, alice.id, bob.id] });
    expect(created.body.result).toBe("success");
    streamId = (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name: "modern" } })).id;
  });
  afterAll(() => server.stop());

  const send = async (client: ApiClient, params: Record<string, unknown>) => {
    const res = await client.post("/messages", params);
    expect(res.body.result).toBe("success");
    return res.body.id as number;
  };
  const toStream = (topic: string, content: string) => ({ type: "stream", to: "modern", topic, content });

  test("update_message: rendering_only and stream_id always; propagate_mode only with a move for modern clients", async () => {
    const id = await send(alice.client, toStream("edits", "before"));
    const modern = await register(bob.client, true);
    const legacy = await register(bob.client, false);
    expect((await alice.client.patch(`/messages/${id}`, { content: "after" })).body.result).toBe("success");
    const isEdit = (e: Event) => e.type === "update_message";
    const [modernEdit] = await take(modern, isEdit);
    const [legacyEdit] = await take(legacy, isEdit);
    const common = { user_id: alice.id, rendering_only: false, edit_timestamp: expect.any(Number), message_id: id, message_ids: [id], stream_id: streamId, content: "after", flags: [] };
    expect(modernEdit).toMatchObject(common);
    expect(modernEdit).not.toHaveProperty("propagate_mode");
    expect(modernEdit).not.toHaveProperty("orig_subject");
    expect(legacyEdit).toMatchObject({ ...common, propagate_mode: "change_one" });
    expectFlutterReads([modernEdit], "UpdateMessageEvent");
    // Why the shapes differ: the app refuses propagate_mode without a move.
    expect(readAsFlutter("Event", legacyEdit).failures).not.toEqual([]);

    // A topic move: both get the move's fields.
    expect((await alice.client.patch(`/messages/${id}`, { topic: "edits moved", propagate_mode: "change_all" })).body.result).toBe("success");
    const move = { user_id: alice.id, rendering_only: false, message_ids: [id], stream_id: streamId, orig_subject: "edits", subject: "edits moved", propagate_mode: "change_all" };
    const modernMove = await take(modern, isEdit);
    expect(modernMove[0]).toMatchObject(move);
    expectFlutterReads(modernMove, "UpdateMessageEvent");
    expect((await take(legacy, isEdit))[0]).toMatchObject(move);
  });

  test("delete_message: message_ids, message_type and the stream's topic; one message_id each for 3.x clients", async () => {
    const streamMessage = await send(alice.client, toStream("deleted", "soon gone"));
    const privateMessage = await send(alice.client, { type: "private", to: [bob.id], content: "soon gone too" });
    const modern = await register(bob.client, true);
    const legacy = await register(bob.client, false);
    // The administrator deletes the stream message; the sender the private one, as the realm allows.
    await server.running.services.db.prisma.realm.updateMany({ data: { allow_message_deleting: true, delete_own_message_policy: 5 } });
    for (const [user, id] of [[admin, streamMessage], [alice, privateMessage]] as const) expect((await user.client.delete(`/messages/${id}`)).body.result).toBe("success");
    const isDelete = (e: Event) => e.type === "delete_message";
    // A private message's recipient_id and sender_id (gone in feature level 77) only for 3.x clients.
    const modernDeletes = await take(modern, isDelete, 2);
    expectFlutterReads(modernDeletes, "DeleteMessageEvent");
    expect(modernDeletes).toEqual([
      { type: "delete_message", id: expect.any(Number), message_ids: [streamMessage], message_type: "stream", stream_id: streamId, topic: "deleted" },
      { type: "delete_message", id: expect.any(Number), message_ids: [privateMessage], message_type: "private" },
    ]);
    expect(await take(legacy, isDelete, 2)).toEqual([
      { type: "delete_message", id: expect.any(Number), message_id: streamMessage, message_type: "stream", stream_id: streamId, topic: "deleted" },
      { type: "delete_message", id: expect.any(Number), message_id: privateMessage, message_type: "private", recipient_id: expect.any(Number), sender_id: alice.id },
    ]);
  });

  test("update_message_flags: op and all; marking unread carries message_details for everyone", async () => {
    const streamMessage = await send(alice.client, toStream("unread", `hi @**Bob Modern**`));
    const privateMessage = await send(alice.client, { type: "private", to: [bob.id], content: "psst" });
    const groupMessage = await send(alice.client, { type: "private", to: [bob.id, admin.id], content: "all of us" });
    const ids = [streamMessage, privateMessage, groupMessage];
    expect((await bob.client.post("/messages/flags", { messages: ids, op: "add", flag: "read" })).body.result).toBe("success");
    const modern = await register(bob.client, true);
    const legacy = await register(bob.client, false);
    expect((await bob.client.post("/messages/flags", { messages: ids, op: "remove", flag: "read" })).body.result).toBe("success");
    const expected = {
      type: "update_message_flags",
      op: "remove",
      operation: "remove",
      flag: "read",
      messages: ids,
      all: false,
      message_details: {
        [streamMessage]: { type: "stream", stream_id: streamId, topic: "unread", unmuted_stream_msg: true, mentioned: true },
        [privateMessage]: { type: "private", user_ids: [alice.id] },
        [groupMessage]: { type: "private", user_ids: [admin.id, alice.id].sort((a, b) => a - b) },
      },
    };
    const isFlags = (e: Event) => e.type === "update_message_flags";
    const modernUnread = await take(modern, isFlags);
    expect(modernUnread[0]).toEqual({ ...expected, id: expect.any(Number) });
    expectFlutterReads(modernUnread, "UpdateMessageFlagsRemoveEvent");
    expect((await take(legacy, isFlags))[0]).toEqual({ ...expected, id: expect.any(Number) });

    // Adding a flag: op and all, no details.
    expect((await bob.client.post("/messages/flags", { messages: [privateMessage], op: "add", flag: "starred" })).body.result).toBe("success");
    const [starred] = await take(modern, isFlags);
    expectFlutterReads([starred], "UpdateMessageFlagsAddEvent");
    expect(starred).toEqual({ type: "update_message_flags", id: expect.any(Number), op: "add", operation: "add", flag: "starred", messages: [privateMessage], all: false });
  });

  test("subscription peer_add / peer_remove: lists for modern clients, one per user for 3.x clients; both keep /register's subscribers right", async () => {
    const carol = await createTestUser(server, "Carol Peer");
    const dave = await createTestUser(server, "Dave Peer");
    const peers = [carol.id, dave.id].sort((a, b) => a - b);
    const sections = { fetch_event_types: ["subscription"], include_subscribers: true };
    const modern = await register(bob.client, true, sections);
    const legacy = await register(bob.client, false, { ...sections, event_types: ["subscription"] });
    expect((await admin.client.post("/users/me/subscriptions", { subscriptions: [{ name: "modern" }], principals: peers })).body.result).toBe("success");
    const isPeer = (op: string) => (e: Event) => e.type === "subscription" && e.op === op;
    const modernAdds = await take(modern, isPeer("peer_add"));
    expect(modernAdds).toEqual([{ type: "subscription", op: "peer_add", id: expect.any(Number), stream_ids: [streamId], user_ids: peers }]);
    expectFlutterReads(modernAdds, "SubscriptionPeerAddEvent");
    const legacyAdds = await take(legacy, isPeer("peer_add"), 2);
    expect(legacyAdds.map(({ id: _id, ...e }) => e)).toEqual(peers.map((userId) => ({ type: "subscription", op: "peer_add", stream_id: streamId, user_id: userId })));
    expect(readAsFlutter("Event", legacyAdds[0]).failures).not.toEqual([]);

    // Each queue's events bring its state to what a new /register says.
    const fresh = (await register(bob.client, false, sections)).state;
    const subscribersOf = (state: Record<string, unknown>) => (state.subscriptions as Array<{ stream_id: number; subscribers: number[] }>).find((s) => s.stream_id === streamId)!.subscribers;
    for (const [queue, events] of [[modern, modernAdds], [legacy, legacyAdds]] as const) {
      expect(subscribersOf(applyEvents(structuredClone(queue.state), events, bob.id))).toEqual(subscribersOf(fresh));
    }

    expect((await admin.client.delete("/users/me/subscriptions", { subscriptions: ["modern"], principals: peers })).body.result).toBe("success");
    const modernRemoves = await take(modern, isPeer("peer_remove"));
    expect(modernRemoves).toEqual([{ type: "subscription", op: "peer_remove", id: expect.any(Number), stream_ids: [streamId], user_ids: peers }]);
    expectFlutterReads(modernRemoves, "SubscriptionPeerRemoveEvent");
    expect((await take(legacy, isPeer("peer_remove"), 2)).map((e) => e.user_id)).toEqual(peers);
  });

  test("realm_user (de)activation: update with is_active for modern clients, remove / add for 3.x clients; /register's lists follow", async () => {
    const erin = await createTestUser(server, "Erin Leaving");
    const sections = { fetch_event_types: ["realm_user"] };
    const modern = await register(bob.client, true, sections);
    const legacy = await register(bob.client, false, { ...sections, event_types: ["realm_user"] });
    const isUser = (e: Event) => e.type === "realm_user" && e.person.user_id === erin.id;
    const consistent = async (queue: Queue & { state: Record<string, unknown> }, events: Event[]) => {
      const fresh = (await register(bob.client, queue === modern, sections)).state;
      const applied = applyEvents(structuredClone(queue.state), events, bob.id);
      for (const list of ["realm_users", "realm_non_active_users"]) {
        const erinIn = (state: Record<string, unknown>) => canonical((state[list] as Array<{ user_id: number }>).find((p) => p.user_id === erin.id) ?? null);
        expect(erinIn(applied)).toEqual(erinIn(fresh));
      }
    };

    expect((await admin.client.delete(`/users/${erin.id}`)).body.result).toBe("success");
    const modernOff = await take(modern, isUser);
    expect(modernOff).toEqual([{ type: "realm_user", op: "update", id: expect.any(Number), person: { user_id: erin.id, is_active: false } }]);
    const legacyOff = await take(legacy, isUser);
    expect(legacyOff).toEqual([{ type: "realm_user", op: "remove", id: expect.any(Number), person: { user_id: erin.id, full_name: "Erin Leaving" } }]);
    await consistent(modern, modernOff);
    await consistent(legacy, legacyOff);

    expect((await admin.client.post(`/users/${erin.id}/reactivate`)).body.result).toBe("success");
    const modernOn = await take(modern, isUser);
    expect(modernOn).toEqual([{ type: "realm_user", op: "update", id: expect.any(Number), person: { user_id: erin.id, is_active: true } }]);
    const legacyOn = await take(legacy, isUser);
    expect(legacyOn).toEqual([expect.objectContaining({ type: "realm_user", op: "add", person: expect.objectContaining({ user_id: erin.id, is_active: true }) })]);
    await consistent(modern, [...modernOff, ...modernOn]);
    expectFlutterReads([...modernOff, ...modernOn], "RealmUserUpdateEvent");
    await consistent(legacy, [...legacyOff, ...legacyOn]);
  });

  test("restart: an event node of another API version tells the queues /register made to register again", async () => {
    const modern = await register(bob.client, true);
    const legacy = await register(bob.client, false, { event_types: ["message", "restart"] });
    const notAsking = await register(bob.client, false, { event_types: ["message"] });
    const queues = server.running.services.bus.queues;
    // This version is what every queue recorded: nothing to say.
    await sendRestartEvents(queues);
    const newer = { zulip_version: `${zulipVersionFields().zulip_version}.1`, zulip_feature_level: zulipVersionFields().zulip_feature_level + 1, zulip_merge_base: "next" };
    await sendRestartEvents(queues, newer);
    const restart = { type: "restart", id: expect.any(Number), ...newer, server_generation: expect.any(Number) };
    const isRestart = (e: Event) => e.type === "restart";
    expect(await take(modern, isRestart)).toEqual([restart]);
    expect(await take(legacy, isRestart)).toEqual([restart]);
    expect(await take(notAsking, () => true, 0)).toEqual([]);
  });
});
