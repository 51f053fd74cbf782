// The web client's state logic without a browser or a server: /register and events applied through
// state/events.ts's test hooks, GET /messages answered by a stand-in fetch.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { testing } from "../src/state/events";
import "../src/state/realm-data";
import "../src/state/user-topics";
import { isUnread, unreadCounts, unreadIdsOf } from "../src/state/unread";
import { MessageList, showNarrow } from "../src/state/messages";
import type { Message } from "../src/state/store";
import { decodeHashComponent, encodeHashComponent, matchesNarrow, narrowToApi, narrowToHash, narrowToSearch, parseHash, parseSearch, type Narrow, type NarrowContext } from "../src/narrow";

const ME = 1;

/** A /register answer: stream 10 "general" (topic "Muted Topic" muted), stream 11 "noisy" muted but its topic "loud" unmuted. */
function registerState(overrides: Record<string, unknown> = {}) {
  return {
    queue_id: "q1",
    last_event_id: -1,
    user_id: ME,
    realm_users: [],
    subscriptions: [
      { stream_id: 10, name: "general", is_muted: false },
      { stream_id: 11, name: "noisy", is_muted: true },
    ],
    user_topics: [
      { stream_id: 10, topic_name: "Muted Topic", last_updated: 0, visibility_policy: 1 },
      { stream_id: 11, topic_name: "loud", last_updated: 0, visibility_policy: 2 },
    ],
    unread_msgs: {
      count: 8,
      old_unreads_missing: false,
      mentions: [3],
      streams: [
        { stream_id: 10, topic: "lunch", unread_message_ids: [1, 2, 3] },
        { stream_id: 10, topic: "muted topic", unread_message_ids: [4] },
        { stream_id: 11, topic: "quiet", unread_message_ids: [5] },
        { stream_id: 11, topic: "Loud", unread_message_ids: [6] },
      ],
      pms: [{ other_user_id: 7, sender_id: 7, unread_message_ids: [8] }],
      huddles: [{ user_ids_string: "1,7,9", unread_message_ids: [9] }],
    },
    ...overrides,
  };
}

async function register(overrides: Record<string, unknown> = {}): Promise<void> {
  await testing.applyRegister(registerState(overrides) as never, false);
}

let eventId = 0;
function dispatch(event: Record<string, unknown>): void {
  testing.dispatch({ id: ++eventId, ...event } as never);
}

function streamMessage(id: number, streamId = 10, topic = "lunch", flags: string[] = []): Message {
  return { id, type: "stream", stream_id: streamId, subject: topic, sender_id: 7, sender_full_name: "Seven", display_recipient: "general", reactions: [], content: `<p>${id}</p>`, timestamp: 1_700_000_000 + id, flags } as unknown as Message;
}

function dmMessage(id: number, userIds: number[], flags: string[] = []): Message {
  return { id, type: "private", sender_id: 7, sender_full_name: "Seven", display_recipient: userIds.map((uid) => ({ id: uid, email: `u${uid}@example.com`, full_name: `U${uid}` })), reactions: [], content: "", timestamp: 1_700_000_000 + id, flags, subject: "" } as unknown as Message;
}

// GET /json/messages answered from `serverMessages` (filtered by channel/topic, paged by anchor); other requests fail.
let serverMessages: Message[] = [];
const requests: URL[] = [];
const realFetch = globalThis.fetch;

function answerMessages(url: URL): Record<string, unknown> {
  const narrow = JSON.parse(url.searchParams.get("narrow") ?? "[]") as Array<{ operator: string; operand: unknown }>;
  let matching = serverMessages.filter((m) =>
    narrow.every((t) => (t.operator === "channel" ? m.stream_id === t.operand : t.operator === "topic" ? m.subject.toLowerCase() === String(t.operand).toLowerCase() : true)),
  );
  matching = [...matching].sort((a, b) => a.id - b.id);
  const anchorParam = url.searchParams.get("anchor") ?? "newest";
  const before = Number(url.searchParams.get("num_before") ?? 0);
  const after = Number(url.searchParams.get("num_after") ?? 0);
  const includeAnchor = url.searchParams.get("include_anchor") !== "false";
  const anchor = anchorParam === "newest" ? Infinity : anchorParam === "oldest" || anchorParam === "first_unread" ? 0 : Number(anchorParam);
  // As the server: the anchor message itself comes on top of num_before and num_after.
  const older = matching.filter((m) => m.id < anchor);
  const atAnchor = includeAnchor ? matching.filter((m) => m.id === anchor) : [];
  const newer = matching.filter((m) => m.id > anchor);
  const olderPage = before > 0 ? older.slice(-before) : [];
  const newerPage = newer.slice(0, after);
  return {
    result: "success",
    msg: "",
    anchor: Number.isFinite(anchor) ? anchor : (matching[matching.length - 1]?.id ?? 0),
    found_oldest: olderPage.length === older.length,
    found_newest: newerPage.length === newer.length,
    found_anchor: false,
    history_limited: false,
    messages: [...olderPage, ...atAnchor, ...newerPage],
  };
}

