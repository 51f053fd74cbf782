// Zulip 10.0's message features (feature levels 278 to 371): edit-history entries without
// prev_rendered_content_version (284), detached_uploads (285), an upload's filename (286),
// GET /messages by message_ids (300), an incoming one-to-one message's recipient_id (327),
// reactions keeping `user` (328/339, a documented deviation), data-original-content-type (336),
// message links (319), typing while editing (351/361), marking unread in unsubscribed channels
// (355), the edit history visibility policy (358), last_moved_timestamp (365) and is:muted (366).
import { readFileSync } from "node:fs";
import { makePng } from "../support/images.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

describe.each(MODES)("Zulip 10.0 message features (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let streamId: number;
  let otherStreamId: number;

  const prisma = () => server.running.services.db.prisma;
  const send = async (user: TestUser, content: string, topic = "ten", to = "tenth"): Promise<number> => {
    const res = await user.client.post("/messages", { type: "stream", to, topic, content });
    expect(res.body.result).toBe("success");
    return res.body.id as number;
  };
  const sendDirect = async (user: TestUser, to: number[], content: string): Promise<number> => {
    const res = await user.client.post("/messages", { type: "direct", to: JSON.stringify(to), content });
    expect(res.body.result).toBe("success");
    return res.body.id as number;
  };
  const fetchOne = async (user: TestUser, id: number) => {
    const res = await user.client.get(`/messages/${id}`);
    expect(res.body.result).toBe("success");
    return res.body.message as Record<string, any>;
  };
  const register = async (user: TestUser, eventTypes: string[], modern: boolean): Promise<string> => {
    const res = await user.client.post("/register", { event_types: eventTypes, ...(modern ? { client_capabilities: { user_settings_object: true } } : {}) });
    expect(res.body.result).toBe("success");
    return res.body.queue_id as string;
  };

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Ten");
    bob = await createTestUser(server, "Bob Ten");
    carol = await createTestUser(server, "Carol Ten");
    const subscribe = await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "tenth" }, { name: "tenth-other" }], principals: [alice.email, bob.email] });
    expect(subscribe.body.result).toBe("success");
    streamId = (await prisma().stream.findFirstOrThrow({ where: { name: "tenth" } })).id;
    otherStreamId = (await prisma().stream.findFirstOrThrow({ where: { name: "tenth-other" } })).id;
  });
  afterAll(() => server.stop());

  describe("284: update_message without prev_rendered_content_version", () => {
    test("today's clients get none; 3.x clients still do", async () => {
      const id = await send(alice, "before");
      const modern = await register(bob, ["update_message"], true);
      const legacy = await register(bob, ["update_message"], false);
      expect((await alice.client.patch(`/messages/${id}`, { content: "after" })).body.result).toBe("success");
      const today = await waitForEvent(bob.client, modern, (e) => e.type === "update_message" && e.message_id === id);
      expect(today).not.toHaveProperty("prev_rendered_content_version");
      expect(today).toMatchObject({ orig_content: "before", content: "after" });
      expect(today).not.toHaveProperty("propagate_mode");
      const old = await waitForEvent(bob.client, legacy, (e) => e.type === "update_message" && e.message_id === id);
      expect(old).toMatchObject({ prev_rendered_content_version: expect.any(Number), propagate_mode: "change_one", orig_content: "before" });
    });
  });

  describe("285/286: uploads", () => {
    const upload = async (user: TestUser, name: string) => {
      const res = await user.client.raw("post", "/user_uploads").attach("file", Buffer.from(`bytes of ${name}`), name);
      expect(res.body.result).toBe("success");
      return res.body as { url: string; uri: string; filename: string };
    };

    test("POST /user_uploads answers the file's name (286)", async () => {
      const body = await upload(alice, "report final.txt");
      expect(body.filename).toBe("report final.txt");
      // The URL's name is sanitized; filename is the name as uploaded.
      expect(body.url).toMatch(/^\/user_uploads\/\d+\/.+\/report-final\.txt$/);
    });

    test("an edit that unlinks the sender's upload answers it in detached_uploads, as GET /attachments shows it (285)", async () => {
      const file = await upload(alice, "detached.txt");
      const kept = await upload(alice, "kept.txt");
      const id = await send(alice, `[one](${file.url}) and [two](${kept.url})`);
      const res = await alice.client.patch(`/messages/${id}`, { content: `only [two](${kept.url})` });
      expect(res.body.result).toBe("success");
      const listed = (await alice.client.get("/attachments")).body.attachments as Array<Record<string, any>>;
      const row = listed.find((a) => a.path_id === file.url.slice("/user_uploads/".length));
      expect(row).toMatchObject({ messages: [] });
      expect(res.body.detached_uploads).toEqual([row]);
      // Nothing unlinked, nothing detached.
      expect((await alice.client.patch(`/messages/${id}`, { content: `still [two](${kept.url})` })).body.detached_uploads).toEqual([]);
      expect((await alice.client.patch(`/messages/${id}`, { topic: "renamed uploads" })).body).toEqual({ result: "success", msg: "", detached_uploads: [] });
    });

    test("an upload another message still links is not detached", async () => {
      const file = await upload(alice, "shared.txt");
      await send(alice, `first [s](${file.url})`);
      const id = await send(alice, `second [s](${file.url})`);
      expect((await alice.client.patch(`/messages/${id}`, { content: "no link" })).body.detached_uploads).toEqual([]);
    });
  });

  describe("300: GET /messages with message_ids", () => {
    test("exactly the named messages the narrow selects and the user may read; no anchor; found_* false", async () => {
      const one = await send(alice, "named one");
      const two = await send(alice, "named two", "other topic");
      const hidden = await sendDirect(alice, [carol.id], "not bob's");
      for (let round = 0; round < 2; round++) {
        // The second request goes through the hot route with the node's copy of bob.
        const res = await bob.client.get("/messages", { message_ids: JSON.stringify([two, hidden, one, 999_999_999, 99_999_999_999]) });
        expect(res.body).toMatchObject({ result: "success", found_anchor: false, found_oldest: false, found_newest: false, history_limited: false });
        expect(res.body).not.toHaveProperty("anchor");
        expect(res.body.messages.map((m: { id: number }) => m.id)).toEqual([one, two]);
      }
      const narrowed = await bob.client.get("/messages", { message_ids: JSON.stringify([one, two]), narrow: JSON.stringify([{ operator: "topic", operand: "ten" }]) });
      expect(narrowed.body.messages.map((m: { id: number }) => m.id)).toEqual([one]);
      const inStream = await bob.client.get("/messages", { message_ids: JSON.stringify([one, two]), narrow: JSON.stringify([{ operator: "channel", operand: streamId }]) });
      expect(inStream.body.messages.map((m: { id: number }) => m.id)).toEqual([one, two]);
      // Counts of 0 and include_anchor may come along.
      const zeros = await bob.client.get("/messages", { message_ids: JSON.stringify([one]), num_before: 0, num_after: 0, include_anchor: false });
      expect(zeros.body.messages.map((m: { id: number }) => m.id)).toEqual([one]);
      expect((await bob.client.get("/messages", { message_ids: "[]" })).body.messages).toEqual([]);
    });

    test("with an anchor, counts or use_first_unread_anchor: Zulip's IncompatibleParametersError", async () => {
      const parameters = "num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor";
      const error = { result: "error", msg: `Unsupported parameter combination: ${parameters}`, code: "BAD_REQUEST", parameters };
      for (const extra of [{ anchor: "newest" }, { num_before: 1 }, { num_after: 3 }, { use_first_unread_anchor: true }]) {
        const res = await bob.client.get("/messages", { message_ids: "[1]", ...extra });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error);
      }
    });

    test("bounded: more than 5000 ids, a negative id, not a list", async () => {
      const many = Array.from({ length: 5001 }, (_, i) => i + 1);
      // Too long for a query string: in a form body, which the server reads for GET too.
      const tooMany = await bob.client.raw("get", "/messages").type("form").send({ message_ids: JSON.stringify(many) });
      expect(tooMany.body).toMatchObject({ result: "error", msg: "Too many messages requested (maximum 5000)." });
      expect((await bob.client.get("/messages", { message_ids: "[-1]" })).body.result).toBe("error");
      expect((await bob.client.get("/messages", { message_ids: '"x"' })).body.result).toBe("error");
      // Without message_ids an anchor is still required; the counts default to 0 (Zulip 10.0).
      expect((await bob.client.get("/messages", {})).body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING", var_name: "anchor" });
      expect((await bob.client.get("/messages", { anchor: "newest" })).body).toMatchObject({ result: "success", messages: [] });
    });
  });

  describe("327: recipient_id of an incoming one-to-one message", () => {
    test("the receiver sees the recipient_id of their own reply, in GET /messages and in events; the sender and groups unchanged", async () => {
      const [aliceRecipient, bobRecipient] = await Promise.all(
        [alice.id, bob.id].map(async (id) => (await prisma().userProfile.findUniqueOrThrow({ where: { id } })).recipient_id!),
      );
      const bobQueue = await register(bob, ["message"], true);
      const aliceQueue = await register(alice, ["message"], false);
      const toBob = await sendDirect(alice, [bob.id], "hello bob");
      const reply = await sendDirect(bob, [alice.id], "hello alice");
      expect((await fetchOne(bob, reply)).recipient_id).toBe(aliceRecipient);
      expect((await fetchOne(bob, toBob)).recipient_id).toBe(aliceRecipient);
      expect((await fetchOne(alice, toBob)).recipient_id).toBe(bobRecipient);
      expect((await fetchOne(alice, reply)).recipient_id).toBe(bobRecipient);
      const page = await bob.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "dm", operand: [alice.id] }]) });
      expect(page.body.messages.map((m: { recipient_id: number }) => m.recipient_id)).toEqual([aliceRecipient, aliceRecipient]);
      const atBob = await waitForEvent(bob.client, bobQueue, (e) => e.type === "message" && e.message.id === toBob);
      expect(atBob.message.recipient_id).toBe(aliceRecipient);
      const atAlice = await waitForEvent(alice.client, aliceQueue, (e) => e.type === "message" && e.message.id === toBob);
      expect(atAlice.message.recipient_id).toBe(bobRecipient);
      expect(atAlice.message).not.toHaveProperty("sender_recipient_id");
      // To oneself and to a group, one recipient for everyone.
      const self = await sendDirect(bob, [bob.id], "note to self");
      expect((await fetchOne(bob, self)).recipient_id).toBe(bobRecipient);
      const group = await sendDirect(alice, [bob.id, carol.id], "a group");
      const groupRecipient = (await prisma().message.findUniqueOrThrow({ where: { id: group } })).recipient_id;
      for (const user of [alice, bob, carol]) expect((await fetchOne(user, group)).recipient_id).toBe(groupRecipient);
    });
  });

  describe("328/339: reactions keep their user", () => {
    test("messages still carry reaction.user (zulip-terminal 0.7.0 reads it, rest-interface.md pins it); reaction events too", async () => {
      const id = await send(alice, "react to me");
      const queue = await register(alice, ["reaction"], true);
      expect((await bob.client.post(`/messages/${id}/reactions`, { emoji_name: "octopus" })).body.result).toBe("success");
      const [reaction] = (await fetchOne(alice, id)).reactions;
      expect(reaction).toEqual({ emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji", user_id: bob.id, user: { user_id: bob.id, email: bob.email, full_name: "Bob Ten" } });
      const event = await waitForEvent(alice.client, queue, (e) => e.type === "reaction");
      expect(event.user).toEqual({ user_id: bob.id, email: bob.email, full_name: "Bob Ten" });
    });
  });

  describe("336 and 319: rendering", () => {
    test("an image preview carries the upload's content type beside its dimensions", async () => {
      const res = await alice.client.raw("post", "/user_uploads").attach("file", await makePng(8, 6), { filename: "typed.png", contentType: "image/png" });
      const url = res.body.url as string;
      const html = (await fetchOne(alice, await send(alice, `[typed.png](${url})`))).content as string;
      expect(html).toContain(`<img data-original-dimensions="8x6" data-original-content-type="image/png" src="${url}" alt="typed.png">`);
      // No size known (not an image), no attributes.
      const text = await alice.client.raw("post", "/user_uploads").attach("file", Buffer.from("words"), { filename: "fake.png", contentType: "image/png" });
      const fake = (await fetchOne(alice, await send(alice, `[fake.png](${text.body.url})`))).content as string;
      expect(fake).not.toContain("data-original-content-type");
    });

    test("#**channel>topic@id** is Zulip's message-link", async () => {
      const target = await send(alice, "link to me", "linked topic");
      const html = (await fetchOne(alice, await send(alice, `see #**tenth>linked topic@${target}**`))).content as string;
      // (The channel's part of the URL is the stream links' own, whichever word they use.)
      const url = /href="(\/#narrow\/(?:stream|channel)\/)/.exec(html)?.[1];
      expect(html).toBe(`<p>see <a class="message-link" href="${url}${streamId}-tenth/topic/linked.20topic/near/${target}">#tenth &gt; linked topic @ 💬</a></p>`);
    });
  });

  describe("351/361: typing while editing a message", () => {
    test("a stream message: its subscribers hear of it, as typing_edit_message with the channel and topic", async () => {
      const id = await send(alice, "being edited", "typed topic");
      const [atBob, atCarol] = [await register(bob, ["typing_edit_message"], true), await register(carol, ["typing_edit_message"], true)];
      expect((await alice.client.post(`/messages/${id}/typing`, { op: "start" })).body).toEqual({ result: "success", msg: "" });
      const event = await waitForEvent(bob.client, atBob, (e) => e.type === "typing_edit_message");
      expect(event).toEqual({ id: expect.any(Number), type: "typing_edit_message", op: "start", sender_id: alice.id, message_id: id, recipient: { type: "channel", channel_id: streamId, topic: "typed topic" } });
      // Feature levels 351 to 360's route says the same.
      expect((await alice.client.post("/message_edit_typing", { message_id: id, op: "stop" })).body.result).toBe("success");
      expect(await waitForEvent(bob.client, atBob, (e) => e.type === "typing_edit_message" && e.op === "stop")).toMatchObject({ message_id: id });
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(carol.client, atCarol)).toEqual([]);
    });

    test("a direct message: its participants", async () => {
      const id = await sendDirect(alice, [bob.id], "edit me privately");
      const [atBob, atCarol] = [await register(bob, ["typing_edit_message"], true), await register(carol, ["typing_edit_message"], true)];
      expect((await alice.client.post(`/messages/${id}/typing`, { op: "start" })).body.result).toBe("success");
      const event = await waitForEvent(bob.client, atBob, (e) => e.type === "typing_edit_message");
      expect(event.recipient).toEqual({ type: "direct", user_ids: [alice.id, bob.id].sort((a, b) => a - b) });
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(carol.client, atCarol)).toEqual([]);
    });

    test("only someone who may edit the message now; a bad op or message is refused", async () => {
      const id = await send(alice, "not yours");
      expect((await bob.client.post(`/messages/${id}/typing`, { op: "start" })).body).toMatchObject({ result: "error", msg: "You don't have permission to edit this message" });
      expect((await alice.client.post(`/messages/${id}/typing`, { op: "begin" })).body).toMatchObject({ result: "error", msg: "Invalid op" });
      expect((await alice.client.post(`/messages/${id}/typing`, {})).body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING" });
      const hidden = await sendDirect(alice, [carol.id], "carol's");
      expect((await bob.client.post(`/messages/${hidden}/typing`, { op: "start" })).body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
      expect((await bob.client.post("/messages/99999999999/typing", { op: "start" })).body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
      expect((await alice.client.post("/message_edit_typing", { op: "start" })).body).toMatchObject({ result: "error", code: "REQUEST_VARIABLE_MISSING" });
    });
  });

  describe("355: marking unread skips unsubscribed channels, and says which", () => {
    test("POST /messages/flags and /messages/flags/narrow", async () => {
      const here = await send(alice, "here");
      const away = await send(alice, "away", "t", "tenth-other");
      const flags = (ids: number[], op: string, flag: string) => bob.client.post("/messages/flags", { messages: JSON.stringify(ids), op, flag });
      expect((await flags([here, away], "add", "read")).body.result).toBe("success");
      expect((await bob.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["tenth-other"]) })).body.result).toBe("success");
      const unread = await flags([here, away], "remove", "read");
      expect(unread.body).toEqual({ result: "success", msg: "", messages: [here], ignored_because_not_subscribed_channels: [otherStreamId] });
      expect((await flags([here], "add", "starred")).body.ignored_because_not_subscribed_channels).toEqual([]);
      const narrow = await bob.client.post("/messages/flags/narrow", {
        anchor: away,
        num_before: 0,
        num_after: 0,
        narrow: JSON.stringify([{ operator: "channel", operand: otherStreamId }]),
        op: "remove",
        flag: "read",
      });
      expect(narrow.body).toMatchObject({ result: "success", processed_count: 1, updated_count: 0, ignored_because_not_subscribed_channels: [otherStreamId] });
      expect((await bob.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "tenth-other" }]) })).body.result).toBe("success");
    });
  });

  describe("358: message_edit_history_visibility_policy", () => {
    afterEach(async () => {
      expect((await server.owner.patch("/realm", { message_edit_history_visibility_policy: "all" })).body.result).toBe("success");
    });

    test("PATCH /realm takes the policy and 3.x's boolean, kept in step; /register and events say both", async () => {
      const modern = await register(bob, ["realm"], true);
      const legacy = await register(bob, ["realm"], false);
      const patched = await server.owner.patch("/realm", { message_edit_history_visibility_policy: "moves" });
      expect(patched.body).toEqual({ result: "success", msg: "", message_edit_history_visibility_policy: 2 });
      expect(await waitForEvent(bob.client, modern, (e) => e.type === "realm")).toEqual({ id: expect.any(Number), type: "realm", op: "update", property: "message_edit_history_visibility_policy", value: "moves" });
      expect(await waitForEvent(bob.client, legacy, (e) => e.type === "realm")).toEqual({ id: expect.any(Number), type: "realm", op: "update", property: "allow_edit_history", value: true });
      const state = (await bob.client.post("/register", { fetch_event_types: JSON.stringify(["realm"]) })).body;
      expect(state).toMatchObject({ realm_message_edit_history_visibility_policy: "moves", realm_allow_edit_history: true });

      expect((await server.owner.patch("/realm", { allow_edit_history: false })).body).toEqual({ result: "success", msg: "", allow_edit_history: false });
      expect(await prisma().realm.findFirstOrThrow({ where: { id: (await prisma().userProfile.findUniqueOrThrow({ where: { id: bob.id } })).realm_id } })).toMatchObject({ allow_edit_history: false, message_edit_history_visibility_policy: 3 });
      expect((await bob.client.post("/register", { fetch_event_types: JSON.stringify(["realm"]) })).body).toMatchObject({ realm_message_edit_history_visibility_policy: "none", realm_allow_edit_history: false });
      // true turns "none" into "all".
      expect((await server.owner.patch("/realm", { allow_edit_history: true })).body.allow_edit_history).toBe(true);
      expect((await bob.client.post("/register", { fetch_event_types: JSON.stringify(["realm"]) })).body).toMatchObject({ realm_message_edit_history_visibility_policy: "all", realm_allow_edit_history: true });
      // The same value again changes nothing and says nothing.
      expect((await server.owner.patch("/realm", { message_edit_history_visibility_policy: "all" })).body).toEqual({ result: "success", msg: "" });
    });

    test("refused: an unknown value, a member", async () => {
      expect((await server.owner.patch("/realm", { message_edit_history_visibility_policy: "some" })).body).toMatchObject({ result: "error", msg: "Invalid message_edit_history_visibility_policy" });
      expect((await bob.client.patch("/realm", { message_edit_history_visibility_policy: "none" })).body).toMatchObject({ result: "error", code: "UNAUTHORIZED_PRINCIPAL" });
    });

    test("GET /messages/{id}/history: moves only shows the original and the moves, without content diffs; none refuses", async () => {
      const id = await send(alice, "content 1", "topic 1");
      const edit = async (change: Record<string, unknown>) => expect((await alice.client.patch(`/messages/${id}`, change)).body.result).toBe("success");
      await edit({ content: "content 2" });
      await edit({ topic: "topic 2" });
      await edit({ stream_id: otherStreamId });
      await edit({ topic: "topic 3", content: "content 3" });
      expect((await bob.client.get(`/messages/${id}/history`)).body.message_history).toHaveLength(5);
      await server.owner.patch("/realm", { message_edit_history_visibility_policy: "moves" });
      const history = (await bob.client.get(`/messages/${id}/history`)).body.message_history as Array<Record<string, unknown>>;
      expect(history.map(({ content, topic, prev_topic, stream, prev_stream }) => ({ content, topic, prev_topic, stream, prev_stream }))).toEqual([
        { content: "content 1", topic: "topic 1", prev_topic: undefined, stream: undefined, prev_stream: undefined },
        { content: "content 2", topic: "topic 2", prev_topic: "topic 1", stream: undefined, prev_stream: undefined },
        { content: "content 2", topic: "topic 2", prev_topic: undefined, stream: otherStreamId, prev_stream: streamId },
        { content: "content 3", topic: "topic 3", prev_topic: "topic 2", stream: undefined, prev_stream: undefined },
      ]);
      for (const entry of history) for (const key of ["prev_content", "prev_rendered_content", "content_html_diff"]) expect(entry).not.toHaveProperty(key);
      await server.owner.patch("/realm", { message_edit_history_visibility_policy: "none" });
      expect((await bob.client.get(`/messages/${id}/history`)).body).toMatchObject({ result: "error", msg: "Message edit history is disabled in this organization" });
    });
  });

  describe("365: last_moved_timestamp and last_edit_timestamp", () => {
    test("a move sets last_moved_timestamp, a content edit last_edit_timestamp, resolving neither; fetches follow (the message cache too)", async () => {
      const id = await send(alice, "to be moved", "moving");
      const other = await send(alice, "moves along", "moving");
      const fresh = await fetchOne(bob, id);
      expect(fresh).not.toHaveProperty("last_edit_timestamp");
      expect(fresh).not.toHaveProperty("last_moved_timestamp");
      expect((await alice.client.patch(`/messages/${id}`, { topic: "✔ moving", propagate_mode: "change_all" })).body.result).toBe("success");
      const resolved = await fetchOne(bob, id);
      expect(resolved.subject).toBe("✔ moving");
      expect(resolved).not.toHaveProperty("last_moved_timestamp");
      expect(resolved).not.toHaveProperty("last_edit_timestamp");

      expect((await alice.client.patch(`/messages/${id}`, { topic: "moved", propagate_mode: "change_all" })).body.result).toBe("success");
      const moved = await fetchOne(bob, id);
      const movedAt = (await prisma().message.findUniqueOrThrow({ where: { id } })).last_moved_time!;
      expect(moved.last_moved_timestamp).toBe(Math.floor(movedAt.getTime() / 1000));
      expect(moved).not.toHaveProperty("last_edit_timestamp");
      // The propagated message too, in a page.
      const page = await bob.client.get("/messages", { message_ids: JSON.stringify([id, other]) });
      for (const message of page.body.messages) expect(message.last_moved_timestamp).toBe(moved.last_moved_timestamp);

      expect((await alice.client.patch(`/messages/${id}`, { content: "edited now" })).body.result).toBe("success");
      const edited = await fetchOne(bob, id);
      expect(edited.last_edit_timestamp).toBe(Math.floor((await prisma().message.findUniqueOrThrow({ where: { id } })).last_edit_time!.getTime() / 1000));
      expect(edited.last_moved_timestamp).toBe(moved.last_moved_timestamp);
      expect((await fetchOne(bob, other))).not.toHaveProperty("last_edit_timestamp");
      // A move to another stream is a move.
      expect((await alice.client.patch(`/messages/${other}`, { stream_id: otherStreamId })).body.result).toBe("success");
      expect((await fetchOne(bob, other)).last_moved_timestamp).toBeGreaterThanOrEqual(moved.last_moved_timestamp);
    });

    test("migration 0043's backfill reads the edit history: moves but not resolving, content edits only", async () => {
      const ids = [await send(alice, "b1", "back"), await send(alice, "b2", "back"), await send(alice, "b3", "✔ back"), await send(alice, "b4", "untouched")];
      const at = (seconds: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, seconds));
      const edit = (message_id: number, seconds: number, row: Record<string, unknown>) =>
        prisma().messageEdit.create({ data: { message_id, user_id: alice.id, timestamp: at(seconds), ...row } });
      // b1: moved from "old" at 10, then its content edited at 20.
      await edit(ids[0], 10, { prev_topic: "old" });
      await edit(ids[0], 20, { prev_content: "b0", prev_rendered_content: "<p>b0</p>" });
      // b2: moved from "elsewhere" to "✔ back" at 10, then unresolved (to "back", its topic now) at 20.
      await edit(ids[1], 10, { prev_topic: "elsewhere" });
      await edit(ids[1], 20, { prev_topic: "✔ back" });
      // b3: only resolved, and moved between streams at 30.
      await edit(ids[2], 15, { prev_topic: "back" });
      await edit(ids[2], 30, { prev_stream_id: otherStreamId });
      await prisma().message.updateMany({ where: { id: { in: ids } }, data: { last_edit_time: at(40), last_moved_time: null } });
      const migration = readFileSync(new URL("../../prisma/migrations/0043_message_moves_edit_history_policy/migration.sql", import.meta.url), "utf8");
      const backfills = migration
        .split(/;\s*\n/)
        .map((statement) => statement.replace(/^\s*--.*$/gm, "").trim())
        .filter((statement) => /^(WITH|UPDATE "message")/.test(statement));
      expect(backfills).toHaveLength(2);
      for (const statement of backfills) await prisma().$executeRawUnsafe(statement);
      const rows = await prisma().message.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
      expect(rows.map((row) => [row.last_moved_time?.toISOString() ?? null, row.last_edit_time?.toISOString() ?? null])).toEqual([
        [at(10).toISOString(), at(20).toISOString()],
        [at(10).toISOString(), null],
        [at(30).toISOString(), null],
        // No history: left as it was.
        [null, at(40).toISOString()],
      ]);
      expect((await fetchOne(bob, ids[1])).last_moved_timestamp).toBe(Math.floor(at(10).getTime() / 1000));
    });
  });

  describe("366: is:muted", () => {
    test("muted topics, and muted streams' topics not unmuted or followed; never direct messages", async () => {
      const mutedTopic = await send(alice, "in a muted topic", "hushed");
      const plain = await send(alice, "plain");
      const inMutedStream = await send(alice, "muted stream", "any", "tenth-other");
      const unmutedThere = await send(alice, "unmuted topic", "loud", "tenth-other");
      const followedThere = await send(alice, "followed topic", "watched", "tenth-other");
      const direct = await sendDirect(alice, [bob.id], "never muted");
      const policy = (stream: number, topic: string, visibility_policy: number) => bob.client.post("/user_topics", { stream_id: stream, topic, visibility_policy });
      expect((await policy(streamId, "hushed", 1)).body.result).toBe("success");
      expect((await policy(otherStreamId, "loud", 2)).body.result).toBe("success");
      expect((await policy(otherStreamId, "watched", 3)).body.result).toBe("success");
      const mute = await bob.client.post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: otherStreamId, property: "is_muted", value: true }]) });
      expect(mute.body.result).toBe("success");
      const all = [mutedTopic, plain, inMutedStream, unmutedThere, followedThere, direct];
      const ids = async (narrow: unknown[]) =>
        ((await bob.client.get("/messages", { message_ids: JSON.stringify(all), narrow: JSON.stringify(narrow) })).body.messages as Array<{ id: number }>).map((m) => m.id);
      expect(await ids([{ operator: "is", operand: "muted" }])).toEqual([mutedTopic, inMutedStream]);
      expect(await ids([{ operator: "is", operand: "muted", negated: true }])).toEqual([plain, unmutedThere, followedThere, direct]);
      const matches = await bob.client.get("/messages/matches_narrow", { msg_ids: JSON.stringify(all), narrow: JSON.stringify([{ operator: "is", operand: "muted" }]) });
      expect(Object.keys(matches.body.messages).map(Number).sort((a, b) => a - b)).toEqual([mutedTopic, inMutedStream]);
      const marked = await bob.client.post("/messages/flags/narrow", {
        anchor: mutedTopic,
        num_before: 0,
        num_after: 100,
        narrow: JSON.stringify([{ operator: "is", operand: "muted" }]),
        op: "add",
        flag: "starred",
      });
      expect(marked.body).toMatchObject({ result: "success", processed_count: 2, first_processed_id: mutedTopic, last_processed_id: inMutedStream });
      await bob.client.post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: otherStreamId, property: "is_muted", value: false }]) });
      expect(await ids([{ operator: "is", operand: "muted" }])).toEqual([mutedTopic]);
    });
  });
});
