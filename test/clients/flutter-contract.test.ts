// zulip-flutter (the official mobile app) against this server, call by call: each request the app
// makes, with the parameters and encodings its bindings use (lib/api/route/*.dart, through
// support/flutter-connection.ts), and each answer read as the app's parsers read it: the contract
// generated from their json_serializable code (test/clients/flutter/contract.json, made by
// scripts/flutter-contract/generate.ts; checked by support/flutter-contract.ts). A failure lists
// every place where the app would throw, with its path. Test names say which app call each is.
import { createHash } from "node:crypto";
import type { ApiClient } from "../support/client.ts";
import { readAsFlutter } from "../support/flutter-contract.ts";
import { FLUTTER_CAPABILITIES, FlutterConnection, raw, type FlutterParams, type FlutterResponse } from "../support/flutter-connection.ts";
import { imagePart, makePng, uploadFiles } from "../support/images.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

/** lib/api/core.dart kMinAllowedZulipFeatureLevel: below it the app refuses the server. */
const MIN_ALLOWED_FEATURE_LEVEL = 277;
/** lib/api/core.dart kMinSupportedZulipFeatureLevel: below it the app shows an "unsupported server" banner. */
const MIN_SUPPORTED_FEATURE_LEVEL = 371;
const MEMBER_PASSWORD = "member-pass"; // support/users.ts createMember

type Json = Record<string, any>;

/** The parameters of `registerQueue` (lib/api/route/events.dart), with `idleQueueTimeout: .mobile` (lib/model/store.dart). */
const REGISTER_PARAMS: FlutterParams = {
  idle_queue_timeout: "mobile",
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  client_capabilities: FLUTTER_CAPABILITIES,
};

/** HTTP 200 with a JSON object the app's `className.fromJson` accepts; the body. */
function expectParses(res: FlutterResponse, className: string): Json {
  const failures = res.status === 200 ? readAsFlutter(className, res.body).failures : [`HTTP ${res.status}: ${JSON.stringify(res.body)}`];
  expect({ [className]: failures }).toEqual({ [className]: [] });
  return res.body as Json;
}

/** A binding whose result the app ignores (`(_) {}`) still needs HTTP 200 and a JSON object (lib/api/core.dart `send`). */
function expectAccepted(res: FlutterResponse): void {
  const ok = res.status === 200 && typeof res.body === "object" && res.body !== null && !Array.isArray(res.body);
  expect(ok ? "HTTP 200 with a JSON object" : `HTTP ${res.status}: ${JSON.stringify(res.body)}`).toBe("HTTP 200 with a JSON object");
}

/** An event the app reads with `Event.fromJson`: it must reach `expected` (not UnexpectedEvent) and parse. */
function expectEvent(event: Json, expected: string | string[]): void {
  const reading = readAsFlutter("Event", event);
  const wanted = Array.isArray(expected) ? expected : [expected];
  expect({ event: `${event.type}/${event.op ?? "-"}`, parsedAs: wanted.includes(reading.parsedAs) ? wanted[0] : reading.parsedAs, failures: reading.failures }).toEqual({
    event: `${event.type}/${event.op ?? "-"}`,
    parsedAs: wanted[0],
    failures: [],
  });
}

/** The app's event loop (lib/model/store.dart): long polls GET /events, last_event_id = the last event's id. */
class AppEventLoop {
  private pending: Json[] = [];
  /** Failures of events no test waited for: they would make the app re-register too. */
  readonly strayFailures: string[] = [];

  constructor(
    private readonly app: () => FlutterConnection,
    readonly queueId: string,
    private lastEventId: number,
  ) {}

