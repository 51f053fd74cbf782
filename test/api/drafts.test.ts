// Drafts synchronised between a user's clients (Zulip's feature level 87): GET/POST /drafts,
// PATCH/DELETE /drafts/{id}, the `drafts` section of /register and its events, and the user's
// enable_drafts_synchronization, which refuses every endpoint and deletes the drafts when off.
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createMember, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("drafts (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let streamId: number;
  let secretId: number;

  const drafts = async (user: TestUser) => (await user.client.get("/drafts")).body.drafts as Array<Record<string, unknown>>;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createMember(server, "alice.drafts@example.com", "Alice Drafts");
    bob = await createMember(server, "bob.drafts@example.com", "Bob Drafts");
    carol = await createMember(server, "carol.drafts@example.com", "Carol Drafts");
    expect((await alice.client.post("/users/me/subscriptions", { subscriptions: [{ name: "drafting" }] })).body.result).toBe("success");
    expect((await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "draft secret" }], invite_only: true })).body.result).toBe("success");
    const streams = (await server.owner.get("/streams", { include_all_active: true })).body.streams as Array<{ name: string; stream_id: number }>;
    streamId = streams.find((s) => s.name === "drafting")!.stream_id;
    secretId = streams.find((s) => s.name === "draft secret")!.stream_id;
  });
  afterAll(() => server.stop());

  test("a new user has none", async () => {
    expect((await alice.client.get("/drafts")).body).toEqual({ result: "success", msg: "", count: 0, drafts: [] });
    expect((await alice.client.post("/register", { fetch_event_types: ["drafts"] })).body.drafts).toEqual([]);
  });

  test("drafts are created as Zulip shapes them: topics only for streams, `to` as the conversation's", async () => {
    const sent = [
      { type: "stream", to: [streamId], topic: "sync drafts", content: "Let's add backend support.", timestamp: 1595479019 },
      { type: "private", to: [bob.id], topic: "ignored", content: "To Bob", timestamp: 1595479020 },
      { type: "private", to: [carol.id, bob.id, alice.id, bob.id], topic: "", content: "To the group", timestamp: 1595479021.5 },
      { type: "private", to: [alice.id], topic: "", content: "Note to self", timestamp: 1595479022 },
      { type: "private", to: [], topic: "nowhere", content: "\n\nNo one yet   ", timestamp: 1595479023 },
      { type: "", to: [streamId], topic: "x", content: "Undecided", timestamp: 1595479024 },
    ];
    const res = await alice.client.post("/drafts", { drafts: sent });
    expect(res.body).toEqual({ result: "success", msg: "", ids: [expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number)] });
    const ids = res.body.ids as number[];
    const expected = [
      { id: ids[0], type: "stream", to: [streamId], topic: "sync drafts", content: "Let's add backend support.", timestamp: 1595479019 },
      { id: ids[1], type: "private", to: [bob.id], topic: "", content: "To Bob", timestamp: 1595479020 },
      { id: ids[2], type: "private", to: [bob.id, carol.id].sort((a, b) => a - b), topic: "", content: "To the group", timestamp: 1595479021 },
      { id: ids[3], type: "private", to: [alice.id], topic: "", content: "Note to self", timestamp: 1595479022 },
      { id: ids[4], type: "", to: [], topic: "", content: "No one yet", timestamp: 1595479023 },
      { id: ids[5], type: "", to: [], topic: "", content: "Undecided", timestamp: 1595479024 },
    ];
    expect((await alice.client.get("/drafts")).body).toEqual({ result: "success", msg: "", count: 6, drafts: expected });
    // /register lists the newest first.
    expect((await alice.client.post("/register", { fetch_event_types: ["drafts"] })).body.drafts).toEqual([...expected].reverse());
    // Nobody else sees them.
    expect(await drafts(bob)).toEqual([]);
    for (const id of ids) expect((await alice.client.delete(`/drafts/${id}`)).body.result).toBe("success");
  });

  test("a draft without a timestamp is stamped now; a long topic is cut with an ellipsis", async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await alice.client.post("/drafts", { drafts: [{ type: "stream", to: [streamId], topic: "t".repeat(70), content: "Stamped" }] });
    const [draft] = await drafts(alice);
    expect(draft).toMatchObject({ id: res.body.ids[0], topic: `${"t".repeat(57)}...` });
    expect(draft.timestamp).toBeGreaterThanOrEqual(before);
    expect(draft.timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    await alice.client.delete(`/drafts/${res.body.ids[0]}`);
  });

  test.each([
    ["a negative timestamp", [{ type: "stream", to: [], topic: "t", content: "c", timestamp: -10.1 }], "Timestamp must not be negative."],
    ["a stream draft without a stream", [{ type: "stream", to: [], topic: "t", content: "c" }], "Must specify exactly 1 channel ID for channel messages"],
    ["a stream draft with two streams", [{ type: "stream", to: [1, 2], topic: "t", content: "c" }], "Must specify exactly 1 channel ID for channel messages"],
    ["a stream that does not exist", [{ type: "stream", to: [999999], topic: "t", content: "c" }], "Invalid channel ID"],
    ["a user who does not exist", [{ type: "private", to: [999999], topic: "", content: "c" }], "Invalid user ID 999999"],
    ["empty content", [{ type: "", to: [], topic: "", content: " \n " }], "Message must not be empty"],
    ["a good draft with a bad one", [{ type: "", to: [], topic: "", content: "fine" }, { type: "private", to: [999998], topic: "", content: "c" }], "Invalid user ID 999998"],
  ])("%s is refused and creates nothing", async (_name, list, msg) => {
    const res = await alice.client.post("/drafts", { drafts: list });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
    expect(await drafts(alice)).toEqual([]);
  });

  test("a private stream the user is not in is an invalid channel, even to the organization's owner", async () => {
    const res = await alice.client.post("/drafts", { drafts: [{ type: "stream", to: [secretId], topic: "t", content: "c" }] });
    expect(res.body).toMatchObject({ result: "error", msg: "Invalid channel ID" });
    // The owner is subscribed: allowed.
    const own = await server.owner.post("/drafts", { drafts: [{ type: "stream", to: [secretId], topic: "t", content: "c" }] });
    expect(own.body.result).toBe("success");
    await server.owner.delete(`/drafts/${own.body.ids[0]}`);
  });

  test.each([
    ["not JSON", "nope"],
    ["not a list", { type: "", to: [], topic: "", content: "c" }],
    ["an unknown type", [{ type: "huddle", to: [], topic: "", content: "c" }]],
    ["a missing field", [{ type: "", to: [], content: "c" }]],
    ["an unknown field", [{ type: "", to: [], topic: "", content: "c", extra: 1 }]],
    ["a `to` that is not ids", [{ type: "private", to: ["bob@example.com"], topic: "", content: "c" }]],
    ["content over the message limit", [{ type: "", to: [], topic: "", content: "x".repeat(10_001) }]],
    ["more drafts than a user may keep", Array.from({ length: 1001 }, () => ({ type: "", to: [], topic: "", content: "c" }))],
  ])("%s is refused with a clear error", async (_name, value) => {
    const res = await alice.client.post("/drafts", { drafts: value });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg: expect.stringMatching(/drafts|extra/), code: expect.any(String) });
    expect(await drafts(alice)).toEqual([]);
  });

  test("editing replaces the draft whole; another user's or a missing draft is not found", async () => {
    const created = await alice.client.post("/drafts", { drafts: [{ type: "stream", to: [streamId], topic: "drafts", content: "The API should be good", timestamp: 1595505700 }] });
    const id = created.body.ids[0] as number;
    const edited = { type: "private", to: [bob.id], topic: "ignored", content: "Now to Bob", timestamp: 1595505800 };
    expect((await alice.client.patch(`/drafts/${id}`, { draft: edited })).body).toEqual({ result: "success", msg: "" });
    expect(await drafts(alice)).toEqual([{ id, type: "private", to: [bob.id], topic: "", content: "Now to Bob", timestamp: 1595505800 }]);

    const notFound = { result: "error", msg: "Draft does not exist", code: "BAD_REQUEST" };
    const stolen = await bob.client.patch(`/drafts/${id}`, { draft: { ...edited, content: "???" } });
    expect([stolen.status, stolen.body]).toEqual([404, notFound]);
    const missing = await alice.client.patch("/drafts/999999", { draft: edited });
    expect([missing.status, missing.body]).toEqual([404, notFound]);
    // A bad edit changes nothing.
    const bad = await alice.client.patch(`/drafts/${id}`, { draft: { ...edited, to: [999999] } });
    expect(bad.body).toMatchObject({ result: "error", msg: "Invalid user ID 999999" });
    expect((await bob.client.delete(`/drafts/${id}`)).status).toBe(404);
    expect(await drafts(alice)).toEqual([{ id, type: "private", to: [bob.id], topic: "", content: "Now to Bob", timestamp: 1595505800 }]);
    expect((await alice.client.delete(`/drafts/${id}`)).body).toEqual({ result: "success", msg: "" });
    const again = await alice.client.delete(`/drafts/${id}`);
    expect([again.status, again.body]).toEqual([404, notFound]);
    expect(await drafts(alice)).toEqual([]);
  });

  test("verifyAction: add, update and remove keep a registered state current, for the user only", async () => {
    const bobQueue = (await bob.client.post("/register", { event_types: ["drafts"] })).body.queue_id;
    const added = await verifyAction(alice.client, ["drafts"], () =>
      alice.client.post("/drafts", { drafts: [{ type: "stream", to: [streamId], topic: "a", content: "first", timestamp: 1700000000 }, { type: "", to: [], topic: "", content: "second", timestamp: 1700000000 }] }),
    );
    expect(added).toEqual([{ id: expect.any(Number), type: "drafts", op: "add", drafts: [expect.objectContaining({ content: "first" }), expect.objectContaining({ content: "second" })] }]);
    const [first, second] = added[0].drafts as Array<{ id: number }>;
    const updated = await verifyAction(alice.client, ["drafts"], () =>
      alice.client.patch(`/drafts/${first.id}`, { draft: { type: "private", to: [carol.id], topic: "", content: "first, edited", timestamp: 1600000000 } }),
    );
    expect(updated).toEqual([{ id: expect.any(Number), type: "drafts", op: "update", draft: { id: first.id, type: "private", to: [carol.id], topic: "", content: "first, edited", timestamp: 1600000000 } }]);
    const removed = await verifyAction(alice.client, ["drafts"], () => alice.client.delete(`/drafts/${second.id}`));
    expect(removed).toEqual([{ id: expect.any(Number), type: "drafts", op: "remove", draft_id: second.id }]);
    await new Promise((r) => setTimeout(r, 150));
    expect(await drainEvents(bob.client, bobQueue)).toEqual([]);
    await alice.client.delete(`/drafts/${first.id}`);
  });

  test("with synchronising off every endpoint refuses, and turning it off deletes the drafts without events", async () => {
    const created = await carol.client.post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "kept until sync goes off" }] });
    expect(created.body.result).toBe("success");
    const queue = (await carol.client.post("/register", { event_types: ["drafts", "user_settings"] })).body.queue_id;
    expect((await carol.client.patch("/settings", { enable_drafts_synchronization: false })).body.result).toBe("success");
    await waitForEvent(carol.client, queue, (e) => e.type === "user_settings");
    const refusal = { result: "error", msg: "User has disabled synchronizing drafts.", code: "BAD_REQUEST" };
    for (const res of [
      await carol.client.get("/drafts"),
      await carol.client.post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "c" }] }),
      await carol.client.post("/drafts", { drafts: "not even JSON" }),
      await carol.client.patch(`/drafts/${created.body.ids[0]}`, { draft: {} }),
      await carol.client.delete(`/drafts/${created.body.ids[0]}`),
    ]) {
      expect([res.status, res.body]).toEqual([400, refusal]);
    }
    expect((await carol.client.post("/register", { fetch_event_types: ["drafts"] })).body.drafts).toEqual([]);
    expect((await carol.client.patch("/settings", { enable_drafts_synchronization: true })).body.result).toBe("success");
    expect((await carol.client.get("/drafts")).body).toMatchObject({ count: 0, drafts: [] });
    expect((await drainEvents(carol.client, queue)).filter((e) => e.type === "drafts")).toEqual([]);
  });
});
