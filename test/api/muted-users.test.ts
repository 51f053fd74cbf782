// Muted users as Zulip 9 has them (feature levels 48 and 188): POST and DELETE
// /users/me/muted_users/{id} with Zulip's errors, the /register section and the `muted_users`
// event, messages from a muted user arriving read for the muter, and muting marking what was
// unread from them read (so unread counts leave them out).
import { applyEvents, finishState, type State } from "@chat/core";
import { fetchRawUnreadMessages } from "../../packages/core/src/state/unread-state.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { eventsUntil, registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

const mute = (client: ApiClient, id: number | string) => client.post(`/users/me/muted_users/${id}`);
const unmute = (client: ApiClient, id: number | string) => client.delete(`/users/me/muted_users/${id}`);

async function mutedUsers(client: ApiClient): Promise<Array<{ id: number; timestamp: number }>> {
  return (await client.post("/register", { event_types: ["muted_users"] })).body.muted_users;
}

async function unreadIds(client: ApiClient): Promise<number[]> {
  const unread = (await client.post("/register", { event_types: ["message", "update_message_flags"] })).body.unread_msgs;
  const ids = [...unread.pms, ...unread.streams, ...unread.huddles].flatMap((entry: { unread_message_ids: number[] }) => entry.unread_message_ids);
  return ids.sort((a: number, b: number) => a - b);
}

async function flagsOf(client: ApiClient, messageId: number): Promise<string[]> {
  const res = await client.get(`/messages/${messageId}`);
  expect(res.body.result).toBe("success");
  return res.body.message.flags;
}