  private async poll(): Promise<void> {
    const res = await this.app().get("events", { queue_id: raw(this.queueId), last_event_id: this.lastEventId });
    if (res.status !== 200) throw new Error(`GET /events answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
    // The envelope (GetEventsResult) here, each event as it is taken.
    const envelope = readAsFlutter("GetEventsResult", { ...(res.body as Json), events: [] }).failures;
    if (envelope.length) this.strayFailures.push(`GET /events: ${envelope.join("; ")}`);
    const events = (Array.isArray((res.body as Json).events) ? (res.body as Json).events : []) as Json[];
    for (const event of events) if (typeof event.id === "number") this.lastEventId = Math.max(this.lastEventId, event.id);
    this.pending.push(...events);
  }

  /** `dont_block=true`, as the app polls while recovering: the answer, which the next long poll repeats. */
  dontBlock(): Promise<FlutterResponse> {
    return this.app().get("events", { queue_id: raw(this.queueId), last_event_id: this.lastEventId, dont_block: true });
  }

  /** The first event matching `predicate`; the events before it are read too, their failures kept in strayFailures. */
  async until(predicate: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    const seen: string[] = [];
    for (;;) {
      while (this.pending.length) {
        const event = this.pending.shift()!;
        if (predicate(event)) return event;
        seen.push(`${event.type}/${event.op ?? "-"}`);
        const failures = readAsFlutter("Event", event).failures;
        if (failures.length) this.strayFailures.push(`${event.type}/${event.op ?? "-"} #${event.id}: ${failures.join("; ")}`);
      }
      if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms; the queue delivered: ${seen.join(", ") || "nothing"}`);
      await this.poll();
    }
  }
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe.each(MODES)("zulip-flutter contract (%s)", (mode) => {
  let server: TestServer;
  let owner: ApiClient;
  let ownerId: number;
  let alice: TestUser;
  let bob: TestUser;
  /** The app, logged in as alice (replaced by the app's own fetch_api_key when that works). */
  let app: FlutterConnection;
  let channelId: number;
  let mentionId: number;
  let dmId: number;
  let snapshot: Json = {};
  let loop: AppEventLoop | undefined;
  /** The app's own channel message, later edited and moved. */
  let sentId: number;
  let uploadUri: string;

  const events = () => {
    if (!loop) throw new Error("POST /register gave no queue; no event can be read");
    return loop;
  };
  const ok = async (label: string, pending: Promise<{ status: number; body: Json }>): Promise<Json> => {
    const res = await pending;
    if (res.status !== 200) throw new Error(`${label}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  beforeAll(async () => {
    server = await startTestServer(mode);
    owner = server.owner;
    ownerId = (await ok("owner /users/me", owner.get("/users/me"))).user_id;
    alice = await createTestUser(server, "Alice Flutter");
    bob = await createTestUser(server, "Bob Peer");
    app = new FlutterConnection(server.baseUrl, alice.client.credentials);
    await ok("creating the channel", owner.post("/users/me/subscriptions", { subscriptions: [{ name: "flutter channel" }], principals: [OWNER_EMAIL, alice.email] }));
    channelId = (await ok("get_stream_id", owner.get("/get_stream_id", { stream: "flutter channel" }))).stream_id;
    mentionId = (await ok("a mention", owner.post("/messages", { type: "stream", to: "flutter channel", topic: "greetings", content: "hello @**Alice Flutter** flutterword" }))).id;
    dmId = (await ok("a DM", owner.post("/messages", { type: "private", to: [alice.id], content: "a direct message" }))).id;
  });
  afterAll(() => server.stop());

  describe("login (lib/widgets/login.dart)", () => {
    test("getServerSettings: GET /server_settings parses as GetServerSettingsResult", async () => {
      expectParses(await new FlutterConnection(server.baseUrl, null).get("server_settings", null), "GetServerSettingsResult");
    });

    test("version gate at login: server_settings zulip_feature_level >= 277 (kMinAllowedZulipFeatureLevel)", async () => {
      const body = (await new FlutterConnection(server.baseUrl, null).get("server_settings", null)).body as Json;
      expect(body.zulip_feature_level).toBeGreaterThanOrEqual(MIN_ALLOWED_FEATURE_LEVEL);
    });

    test("fetchApiKey: POST /fetch_api_key (raw username and password) parses as FetchApiKeyResult, with user_id", async () => {
      const res = await new FlutterConnection(server.baseUrl, null).post("fetch_api_key", { username: raw(alice.email), password: raw(MEMBER_PASSWORD) });
      const body = expectParses(res, "FetchApiKeyResult");
      expect(body.user_id).toBe(alice.id);
      app = new FlutterConnection(server.baseUrl, { email: body.email, apiKey: body.api_key });
    });

    test("fetchApiKey with a wrong password: a 4xx Zulip error whose msg the app shows", async () => {
      const res = await new FlutterConnection(server.baseUrl, null).post("fetch_api_key", { username: raw(alice.email), password: raw("not the password") });
      const body = res.body as Json;
      expect({ status: res.status >= 400 && res.status < 500 ? "4xx" : res.status, result: body?.result, msg: typeof body?.msg }).toEqual({ status: "4xx", result: "error", msg: "string" });
    });

    test("getOwnUser: GET /users/me parses as GetOwnUserResult", async () => {
      expect(expectParses(await app.get("users/me"), "GetOwnUserResult").user_id).toBe(alice.id);
    });
  });

  describe("load (lib/model/store.dart)", () => {
    test("registerQueue: POST /register with the app's parameters parses as InitialSnapshot", async () => {
      const res = await app.post("register", REGISTER_PARAMS);
      if (res.status === 200 && typeof (res.body as Json).queue_id === "string") {
        snapshot = res.body as Json;
        loop = new AppEventLoop(() => app, snapshot.queue_id, snapshot.last_event_id);
      }
      expectParses(res, "InitialSnapshot");
    });

    test("registerQueue with a wrong API key: HTTP 401, on which the app logs the account out", async () => {
      const res = await new FlutterConnection(server.baseUrl, { email: alice.email, apiKey: "x".repeat(32) }).post("register", REGISTER_PARAMS);
      expect(res.status).toBe(401);
    });

    test("registerQueue: the invariants I1-I4 the app relies on beyond its parser (modern-clients.md §2.4)", () => {
      const broken: string[] = [];
      // I1 lib/model/store.dart: a queue id, and the self user among realm_users.
      if (typeof snapshot.queue_id !== "string") broken.push("I1: queue_id is not a string");
      if (!(snapshot.realm_users ?? []).some((u: Json) => u.user_id === alice.id)) broken.push("I1: the self user is not in realm_users");
      // I2 lib/model/message.dart: one of the two delete-permission settings.
      if (snapshot.realm_can_delete_own_message_group == null && snapshot.realm_delete_own_message_policy == null) {
        broken.push("I2: neither realm_can_delete_own_message_group nor realm_delete_own_message_policy");
      }
      // I3 lib/model/channel.dart: realm_mandatory_topics when there is no realm_topics_policy.
      if (snapshot.realm_topics_policy == null && typeof snapshot.realm_mandatory_topics !== "boolean") {
        broken.push("I3: neither realm_topics_policy nor a boolean realm_mandatory_topics");
      }
      // I4 lib/model/channel.dart: each channel's posting permission, new or old style.
      for (const list of ["streams", "subscriptions"]) {
        for (const stream of snapshot[list] ?? []) {
          if (stream.can_send_message_group == null && stream.stream_post_policy == null) {
            broken.push(`I4: ${list} ${stream.stream_id} has neither can_send_message_group nor stream_post_policy`);
          }
        }
      }
      expect(broken).toEqual([]);
    });

    test("registerQueue: unread_msgs id lists sorted without duplicates (asserted in lib/api/model/initial_snapshot.dart)", () => {
      const unsorted: string[] = [];
      for (const kind of ["pms", "streams", "huddles"]) {
        for (const entry of snapshot.unread_msgs?.[kind] ?? []) {
          const ids: number[] = entry.unread_message_ids ?? [];
          if (ids.some((id, i) => i > 0 && id <= ids[i - 1])) unsorted.push(`${kind}: ${JSON.stringify(ids)}`);
        }
      }
      expect(unsorted).toEqual([]);
      expect((snapshot.unread_msgs?.streams ?? []).length).toBeGreaterThan(0); // the mention sent before loading is unread
    });

    test("version gate at load: /register zulip_feature_level >= 277 (ServerVersionNotAllowedException)", () => {
      expect(snapshot.zulip_feature_level).toBeGreaterThanOrEqual(MIN_ALLOWED_FEATURE_LEVEL);
    });

    test("fetchServerEmojiData: GET server_emoji_data_url, unauthenticated, parses as ServerEmojiData", async () => {
      expect(typeof snapshot.server_emoji_data_url).toBe("string");
      const body = expectParses(await app.fetchUnauthenticated(snapshot.server_emoji_data_url), "ServerEmojiData");
      expect(Object.keys(body.code_to_names ?? {}).length).toBeGreaterThan(0);
    });
  });

  describe("getEvents: GET /events long polls, each event read with Event.fromJson", () => {
    let sentContent: string;

    // The app's GET /events gives up after event_queue_longpoll_timeout_seconds (lib/model/store.dart).
    const longPollTimeout = () => (snapshot.event_queue_longpoll_timeout_seconds ?? 90) * 1000;
    test(
      "heartbeat on an idle queue, within event_queue_longpoll_timeout_seconds",
      async () => {
        expectEvent(await events().until((e) => e.type === "heartbeat", longPollTimeout()), "HeartbeatEvent");
      },
      100_000 + 15_000,
    );

    test("getEvents with dont_block=true parses as GetEventsResult", async () => {
      expectParses(await events().dontBlock(), "GetEventsResult");
    });

    test("getEvents on an unknown queue: a 4xx error with code BAD_EVENT_QUEUE_ID, so the app registers again", async () => {
      const res = await app.get("events", { queue_id: raw("no-such-queue"), last_event_id: -1 });
      expect({ status: res.status >= 400 && res.status < 500 ? "4xx" : res.status, code: (res.body as Json)?.code }).toEqual({ status: "4xx", code: "BAD_EVENT_QUEUE_ID" });
    });

    test("sendMessage (channel): POST /messages type=channel, to=<id>, read_by_sender, queue_id, local_id parses as SendMessageResult; its message event echoes local_message_id", async () => {
      sentContent = "sent from the app";
      const res = await app.post("messages", {
        type: raw("channel"),
        to: channelId,
        topic: raw("greetings"),
        content: raw(sentContent),
        queue_id: raw(events().queueId),
        local_id: raw("1"),
        read_by_sender: true,
      });
      sentId = expectParses(res, "SendMessageResult").id;
      const event = await events().until((e) => e.type === "message" && e.message?.id === sentId);
      expectEvent(event, "MessageEvent");
      // The outbox message is replaced when this comes back (lib/model/message.dart, OutboxMessage).
      expect(event.local_message_id).toBe("1");
      expect(event.flags).toContain("read");
    });

    test("sendMessage (direct): POST /messages type=direct, to=[ids] parses as SendMessageResult; its message event parses", async () => {
      const res = await app.post("messages", { type: raw("direct"), to: [ownerId], content: raw("a DM from the app"), read_by_sender: true });
      const id = expectParses(res, "SendMessageResult").id;
      expectEvent(await events().until((e) => e.type === "message" && e.message?.id === id), "MessageEvent");
    });

    test("message event for another user's channel message", async () => {
      const id = (await ok("owner sends", owner.post("/messages", { type: "stream", to: "flutter channel", topic: "greetings", content: "from the owner" }))).id;
      expectEvent(await events().until((e) => e.type === "message" && e.message?.id === id), "MessageEvent");
    });

    test("updateMessage (edit): PATCH /messages/{id} content, prev_content_sha256; update_message event", async () => {
      const res = await app.patch(`messages/${sentId}`, { content: raw("edited in the app"), prev_content_sha256: raw(sha256(sentContent)) });
      expectParses(res, "UpdateMessageResult");
      expectEvent(await events().until((e) => e.type === "update_message" && e.message_id === sentId), "UpdateMessageEvent");
    });

    test("updateMessage (move): PATCH /messages/{id} topic, propagate_mode, send_notification_to_*; update_message event with the move", async () => {
      const res = await app.patch(`messages/${sentId}`, {
        topic: raw("moved by the app"),
        propagate_mode: raw("change_one"),
        send_notification_to_old_thread: false,
        send_notification_to_new_thread: false,
      });
      expectParses(res, "UpdateMessageResult");
      const event = await events().until((e) => e.type === "update_message" && e.message_id === sentId);
      expectEvent(event, "UpdateMessageEvent");
      expect(event.subject).toBe("moved by the app");
    });

    test("deleteMessage: DELETE /messages/{id} of the app's own message succeeds exactly when the snapshot says it may (I2)", async () => {
      const id = expectParses(await app.post("messages", { type: raw("channel"), to: channelId, topic: raw("greetings"), content: raw("regret"), read_by_sender: true }), "SendMessageResult").id;
      const inGroup = (groupId: number, seen = new Set<number>()): boolean => {
        const group = (snapshot.realm_user_groups ?? []).find((g: Json) => g.id === groupId);
        if (!group || seen.has(groupId)) return false;
        seen.add(groupId);
        return group.members.includes(alice.id) || group.direct_subgroup_ids.some((sub: number) => inGroup(sub, seen));
      };
      const setting = snapshot.realm_can_delete_own_message_group;
      const policy = snapshot.realm_delete_own_message_policy;
      // lib/model/message.dart: the group setting (FL 291) or else the policy (1 members, 3 full members, 5 everyone).
      const allowed =
        typeof setting === "number" ? inGroup(setting)
        : setting && typeof setting === "object" ? setting.direct_members.includes(alice.id) || setting.direct_subgroups.some((sub: number) => inGroup(sub))
        : policy === 1 || policy === 5 || (policy === 3 && snapshot.realm_waiting_period_threshold === 0);
      const res = await app.delete(`messages/${id}`);
      expect({ allowed, status: res.status === 200 ? "accepted" : res.status >= 400 && res.status < 500 ? "refused" : res.status }).toEqual({
        allowed,
        status: allowed ? "accepted" : "refused",
      });
    });

    test("delete_message event (bulk_message_deletion) when a message is deleted", async () => {
      const id = (await ok("owner sends", owner.post("/messages", { type: "stream", to: "flutter channel", topic: "greetings", content: "to delete" }))).id;
      await events().until((e) => e.type === "message" && e.message?.id === id);
      await ok("owner deletes", owner.delete(`/messages/${id}`));
      expectEvent(await events().until((e) => e.type === "delete_message"), "DeleteMessageEvent");
    });

    let pollId: number;
    test("a poll message (widget submessages) parses, in its message event", async () => {
      pollId = (await ok("owner sends a poll", owner.post("/messages", { type: "stream", to: "flutter channel", topic: "greetings", content: "/poll Favourite colour?\nred\nblue" }))).id;
      const event = await events().until((e) => e.type === "message" && e.message?.id === pollId);
      expectEvent(event, "MessageEvent");
      expect(event.message.submessages).toEqual([expect.objectContaining({ msg_type: "widget", sender_id: ownerId })]);
    });

    test("sendSubmessage: POST /submessage (a poll vote, content JSON-encoded); submessage event", async () => {
      expectAccepted(await app.post("submessage", { message_id: pollId, msg_type: raw("widget"), content: { type: "vote", key: "canned,0", vote: 1 } }));
      const event = await events().until((e) => e.type === "submessage" && e.message_id === pollId);
      expectEvent(event, "SubmessageEvent");
      // lib/model/message.dart applies it with PollEventSubmessage.fromJson(jsonDecode(content)).
      expect(readAsFlutter("PollVoteEventSubmessage", JSON.parse(event.content)).failures).toEqual([]);
    });

    test("updateMessageFlags: POST /messages/flags add read parses as UpdateMessageFlagsResult; update_message_flags add event", async () => {
      const res = await app.post("messages/flags", { messages: [mentionId], op: raw("add"), flag: raw("read") });
      expectParses(res, "UpdateMessageFlagsResult");
      expectEvent(await events().until((e) => e.type === "update_message_flags" && e.op === "add" && e.flag === "read"), "UpdateMessageFlagsAddEvent");
    });

    test("updateMessageFlags: remove read; update_message_flags remove event with message_details (lib/model/unreads.dart reads it with !)", async () => {
      expectAccepted(await app.post("messages/flags", { messages: [mentionId], op: raw("remove"), flag: raw("read") }));
      const event = await events().until((e) => e.type === "update_message_flags" && e.op === "remove" && e.flag === "read");
      expectEvent(event, "UpdateMessageFlagsRemoveEvent");
      expect(event.message_details?.[String(mentionId)]).toEqual(expect.objectContaining({ type: "stream", stream_id: channelId, topic: "greetings" }));
    });

    test("updateMessageFlagsForNarrow: POST /messages/flags/narrow (mark channel as read) parses as UpdateMessageFlagsForNarrowResult", async () => {
      const res = await app.post("messages/flags/narrow", {
        anchor: raw("oldest"),
        include_anchor: false,
        num_before: 0,
        num_after: 1000,
        narrow: [
          { operator: "channel", operand: channelId },
          { operator: "is", operand: "unread" },
        ],
        op: raw("add"),
        flag: raw("read"),
      });
      expect(expectParses(res, "UpdateMessageFlagsForNarrowResult").updated_count).toBeGreaterThan(0);
      expectEvent(await events().until((e) => e.type === "update_message_flags" && e.op === "add" && e.flag === "read"), "UpdateMessageFlagsAddEvent");
    });

    test("updateMessageFlagsForNarrow: mark as unread from a message on (numeric anchor, include_anchor, op remove)", async () => {
      const res = await app.post("messages/flags/narrow", {
        anchor: raw(mentionId),
        include_anchor: true,
        num_before: 0,
        num_after: 1000,
        narrow: [{ operator: "channel", operand: channelId }],
        op: raw("remove"),
        flag: raw("read"),
      });
      expect(expectParses(res, "UpdateMessageFlagsForNarrowResult").first_processed_id).toBe(mentionId);
      expectEvent(await events().until((e) => e.type === "update_message_flags" && e.op === "remove" && e.flag === "read"), "UpdateMessageFlagsRemoveEvent");
    });

    test("addReaction: POST /messages/{id}/reactions (raw emoji_name, emoji_code, reaction_type); reaction add event", async () => {
      expectAccepted(await app.post(`messages/${mentionId}/reactions`, { emoji_name: raw("octopus"), emoji_code: raw("1f419"), reaction_type: raw("unicode_emoji") }));
      expectEvent(await events().until((e) => e.type === "reaction" && e.op === "add"), "ReactionEvent");
    });

    test("removeReaction: DELETE /messages/{id}/reactions; reaction remove event", async () => {
      expectAccepted(await app.delete(`messages/${mentionId}/reactions`, { emoji_name: raw("octopus"), emoji_code: raw("1f419"), reaction_type: raw("unicode_emoji") }));
      expectEvent(await events().until((e) => e.type === "reaction" && e.op === "remove"), "ReactionEvent");
    });

    test("setTypingStatus (direct): POST /typing op, type=direct, to=[ids]", async () => {
      expectAccepted(await app.post("typing", { op: raw("start"), type: raw("direct"), to: [ownerId] }));
    });

    test("typing event (direct) from another user", async () => {
      await ok("owner types", owner.post("/typing", { op: "start", type: "private", to: [alice.id] }));
      expectEvent(await events().until((e) => e.type === "typing" && e.sender?.user_id === ownerId && e.message_type !== "stream"), "TypingEvent");
    });

    test("setTypingStatus (channel): POST /typing op, type=channel, stream_id, topic", async () => {
      expectAccepted(await app.post("typing", { op: raw("start"), type: raw("channel"), stream_id: channelId, topic: raw("greetings") }));
    });

    test("typing event (channel, stream_typing_notifications) from another user", async () => {
      await ok("owner types in the channel", owner.post("/typing", { op: "start", type: "channel", stream_id: channelId, topic: "greetings" }));
      expectEvent(await events().until((e) => e.type === "typing" && e.sender?.user_id === ownerId && e.message_type === "stream"), "TypingEvent");
    });

    test("updatePresence: POST /users/me/presence (slim_presence) parses as UpdatePresenceResult, with presences (lib/model/presence.dart reads them with !)", async () => {
      const res = await app.post("users/me/presence", { new_user_input: true, ping_only: false, status: raw("active"), slim_presence: true });
      const body = expectParses(res, "UpdatePresenceResult");
      expect(typeof body.presences).toBe("object");
      expect(body.presences).not.toBeNull();
    });

    test("presence event when another user becomes active", async () => {
      await ok("bob is active", bob.client.post("/users/me/presence", { status: "active", new_user_input: true }));
      expectEvent(await events().until((e) => e.type === "presence" && e.user_id === bob.id), "PresenceEvent");
    });

    let carolId: number;
    test("realm_user add event when a user joins", async () => {
      carolId = (await ok("owner creates carol", owner.post("/users", { email: "carol.new@example.com", password: "carol-pass-1", full_name: "Carol New", short_name: "carol" }))).user_id;
      expectEvent(await events().until((e) => e.type === "realm_user" && e.op === "add" && e.person?.user_id === carolId), "RealmUserAddEvent");
    });

    test("realm_user update event (full_name)", async () => {
      await ok("owner renames carol", owner.patch(`/users/${carolId}`, { full_name: "Carol Renamed" }));
      expectEvent(await events().until((e) => e.type === "realm_user" && e.person?.user_id === carolId && e.person?.full_name !== undefined), "RealmUserUpdateEvent");
    });

    test("realm_user deactivation arrives as update with is_active false (FL 222)", async () => {
      await ok("owner deactivates carol", owner.delete(`/users/${carolId}`));
      const event = await events().until((e) => e.type === "realm_user" && e.person?.user_id === carolId);
      expectEvent(event, "RealmUserUpdateEvent");
      expect(event.person.is_active).toBe(false);
    });

    let newChannelId: number;
    test("stream create event", async () => {
      await ok("owner creates a channel", owner.post("/users/me/subscriptions", { subscriptions: [{ name: "flutter new" }] }));
      newChannelId = (await ok("get_stream_id", owner.get("/get_stream_id", { stream: "flutter new" }))).stream_id;
      expectEvent(await events().until((e) => e.type === "stream" && e.op === "create"), "ChannelCreateEvent");
    });

    test("stream update event (description)", async () => {
      await ok("owner describes it", owner.patch(`/streams/${newChannelId}`, { description: "A **new** channel" }));
      expectEvent(await events().until((e) => e.type === "stream" && e.op === "update" && e.stream_id === newChannelId), "ChannelUpdateEvent");
    });

    test("subscription add event", async () => {
      await ok("owner subscribes alice", owner.post("/users/me/subscriptions", { subscriptions: [{ name: "flutter new" }], principals: [alice.email] }));
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "add"), "SubscriptionAddEvent");
    });

    test("subscribeToChannel: POST /users/me/subscriptions subscriptions=[{name}]; subscription add event", async () => {
      expectAccepted(await app.post("users/me/subscriptions", { subscriptions: [{ name: "flutter joined" }] }));
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "add" && e.subscriptions?.[0]?.name === "flutter joined"), "SubscriptionAddEvent");
    });

    test("unsubscribeFromChannel: DELETE /users/me/subscriptions subscriptions=[names]; subscription remove event", async () => {
      expectAccepted(await app.delete("users/me/subscriptions", { subscriptions: ["flutter joined"] }));
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "remove"), "SubscriptionRemoveEvent");
    });

    test("subscription peer_add event", async () => {
      await ok("owner subscribes bob", owner.post("/users/me/subscriptions", { subscriptions: [{ name: "flutter channel" }], principals: [bob.email] }));
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "peer_add"), "SubscriptionPeerAddEvent");
    });

    test("subscription peer_remove event", async () => {
      await ok("owner unsubscribes bob", owner.delete("/users/me/subscriptions", { subscriptions: ["flutter channel"], principals: [bob.email] }));
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "peer_remove"), "SubscriptionPeerRemoveEvent");
    });

    test("updateSubscriptionSettings: POST /users/me/subscriptions/properties (is_muted, color); subscription update events", async () => {
      const res = await app.post("users/me/subscriptions/properties", {
        subscription_data: [
          { stream_id: newChannelId, property: "is_muted", value: true },
          { stream_id: newChannelId, property: "color", value: "#ee7700" },
        ],
      });
      expectAccepted(res);
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "update" && e.property === "is_muted"), "SubscriptionUpdateEvent");
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "update" && e.property === "color"), "SubscriptionUpdateEvent");
    });

    test("subscription remove event", async () => {
      await ok("owner unsubscribes alice", owner.delete("/users/me/subscriptions", { subscriptions: ["flutter new"], principals: [alice.email] }));
      expectEvent(await events().until((e) => e.type === "subscription" && e.op === "remove"), "SubscriptionRemoveEvent");
    });

    test("stream delete event", async () => {
      await ok("owner deletes the channel", owner.delete(`/streams/${newChannelId}`));
      expectEvent(await events().until((e) => e.type === "stream" && e.op === "delete"), "ChannelDeleteEvent");
    });

    test("updateSettings: PATCH /settings (twenty_four_hour_time, raw emojiset); user_settings update events", async () => {
      expectAccepted(await app.patch("settings", { twenty_four_hour_time: true }));
      expectEvent(await events().until((e) => e.type === "user_settings" && e.property === "twenty_four_hour_time"), "UserSettingsUpdateEvent");
      expectAccepted(await app.patch("settings", { emojiset: raw("google") }));
      expectEvent(await events().until((e) => e.type === "user_settings" && e.property === "emojiset"), "UserSettingsUpdateEvent");
    });

    test("updateUserTopic: POST /user_topics stream_id, raw topic, visibility_policy=followed; user_topic event", async () => {
      // Not "greetings": the mention there followed it for Alice already (automatically_follow_topics_where_mentioned).
      expectAccepted(await app.post("user_topics", { stream_id: channelId, topic: raw("plans"), visibility_policy: 3 }));
      expectEvent(await events().until((e) => e.type === "user_topic"), "UserTopicEvent");
    });

    test("updateStatus: POST /users/me/status (raw text and emoji); user_status event", async () => {
      expectAccepted(
        await app.post("users/me/status", { status_text: raw("on the phone"), emoji_name: raw("octopus"), emoji_code: raw("1f419"), reaction_type: raw("unicode_emoji") }),
      );
      expectEvent(await events().until((e) => e.type === "user_status" && e.user_id === alice.id), "UserStatusEvent");
    });

    test("alert_words event", async () => {
      await ok("alice adds an alert word", alice.client.post("/users/me/alert_words", { alert_words: ["flutterword"] }));
      expectEvent(await events().until((e) => e.type === "alert_words"), "AlertWordsEvent");
    });

    test("custom_profile_fields event", async () => {
      await ok("owner adds a profile field", owner.post("/realm/profile_fields", { name: "Favourite app", field_type: 1, hint: "" }));
      expectEvent(await events().until((e) => e.type === "custom_profile_fields"), "CustomProfileFieldsEvent");
    });

    test("realm_emoji event (legacy update below FL 491)", async () => {
      const res = await uploadFiles(owner, "/realm/emoji/flutter_emoji", [imagePart(await makePng(32, 32), "flutter.png", "image/png")]);
      if (res.json?.result !== "success") throw new Error(`uploading an emoji: HTTP ${res.status} ${res.body.toString("utf8")}`);
      expectEvent(await events().until((e) => e.type === "realm_emoji"), ["RealmEmojiUpdateEvent", "RealmEmojiAddEvent"]);
    });

    let groupId: number;
    test("user_group add event", async () => {
      await ok("owner creates a group", owner.post("/user_groups/create", { name: "flutter fans", description: "fans", members: [alice.id] }));
      const event = await events().until((e) => e.type === "user_group" && e.op === "add");
      expectEvent(event, "UserGroupAddEvent");
      groupId = event.group.id;
    });

    test("user_group update event", async () => {
      await ok("owner describes the group", owner.patch(`/user_groups/${groupId}`, { description: "big fans" }));
      expectEvent(await events().until((e) => e.type === "user_group" && e.op === "update"), "UserGroupUpdateEvent");
    });

    test("user_group add_members event", async () => {
      await ok("owner adds bob", owner.post(`/user_groups/${groupId}/members`, { add: [bob.id] }));
      expectEvent(await events().until((e) => e.type === "user_group" && e.op === "add_members"), "UserGroupAddMembersEvent");
    });

    test("user_group remove_members event", async () => {
      await ok("owner removes bob", owner.post(`/user_groups/${groupId}/members`, { delete: [bob.id] }));
      expectEvent(await events().until((e) => e.type === "user_group" && e.op === "remove_members"), "UserGroupRemoveMembersEvent");
    });
  });

  describe("message lists and other calls", () => {
    /** `getMessages` (lib/api/route/messages.dart) as the message list's first fetch makes it. */
    const getMessages = (narrow: Json[], anchor = "newest", extra: FlutterParams = {}) =>
      app.get("messages", { narrow, anchor: raw(anchor), num_before: 100, num_after: 100, allow_empty_topic_name: true, ...extra });
    const ids = (body: Json) => (body.messages ?? []).map((m: Json) => m.id);

    test("getMessages: combined feed [] parses as GetMessagesResult", async () => {
      expect(ids(expectParses(await getMessages([]), "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: channel [channel:<id>], anchor first_unread", async () => {
      expect(ids(expectParses(await getMessages([{ operator: "channel", operand: channelId }], "first_unread"), "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: topic [channel, topic], older batch with a numeric anchor and include_anchor=false", async () => {
      const narrow = [
        { operator: "channel", operand: channelId },
        { operator: "topic", operand: "greetings" },
      ];
      expect(ids(expectParses(await getMessages(narrow), "GetMessagesResult"))).toContain(mentionId);
      const older = await app.get("messages", { narrow, anchor: raw(mentionId + 1), include_anchor: false, num_before: 100, num_after: 0, allow_empty_topic_name: true });
      expect(ids(expectParses(older, "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: topic permalink [channel, topic, with:<message id>]", async () => {
      const narrow = [
        { operator: "channel", operand: channelId },
        { operator: "topic", operand: "greetings" },
        { operator: "with", operand: mentionId },
      ];
      expect(ids(expectParses(await getMessages(narrow), "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: direct messages [dm:[ids with self]]", async () => {
      const narrow = [{ operator: "dm", operand: [ownerId, alice.id].sort((a, b) => a - b) }];
      expect(ids(expectParses(await getMessages(narrow), "GetMessagesResult"))).toContain(dmId);
    });

    test("getMessages: [is:mentioned]", async () => {
      expect(ids(expectParses(await getMessages([{ operator: "is", operand: "mentioned" }]), "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: [is:starred] after starring with updateMessageFlags", async () => {
      expectParses(await app.post("messages/flags", { messages: [mentionId], op: raw("add"), flag: raw("starred") }), "UpdateMessageFlagsResult");
      expect(ids(expectParses(await getMessages([{ operator: "is", operand: "starred" }]), "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: [search:<text>]", async () => {
      expect(ids(expectParses(await getMessages([{ operator: "search", operand: "flutterword" }]), "GetMessagesResult"))).toContain(mentionId);
    });

    test("getMessages: an edited and moved message, with its edit_history", async () => {
      const narrow = [
        { operator: "channel", operand: channelId },
        { operator: "topic", operand: "moved by the app" },
      ];
      const body = expectParses(await getMessages(narrow), "GetMessagesResult");
      expect(ids(body)).toContain(sentId);
      expectParses(await app.get(`messages/${sentId}`, { apply_markdown: false, allow_empty_topic_name: true }), "GetMessageResult");
    });

    test("getMessages: operators the app builds from links (is:dm, is:alerted, is:followed, is:resolved, negated, id)", async () => {
      const narrows: Json[][] = [
        [{ operator: "is", operand: "dm" }],
        [{ operator: "is", operand: "alerted" }],
        [{ operator: "is", operand: "followed" }],
        [{ operator: "is", operand: "resolved" }],
        [{ operator: "channel", operand: channelId }, { operator: "is", operand: "resolved", negated: true }],
        [{ operator: "id", operand: String(mentionId) }],
      ];
      const failed: string[] = [];
      for (const narrow of narrows) {
        const res = await getMessages(narrow);
        const failures = res.status === 200 ? readAsFlutter("GetMessagesResult", res.body).failures : [`HTTP ${res.status}: ${JSON.stringify(res.body)}`];
        if (failures.length) failed.push(`${JSON.stringify(narrow)}: ${failures.join("; ")}`);
      }
      expect(failed).toEqual([]);
    });

    test("getMessage: GET /messages/{id} apply_markdown=false, allow_empty_topic_name parses as GetMessageResult, with the Markdown", async () => {
      const body = expectParses(await app.get(`messages/${mentionId}`, { apply_markdown: false, allow_empty_topic_name: true }), "GetMessageResult");
      expect(body.message?.content).toBe("hello @**Alice Flutter** flutterword");
    });

    test("getChannelTopics: GET /users/me/{stream_id}/topics allow_empty_topic_name parses as GetChannelTopicsResult", async () => {
      const body = expectParses(await app.get(`users/me/${channelId}/topics`, { allow_empty_topic_name: true }), "GetChannelTopicsResult");
      expect((body.topics ?? []).map((t: Json) => t.name)).toContain("greetings");
    });

    test("uploadFile: POST /user_uploads (multipart file) parses as UploadFileResult (uri)", async () => {
      uploadUri = expectParses(await app.upload("user_uploads", "notes.txt", Buffer.from("uploaded by the app"), "text/plain"), "UploadFileResult").uri;
    });

    test("getFileTemporaryUrl: GET /user_uploads/{realm_id}/{filename} parses as GetFileTemporaryUrlResult", async () => {
      expect(uploadUri).toMatch(/^\/user_uploads\//);
      expectParses(await app.get(uploadUri.slice(1)), "GetFileTemporaryUrlResult");
    });

    test("getReadReceipts: GET /messages/{id}/read_receipts parses as GetReadReceiptsResult", async () => {
      // The app offers read receipts only when realm_enable_read_receipts is on.
      await owner.patch("/realm", { enable_read_receipts: true });
      expectParses(await app.get(`messages/${mentionId}/read_receipts`), "GetReadReceiptsResult");
    });

    test("addFcmToken: POST /users/me/android_gcm_reg_id (raw token), FL < 468", async () => {
      expectAccepted(await app.post("users/me/android_gcm_reg_id", { token: raw("fcm-token-".padEnd(152, "x")) }));
    });

    test("addApnsToken: POST /users/me/apns_device_token (raw token, appid), FL < 468", async () => {
      expectAccepted(await app.post("users/me/apns_device_token", { token: raw("ab".repeat(32)), appid: raw("com.zulip.flutter") }));
    });

    test("removeFcmToken, removeApnsToken: DELETE the same, as at logout", async () => {
      expectAccepted(await app.delete("users/me/android_gcm_reg_id", { token: raw("fcm-token-".padEnd(152, "x")) }));
      expectAccepted(await app.delete("users/me/apns_device_token", { token: raw("ab".repeat(32)) }));
    });

    test("every other event the queue delivered parses too (a failure would make the app re-register)", () => {
      expect(events().strayFailures).toEqual([]);
    });
  });

  // From feature level 371 on the app takes Zulip 10.0's paths: empty topics (I5), permissions read
  // from group-setting values (I2, I4), deactivated groups, saved snippets, archived channels and
  // the narrower edit timestamps. The app ignores realm events, so it sees a changed setting when
  // it registers again.
  describe("Zulip 10.0's paths (feature level 371)", () => {
    /** The app's group-setting membership test (lib/model/user_group.dart): a group id, or an anonymous group. */
    const appHasPermission = (snap: Json, userId: number, value: unknown): boolean => {
      const groups: Json[] = snap.realm_user_groups ?? [];
      const inGroup = (groupId: number, seen = new Set<number>()): boolean => {
        const group = groups.find((g) => g.id === groupId);
        if (!group || seen.has(groupId)) return false;
        seen.add(groupId);
        return group.members.includes(userId) || group.direct_subgroup_ids.some((sub: number) => inGroup(sub, seen));
      };
      if (typeof value === "number") return inGroup(value);
      const anonymous = value as { direct_members: number[]; direct_subgroups: number[] };
      return anonymous.direct_members.includes(userId) || anonymous.direct_subgroups.some((sub) => inGroup(sub));
    };
    const register = async (): Promise<Json> => expectParses(await app.post("register", REGISTER_PARAMS), "InitialSnapshot");
    const systemGroup = (snap: Json, name: string): number => (snap.realm_user_groups as Json[]).find((g) => g.name === name)!.id;
    const refusedOrAccepted = (res: FlutterResponse) => (res.status === 200 ? "accepted" : res.status >= 400 && res.status < 500 ? "refused" : `HTTP ${res.status}`);

    test("no 'unsupported server' banner: /server_settings and /register report feature level 371 and Zulip 10.0", async () => {
      const settings = expectParses(await new FlutterConnection(server.baseUrl, null).get("server_settings", null), "GetServerSettingsResult");
      expect({ settings: settings.zulip_feature_level >= MIN_SUPPORTED_FEATURE_LEVEL, register: snapshot.zulip_feature_level >= MIN_SUPPORTED_FEATURE_LEVEL }).toEqual({ settings: true, register: true });
      expect(snapshot.zulip_version).toBe("10.0");
    });

    test("empty topics (FL 334, I5): the app sends topic \"\" and, with empty_topic_name, reads \"\" back in events, fetches and topic lists", async () => {
      expect(typeof snapshot.realm_empty_topic_display_name).toBe("string");
      const id = expectParses(await app.post("messages", { type: raw("channel"), to: channelId, topic: raw(""), content: raw("in the general chat"), read_by_sender: true }), "SendMessageResult").id;
      const event = await events().until((e) => e.type === "message" && e.message?.id === id);
      expectEvent(event, "MessageEvent");
      expect(event.message.subject).toBe("");
      expect(expectParses(await app.get(`messages/${id}`, { apply_markdown: true, allow_empty_topic_name: true }), "GetMessageResult").message.subject).toBe("");
      const topics = expectParses(await app.get(`users/me/${channelId}/topics`, { allow_empty_topic_name: true }), "GetChannelTopicsResult").topics as Json[];
      expect(topics.map((t) => t.name)).toContain("");
    });

    test("\"(no topic)\" and the display name sent as the topic mean the empty topic (FL 370)", async () => {
      for (const topic of ["(no topic)", snapshot.realm_empty_topic_display_name as string]) {
        const id = expectParses(await app.post("messages", { type: raw("channel"), to: channelId, topic: raw(topic), content: raw(`sent as ${topic}`), read_by_sender: true }), "SendMessageResult").id;
        expect({ topic, subject: (await ok("fetch", owner.get(`/messages/${id}`, { allow_empty_topic_name: true }))).message.subject }).toEqual({ topic, subject: "" });
      }
    });

    test("deleting one's own message as realm_can_delete_own_message_group says, for a named and an anonymous group (FL 291, I2)", async () => {
      const outcomes: Json[] = [];
      const base = await register();
      const values = [{ direct_members: [alice.id], direct_subgroups: [] }, systemGroup(base, "role:nobody"), { direct_members: [bob.id], direct_subgroups: [systemGroup(base, "role:administrators")] }];
      for (const value of values) {
        await ok("setting the group", owner.patch("/realm", { can_delete_own_message_group: JSON.stringify({ new: value }) }));
        const snap = await register();
        const allowed = appHasPermission(snap, alice.id, snap.realm_can_delete_own_message_group);
        const id = expectParses(await app.post("messages", { type: raw("channel"), to: channelId, topic: raw("greetings"), content: raw("second thoughts"), read_by_sender: true }), "SendMessageResult").id;
        outcomes.push({ value, allowed, server: refusedOrAccepted(await app.delete(`messages/${id}`)) });
      }
      await ok("restoring", owner.patch("/realm", { can_delete_own_message_group: JSON.stringify({ new: systemGroup(base, "role:everyone") }) }));
      expect(outcomes.map((o) => o.allowed)).toEqual([true, false, false]);
      expect(outcomes.map((o) => o.server)).toEqual(outcomes.map((o) => (o.allowed ? "accepted" : "refused")));
    });

    test("posting in a channel as its can_send_message_group says (FL 333, I4)", async () => {
      await ok("creating", owner.post("/users/me/subscriptions", { subscriptions: [{ name: "flutter announcements" }], principals: [OWNER_EMAIL, alice.email] }));
      const streamId = (await ok("get_stream_id", owner.get("/get_stream_id", { stream: "flutter announcements" }))).stream_id;
      const outcomes: Json[] = [];
      for (const name of ["role:administrators", "role:members"]) {
        const groupId = systemGroup(snapshot, name);
        await ok("setting who may post", owner.patch(`/streams/${streamId}`, { can_send_message_group: JSON.stringify({ new: groupId }) }));
        const snap = await register();
        const channel = (snap.subscriptions as Json[]).find((sub) => sub.stream_id === streamId)!;
        const allowed = appHasPermission(snap, alice.id, channel.can_send_message_group);
        const res = await app.post("messages", { type: raw("channel"), to: streamId, topic: raw("news"), content: raw("may I?"), read_by_sender: true });
        outcomes.push({ name, allowed, server: refusedOrAccepted(res) });
      }
      expect(outcomes).toEqual([
        { name: "role:administrators", allowed: false, server: "refused" },
        { name: "role:members", allowed: true, server: "accepted" },
      ]);
    });

    test("a deactivated user group (FL 290, include_deactivated_groups): user_group update event with deactivated, then in realm_user_groups", async () => {
      const groupId = (await ok("creating a group", owner.post("/user_groups/create", { name: "flutter readers", description: "", members: JSON.stringify([bob.id]) }))).group_id as number;
      expect(typeof groupId).toBe("number");
      await events().until((e) => e.type === "user_group" && e.op === "add" && e.group?.id === groupId);
      await ok("deactivating", owner.post(`/user_groups/${groupId}/deactivate`));
      const event = await events().until((e) => e.type === "user_group" && e.op === "update" && e.group_id === groupId);
      expectEvent(event, "UserGroupUpdateEvent");
      expect(event.data).toEqual({ deactivated: true });
      expect(((await register()).realm_user_groups as Json[]).find((g) => g.id === groupId)?.deactivated).toBe(true);
    });

    test("saved snippets (FL 297, 368): the snapshot's saved_snippets and the saved_snippets add, update and remove events", async () => {
      expect(Array.isArray(snapshot.saved_snippets)).toBe(true);
      const id = (await ok("creating", alice.client.post("/saved_snippets", { title: "greeting", content: "Hello there!" }))).saved_snippet_id as number;
      expectEvent(await events().until((e) => e.type === "saved_snippets" && e.op === "add"), "SavedSnippetsAddEvent");
      await ok("editing", alice.client.patch(`/saved_snippets/${id}`, { content: "Hello again!" }));
      expectEvent(await events().until((e) => e.type === "saved_snippets" && e.op === "update"), "SavedSnippetsUpdateEvent");
      await ok("deleting", alice.client.delete(`/saved_snippets/${id}`));
      expectEvent(await events().until((e) => e.type === "saved_snippets" && e.op === "remove"), "SavedSnippetsRemoveEvent");
    });

    test("a moved message carries last_moved_timestamp and no last_edit_timestamp (FL 365)", async () => {
      const id = expectParses(await app.post("messages", { type: raw("channel"), to: channelId, topic: raw("before the move"), content: raw("moving soon"), read_by_sender: true }), "SendMessageResult").id;
      expectAccepted(await app.patch(`messages/${id}`, { topic: raw("after the move"), propagate_mode: raw("change_one"), send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
      const moved = expectParses(await app.get(`messages/${id}`, { apply_markdown: true, allow_empty_topic_name: true }), "GetMessageResult").message as Json;
      expect({ moved: typeof moved.last_moved_timestamp, edited: moved.last_edit_timestamp }).toEqual({ moved: "number", edited: undefined });
    });

    test("archiving a channel (FL 315, 343): a stream delete event with stream_ids, parsed as ChannelDeleteEvent", async () => {
      await ok("creating", owner.post("/users/me/subscriptions", { subscriptions: [{ name: "flutter archive" }], principals: [OWNER_EMAIL, alice.email] }));
      const streamId = (await ok("get_stream_id", owner.get("/get_stream_id", { stream: "flutter archive" }))).stream_id;
      await ok("archiving", owner.delete(`/streams/${streamId}`));
      const event = await events().until((e) => e.type === "stream" && e.op === "delete" && (e.stream_ids ?? []).includes(streamId));
      expectEvent(event, "ChannelDeleteEvent");
    });

    test("every event of these paths parses too", () => {
      expect(events().strayFailures).toEqual([]);
    });
  });
});
