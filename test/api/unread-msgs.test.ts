// The `unread_msgs` section of POST /register (Zulip 3.0): its buckets, sorting, mentions and
// count, when it is sent, and the appliers that keep its raw form current while /register reads it.
import { applyEvents, finishState, type State } from "@chat/core";
import { fetchRawUnreadMessages } from "../../packages/core/src/state/unread-state.ts";
import { emptyRawUnread } from "../support/raw-unread.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";

const UNREAD_EVENT_TYPES = ["message", "update_message_flags"];
const NOTHING_UNREAD = { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: false };

async function unreadMsgs(user: TestUser, eventTypes: string[] = UNREAD_EVENT_TYPES): Promise<Record<string, any>> {
  const res = await user.client.post("/register", { event_types: eventTypes });
  expect(res.body.result).toBe("success");
  expect(res.body).not.toHaveProperty("raw_unread_msgs");
  return res.body.unread_msgs;
}

const sortedIds = (...ids: number[]) => [...ids].sort((a, b) => a - b);

describe.each(MODES)("unread_msgs (%s)", (mode) => {
  let server: TestServer;
  const prisma = () => server.running.services.db.prisma;
  const streamId = async (name: string) => (await prisma().stream.findFirstOrThrow({ where: { name } })).id;

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("buckets unread stream, private and group messages, with mentions and a count without muted ones", async () => {
    const [alice, bob, carol] = [
      await createTestUser(server, "Alice Unread"),
      await createTestUser(server, "Bob Unread"),
      await createTestUser(server, "Carol Unread"),
    ];
    const principals = [alice.email, bob.email, carol.email];
    // Created one after the other, so "unreads" has the smaller id and sorts first.
    await subscribeTo(alice.client, ["unreads"], { principals });
    await subscribeTo(alice.client, ["quiet"], { principals });
    const [unreadsId, quietId] = [await streamId("unreads"), await streamId("quiet")];
    expect((await alice.client.patch("/users/me/subscriptions/muted_topics", { stream_id: unreadsId, topic: "noise", op: "add" })).body.result).toBe("success");
    const muting = await alice.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: quietId, property: "is_muted", value: true }] });
    expect(muting.body.result).toBe("success");
    // Mentioned, Alice would follow the muted stream's topic, which would count it (topic-auto-follow.test.ts).
    expect((await alice.client.patch("/settings", { automatically_follow_topics_where_mentioned: false })).body.result).toBe("success");

    const lunch1 = await sendStreamMessage(bob.client, "unreads", "lunch");
    const news = await sendStreamMessage(bob.client, "unreads", "news", "hi @**Alice Unread**");
    const lunch2 = await sendStreamMessage(carol.client, "unreads", "lunch");
    const noise1 = await sendStreamMessage(bob.client, "unreads", "Noise"); // muted topic, matched case-insensitively
    const noise2 = await sendStreamMessage(bob.client, "unreads", "Noise", "@**all** in a muted topic"); // not a mention
    const lunch3 = await sendStreamMessage(carol.client, "unreads", "lunch", "@**all** lunch"); // a mention
    const quiet = await sendStreamMessage(bob.client, "quiet", "t", "@**Alice Unread** even here"); // muted stream, still a mention
    const pm = await sendPrivateMessage(bob.client, [alice.id]);
    const group = await sendPrivateMessage(bob.client, [alice.id, carol.id]);
    // What Alice sends herself is read.
    await sendStreamMessage(alice.client, "unreads", "lunch");
    const reply = await sendPrivateMessage(alice.client, [bob.id]);

    expect(await unreadMsgs(alice)).toEqual({
      pms: [{ other_user_id: bob.id, sender_id: bob.id, unread_message_ids: [pm] }],
      streams: [
        // Topics sort case-sensitively, as Zulip's tuples: "Noise" < "lunch" < "news".
        { stream_id: unreadsId, topic: "Noise", unread_message_ids: [noise1, noise2], sender_ids: [bob.id] },
        { stream_id: unreadsId, topic: "lunch", unread_message_ids: [lunch1, lunch2, lunch3], sender_ids: sortedIds(bob.id, carol.id) },
        { stream_id: unreadsId, topic: "news", unread_message_ids: [news], sender_ids: [bob.id] },
        { stream_id: quietId, topic: "t", unread_message_ids: [quiet], sender_ids: [bob.id] },
      ],
      huddles: [{ user_ids_string: sortedIds(alice.id, bob.id, carol.id).join(","), unread_message_ids: [group] }],
      mentions: sortedIds(news, lunch3, quiet),
      count: 1 + 1 + 4,
      old_unreads_missing: false,
    });
    // Bob's view (he also has the bot's "you were subscribed" notices): `sender_id` names the other party.
    expect((await unreadMsgs(bob)).pms).toContainEqual({ other_user_id: alice.id, sender_id: alice.id, unread_message_ids: [reply] });
  });

  test("messages marked read leave unread_msgs; so does everything after mark_all_as_read", async () => {
    const [alice, bob] = [await createTestUser(server, "Alice Reading"), await createTestUser(server, "Bob Reading")];
    await subscribeTo(alice.client, ["reading"], { principals: [alice.email, bob.email] });
    const readingId = await streamId("reading");
    const [first, second] = [await sendStreamMessage(bob.client, "reading", "t"), await sendStreamMessage(bob.client, "reading", "t", "@**Alice Reading**")];
    const pm = await sendPrivateMessage(bob.client, [alice.id]);

    expect((await alice.client.post("/messages/flags", { messages: [first, pm], op: "add", flag: "read" })).body.messages).toEqual([first, pm]);
    expect(await unreadMsgs(alice)).toEqual({
      pms: [],
      streams: [{ stream_id: readingId, topic: "t", unread_message_ids: [second], sender_ids: [bob.id] }],
      huddles: [],
      mentions: [second],
      count: 1,
      old_unreads_missing: false,
    });
    expect((await alice.client.post("/mark_all_as_read")).body.result).toBe("success");
    expect(await unreadMsgs(alice)).toEqual(NOTHING_UNREAD);
  });

  test("present only when both message and update_message_flags are wanted; never in raw form", async () => {
    const alice = await createTestUser(server, "Alice Types");
    for (const eventTypes of [["message"], ["update_message_flags"], ["realm_user"]]) {
      const res = await alice.client.post("/register", { event_types: eventTypes });
      expect(res.body.result).toBe("success");
      expect(res.body).not.toHaveProperty("unread_msgs");
      expect(res.body).not.toHaveProperty("raw_unread_msgs");
    }
    expect(await unreadMsgs(alice, ["update_message_flags", "message"])).toEqual(NOTHING_UNREAD);
    const all = await alice.client.post("/register");
    expect(all.body.unread_msgs).toEqual(NOTHING_UNREAD);
    expect(all.body).not.toHaveProperty("raw_unread_msgs");
    const fetched = await alice.client.post("/register", { event_types: ["message"], fetch_event_types: UNREAD_EVENT_TYPES });
    expect(fetched.body.unread_msgs).toEqual(NOTHING_UNREAD);
  });

  test("the events a queue gets turn a raw state read at registration into what a new /register reads", async () => {
    const [alice, bob, carol] = [
      await createTestUser(server, "Alice Applied"),
      await createTestUser(server, "Bob Applied"),
      await createTestUser(server, "Carol Applied"),
    ];
    const principals = [alice.email, bob.email, carol.email];
    await subscribeTo(alice.client, ["applied"], { principals });
    await subscribeTo(alice.client, ["applied two"], { principals });
    const [appliedId, twoId] = [await streamId("applied"), await streamId("applied two")];
    await alice.client.patch("/users/me/subscriptions/muted_topics", { stream_id: appliedId, topic: "muted", op: "add" });
    const before = await sendStreamMessage(bob.client, "applied", "lunch");
    const wildcard = await sendStreamMessage(bob.client, "applied", "lunch", "@**all** hungry?");
    const pm = await sendPrivateMessage(bob.client, [alice.id]);

    // As /register: the queue first, then the state, then whatever the queue got meanwhile.
    const eventTypes = [...UNREAD_EVENT_TYPES, "delete_message", "update_message"];
    const queue = await registerQueue(alice.client, eventTypes, { client_capabilities: { bulk_message_deletion: true } });
    const state: State = { raw_unread_msgs: await fetchRawUnreadMessages(prisma(), alice.id) };

    const mention = await sendStreamMessage(bob.client, "applied", "lunch", "@**Alice Applied** lunch?");
    await sendPrivateMessage(bob.client, [alice.id, carol.id]);
    await alice.client.post("/messages/flags", { messages: [pm], op: "add", flag: "read" });
    expect((await server.owner.delete(`/messages/${before}`)).body.result).toBe("success");
    // Into the muted topic: no longer counted, and the wildcard mention no longer a mention ...
    // (one message of each topic stays behind: moving a whole topic would carry its visibility
    // policies along, as Zulip 9, and the muted topic would then be muted no more)
    await sendStreamMessage(carol.client, "applied", "muted", "already here");
    expect((await bob.client.patch(`/messages/${wildcard}`, { topic: "muted", propagate_mode: "change_one" })).body.result).toBe("success");
    expect((await unreadMsgs(alice)).mentions).toEqual([mention]);
    // ... and moved on to another stream, counted again.
    expect((await server.owner.patch(`/messages/${wildcard}`, { stream_id: twoId, propagate_mode: "change_one" })).body.result).toBe("success");
    const marker = await sendPrivateMessage(bob.client, [alice.id], "marker");
    const events = await eventsUntil(alice.client, queue, (e) => e.type === "message" && e.message.id === marker);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(eventTypes));

    const expected = await unreadMsgs(alice);
    expect(expected.streams.map((s: { stream_id: number; topic: string }) => [s.stream_id, s.topic])).toEqual([[appliedId, "lunch"], [appliedId, "muted"], [twoId, "muted"]]);
    expect(finishState(applyEvents(structuredClone(state), events, alice.id)).unread_msgs).toEqual(expected);
    // Every event applied twice in a row changes nothing.
    const twice = events.flatMap((e) => [e, e]);
    expect(finishState(applyEvents(structuredClone(state), twice, alice.id)).unread_msgs).toEqual(expected);
  });
});