/** Set by holdNextAnswer(): the next GET /messages of `narrow` is answered as of when it was sent, but only once released. */
let held: { narrow: string; sent: (url: URL) => void; released: Promise<void> } | null = null;

/**
 * Holds the next GET /messages answer for `narrow` (as the server gets it: no `near`) back, so that
 * a test can change the server or deliver events while the request is out. `sent` resolves when the
 * request reaches the server; `release` answers it. Only that narrow's: lists that earlier tests
 * showed catch up on every register, and their requests must not take the hold.
 */
function holdNextAnswer(narrow: Narrow): { sent: Promise<URL>; release: () => void } {
  let release!: () => void;
  let sent!: (url: URL) => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<URL>((resolve) => (sent = resolve));
  held = { narrow: narrowToApi(narrow), sent, released };
  return { sent: reached, release };
}

beforeEach(async () => {
  serverMessages = [];
  requests.length = 0;
  held = null;
  globalThis.fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input), "https://chat.test");
    requests.push(url);
    if (url.pathname === "/json/messages") {
      const body = JSON.stringify(answerMessages(url));
      const hold = held;
      if (hold && url.searchParams.get("narrow") === hold.narrow) {
        held = null;
        hold.sent(url);
        await hold.released;
      }
      return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
    }
    return new Response(JSON.stringify({ result: "error", msg: "not in this test", code: "BAD_REQUEST" }), { status: 400 });
  }) as typeof fetch;
  await register();
});

afterEach(() => {
  globalThis.fetch = realFetch;
});

