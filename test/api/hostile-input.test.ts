// What a security review confirmed a member or guest could do, each refused with a clear 400
// before it reaches Postgres or costs the node: oversized lists and strings, integers past
// Postgres' range, NUL bytes, names that hide characters, a guest reading every public stream.
import request from "supertest";
import { createTestUser, type TestUser } from "../support/users.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiResponse } from "../support/client.ts";

const BIG = 99_999_999_999; // past Postgres' integer, still a safe JavaScript integer

describe.each(MODES)("hostile input (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;
  let guest: TestUser;
  let groupId: number;
  let messageId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Mallory Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
    const group = await server.owner.post("/user_groups/create", { name: "crew", description: "d", members: [member.id] });
    expect(group.body.result).toBe("success");
    groupId = (await server.owner.get("/user_groups")).body.user_groups.find((g: { name: string }) => g.name === "crew").id;
    messageId = (await member.client.post("/messages", { type: "stream", to: "general", topic: "t", content: "hello" })).body.id;
  });
  afterAll(() => server.stop());

  /** The counts of the tables a refused request could have written to. */
  async function rowCounts(): Promise<Record<string, number>> {
    const prisma = server.running.services.db.prisma;
    const [messages, streams, groups, alertWords, subscriptions, users] = await Promise.all([
      prisma.message.count(),
      prisma.stream.count(),
      prisma.userGroup.count(),
      prisma.alertWord.count(),
      prisma.subscription.count(),
      prisma.userProfile.count(),
    ]);
    return { messages, streams, groups, alertWords, subscriptions, users };
  }

  function expectRefused(res: ApiResponse, msg: string | RegExp): void {
    expect(res.status).toBe(400);
    expect(res.body.result).toBe("error");
    // Zulip's narrow errors have a code of their own.
    expect(res.body.code).toBe(typeof msg === "string" && msg.startsWith("Invalid narrow") ? "BAD_NARROW" : "BAD_REQUEST");
    if (typeof msg === "string") expect(res.body.msg).toBe(msg);
    else expect(res.body.msg).toMatch(msg);
  }

  test("a guest cannot register for every public stream's messages", async () => {
    const res = await guest.client.post("/register", { all_public_streams: true, event_types: ["message"] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg: "User not authorized for this query", code: "BAD_REQUEST" });
    // A member still may.
    expect((await member.client.post("/register", { all_public_streams: true, event_types: ["message"] })).body.result).toBe("success");
  });

  describe("unbounded inputs are refused, naming the parameter", () => {
    // Parameters may come in the body of a GET, where a URL could not hold them.
    const fetchInBody = async (narrow: unknown): Promise<ApiResponse> => {
      const res = await member.client.raw("get", "/messages").type("form").send({ anchor: "newest", num_before: "10", num_after: "0", narrow: JSON.stringify(narrow) });
      return { status: res.status, body: res.body, headers: {} };
    };
    const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
    const cases: Array<[string, () => Promise<ApiResponse>, string | RegExp]> = [
      ["event_types of 40,000 entries", () => member.client.post("/register", { event_types: Array(40_000).fill("message") }), "event_types is too long (limit: 100000 characters)"],
      ["event_types of 101 entries", () => member.client.post("/register", { event_types: Array(101).fill("message") }), "event_types has too many items (limit: 100)"],
      ["/messages/render past 10,000 bytes", () => member.client.post("/messages/render", { content: "é".repeat(5001) }), "Message too long (limit: 10000 bytes)"],
      ["a pm-with operand of 10,000 ids", () => fetchInBody([{ operator: "pm-with", operand: ids(10_000) }]), "narrow has too many items (limit: 1000)"],
      ["a pm-with operand of 1,001 emails", () => fetchInBody([["pm-with", ids(1001).map((i) => `u${i}@x.y`).join(",")]]), "Invalid narrow operator: too many users in pm-with (limit: 1000)"],
      ["10,000 sender terms", () => fetchInBody(ids(10_000).map(() => ["sender", member.email])), /^narrow (has too many items|is too long)/],
      ["101 narrow terms", () => member.client.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: ids(101).map(() => ["sender", member.email]) }), "narrow has too many terms (limit: 100)"],
      ["2,000 principals", () => server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "many" }], principals: ids(2000) }), "principals has too many items (limit: 1000)"],
      ["101 new streams", () => member.client.post("/users/me/subscriptions", { subscriptions: ids(101).map((i) => ({ name: `new${i}` })) }), "subscriptions has too many items (limit: 100)"],
      ["101 streams to leave", () => member.client.patch("/users/me/subscriptions", { delete: ids(101).map((i) => `new${i}`) }), "delete has too many items (limit: 100)"],
      ["100 streams for 101 users", () => server.owner.post("/users/me/subscriptions", { subscriptions: ids(100).map((i) => ({ name: `new${i}` })), principals: Array(101).fill(member.email) }), "Too many subscriptions in one request (limit: 10000)"],
      ["a topic past 10,000 characters in a mute", () => member.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "x".repeat(10_001), op: "add" }), "topic is too long (limit: 10000 characters)"],
    ];
    test.each(cases)("%s", async (_name, send, msg) => {
      const before = await rowCounts();
      expectRefused(await send(), msg);
      expect(await rowCounts()).toEqual(before);
    });

    test("a user keeps at most 100 alert words", async () => {
      const words = ids(101).map((i) => `word${i}`);
      expectRefused(await member.client.post("/users/me/alert_words", { alert_words: words }), "alert_words has too many items (limit: 100)");
      expect((await member.client.post("/users/me/alert_words", { alert_words: words.slice(0, 60) })).body.result).toBe("success");
      expectRefused(await member.client.post("/users/me/alert_words", { alert_words: words.slice(60) }), "Too many alert words (limit: 100)");
      expect((await member.client.get("/users/me/alert_words")).body.alert_words).toHaveLength(60);
      expect((await member.client.delete("/users/me/alert_words", { alert_words: words.slice(0, 60) })).body.alert_words).toEqual([]);
    });
  });

  describe("integers past Postgres' range are a 400, not a 500", () => {
    const narrowGet = (narrow: unknown) => member.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow });
    const cases: Array<[string, () => Promise<ApiResponse>]> = [
      ["narrow id operand", () => narrowGet([["id", String(BIG)]])],
      ["narrow near operand", () => narrowGet([{ operator: "near", operand: BIG }])],
      ["narrow sender id", () => narrowGet([{ operator: "sender", operand: BIG }])],
      ["narrow sender id as a string", () => narrowGet([["sender", String(BIG)]])],
      ["narrow pm-with ids", () => narrowGet([{ operator: "pm-with", operand: [BIG] }])],
      ["narrow stream id", () => narrowGet([{ operator: "stream", operand: BIG }])],
      ["a user group in the path", () => member.client.patch(`/user_groups/${BIG}`, { name: "x" })],
      ["a message in the path", () => member.client.get(`/messages/${BIG}`)],
      ["a message in the path, 30 digits", () => member.client.patch(`/messages/${"9".repeat(30)}`, { content: "x" })],
      ["a user in the path", () => server.owner.patch(`/users/${BIG}`, { full_name: "x" })],
      ["a stream in the path", () => server.owner.patch(`/streams/${BIG}`, { description: "x" })],
      ["a stream id in to", () => member.client.post("/messages", { type: "stream", to: BIG, topic: "t", content: "x" })],
      ["user ids in to", () => member.client.post("/messages", { type: "private", to: [BIG], content: "x" })],
      ["typing recipients", () => member.client.post("/typing", { op: "start", to: [BIG] })],
      ["group members", () => server.owner.post(`/user_groups/${groupId}/members`, { add: [BIG] })],
      ["a realm setting", () => server.owner.patch("/realm", { waiting_period_threshold: BIG })],
      ["message retention days", () => server.owner.patch("/realm", { message_retention_days: String(BIG) })],
      ["a flag's message ids", () => member.client.post("/messages/flags", { messages: [BIG], op: "add", flag: "starred" })],
      ["a subscription's stream id", () => member.client.patch("/users/me/subscriptions/muted_topics", { stream_id: BIG, topic: "t", op: "add" })],
      ["num_before", () => member.client.get("/messages", { anchor: "newest", num_before: BIG, num_after: 0 })],
      ["last_event_id", () => member.client.get("/events", { queue_id: "x", last_event_id: BIG })],
      ["a presence lookup", () => member.client.get(`/users/${BIG}/presence`)],
    ];
    test.each(cases)("%s", async (_name, send) => {
      const before = await rowCounts();
      const res = await send();
      expect(res.status).toBe(400);
      expect(res.body.result).toBe("error");
      expect(await rowCounts()).toEqual(before);
    });

    test("an anchor past the largest id reads as the newest", async () => {
      const res = await member.client.get("/messages", { anchor: String(BIG), num_before: 1, num_after: 0 });
      expect(res.body.result).toBe("success");
      expect(res.body.messages.map((m: { id: number }) => m.id)).toContain(messageId);
    });
  });

  describe("NUL bytes in any string are a 400 naming the parameter", () => {
    const cases: Array<[string, () => Promise<ApiResponse>, string]> = [
      ["message content", () => member.client.post("/messages", { type: "stream", to: "general", topic: "t", content: "a\u0000b" }), "content contains NULL (0x00) characters."],
      ["a topic", () => member.client.post("/messages", { type: "stream", to: "general", topic: "t\u0000", content: "x" }), "topic contains NULL (0x00) characters."],
      ["an edit", () => member.client.patch(`/messages/${messageId}`, { content: "\u0000" }), "content contains NULL (0x00) characters."],
      ["status text", () => member.client.post("/users/me/status", { status_text: "busy\u0000" }), "status_text contains NULL (0x00) characters."],
      ["an alert word", () => member.client.post("/users/me/alert_words", { alert_words: ["a\u0000"] }), "alert_words contains NULL (0x00) characters."],
      ["a narrow operand", () => member.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [["topic", "a\u0000"]] }), "narrow contains NULL (0x00) characters."],
      ["a search narrow", () => member.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [{ operator: "search", operand: "\u0000" }] }), "narrow contains NULL (0x00) characters."],
      ["a muted topic", () => member.client.patch("/users/me/subscriptions/muted_topics", { stream: "general", topic: "t\u0000", op: "add" }), "topic contains NULL (0x00) characters."],
      ["a stream name", () => member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "s\u0000" }] }), "subscriptions contains NULL (0x00) characters."],
      ["a full name", () => server.owner.patch(`/users/${member.id}`, { full_name: "Mal\u0000" }), "full_name contains NULL (0x00) characters."],
      ["a JSON-encoded full name", () => server.owner.patch(`/users/${member.id}`, { full_name: JSON.stringify("Mal\u0000") }), "full_name contains NULL (0x00) characters."],
      ["the fetch_api_key username", () => server.anonymous.post("/fetch_api_key", { username: "owner@example.com\u0000", password: "x" }), "username contains NULL (0x00) characters."],
      ["the query string", () => member.client.get("/messages", { anchor: "newest\u0000", num_before: 1, num_after: 0 }), "anchor contains NULL (0x00) characters."],
    ];
    test.each(cases)("%s", async (_name, send, msg) => {
      const before = await rowCounts();
      expectRefused(await send(), msg);
      expect(await rowCounts()).toEqual(before);
    });

    test("the API key itself", async () => {
      const res = await request(server.baseUrl).get("/api/v1/users/me").auth(member.email, "key\u0000");
      expectRefused({ status: res.status, body: res.body, headers: {} }, "api_key contains NULL (0x00) characters.");
      // The hot route of GET /messages declines it to the same answer.
      const hot = await request(server.baseUrl).get("/api/v1/messages").query({ anchor: "newest", num_before: 1, num_after: 0 }).auth(member.email, "\u0000");
      expect(hot.status).toBe(400);
    });
  });

  describe("names that hide characters", () => {
    test.each([
      ["a zero-width space", "general\u200b", 8],
      ["a right-to-left override", "\u202egeneral", 1],
      ["a control character", "gen\u0007eral", 4],
      ["an unassigned code point", "gen\u0378", 4],
    ])("a stream name with %s is refused, at its position", async (_what, name, position) => {
      const before = await rowCounts();
      const res = await member.client.post("/users/me/subscriptions", { subscriptions: [{ name }] });
      expectRefused(res, `Invalid character in stream name, at position ${position}.`);
      expect(await rowCounts()).toEqual(before);
    });

    test("renaming a stream to such a name is refused", async () => {
      const id = (await server.owner.get("/get_stream_id", { stream: "general" })).body.stream_id;
      expectRefused(await server.owner.patch(`/streams/${id}`, { new_name: "general\u200d" }), "Invalid character in stream name, at position 8.");
    });

    test("user and group names", async () => {
      expectRefused(await server.owner.patch(`/users/${member.id}`, { full_name: "Mallory\u200b Member" }), "Invalid characters in name!");
      expectRefused(await server.owner.patch(`/users/${member.id}`, { full_name: "\u2066Mallory" }), "Invalid characters in name!");
      expectRefused(await server.owner.post("/user_groups/create", { name: "crew\u200b", description: "d", members: [member.id] }), "Invalid character in user group name, at position 5.");
      expectRefused(await server.owner.patch(`/user_groups/${groupId}`, { name: "\u200bcrew" }), "Invalid character in user group name, at position 1.");
    });

    test("visible characters from every script and emoji stay welcome", async () => {
      const res = await member.client.post("/users/me/subscriptions", { subscriptions: [{ name: "日本語 équipe 🚀" }] });
      expect(res.body.result).toBe("success");
    });
  });

  describe("multipart bodies", () => {
    test("fields are read and files are never kept", async () => {
      const res = await request(server.baseUrl)
        .post("/api/v1/messages")
        .auth(member.email, member.client.credentials!.apiKey)
        .field("type", "stream")
        .field("to", "general")
        .field("topic", "multipart")
        .field("content", "with a file attached")
        .attach("file", Buffer.alloc(64 * 1024, 1), "blob.bin");
      expect(res.body).toMatchObject({ result: "success", msg: "" });
    });

    test("a body past the form limit is refused, with or without credentials", async () => {
      for (const auth of [true, false]) {
        let req = request(server.baseUrl).post("/api/v1/users/me/alert_words");
        if (auth) req = req.auth(member.email, member.client.credentials!.apiKey);
        const res = await req.field("alert_words", "[]").attach("file", Buffer.alloc(6 * 1024 * 1024, 1), "big.bin");
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" });
      }
    });
  });
});