describe.each(MODES)("muted users (%s)", (mode) => {
  let server: TestServer;
  let hamlet: TestUser;
  let cordelia: TestUser;
  let othello: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    hamlet = await createTestUser(server, "Hamlet Muter");
    cordelia = await createTestUser(server, "Cordelia Muted");
    othello = await createTestUser(server, "Othello Bystander");
    await subscribeTo(hamlet.client, ["muting"], { principals: [hamlet.email, cordelia.email, othello.email] });
  });
  afterAll(() => server.stop());

  /**
   * Runs `action` and checks that the events the user's queue got for it (up to `done`) keep the
   * raw unread state /register holds current: applied to the state read before, they give the
   * unread_msgs of a registration after. Returns the events.
   */
  async function unreadKeptCurrent(user: TestUser, eventTypes: string[], action: () => Promise<unknown>, done: (e: Record<string, any>) => boolean) {
    const queue = await registerQueue(user.client, eventTypes);
    const state: State = { raw_unread_msgs: await fetchRawUnreadMessages(server.running.services.db.prisma, user.id) };
    await action();
    const events = await eventsUntil(user.client, queue, done);
    const expected = (await user.client.post("/register", { event_types: ["message", "update_message_flags"] })).body.unread_msgs;
    expect(finishState(applyEvents(structuredClone(state), events, user.id)).unread_msgs).toEqual(expected);
    return events;
  }

  test("muting and unmuting: the section and the event carry the whole list, to the muter only", async () => {
    expect(await mutedUsers(hamlet.client)).toEqual([]);
    const otherQueue = await registerQueue(cordelia.client, ["muted_users"]);
    const before = Math.floor(Date.now() / 1000);
    const muted = await verifyAction(hamlet.client, ["muted_users"], async () => expect((await mute(hamlet.client, cordelia.id)).body).toEqual({ result: "success", msg: "" }));
    expect(muted).toEqual([{ id: expect.any(Number), type: "muted_users", muted_users: [{ id: cordelia.id, timestamp: expect.any(Number) }] }]);
    expect(muted[0].muted_users[0].timestamp).toBeGreaterThanOrEqual(before - 1);
    expect(muted[0].muted_users[0].timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    await verifyAction(hamlet.client, ["muted_users"], () => mute(hamlet.client, othello.id));
    expect((await mutedUsers(hamlet.client)).map((m) => m.id)).toEqual([cordelia.id, othello.id]);

    const unmuted = await verifyAction(hamlet.client, ["muted_users"], async () => expect((await unmute(hamlet.client, cordelia.id)).body).toEqual({ result: "success", msg: "" }));
    expect(unmuted).toEqual([{ id: expect.any(Number), type: "muted_users", muted_users: [{ id: othello.id, timestamp: expect.any(Number) }] }]);
    await unmute(hamlet.client, othello.id);
    expect(await mutedUsers(hamlet.client)).toEqual([]);
    // Nobody else's list changed, nor did they hear of it.
    expect(await mutedUsers(cordelia.client)).toEqual([]);
    expect(await drainEvents(cordelia.client, otherQueue)).toEqual([]);
  });

  test.each([
    ["post", "self", "Cannot mute self"],
    ["post", "missing", "No such user"],
    ["delete", "missing", "No such user"],
    ["delete", "not muted", "User is not muted"],
    ["delete", "self", "User is not muted"],
  ] as const)("%s of %s is refused (%s) and changes nothing", async (method, who, msg) => {
    const id = who === "self" ? hamlet.id : who === "missing" ? 2_000_000_000 : othello.id;
    const queue = await registerQueue(hamlet.client, ["muted_users"]);
    const res = await (method === "post" ? mute : unmute)(hamlet.client, id);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
    expect(await mutedUsers(hamlet.client)).toEqual([]);
    expect(await drainEvents(hamlet.client, queue)).toEqual([]);
  });

  test("muting twice is refused; the first mute stands", async () => {
    expect((await mute(hamlet.client, cordelia.id)).body.result).toBe("success");
    const queue = await registerQueue(hamlet.client, ["muted_users"]);
    const again = await mute(hamlet.client, cordelia.id);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ result: "error", msg: "User already muted" });
    expect((await mutedUsers(hamlet.client)).map((m) => m.id)).toEqual([cordelia.id]);
    expect(await drainEvents(hamlet.client, queue)).toEqual([]);
    await unmute(hamlet.client, cordelia.id);
  });

  test("ids that name no user: 0, a path that is not an id, an id past integer", async () => {
    expect((await mute(hamlet.client, "abc")).status).toBe(404);
    const huge = await mute(hamlet.client, "99999999999");
    expect(huge.status).toBe(400);
    expect(huge.body.result).toBe("error");
    expect((await mute(hamlet.client, 0)).body).toMatchObject({ result: "error", msg: "No such user" });
    expect(await mutedUsers(hamlet.client)).toEqual([]);
  });

  test("bots (feature level 188) and deactivated users can be muted and unmuted", async () => {
    const bot = await hamlet.client.post("/bots", { full_name: "Hamlet's Bot", short_name: "hambot", bot_type: 1 });
    expect(bot.body.result).toBe("success");
    expect((await mute(hamlet.client, bot.body.user_id)).body.result).toBe("success");
    expect((await unmute(hamlet.client, bot.body.user_id)).body.result).toBe("success");

    const gone = await createTestUser(server, "Yorick Gone");
    expect((await server.owner.delete(`/users/${gone.id}`)).body.result).toBe("success");
    expect((await mute(hamlet.client, gone.id)).body.result).toBe("success");
    expect((await mutedUsers(hamlet.client)).map((m) => m.id)).toEqual([gone.id]);
    expect((await unmute(hamlet.client, gone.id)).body.result).toBe("success");
  });

  test("messages from a muted user arrive read for the muter, unread for others, and are not counted", async () => {
    expect((await mute(hamlet.client, cordelia.id)).body.result).toBe("success");
    const queue = await registerQueue(hamlet.client, ["message"]);
    const othelloQueue = await registerQueue(othello.client, ["message"]);
    const stream = await sendStreamMessage(cordelia.client, "muting", "spam", "Spam in stream");
    const huddle = await sendPrivateMessage(cordelia.client, [hamlet.id, othello.id], "Spam in a group");
    const direct = await sendPrivateMessage(cordelia.client, [hamlet.id], "Spam to Hamlet");
    const toOthello = await sendPrivateMessage(cordelia.client, [othello.id], "Spam to Othello");

    const seen = await eventsUntil(hamlet.client, queue, (e) => e.type === "message" && e.message.id === direct);
    const messages = seen.filter((e) => e.type === "message");
    expect(messages.map((e) => [e.message.id, e.flags.includes("read")])).toEqual([
      [stream, true],
      [huddle, true],
      [direct, true],
    ]);
    for (const id of [stream, huddle, direct]) expect(await flagsOf(hamlet.client, id)).toContain("read");
    const othelloSeen = await eventsUntil(othello.client, othelloQueue, (e) => e.type === "message" && e.message.id === toOthello);
    expect(othelloSeen.filter((e) => e.type === "message").map((e) => e.flags.includes("read"))).toEqual([false, false, false]);
    for (const id of [stream, huddle, toOthello]) expect(await flagsOf(othello.client, id)).not.toContain("read");

    const hamletUnread = await unreadIds(hamlet.client);
    for (const id of [stream, huddle, direct]) expect(hamletUnread).not.toContain(id);
    expect(await unreadIds(othello.client)).toEqual(expect.arrayContaining([stream, huddle, toOthello]));

    // Unmuted, the next message is unread again; those read meanwhile stay read.
    expect((await unmute(hamlet.client, cordelia.id)).body.result).toBe("success");
    const after = await sendPrivateMessage(cordelia.client, [hamlet.id], "Back again");
    expect(await flagsOf(hamlet.client, after)).not.toContain("read");
    expect(await flagsOf(hamlet.client, direct)).toContain("read");
    expect(await unreadIds(hamlet.client)).toContain(after);
    await hamlet.client.post("/mark_all_as_read");
    await othello.client.post("/mark_all_as_read");
  });

  test("muting marks what was unread from the user read, with the event that keeps unread_msgs current", async () => {
    const stream = await sendStreamMessage(cordelia.client, "muting", "earlier", "Before the mute");
    const huddle = await sendPrivateMessage(cordelia.client, [hamlet.id, othello.id], "Group, before");
    const direct = await sendPrivateMessage(cordelia.client, [hamlet.id], "Direct, before");
    const fromOthello = await sendPrivateMessage(othello.client, [hamlet.id], "Not from Cordelia");
    expect(await unreadIds(hamlet.client)).toEqual(expect.arrayContaining([stream, huddle, direct, fromOthello]));

    const events = await unreadKeptCurrent(hamlet, ["message", "update_message_flags", "muted_users"], () => mute(hamlet.client, cordelia.id), (e) => e.type === "muted_users");
    expect(events.map((e) => e.type)).toEqual(["update_message_flags", "muted_users"]);
    expect(events[0]).toEqual({ id: expect.any(Number), type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [stream, huddle, direct], all: false });
    expect(await unreadIds(hamlet.client)).toEqual([fromOthello]);
    // Othello's copies are his: still unread.
    expect(await unreadIds(othello.client)).toEqual(expect.arrayContaining([stream, huddle]));

    // Nothing unread from them: the mute sends only the list.
    await unmute(hamlet.client, cordelia.id);
    const queue = await registerQueue(hamlet.client, ["update_message_flags", "muted_users"]);
    await mute(hamlet.client, cordelia.id);
    await waitForEvent(hamlet.client, queue, (e) => e.type === "muted_users", { acknowledge: false });
    expect((await drainEvents(hamlet.client, queue)).map((e) => e.type)).toEqual(["muted_users"]);
    await unmute(hamlet.client, cordelia.id);
  });

  test("a message from a muted user keeps /register's unread state current through its event", async () => {
    await mute(hamlet.client, cordelia.id);
    let id = 0;
    const events = await unreadKeptCurrent(
      hamlet,
      ["message", "update_message_flags"],
      async () => (id = await sendStreamMessage(cordelia.client, "muting", "later", "While muted")),
      (e) => e.type === "message",
    );
    expect(events.find((e) => e.type === "message")).toMatchObject({ message: { id }, flags: ["read"] });
    expect(await unreadIds(hamlet.client)).not.toContain(id);
    await unmute(hamlet.client, cordelia.id);
  });
});