describe("unread counts", () => {
  it("come from /register, without muted topics and muted streams (except their unmuted topics)", () => {
    const counts = unreadCounts.value;
    expect(counts.streams.get(10)).toBe(3); // lunch; "Muted Topic" is muted (case-insensitively)
    expect(counts.mutedStreams.get(10)).toBe(1);
    expect(counts.streams.get(11)).toBe(1); // only "Loud", unmuted in the muted stream
    expect(counts.dms.get("7")).toBe(1);
    expect(counts.dms.get("7,9")).toBe(1); // a group DM keyed by the others' ids
    expect(counts.dmTotal).toBe(2);
    expect(counts.home).toBe(3 + 1 + 2);
    expect(counts.mentions).toBe(1);
    expect(isUnread(4)).toBe(true); // muted, but still unread
  });

  it("follow message, flag, delete and move events", () => {
    dispatch({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [1, 3], all: false });
    expect(isUnread(1)).toBe(false);
    expect(unreadCounts.value.streams.get(10)).toBe(1);
    expect(unreadCounts.value.mentions).toBe(0); // 3 was the mention

    dispatch({ type: "message", flags: [], message: streamMessage(20, 10, "LUNCH") });
    expect(unreadCounts.value.topics.get("10\u0000lunch")?.count).toBe(2); // topics compare case-insensitively
    dispatch({ type: "message", flags: ["read"], message: streamMessage(21) });
    expect(isUnread(21)).toBe(false); // my own message, or read elsewhere
    dispatch({ type: "message", flags: ["mentioned"], message: dmMessage(22, [1, 7]) });
    expect(unreadCounts.value.dms.get("7")).toBe(2);
    expect(unreadCounts.value.mentions).toBe(1);

    // Moved to another stream and topic: the unread follow.
    dispatch({ type: "update_message", user_id: 1, message_id: 20, message_ids: [2, 20], stream_id: 10, new_stream_id: 11, subject: "dinner", orig_subject: "lunch", flags: [], edit_timestamp: 1, rendering_only: false });
    expect(unreadCounts.value.topics.get("11\u0000dinner")?.count).toBe(2);
    expect(unreadCounts.value.topics.has("10\u0000lunch")).toBe(false);
    expect(unreadIdsOf({ streamId: 11, topic: "Dinner" }).sort()).toEqual([2, 20]);

    dispatch({ type: "delete_message", message_type: "stream", message_ids: [20], stream_id: 11, topic: "dinner" });
    expect(isUnread(20)).toBe(false);
    expect(unreadCounts.value.topics.get("11\u0000dinner")?.count).toBe(1);

    // Marked unread again: placed from the event's details, with its mention.
    dispatch({ type: "update_message_flags", op: "remove", operation: "remove", flag: "read", messages: [1], all: false, message_details: { "1": { type: "stream", stream_id: 10, topic: "lunch", mentioned: true } } });
    expect(isUnread(1)).toBe(true);
    expect(unreadCounts.value.topics.get("10\u0000lunch")?.count).toBe(1);
    expect(unreadCounts.value.mentions).toBe(2);

    // Flags other than read leave the counts alone.
    dispatch({ type: "update_message_flags", op: "add", operation: "add", flag: "starred", messages: [1], all: false });
    expect(isUnread(1)).toBe(true);

    dispatch({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [], all: true });
    expect(unreadCounts.value.home).toBe(0);
    expect(unreadCounts.value.mentions).toBe(0);
  });

  it("change at once when a topic is muted or unmuted", () => {
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "Lunch", last_updated: 1, visibility_policy: 1 });
    expect(unreadCounts.value.streams.get(10)).toBe(0);
    expect(unreadCounts.value.home).toBe(1 + 2);
    expect(unreadCounts.value.mentions).toBe(1); // mentions count even in muted topics
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "muted topic", last_updated: 2, visibility_policy: 0 });
    expect(unreadCounts.value.streams.get(10)).toBe(1);
  });

  it("are replaced, not added to, by a later /register", async () => {
    dispatch({ type: "message", flags: [], message: streamMessage(30) });
    await testing.applyRegister(registerState({ unread_msgs: { count: 0, old_unreads_missing: false, mentions: [], streams: [], pms: [], huddles: [] } }) as never, true);
    expect(unreadCounts.value.home).toBe(0);
    expect(isUnread(30)).toBe(false);
  });
});

