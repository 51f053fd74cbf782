// The empty topic (Zulip 10.0, feature levels 334, 346, 347, 370 and 10.1's 372): a channel
// message may have the topic "", which "(no topic)" and the display name also mean when sent; the
// organization's mandatory_topics refuses it; /register's realm_empty_topic_display_name, and the
// empty_topic_name capability and allow_empty_topic_name parameters that let a client see "" where
// every other client (3.x-era ones included) sees the display name; and its Markdown links.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { eventsUntil, registerQueue, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

const DISPLAY = "general chat";
/** A client of today that declares empty_topic_name (zulip-flutter does). */
const EMPTY_TOPIC = { client_capabilities: { empty_topic_name: true, stream_typing_notifications: true, bulk_message_deletion: true } };
/** A client of today without it (it still gets stream typing). */
const MODERN_WITHOUT = { client_capabilities: { stream_typing_notifications: true, bulk_message_deletion: true } };
/** A 3.x-era client: no capabilities at all. */
const LEGACY = {};

describe.each(MODES)("the empty topic (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let loungeId: number;
  const prisma = () => server.running.services.db.prisma;
  const storedTopic = async (id: number) => (await prisma().message.findUniqueOrThrow({ where: { id } })).subject;
  const unique = (() => {
    let n = 0;
    return (prefix: string) => `${prefix} ${++n}`;
  })();

  const send = async (client: ApiClient, topic: string, content = "hello", to: string | number = "lounge"): Promise<number> => {
    const res = await client.post("/messages", { type: "stream", to, topic, content });
    if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
    return res.body.id as number;
  };
  const setMandatory = async (value: boolean) => expect((await server.owner.patch("/realm", { mandatory_topics: value })).body.result).toBe("success");

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Empty");
    bob = await createTestUser(server, "Bob Empty");
    await subscribeTo(alice.client, ["lounge"], { principals: [alice.email, bob.email] });
    loungeId = (await prisma().stream.findFirstOrThrow({ where: { name: "lounge" } })).id;
  });
  afterAll(() => server.stop());

  describe("sending (feature levels 334, 370)", () => {
    test('"", blanks, "(no topic)" and the display name all send to the empty topic, stored as ""', async () => {
      for (const topic of ["", "   ", "(no topic)", DISPLAY, `  ${DISPLAY} `]) {
        const id = await send(alice.client, topic);
        expect({ topic, stored: await storedTopic(id) }).toEqual({ topic, stored: "" });
      }
      // Another spelling of the display name is an ordinary topic.
      expect(await storedTopic(await send(alice.client, "General Chat"))).toBe("General Chat");
    });

    test("mandatory_topics refuses the empty topic under each of its names, with Zulip's error; direct messages are not concerned", async () => {
      await setMandatory(true);
      try {
        for (const topic of ["", "  ", "(no topic)", DISPLAY]) {
          const res = await alice.client.post("/messages", { type: "stream", to: "lounge", topic, content: "refused" });
          expect(res.status).toBe(400);
          expect(res.body).toEqual({ result: "error", msg: "Topics are required in this organization", code: "BAD_REQUEST" });
        }
        expect(await storedTopic(await send(alice.client, "named"))).toBe("named");
        const direct = await alice.client.post("/messages", { type: "direct", to: [bob.id], content: "no topic needed" });
        expect(direct.body.result).toBe("success");
      } finally {
        await setMandatory(false);
      }
    });

    test("scheduled messages: created and edited with any name of the empty topic, stored as \"\"; refused under mandatory_topics", async () => {
      const at = Math.floor(Date.now() / 1000) + 3600;
      const created = await alice.client.post("/scheduled_messages", { type: "stream", to: loungeId, topic: "(no topic)", content: "later", scheduled_delivery_timestamp: at });
      expect(created.body.result).toBe("success");
      const id = created.body.scheduled_message_id as number;
      const row = async () => (await prisma().$queryRaw<{ subject: string }[]>`SELECT subject FROM scheduled_message WHERE id = ${id}`)[0].subject;
      expect(await row()).toBe("");
      expect((await alice.client.patch(`/scheduled_messages/${id}`, { topic: "named later" })).body.result).toBe("success");
      expect(await row()).toBe("named later");
      expect((await alice.client.patch(`/scheduled_messages/${id}`, { topic: DISPLAY })).body.result).toBe("success");
      expect(await row()).toBe("");
      await setMandatory(true);
      try {
        const refused = await alice.client.post("/scheduled_messages", { type: "stream", to: loungeId, topic: "", content: "later", scheduled_delivery_timestamp: at });
        expect(refused.body).toEqual({ result: "error", msg: "Topics are required in this organization", code: "BAD_REQUEST" });
        expect((await alice.client.patch(`/scheduled_messages/${id}`, { topic: "(no topic)" })).body.msg).toBe("Topics are required in this organization");
      } finally {
        await setMandatory(false);
      }
      expect((await alice.client.delete(`/scheduled_messages/${id}`)).body.result).toBe("success");
    });
  });

  describe("editing and moving", () => {
    test("a topic edit to \"\", \"(no topic)\" or the display name moves to the empty topic, and back", async () => {
      for (const topic of ["", "(no topic)", DISPLAY]) {
        const id = await send(alice.client, unique("named"));
        expect((await alice.client.patch(`/messages/${id}`, { topic })).body.result).toBe("success");
        expect({ topic, stored: await storedTopic(id) }).toEqual({ topic, stored: "" });
        // Renaming the empty topic to one of its names changes nothing.
        expect((await alice.client.patch(`/messages/${id}`, { topic: DISPLAY })).body.msg).toBe("Nothing to change");
        expect((await alice.client.patch(`/messages/${id}`, { topic: "named again" })).body.result).toBe("success");
        expect(await storedTopic(id)).toBe("named again");
      }
    });

    test("under mandatory_topics no edit or move reaches the empty topic (\"Topics are required in this organization.\")", async () => {
      const id = await send(alice.client, unique("kept"));
      await setMandatory(true);
      try {
        for (const topic of ["", " ", "(no topic)", DISPLAY]) {
          const res = await alice.client.patch(`/messages/${id}`, { topic, propagate_mode: "change_all" });
          expect(res.body).toEqual({ result: "error", msg: "Topics are required in this organization.", code: "BAD_REQUEST" });
        }
        expect(await storedTopic(id)).not.toBe("");
      } finally {
        await setMandatory(false);
      }
    });

    test("the empty topic cannot be resolved", async () => {
      const id = await send(alice.client, "");
      for (const topic of ["✔ ", "✔", `✔ ${DISPLAY}`]) {
        expect((await alice.client.patch(`/messages/${id}`, { topic })).body).toEqual({ result: "error", msg: "General chat cannot be marked as resolved", code: "BAD_REQUEST" });
      }
      expect(await storedTopic(id)).toBe("");
    });

    test("edit history shows the empty topic by its display name unless allow_empty_topic_name", async () => {
      const id = await send(alice.client, "");
      expect((await alice.client.patch(`/messages/${id}`, { topic: "history named" })).body.result).toBe("success");
      const legacy = (await alice.client.get(`/messages/${id}/history`)).body.message_history as Array<Record<string, unknown>>;
      expect(legacy.map((entry) => [entry.topic, entry.prev_topic])).toEqual([
        [DISPLAY, undefined],
        ["history named", DISPLAY],
      ]);
      const modern = (await alice.client.get(`/messages/${id}/history`, { allow_empty_topic_name: true })).body.message_history as Array<Record<string, unknown>>;
      expect(modern.map((entry) => [entry.topic, entry.prev_topic])).toEqual([
        ["", undefined],
        ["history named", ""],
      ]);
    });
  });

  describe("reading (allow_empty_topic_name, feature level 334)", () => {
    test("GET /messages/{id} and GET /messages: the display name by default, \"\" with allow_empty_topic_name; direct messages keep \"\"", async () => {
      const id = await send(alice.client, "", "in the empty topic");
      expect((await bob.client.get(`/messages/${id}`)).body.message.subject).toBe(DISPLAY);
      expect((await bob.client.get(`/messages/${id}`, { allow_empty_topic_name: false })).body.message.subject).toBe(DISPLAY);
      expect((await bob.client.get(`/messages/${id}`, { allow_empty_topic_name: true })).body.message.subject).toBe("");
      const page = (params: Record<string, unknown>) => bob.client.get("/messages", { anchor: id, num_before: 0, num_after: 0, ...params });
      // The first two requests go through Express, later ones may take the hot route: both say the same.
      for (let i = 0; i < 3; i++) {
        expect((await page({})).body.messages.map((m: { subject: string }) => m.subject)).toEqual([DISPLAY]);
        expect((await page({ allow_empty_topic_name: true })).body.messages.map((m: { subject: string }) => m.subject)).toEqual([""]);
      }
      const dm = (await alice.client.post("/messages", { type: "direct", to: [bob.id], content: "direct" })).body.id as number;
      expect((await bob.client.get(`/messages/${dm}`)).body.message.subject).toBe("");
    });

    test('narrows: topic "" and the display name both find the empty topic, and only it', async () => {
      const id = await send(alice.client, "", "narrowed");
      const named = await send(alice.client, "not empty", "other");
      for (const operand of ["", DISPLAY]) {
        const res = await bob.client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "channel", operand: "lounge" }, { operator: "topic", operand }], allow_empty_topic_name: true });
        const ids = res.body.messages.map((m: { id: number }) => m.id);
        expect(ids).toContain(id);
        expect(ids).not.toContain(named);
        expect(res.body.messages.every((m: { subject: string }) => m.subject === "")).toBe(true);
      }
    });

    test("GET /users/me/{stream_id}/topics names the empty topic by its display name unless allow_empty_topic_name", async () => {
      await send(alice.client, "", "for the list");
      const names = async (params: Record<string, unknown>) => ((await bob.client.get(`/users/me/${loungeId}/topics`, params)).body.topics as Array<{ name: string }>).map((t) => t.name);
      expect(await names({})).toContain(DISPLAY);
      expect(await names({})).not.toContain("");
      expect(await names({ allow_empty_topic_name: true })).toContain("");
    });

    test("mark_topic_as_read and delete_topic take the display name for the empty topic", async () => {
      await subscribeTo(alice.client, ["empty reads"], { principals: [alice.email, bob.email] });
      const streamId = (await prisma().stream.findFirstOrThrow({ where: { name: "empty reads" } })).id;
      const empty = await send(alice.client, "", "unread", "empty reads");
      const other = await send(alice.client, "other", "unread too", "empty reads");
      expect((await bob.client.post("/mark_topic_as_read", { stream_id: streamId, topic_name: DISPLAY })).body.result).toBe("success");
      const flags = async (id: number) => (await bob.client.get(`/messages/${id}`)).body.message.flags as string[];
      expect(await flags(empty)).toContain("read");
      expect(await flags(other)).not.toContain("read");
      const deleted = await server.owner.post(`/streams/${streamId}/delete_topic`, { topic_name: DISPLAY });
      expect(deleted.body.result).toBe("success");
      expect(await prisma().message.findUnique({ where: { id: empty } })).toBeNull();
      expect(await prisma().message.findUnique({ where: { id: other } })).not.toBeNull();
    });
  });

  describe("/register (feature level 334)", () => {
    test("realm_empty_topic_display_name for every client", async () => {
      for (const params of [LEGACY, MODERN_WITHOUT, EMPTY_TOPIC]) {
        expect((await bob.client.post("/register", { fetch_event_types: ["realm"], ...params })).body.realm_empty_topic_display_name).toBe(DISPLAY);
      }
    });

    test("unread_msgs and user_topics: \"\" with empty_topic_name, the display name for every other client", async () => {
      await subscribeTo(alice.client, ["empty unread"], { principals: [alice.email, bob.email] });
      const streamId = (await prisma().stream.findFirstOrThrow({ where: { name: "empty unread" } })).id;
      await send(alice.client, "", "unread in the empty topic", "empty unread");
      expect((await bob.client.post("/user_topics", { stream_id: streamId, topic: "", visibility_policy: 3 })).body.result).toBe("success");
      const state = async (params: Record<string, unknown>) => (await bob.client.post("/register", { event_types: ["message", "update_message_flags", "user_topic"], ...params })).body;
      for (const [params, expected] of [
        [LEGACY, DISPLAY],
        [MODERN_WITHOUT, DISPLAY],
        [EMPTY_TOPIC, ""],
      ] as const) {
        const body = await state(params);
        const streams = (body.unread_msgs.streams as Array<{ stream_id: number; topic: string }>).filter((s) => s.stream_id === streamId);
        expect({ params, topics: streams.map((s) => s.topic) }).toEqual({ params, topics: [expected] });
        const policies = (body.user_topics as Array<{ stream_id: number; topic_name: string }>).filter((t) => t.stream_id === streamId);
        expect({ params, topics: policies.map((t) => t.topic_name) }).toEqual({ params, topics: [expected] });
      }
      // The policy set by the display name is the same one.
      expect((await bob.client.post("/user_topics", { stream_id: streamId, topic: DISPLAY, visibility_policy: 0 })).body.result).toBe("success");
      expect(((await state(EMPTY_TOPIC)).user_topics as Array<{ stream_id: number }>).filter((t) => t.stream_id === streamId)).toEqual([]);
    });

    test("the legacy muted_topics list and endpoint: the display name both ways", async () => {
      expect((await bob.client.patch("/users/me/subscriptions/muted_topics", { stream_id: loungeId, topic: DISPLAY, op: "add" })).body.result).toBe("success");
      try {
        expect(await prisma().userTopic.count({ where: { user_id: bob.id, stream_id: loungeId, topic_name: "", visibility_policy: 1 } })).toBe(1);
        const muted = (await bob.client.post("/register", { event_types: ["muted_topics"] })).body.muted_topics as Array<[string, string, number]>;
        expect(muted.map(([stream, topic]) => [stream, topic])).toContainEqual(["lounge", DISPLAY]);
      } finally {
        expect((await bob.client.patch("/users/me/subscriptions/muted_topics", { stream_id: loungeId, topic: DISPLAY, op: "remove" })).body.result).toBe("success");
      }
    });
  });

  describe("events: \"\" only to queues that declared empty_topic_name", () => {
    const queues = async (user: TestUser, eventTypes: string[]) => ({
      legacy: await registerQueue(user.client, eventTypes, LEGACY),
      without: await registerQueue(user.client, eventTypes, MODERN_WITHOUT),
      modern: await registerQueue(user.client, eventTypes, EMPTY_TOPIC),
    });
    const eventIn = (user: TestUser, queueId: string, predicate: (e: Record<string, any>) => boolean) => waitForEvent(user.client, queueId, predicate);

    test("message: subject", async () => {
      const q = await queues(bob, ["message"]);
      const id = await send(alice.client, "", "an event");
      const isIt = (e: Record<string, any>) => e.type === "message" && e.message.id === id;
      expect((await eventIn(bob, q.legacy, isIt)).message.subject).toBe(DISPLAY);
      expect((await eventIn(bob, q.without, isIt)).message.subject).toBe(DISPLAY);
      expect((await eventIn(bob, q.modern, isIt)).message.subject).toBe("");
    });

    test("update_message: subject and orig_subject, moving into and out of the empty topic", async () => {
      const id = await send(alice.client, "before the move");
      const q = await queues(bob, ["update_message"]);
      expect((await alice.client.patch(`/messages/${id}`, { topic: "" })).body.result).toBe("success");
      const into = (e: Record<string, any>) => e.type === "update_message" && e.message_id === id && e.orig_subject === "before the move";
      expect((await eventIn(bob, q.legacy, into)).subject).toBe(DISPLAY);
      expect((await eventIn(bob, q.without, into)).subject).toBe(DISPLAY);
      expect((await eventIn(bob, q.modern, into)).subject).toBe("");
      expect((await alice.client.patch(`/messages/${id}`, { topic: "after the move" })).body.result).toBe("success");
      const out = (e: Record<string, any>) => e.type === "update_message" && e.message_id === id && e.subject === "after the move";
      expect((await eventIn(bob, q.legacy, out)).orig_subject).toBe(DISPLAY);
      expect((await eventIn(bob, q.modern, out)).orig_subject).toBe("");
      // A content edit in the empty topic carries no topic at all.
      const inEmpty = await send(alice.client, "", "to edit");
      expect((await alice.client.patch(`/messages/${inEmpty}`, { content: "edited" })).body.result).toBe("success");
      const edit = await eventIn(bob, q.legacy, (e) => e.type === "update_message" && e.message_id === inEmpty);
      expect(edit).not.toHaveProperty("subject");
    });

    test("delete_message: topic, in bulk and one message at a time", async () => {
      const id = await send(alice.client, "", "to delete");
      const q = await queues(alice, ["delete_message"]);
      // Deleting takes an administrator (allow_message_deleting is off by default); the sender is told.
      expect((await server.owner.delete(`/messages/${id}`)).body.result).toBe("success");
      const isIt = (e: Record<string, any>) => e.type === "delete_message" && (e.message_id === id || e.message_ids?.includes(id));
      const legacy = await eventIn(alice, q.legacy, isIt);
      expect(legacy).toMatchObject({ message_id: id, message_type: "stream", topic: DISPLAY });
      expect(await eventIn(alice, q.without, isIt)).toMatchObject({ message_ids: [id], topic: DISPLAY });
      expect(await eventIn(alice, q.modern, isIt)).toMatchObject({ message_ids: [id], topic: "" });
    });

    test("typing (feature level 372): \"(no topic)\" and the display name mean the empty topic; 3.x clients get no stream typing", async () => {
      const q = await queues(bob, ["typing"]);
      for (const topic of ["", "(no topic)", DISPLAY]) {
        expect((await alice.client.post("/typing", { type: "channel", op: "start", stream_id: loungeId, topic })).body.result).toBe("success");
        const isIt = (e: Record<string, any>) => e.type === "typing" && e.op === "start" && e.stream_id === loungeId;
        expect((await eventIn(bob, q.modern, isIt)).topic).toBe("");
        expect((await eventIn(bob, q.without, isIt)).topic).toBe(DISPLAY);
      }
      expect((await drainEvents(bob.client, q.legacy)).filter((e) => e.type === "typing")).toEqual([]);
    });

    test("user_topic and muted_topics: topic_name and the muted list", async () => {
      const q = await queues(bob, ["user_topic", "muted_topics"]);
      expect((await bob.client.post("/user_topics", { stream_id: loungeId, topic: "", visibility_policy: 1 })).body.result).toBe("success");
      try {
        const isIt = (e: Record<string, any>) => e.type === "user_topic" && e.stream_id === loungeId && e.visibility_policy === 1;
        expect((await eventIn(bob, q.legacy, isIt)).topic_name).toBe(DISPLAY);
        expect((await eventIn(bob, q.modern, isIt)).topic_name).toBe("");
        const legacyMuted = (await eventsUntil(bob.client, q.legacy, (e) => e.type === "muted_topics")).find((e) => e.type === "muted_topics")!;
        expect(legacyMuted.muted_topics.map((m: [string, string]) => m[1])).toContain(DISPLAY);
        const modernMuted = (await eventsUntil(bob.client, q.modern, (e) => e.type === "muted_topics")).find((e) => e.type === "muted_topics")!;
        expect(modernMuted.muted_topics.map((m: [string, string]) => m[1])).toContain("");
      } finally {
        await bob.client.post("/user_topics", { stream_id: loungeId, topic: "", visibility_policy: 0 });
      }
    });

    test("update_message_flags removing read: message_details' topic", async () => {
      const id = await send(alice.client, "", "to mark unread");
      expect((await bob.client.post("/messages/flags", { messages: [id], op: "add", flag: "read" })).body.result).toBe("success");
      const q = await queues(bob, ["update_message_flags"]);
      expect((await bob.client.post("/messages/flags", { messages: [id], op: "remove", flag: "read" })).body.result).toBe("success");
      const isIt = (e: Record<string, any>) => e.type === "update_message_flags" && e.op === "remove" && e.messages?.includes(id);
      expect((await eventIn(bob, q.legacy, isIt)).message_details[id]).toMatchObject({ type: "stream", topic: DISPLAY });
      expect((await eventIn(bob, q.modern, isIt)).message_details[id]).toMatchObject({ type: "stream", topic: "" });
    });

    test("verify_action: user_topics of a 3.x client and of one with empty_topic_name stay what /register says", async () => {
      for (const params of [LEGACY, MODERN_WITHOUT, EMPTY_TOPIC]) {
        for (const policy of [2, 3, 0]) {
          const received = await verifyAction(bob.client, ["user_topic"], () => bob.client.post("/user_topics", { stream_id: loungeId, topic: DISPLAY, visibility_policy: policy }), 5000, params);
          expect(received.find((e) => e.type === "user_topic")!.topic_name).toBe(params === EMPTY_TOPIC ? "" : DISPLAY);
        }
      }
    });
  });

  describe("Markdown links (feature levels 346, 347)", () => {
    const rendered = async (content: string) => {
      const id = await send(alice.client, unique("links"), content);
      return (await alice.client.get(`/messages/${id}`)).body.message.content as string;
    };

    test("#**channel>** links the empty topic, with its latest message, its name in <em>", async () => {
      const latest = await send(bob.client, "", "the newest in the empty topic");
      expect(await rendered("see #**lounge>**")).toBe(
        `<p>see <a class="stream-topic" data-stream-id="${loungeId}" href="/#narrow/stream/${loungeId}-lounge/topic//with/${latest}">#lounge &gt; <em>${DISPLAY}</em></a></p>`,
      );
    });

    test("#**channel>topic** links with the topic's latest message (feature level 347); without one, as before", async () => {
      const first = await send(bob.client, "Linked Topic", "one");
      const latest = await send(bob.client, "linked topic", "two");
      expect(first).toBeLessThan(latest);
      expect(await rendered("#**lounge>Linked Topic**")).toBe(
        `<p><a class="stream-topic" data-stream-id="${loungeId}" href="/#narrow/stream/${loungeId}-lounge/topic/Linked.20Topic/with/${latest}">#lounge &gt; Linked Topic</a></p>`,
      );
      expect(await rendered("#**lounge>nothing here yet**")).toBe(
        `<p><a class="stream-topic" data-stream-id="${loungeId}" href="/#narrow/stream/${loungeId}-lounge/topic/nothing.20here.20yet">#lounge &gt; nothing here yet</a></p>`,
      );
    });

    test("message links (#**channel>topic@id**), in the empty topic too", async () => {
      const id = await send(bob.client, "", "linked message");
      expect(await rendered(`#**lounge>@${id}**`)).toBe(`<p><a class="message-link" href="/#narrow/stream/${loungeId}-lounge/topic//near/${id}">#lounge &gt; <em>${DISPLAY}</em> @ 💬</a></p>`);
      expect(await rendered(`#**lounge>plans@${id}**`)).toBe(`<p><a class="message-link" href="/#narrow/stream/${loungeId}-lounge/topic/plans/near/${id}">#lounge &gt; plans @ 💬</a></p>`);
    });

    test("the `with` message is one the author can read: none from a private channel's history they cannot see", async () => {
      await subscribeTo(bob.client, ["empty secret"], { invite_only: true, history_public_to_subscribers: false });
      const secretId = (await prisma().stream.findFirstOrThrow({ where: { name: "empty secret" } })).id;
      await send(bob.client, "hidden", "before alice", "empty secret");
      await subscribeTo(bob.client, ["empty secret"], { principals: [alice.email] });
      const res = await alice.client.post("/messages", { type: "stream", to: "lounge", topic: unique("links"), content: "#**empty secret>hidden**" });
      const content = (await alice.client.get(`/messages/${res.body.id}`)).body.message.content as string;
      expect(content).toContain(`href="/#narrow/stream/${secretId}-empty-secret/topic/hidden"`);
      expect(content).not.toContain("/with/");
      // A message alice received is hers to link.
      const seen = await send(bob.client, "hidden", "after alice", "empty secret");
      const again = await alice.client.post("/messages", { type: "stream", to: "lounge", topic: unique("links"), content: "#**empty secret>hidden**" });
      expect((await alice.client.get(`/messages/${again.body.id}`)).body.message.content).toContain(`/topic/hidden/with/${seen}"`);
    });
  });
});