describe("unread_msgs appliers", () => {
  const ME = 1;
  const BOB = 2;
  const CAROL = 3;
  const STREAM = 10;
  const MUTED_STREAM = 20;

  function rawState(): State {
    return { raw_unread_msgs: emptyRawUnread({ mutedStreamIds: [MUTED_STREAM], topicPolicies: [[`${STREAM}:muted`, 1]] }), max_message_id: 0 };
  }

  const streamMessage = (id: number, streamId: number, topic: string, flags: string[] = [], senderId = BOB) => ({
    type: "message",
    message: { id, type: "stream", stream_id: streamId, subject: topic, sender_id: senderId, display_recipient: "s" },
    flags,
  });
  const privateMessage = (id: number, members: number[], flags: string[] = [], senderId = BOB) => ({
    type: "message",
    message: { id, type: "private", subject: "", sender_id: senderId, display_recipient: members.map((member) => ({ id: member })) },
    flags,
  });
  const readEvent = (messages: number[], extra: Record<string, unknown> = {}) => ({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages, all: false, ...extra });

  const MESSAGES = [
    streamMessage(1, STREAM, "lunch"),
    streamMessage(2, STREAM, "lunch", ["wildcard_mentioned"], CAROL),
    streamMessage(3, STREAM, "MUTED", ["wildcard_mentioned"]),
    streamMessage(4, MUTED_STREAM, "t", ["mentioned"]),
    privateMessage(5, [ME, BOB], ["wildcard_mentioned"]),
    privateMessage(6, [ME, BOB], ["read"], ME),
    privateMessage(7, [ME]),
    privateMessage(8, [CAROL, ME, BOB]),
  ];
  const APPLIED = {
    pms: [
      { other_user_id: ME, sender_id: ME, unread_message_ids: [7] },
      { other_user_id: BOB, sender_id: BOB, unread_message_ids: [5] },
    ],
    streams: [
      { stream_id: STREAM, topic: "MUTED", unread_message_ids: [3], sender_ids: [BOB] },
      { stream_id: STREAM, topic: "lunch", unread_message_ids: [1, 2], sender_ids: [BOB, CAROL] },
      { stream_id: MUTED_STREAM, topic: "t", unread_message_ids: [4], sender_ids: [BOB] },
    ],
    huddles: [{ user_ids_string: "1,2,3", unread_message_ids: [8] }],
    mentions: [2, 4, 5],
    count: 2 + 2 + 1,
    old_unreads_missing: false,
  };

  const finish = (state: State) => finishState(state).unread_msgs;

  test("message events fill the buckets (a read one is left out); twice is the same as once", () => {
    const state = applyEvents(rawState(), MESSAGES, ME);
    expect(state.max_message_id).toBe(8);
    expect(finish(state)).toEqual(APPLIED);
    expect(state).not.toHaveProperty("raw_unread_msgs");
    expect(finish(applyEvents(rawState(), MESSAGES.flatMap((e) => [e, e]), ME))).toEqual(APPLIED);
  });

  test("reading removes ids from every bucket and mentions; other flags and unreading change nothing", () => {
    const events = [
      ...MESSAGES,
      readEvent([2, 5, 8, 99]),
      readEvent([2, 5, 8, 99]),
      { ...readEvent([1]), operation: "remove", op: "remove" },
      { ...readEvent([1]), flag: "starred" },
    ];
    expect(finish(applyEvents(rawState(), events, ME))).toEqual({
      pms: [{ other_user_id: ME, sender_id: ME, unread_message_ids: [7] }],
      streams: [
        { stream_id: STREAM, topic: "MUTED", unread_message_ids: [3], sender_ids: [BOB] },
        { stream_id: STREAM, topic: "lunch", unread_message_ids: [1], sender_ids: [BOB] },
        { stream_id: MUTED_STREAM, topic: "t", unread_message_ids: [4], sender_ids: [BOB] },
      ],
      huddles: [],
      mentions: [4],
      count: 2,
      old_unreads_missing: false,
    });
    expect(finish(applyEvents(rawState(), [...MESSAGES, readEvent([], { all: true })], ME))).toEqual(NOTHING_UNREAD);
  });

  test("delete_message removes ids, in the bulk and the single form", () => {
    const deletes = [
      { type: "delete_message", message_ids: [1, 4], message_type: "stream", stream_id: STREAM, topic: "lunch" },
      { type: "delete_message", message_id: 8, message_type: "private" },
    ];
    const state = applyEvents(rawState(), [...MESSAGES, ...deletes, ...deletes], ME);
    expect(finish(state)).toEqual({
      ...APPLIED,
      streams: [
        { stream_id: STREAM, topic: "MUTED", unread_message_ids: [3], sender_ids: [BOB] },
        { stream_id: STREAM, topic: "lunch", unread_message_ids: [2], sender_ids: [CAROL] },
      ],
      huddles: [],
      mentions: [2, 5],
      count: 2 + 1,
    });
  });

  test("update_message rewrites topics and streams of unread stream messages, re-deciding muting", () => {
    const rename = { type: "update_message", message_id: 1, message_ids: [1, 2, 5, 99], orig_subject: "lunch", subject: "muted", stream_id: STREAM, propagate_mode: "change_all" };
    const move = { type: "update_message", message_id: 3, message_ids: [3], orig_subject: "MUTED", new_stream_id: 30, stream_id: STREAM, propagate_mode: "change_one" };
    const content = { type: "update_message", message_id: 4, message_ids: [4], content: "edited", stream_id: MUTED_STREAM };
    const state = applyEvents(rawState(), [...MESSAGES, rename, rename, move, move, content], ME);
    expect(finish(state)).toEqual({
      ...APPLIED,
      streams: [
        { stream_id: STREAM, topic: "muted", unread_message_ids: [1, 2], sender_ids: [BOB, CAROL] },
        { stream_id: MUTED_STREAM, topic: "t", unread_message_ids: [4], sender_ids: [BOB] },
        { stream_id: 30, topic: "MUTED", unread_message_ids: [3], sender_ids: [BOB] },
      ],
      // 2's wildcard mention is muted now; 3's counts now that it left the muted topic.
      mentions: [3, 4, 5],
      count: 2 + 1 + 1,
    });
  });

  test("finishState leaves states without the section alone", () => {
    expect(finishState({ max_message_id: 3 })).toEqual({ max_message_id: 3 });
  });
});