describe("message lists", () => {
  it("hold each message once, in id order, however it arrives", async () => {
    serverMessages = [1, 2, 3, 4, 5].map((id) => streamMessage(id));
    const list = new MessageList([{ operator: "channel", operand: "10" }]);
    await list.loadInitial();
    expect(list.messages.value.map((m) => m.id)).toEqual([1, 2, 3, 4, 5]);
    expect(list.foundNewest.value).toBe(true);

    list.addLive(streamMessage(7, 10, "x", ["read"]));
    list.addLive(streamMessage(7, 10, "x", ["read"])); // the same event twice (a retried poll)
    list.addLive(streamMessage(6));
    list.addLive(streamMessage(8, 11)); // another stream: not this narrow's
    expect(list.messages.value.map((m) => m.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);

    // A refetch after a lost queue returns messages the list already holds: merged, not doubled.
    serverMessages.push(streamMessage(6), streamMessage(7, 10, "x"), streamMessage(9));
    await list.reconcile();
    expect(list.messages.value.map((m) => m.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 9]);
  });

  it("drop messages deleted or moved out of the narrow, and apply flags", async () => {
    serverMessages = [1, 2, 3].map((id) => streamMessage(id));
    const list = showNarrow([{ operator: "channel", operand: "10" }, { operator: "topic", operand: "lunch" }]);
    await list.settled();
    dispatch({ type: "delete_message", message_type: "stream", message_ids: [1], stream_id: 10, topic: "lunch" });
    dispatch({ type: "update_message", user_id: 1, message_id: 2, message_ids: [2], stream_id: 10, subject: "elsewhere", orig_subject: "lunch", flags: [], edit_timestamp: 1, rendering_only: false });
    dispatch({ type: "update_message_flags", op: "add", operation: "add", flag: "starred", messages: [3], all: false });
    expect(list.messages.value.map((m) => m.id)).toEqual([3]);
    expect(list.get(3)?.flags).toContain("starred");
  });

  it("hide muted topics from the combined feed, and bring them back when unmuted", async () => {
    serverMessages = [streamMessage(1, 10, "lunch"), streamMessage(2, 10, "Muted Topic"), streamMessage(3, 10, "lunch")];
    const feed = showNarrow([]);
    await feed.settled();
    expect(feed.messages.value.map((m) => m.id)).toEqual([1, 3]);

    const settle = () => new Promise((resolve) => setTimeout(resolve, 20)); // the refetch
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "muted topic", last_updated: 1, visibility_policy: 0 });
    await settle();
    expect(feed.messages.value.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(requests.some((url) => url.searchParams.get("narrow")?.includes('"topic"'))).toBe(true);

    dispatch({ type: "user_topic", stream_id: 10, topic_name: "lunch", last_updated: 2, visibility_policy: 1 });
    expect(feed.messages.value.map((m) => m.id)).toEqual([2]);
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "lunch", last_updated: 3, visibility_policy: 3 }); // followed: shown again
    await settle();
    expect(feed.messages.value.map((m) => m.id)).toEqual([1, 2, 3]);

    // Everything muted, then unmuted: the empty feed loads again.
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "lunch", last_updated: 4, visibility_policy: 1 });
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "muted topic", last_updated: 5, visibility_policy: 1 });
    expect(feed.messages.value).toEqual([]);
    dispatch({ type: "user_topic", stream_id: 10, topic_name: "lunch", last_updated: 6, visibility_policy: 0 });
    await settle();
    expect(feed.messages.value.map((m) => m.id)).toEqual([1, 3]);
  });
});

