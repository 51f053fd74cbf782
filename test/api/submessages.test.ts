// Widgets and submessages (Zulip's polls and to-do lists): `/poll` and `/todo` messages start their
// widget on send, POST /submessage attaches votes and tasks (checked per widget type, in Zulip's
// words) for those who may read the message, each reaching the message's recipients as a
// `submessage` event, and every message shows its submessages in GET /messages, cached or not.
import type { ApiClient } from "../support/client.ts";
import { waitForEvent } from "../support/events.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

type Submessage = { msg_type: string; content: string; message_id: number; sender_id: number; id: number };

describe.each(MODES)("submessages (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    [alice, bob, carol] = await Promise.all([createTestUser(server, "Alice Polls"), createTestUser(server, "Bob Votes"), createTestUser(server, "Carol Outside")]);
    await subscribeTo(alice.client, ["polls"], { principals: [alice.email, bob.email] });
    await subscribeTo(alice.client, ["polls-secret"], { principals: [alice.email, bob.email], invite_only: true });
  });
  afterAll(() => server.stop());

  const submit = (user: TestUser, messageId: number, content: unknown, msgType = "widget") =>
    user.client.post("/submessage", { message_id: messageId, msg_type: msgType, content: typeof content === "string" ? content : JSON.stringify(content) });

  async function fetchOne(client: ApiClient, id: number): Promise<{ submessages: Submessage[]; sender_id: number }> {
    const res = await client.get("/messages", { anchor: id, num_before: 0, num_after: 0, narrow: JSON.stringify([["stream", "polls"]]) });
    expect(res.body.result).toBe("success");
    expect(res.body.messages).toHaveLength(1);
    return res.body.messages[0];
  }

  test("a /poll message starts its widget on send: stored, in its message event, and in GET /messages", async () => {
    const queue = await registerQueue(bob.client, ["message"]);
    const id = await sendStreamMessage(alice.client, "polls", "lunch", "/poll Where to eat?\n- Pizza\n* Noodles\n\nSalad");
    const widget = { msg_type: "widget", message_id: id, sender_id: alice.id, id: expect.any(Number), content: expect.any(String) };
    const event = await waitForEvent(bob.client, queue, (e) => e.type === "message" && e.message.id === id);
    expect(event.message.submessages).toEqual([widget]);
    expect(JSON.parse(event.message.submessages[0].content)).toEqual({ widget_type: "poll", extra_data: { question: "Where to eat?", options: ["Pizza", "Noodles", "Salad"] } });
    const fetched = await fetchOne(bob.client, id);
    expect(fetched.submessages).toEqual([event.message.submessages[0]]);
    const single = await bob.client.get(`/messages/${id}`);
    expect(single.body.message.submessages).toEqual([event.message.submessages[0]]);
  });

  test("a /todo message's widget holds its title and tasks; other messages have none", async () => {
    const todo = await sendStreamMessage(alice.client, "polls", "chores", "/todo Chores\nDishes: before noon\n- Laundry");
    const [widget] = (await fetchOne(alice.client, todo)).submessages;
    expect(JSON.parse(widget.content)).toEqual({
      widget_type: "todo",
      extra_data: { task_list_title: "Chores", tasks: [{ task: "Dishes", desc: "before noon" }, { task: "Laundry", desc: "" }] },
    });
    for (const content of ["/pollster is not a widget", " /poll leading blank", "plain"]) {
      const id = await sendStreamMessage(alice.client, "polls", "chores", content);
      expect((await fetchOne(alice.client, id)).submessages).toEqual([]);
    }
    const privateTodo = await sendPrivateMessage(alice.client, [bob.id], "/todo");
    const fetched = await bob.client.get(`/messages/${privateTodo}`);
    expect(fetched.body.message.submessages).toEqual([expect.objectContaining({ msg_type: "widget", sender_id: alice.id })]);
  });

  test("a vote reaches the message's recipients as a submessage event, and the next fetch (even a cached one) shows it", async () => {
    const id = await sendStreamMessage(alice.client, "polls", "lunch", "/poll Dessert?\nCake\nPie");
    // Cached before the vote: the vote must stale the cached copy.
    expect((await fetchOne(alice.client, id)).submessages).toHaveLength(1);
    const queues = await Promise.all([alice, bob, carol].map((u) => registerQueue(u.client, ["submessage", "message"])));
    const vote = { type: "vote", key: "canned,1", vote: 1 };
    expect((await submit(bob, id, vote)).body).toEqual({ result: "success", msg: "" });
    const expected = { type: "submessage", msg_type: "widget", content: JSON.stringify(vote), message_id: id, sender_id: bob.id, submessage_id: expect.any(Number), id: expect.any(Number) };
    const events = await Promise.all([alice, bob].map((u, i) => waitForEvent(u.client, queues[i], (e) => e.type === "submessage")));
    expect(events).toEqual([expected, expected]);
    // Carol has no row for the message: a message sent to her afterwards arrives alone.
    await sendPrivateMessage(alice.client, [carol.id], "marker");
    expect((await eventsUntil(carol.client, queues[2], (e) => e.type === "message")).filter((e) => e.type === "submessage")).toEqual([]);

    const submessages = (await fetchOne(alice.client, id)).submessages;
    expect(submessages.map((s) => [s.sender_id, s.content])).toEqual([
      [alice.id, expect.stringContaining('"widget_type":"poll"')],
      [bob.id, JSON.stringify(vote)],
    ]);
    expect(submessages[1]).toEqual({ msg_type: "widget", content: JSON.stringify(vote), message_id: id, sender_id: bob.id, id: events[0].submessage_id });
    expect(submessages[0].id).toBeLessThan(submessages[1].id);
    // A second vote (a retraction) comes after the first, in id order.
    expect((await submit(bob, id, { ...vote, vote: -1 })).body.result).toBe("success");
    expect((await fetchOne(bob.client, id)).submessages.map((s) => JSON.parse(s.content).vote)).toEqual([undefined, 1, -1]);
  });

  test("a user who cannot read the message is refused, and nothing is stored", async () => {
    const secret = await sendStreamMessage(alice.client, "polls-secret", "hidden", "/poll Secret?\nYes");
    const dm = await sendPrivateMessage(alice.client, [bob.id], "/poll Between us?\nYes");
    for (const id of [secret, dm, 999_999_999]) {
      const res = await submit(carol, id, { type: "vote", key: "canned,0", vote: 1 });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" } });
    }
    expect(await server.running.services.db.prisma.submessage.count({ where: { message_id: { in: [secret, dm] }, sender_id: carol.id } })).toBe(0);
  });

  test("only the sender may start a widget on a message; after that, anyone who has it may add to it", async () => {
    const plain = await sendStreamMessage(alice.client, "polls", "lunch", "no widget yet");
    const refused = await submit(bob, plain, { widget_type: "poll", extra_data: { question: "?", options: [] } });
    expect(refused.body).toEqual({ result: "error", msg: "You cannot attach a submessage to this message.", code: "BAD_REQUEST" });
    expect((await submit(alice, plain, { widget_type: "poll", extra_data: { question: "Late poll", options: ["a"] } })).body.result).toBe("success");
    expect((await submit(bob, plain, { type: "vote", key: "canned,0", vote: 1 })).body.result).toBe("success");
    expect((await fetchOne(bob.client, plain)).submessages.map((s) => s.sender_id)).toEqual([alice.id, bob.id]);
  });

  test("bad content is refused in Zulip's words, per widget type", async () => {
    const poll = await sendStreamMessage(alice.client, "polls", "lunch", "/poll Checked?\nYes");
    const todo = await sendStreamMessage(alice.client, "polls", "chores", "/todo Checked");
    const cases: Array<[TestUser, number, unknown, string]> = [
      [bob, poll, "{not json", "Invalid json for submessage"],
      [bob, poll, [1, 2], "poll data is not a dict"],
      [bob, poll, { key: "a" }, "type key is missing from poll data"],
      [bob, poll, { type: "vote", key: "canned,0", vote: 2 }, 'Invalid poll data["vote"]'],
      [bob, poll, { type: "vote", key: 5, vote: 1 }, 'poll data["key"] is not a string'],
      [bob, poll, { type: "vote", key: "canned,0", vote: 1, extra: true }, "Unexpected arguments: extra"],
      [bob, poll, { type: "new_option", option: "x", idx: 1001 }, 'poll data["idx"] is too large'],
      [bob, poll, { type: "question", question: "Hijacked?" }, "You can't edit a question unless you are the author."],
      [bob, poll, { type: "close" }, "Unknown type for poll data: close"],
      [bob, todo, { type: "new_task", key: 1, task: "t", desc: "", completed: "no" }, 'todo data["completed"] is not a boolean'],
      [bob, todo, { type: "strike" }, "key key is missing from todo data"],
      [bob, todo, { type: "new_task_list_title", title: "Mine now" }, "You can't edit the task list title unless you are the author."],
      [bob, todo, { type: "vote", key: "a", vote: 1 }, "Unknown type for todo data: vote"],
    ];
    for (const [user, id, content, msg] of cases) {
      const res = await submit(user, id, content);
      expect({ content, status: res.status, body: res.body }).toEqual({ content, status: 400, body: { result: "error", msg, code: "BAD_REQUEST" } });
    }
    const tooLong = await submit(bob, poll, { type: "vote", key: "x".repeat(10_001), vote: 1 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.msg).toMatch(/content is too long/);
    const badType = await submit(bob, poll, { type: "vote", key: "canned,0", vote: 1 }, "w".repeat(101));
    expect(badType.body.msg).toMatch(/msg_type is too long/);
    expect(await server.running.services.db.prisma.submessage.count({ where: { message_id: { in: [poll, todo] }, sender_id: bob.id } })).toBe(0);

    // The widget's author may retitle it; a valid task from anyone is kept.
    expect((await submit(alice, poll, { type: "question", question: "Still checked?" })).body.result).toBe("success");
    expect((await submit(alice, todo, { type: "new_task_list_title", title: "Checked twice" })).body.result).toBe("success");
    expect((await submit(bob, todo, { type: "new_task", key: 2, task: "Test", desc: "all of it", completed: false })).body.result).toBe("success");
    expect((await submit(bob, todo, { type: "strike", key: "2,1" })).body.result).toBe("success");
  });

  test("a widget's content cannot be edited, its topic can; a message without a widget edits as before", async () => {
    const id = await sendStreamMessage(alice.client, "polls", "lunch", "/poll Keep?\nYes");
    const edit = await alice.client.patch(`/messages/${id}`, { content: "/poll Changed?\nNo" });
    expect(edit.status).toBe(400);
    expect(edit.body).toMatchObject({ result: "error", msg: "Widgets cannot be edited.", code: "BAD_REQUEST" });
    expect((await alice.client.get(`/messages/${id}`)).body.raw_content).toBe("/poll Keep?\nYes");
    expect((await alice.client.patch(`/messages/${id}`, { topic: "lunch poll" })).body.result).toBe("success");
    const plain = await sendStreamMessage(alice.client, "polls", "lunch", "no widget");
    expect((await alice.client.patch(`/messages/${plain}`, { content: "still none" })).body.result).toBe("success");
  });

  test("deleting a message deletes its submessages", async () => {
    const id = await sendStreamMessage(alice.client, "polls", "lunch", "/poll Gone?\nYes");
    expect((await submit(bob, id, { type: "vote", key: "canned,0", vote: 1 })).body.result).toBe("success");
    // An administrator may delete any message.
    expect((await server.owner.delete(`/messages/${id}`)).body.result).toBe("success");
    expect(await server.running.services.db.prisma.submessage.count({ where: { message_id: id } })).toBe(0);
  });
});