// Races between a fetch and the events that arrive while it is out: each answer is held back
// (holdNextAnswer) while the test delivers events or changes the server.
describe("message lists, while a fetch is out", () => {
  const ids = (list: MessageList) => list.messages.value.map((m) => m.id);
  const general: Narrow = [{ operator: "channel", operand: "10" }];

  it("keep a live message that arrived during a catch-up whose answer predates it", async () => {
    serverMessages = [1, 2, 3, 4, 5].map((id) => streamMessage(id));
    const list = new MessageList(general);
    await list.loadInitial();

    // The server answers the catch-up as of before message 6 was sent; the event brings 6 meanwhile.
    const answer = holdNextAnswer(general);
    const caughtUp = list.reconcile();
    await answer.sent;
    serverMessages.push(streamMessage(6));
    list.addLive(streamMessage(6));
    expect(ids(list)).toEqual([1, 2, 3, 4, 5, 6]);
    answer.release();
    await caughtUp;

    expect(ids(list)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(list.foundNewest.value).toBe(true);
  });

  it("still drop, in a catch-up, held messages the server no longer has", async () => {
    serverMessages = [1, 2, 3, 4, 5].map((id) => streamMessage(id));
    const list = new MessageList(general);
    await list.loadInitial();

    serverMessages = serverMessages.filter((m) => m.id !== 4); // deleted while the queue was lost
    const answer = holdNextAnswer(general);
    const caughtUp = list.reconcile();
    await answer.sent;
    list.addLive(streamMessage(6));
    answer.release();
    await caughtUp;

    expect(ids(list)).toEqual([1, 2, 3, 5, 6]);
  });

  it("catch up after a page of older messages that was loading, rather than being skipped", async () => {
    serverMessages = Array.from({ length: 120 }, (_, i) => streamMessage(i + 1));
    const list = new MessageList([{ operator: "channel", operand: "10" }, { operator: "near", operand: "100" }]);
    await list.loadInitial();
    expect(ids(list)[0]).toBe(50);
    expect(list.foundOldest.value).toBe(false);
    expect(list.foundNewest.value).toBe(true);

    // Scrolling up fetches older messages; meanwhile the queue was lost, 110 deleted and 121 sent.
    const older = holdNextAnswer(general);
    const loadingOlder = list.loadOlder();
    await older.sent;
    serverMessages = [...serverMessages.filter((m) => m.id !== 110), streamMessage(121)];
    const caughtUp = list.reconcile();
    older.release();
    await loadingOlder;
    await caughtUp;

    const expected = Array.from({ length: 121 }, (_, i) => i + 1).filter((id) => id !== 110);
    expect(ids(list)).toEqual(expected);
    expect(requests.filter((url) => url.searchParams.get("narrow") === narrowToApi(general))).toHaveLength(3); // first, older, catch-up
    expect(list.loading.value).toBeNull();
  });

  it("keep live messages that arrived during the first load when the answer reaches the newest", async () => {
    serverMessages = [1, 2, 3].map((id) => streamMessage(id, 10, "supper"));
    // A narrow no earlier test showed: showNarrow creates the list and starts its first load.
    const supper: Narrow = [{ operator: "channel", operand: "10" }, { operator: "topic", operand: "supper" }];
    const answer = holdNextAnswer(supper);
    const list = showNarrow(supper);
    await answer.sent;
    expect(list.loading.value).toBe("initial");
    serverMessages.push(streamMessage(4, 10, "supper"), streamMessage(5, 10, "lunch"));
    dispatch({ type: "message", flags: [], message: streamMessage(4, 10, "Supper") });
    dispatch({ type: "message", flags: [], message: streamMessage(5, 10, "lunch") }); // another topic: not this list's
    answer.release();
    await list.settled();

    expect(ids(list)).toEqual([1, 2, 3, 4]);
    expect(list.foundNewest.value).toBe(true);

    // Later events still append as before.
    dispatch({ type: "message", flags: [], message: streamMessage(6, 10, "supper") });
    expect(ids(list)).toEqual([1, 2, 3, 4, 6]);
  });

  it("leave out live messages that arrived during a first load short of the newest", async () => {
    serverMessages = Array.from({ length: 120 }, (_, i) => streamMessage(i + 1));
    const list = new MessageList(general);
    const answer = holdNextAnswer(general);
    const loading = list.loadInitial();
    await answer.sent;
    serverMessages.push(streamMessage(121));
    list.addLive(streamMessage(121));
    answer.release();
    await loading;

    // The window ends at 50: 121 would leave a gap; scrolling down fetches it in its place.
    expect(ids(list)).toHaveLength(50);
    expect(list.has(121)).toBe(false);
    expect(list.foundNewest.value).toBe(false);
    await list.loadNewer();
    await list.loadNewer();
    expect(ids(list)).toEqual(Array.from({ length: 121 }, (_, i) => i + 1));
  });
});

describe("narrows", () => {
  const streams: Record<string, number> = { general: 1, "design team": 2 };
  const emails: Record<string, number> = { "alice@example.com": 3, "bob@example.com": 4 };
  const ctx: NarrowContext = {
    streamIdByName: (name) => streams[name.toLowerCase()],
    streamName: (id) => Object.keys(streams).find((name) => streams[name] === id),
    userIdByEmail: (email) => emails[email.toLowerCase()],
    userEmail: (id) => Object.keys(emails).find((email) => emails[email] === id),
    userName: (id) => ({ 1: "Owner", 3: "Alice Archer", 4: "Bob" })[id],
    myUserId: 1,
  };

  const narrows: Narrow[] = [
    [],
    [{ operator: "channel", operand: "2" }],
    [
      { operator: "channel", operand: "2" },
      { operator: "topic", operand: "office move. 100% (ok)/x" },
    ],
    [{ operator: "dm", operand: "1,3" }],
    [{ operator: "dm", operand: "1,3,4" }],
    [{ operator: "is", operand: "starred" }],
    [{ operator: "is", operand: "mentioned" }],
    [{ operator: "search", operand: "hello world" }],
    [
      { operator: "sender", operand: "3" },
      { operator: "has", operand: "image" },
      { operator: "is", operand: "unread", negated: true },
    ],
    [
      { operator: "channel", operand: "1" },
      { operator: "topic", operand: "lunch" },
      { operator: "near", operand: "42" },
    ],
  ];

  it.each(narrows.map((narrow) => [JSON.stringify(narrow), narrow] as const))("survive the hash round trip: %s", (_name, narrow) => {
    const hash = narrowToHash(narrow, ctx);
    expect(hash.startsWith("#")).toBe(true);
    expect(hash).not.toContain("%");
    expect(parseHash(hash, ctx)).toEqual({ kind: "narrow", narrow });
  });

  it("read Zulip's older hash spellings", () => {
    expect(parseHash("#narrow/stream/general/subject/x", ctx)).toEqual({
      kind: "narrow",
      narrow: [
        { operator: "channel", operand: "1" },
        { operator: "topic", operand: "x" },
      ],
    });
    expect(parseHash("#channels/all", ctx)).toEqual({ kind: "channels", section: "all" });
    expect(parseHash("#settings/profile", ctx)).toMatchObject({ kind: "settings", section: "profile" });
  });

  it("encode hash components without '%' and decode them back", () => {
    for (const text of ["a.b c%d", "ünïcødé / ?#&", "100%"]) {
      expect(encodeHashComponent(text)).not.toContain("%");
      expect(decodeHashComponent(encodeHashComponent(text))).toBe(text);
    }
  });

  it("parse search text into terms and back", () => {
    expect(parseSearch("stream:general topic:lunch sender:alice@example.com has:image words here", ctx)).toEqual([
      { operator: "channel", operand: "1" },
      { operator: "topic", operand: "lunch" },
      { operator: "sender", operand: "3" },
      { operator: "has", operand: "image" },
      { operator: "search", operand: "words here" },
    ]);
    expect(parseSearch('channel:"design team" topic:"a b" -is:starred', ctx)).toEqual([
      { operator: "channel", operand: "2" },
      { operator: "topic", operand: "a b" },
      { operator: "is", operand: "starred", negated: true },
    ]);
    expect(parseSearch("is:private dm:bob@example.com,alice@example.com", ctx)).toEqual([
      { operator: "is", operand: "dm" },
      { operator: "dm", operand: "3,4" },
    ]);
    expect(parseSearch("sender:me", ctx)).toEqual([{ operator: "sender", operand: "1" }]);
    // An unknown operator is a search word.
    expect(parseSearch("foo:bar baz", ctx)).toEqual([{ operator: "search", operand: "foo:bar baz" }]);
    for (const text of ['channel:"design team" topic:"a b" -is:starred', "sender:alice@example.com has:link hello", "dm:alice@example.com,bob@example.com"]) {
      expect(narrowToSearch(parseSearch(text, ctx), ctx)).toBe(text);
    }
  });

  it("give the server ids as numbers and DM lists as arrays", () => {
    expect(JSON.parse(narrowToApi([{ operator: "dm", operand: "1,3" }, { operator: "channel", operand: "2" }, { operator: "topic", operand: "7" }]))).toEqual([
      { operator: "dm", operand: [1, 3], negated: false },
      { operator: "channel", operand: 2, negated: false },
      { operator: "topic", operand: "7", negated: false },
    ]);
  });

  it("match messages locally, or say only the server can", () => {
    const message = streamMessage(5, 1, "Lunch", ["starred"]);
    expect(matchesNarrow([], message, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "channel", operand: "1" }, { operator: "topic", operand: "lunch" }], message, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "channel", operand: "2" }], message, ME)).toBe(false);
    expect(matchesNarrow([{ operator: "topic", operand: "lunch", negated: true }], message, ME)).toBe(false);
    expect(matchesNarrow([{ operator: "is", operand: "starred" }], message, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "is", operand: "unread" }], message, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "is", operand: "mentioned" }], message, ME)).toBe(false);
    expect(matchesNarrow([{ operator: "sender", operand: "7" }], message, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "search", operand: "lunch" }], message, ME)).toBeUndefined();
    expect(matchesNarrow([{ operator: "has", operand: "image" }], message, ME)).toBeUndefined();

    const dm = dmMessage(6, [1, 3, 4]);
    expect(matchesNarrow([{ operator: "dm", operand: "3,4" }], dm, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "dm", operand: "1,4,3" }], dm, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "dm", operand: "3" }], dm, ME)).toBe(false);
    expect(matchesNarrow([{ operator: "dm-including", operand: "4" }], dm, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "is", operand: "dm" }], dm, ME)).toBe(true);
    expect(matchesNarrow([{ operator: "is", operand: "dm" }], message, ME)).toBe(false);
  });
});
