// Topic policies the server sets by itself, as Zulip 9 (feature levels 214, 218, 235): a user's
// automatically_follow_topics_policy and automatically_unmute_topics_in_muted_streams_policy
// applied when they start a topic, send to it, or participate (react, vote), and
// automatically_follow_topics_where_mentioned when they are mentioned; the sender's new policy in
// POST /messages' answer (automatic_new_visibility_policy), and `user_topic` events that keep
// /register's state current.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { drainEvents } from "../support/events.ts";
import { eventsUntil, registerQueue, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { verifyAction } from "../support/verify-action.ts";
import type { ApiClient } from "../support/client.ts";

const [INHERIT, MUTED, UNMUTED, FOLLOWED] = [0, 1, 2, 3];
const [ON_PARTICIPATION, ON_SEND, ON_INITIATION, NEVER] = [1, 2, 3, 4];
const TOPIC_EVENTS = ["user_topic", "muted_topics"];

function send(client: ApiClient, stream: string, topic: string, content = "hello") {
  return client.post("/messages", { type: "stream", to: stream, topic, content });
}

async function settings(client: ApiClient, values: Record<string, unknown>): Promise<void> {
  const res = await client.patch("/settings", values);
  if (res.body.result !== "success") throw new Error(`settings: ${JSON.stringify(res.body)}`);
}

describe.each(MODES)("automatic topic policies (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  const streamId = async (name: string) => (await server.running.services.db.prisma.stream.findFirstOrThrow({ where: { name } })).id;
  const policyOf = async (user: TestUser, stream: string, topic: string) => {
    const topics = (await user.client.post("/register", { event_types: ["user_topic"] })).body.user_topics as Array<{ stream_id: number; topic_name: string; visibility_policy: number }>;
    const id = await streamId(stream);
    return topics.find((t) => t.stream_id === id && t.topic_name.toLowerCase() === topic.toLowerCase())?.visibility_policy ?? INHERIT;
  };
  const setPolicy = async (user: TestUser, stream: string, topic: string, policy: number) =>
    expect((await user.client.post("/user_topics", { stream_id: await streamId(stream), topic, visibility_policy: policy })).body.result).toBe("success");
  const muteStream = async (user: TestUser, stream: string, muted: boolean) => {
    const res = await user.client.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: await streamId(stream), property: "is_muted", value: muted }] });
    expect(res.body.result).toBe("success");
  };

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Auto");
    bob = await createTestUser(server, "Bob Auto");
    carol = await createTestUser(server, "Carol Auto");
    dave = await createTestUser(server, "Dave Auto");
    await subscribeTo(alice.client, ["auto"], { principals: [alice.email, bob.email, carol.email, dave.email] });
  });
  afterAll(() => server.stop());

  test("by default, starting a topic follows it: the answer says so, and the events keep the state", async () => {
    let answer: Record<string, unknown> = {};
    const events = await verifyAction(alice.client, TOPIC_EVENTS, async () => (answer = (await send(alice.client, "auto", "fresh start")).body));
    expect(answer).toEqual({ result: "success", msg: "", id: expect.any(Number), automatic_new_visibility_policy: FOLLOWED });
    expect(events.map((e) => e.type)).toEqual(["muted_topics", "user_topic"]);
    expect(events[1]).toEqual({ id: expect.any(Number), type: "user_topic", stream_id: await streamId("auto"), topic_name: "fresh start", last_updated: expect.any(Number), visibility_policy: FOLLOWED });

    // Not the first message: no initiation, and (by default) no follow for Bob; no key in his answer.
    const queue = await registerQueue(bob.client, TOPIC_EVENTS);
    expect((await send(bob.client, "auto", "Fresh Start")).body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    // A followed topic stays as it is.
    expect((await send(alice.client, "auto", "fresh start")).body).not.toHaveProperty("automatic_new_visibility_policy");
    expect(await policyOf(bob, "auto", "fresh start")).toBe(INHERIT);
    expect(await policyOf(alice, "auto", "fresh start")).toBe(FOLLOWED);
    expect(await drainEvents(bob.client, queue)).toEqual([]);
  });

  test("on send: any message follows the topic, a muted one too", async () => {
    await sendStreamMessage(alice.client, "auto", "chatter");
    await settings(bob.client, { automatically_follow_topics_policy: ON_SEND });
    const events = await verifyAction(bob.client, TOPIC_EVENTS, async () => expect((await send(bob.client, "auto", "chatter")).body.automatic_new_visibility_policy).toBe(FOLLOWED));
    expect(events.find((e) => e.type === "user_topic")).toMatchObject({ topic_name: "chatter", visibility_policy: FOLLOWED });
    await setPolicy(bob, "auto", "hushed", MUTED);
    expect((await send(bob.client, "auto", "hushed")).body.automatic_new_visibility_policy).toBe(FOLLOWED);
    expect(await policyOf(bob, "auto", "hushed")).toBe(FOLLOWED);
    await settings(bob.client, { automatically_follow_topics_policy: ON_INITIATION });
  });

  test("never: nothing changes, not even a new topic's", async () => {
    await settings(carol.client, { automatically_follow_topics_policy: NEVER, automatically_unmute_topics_in_muted_streams_policy: NEVER });
    const queue = await registerQueue(carol.client, TOPIC_EVENTS);
    expect((await send(carol.client, "auto", "carol's own")).body).not.toHaveProperty("automatic_new_visibility_policy");
    expect(await policyOf(carol, "auto", "carol's own")).toBe(INHERIT);
    expect(await drainEvents(carol.client, queue)).toEqual([]);
    await settings(carol.client, { automatically_follow_topics_policy: ON_INITIATION, automatically_unmute_topics_in_muted_streams_policy: ON_SEND });
  });

  test("in a muted stream, sending unmutes the topic (by default); following wins over unmuting", async () => {
    await subscribeTo(dave.client, ["quiet-auto"], { principals: [dave.email, alice.email] });
    await sendStreamMessage(alice.client, "quiet-auto", "ongoing");
    await muteStream(dave, "quiet-auto", true);
    const events = await verifyAction(dave.client, TOPIC_EVENTS, async () => expect((await send(dave.client, "quiet-auto", "ongoing")).body.automatic_new_visibility_policy).toBe(UNMUTED));
    expect(events.find((e) => e.type === "user_topic")).toMatchObject({ visibility_policy: UNMUTED });
    // Unmuted already: sending again changes nothing.
    expect((await send(dave.client, "quiet-auto", "ongoing")).body).not.toHaveProperty("automatic_new_visibility_policy");
    // A new topic is initiation (follow) as well as a send (unmute): followed.
    expect((await send(dave.client, "quiet-auto", "dave starts")).body.automatic_new_visibility_policy).toBe(FOLLOWED);
    // Unmuting only on initiation: a topic Dave did not start stays as the stream is.
    await settings(dave.client, { automatically_follow_topics_policy: NEVER, automatically_unmute_topics_in_muted_streams_policy: ON_INITIATION });
    await sendStreamMessage(alice.client, "quiet-auto", "alice's");
    expect((await send(dave.client, "quiet-auto", "alice's")).body).not.toHaveProperty("automatic_new_visibility_policy");
    expect((await send(dave.client, "quiet-auto", "dave's second")).body.automatic_new_visibility_policy).toBe(UNMUTED);
    // In a stream that is not muted, the unmute settings do nothing.
    await muteStream(dave, "quiet-auto", false);
    expect((await send(dave.client, "quiet-auto", "dave's third")).body).not.toHaveProperty("automatic_new_visibility_policy");
    await settings(dave.client, { automatically_follow_topics_policy: ON_INITIATION, automatically_unmute_topics_in_muted_streams_policy: ON_SEND });
  });

  test("on participation: reacting and voting follow the topic", async () => {
    const message = await sendStreamMessage(alice.client, "auto", "reactions");
    await settings(bob.client, { automatically_follow_topics_policy: ON_PARTICIPATION });
    const events = await verifyAction(bob.client, TOPIC_EVENTS, () => bob.client.post(`/messages/${message}/reactions`, { emoji_name: "smile" }));
    expect(events.find((e) => e.type === "user_topic")).toMatchObject({ topic_name: "reactions", visibility_policy: FOLLOWED });

    const poll = await sendStreamMessage(alice.client, "auto", "polls", "/poll Lunch?\nPizza\nSalad");
    expect(await policyOf(bob, "auto", "polls")).toBe(INHERIT);
    const vote = await bob.client.post("/submessage", { message_id: poll, msg_type: "widget", content: JSON.stringify({ type: "vote", key: "canned,0", vote: 1 }) });
    expect(vote.body.result).toBe("success");
    expect(await policyOf(bob, "auto", "polls")).toBe(FOLLOWED);
    // Participation never lowers a policy, nor touches a topic the setting does not cover.
    await settings(bob.client, { automatically_follow_topics_policy: ON_INITIATION });
    const later = await sendStreamMessage(alice.client, "auto", "not participating");
    await bob.client.post(`/messages/${later}/reactions`, { emoji_name: "smile" });
    expect(await policyOf(bob, "auto", "not participating")).toBe(INHERIT);
  });

  test("a mention follows the topic for those who want it, if they receive it and have not muted it", async () => {
    await sendStreamMessage(alice.client, "auto", "mentions");
    await settings(dave.client, { automatically_follow_topics_where_mentioned: false });
    await setPolicy(bob, "auto", "mentions", MUTED);
    const outsider = await createTestUser(server, "Olive Outsider");
    const carolQueue = await registerQueue(carol.client, TOPIC_EVENTS);
    const events = await verifyAction(carol.client, TOPIC_EVENTS, () =>
      sendStreamMessage(alice.client, "auto", "mentions", "@**Carol Auto** @**Dave Auto** @**Bob Auto** @**Olive Outsider** see this"),
    );
    expect(events.find((e) => e.type === "user_topic")).toMatchObject({ topic_name: "mentions", visibility_policy: FOLLOWED });
    expect(await policyOf(carol, "auto", "mentions")).toBe(FOLLOWED);
    expect(await policyOf(dave, "auto", "mentions")).toBe(INHERIT);
    expect(await policyOf(bob, "auto", "mentions")).toBe(MUTED);
    expect(await policyOf(outsider, "auto", "mentions")).toBe(INHERIT);
    // Followed already: a second mention sends nothing more.
    await eventsUntil(carol.client, carolQueue, (e) => e.type === "user_topic");
    await sendStreamMessage(alice.client, "auto", "mentions", "@**Carol Auto** again");
    await sendStreamMessage(alice.client, "auto", "marker");
    expect((await drainEvents(carol.client, carolQueue)).filter((e) => e.type === "user_topic" && e.topic_name === "mentions")).toHaveLength(1);
    // A silent mention is no mention.
    await setPolicy(carol, "auto", "mentions", INHERIT);
    await sendStreamMessage(alice.client, "auto", "mentions", "@_**Carol Auto** quietly");
    expect(await policyOf(carol, "auto", "mentions")).toBe(INHERIT);
    await settings(dave.client, { automatically_follow_topics_where_mentioned: true });
    await setPolicy(bob, "auto", "mentions", INHERIT);
  });

  test("a group mention follows the topic for its members", async () => {
    const group = await alice.client.post("/user_groups/create", { name: "auto-crew", description: "crew", members: JSON.stringify([carol.id, dave.id]) });
    expect(group.body.result).toBe("success");
    await sendStreamMessage(bob.client, "auto", "crew call", "@*auto-crew* please look");
    expect(await policyOf(carol, "auto", "crew call")).toBe(FOLLOWED);
    expect(await policyOf(dave, "auto", "crew call")).toBe(FOLLOWED);
    expect(await policyOf(alice, "auto", "crew call")).toBe(INHERIT);
  });

  test("in a stream whose history is hidden, the first message a newcomer can see starts the topic for them", async () => {
    await subscribeTo(alice.client, ["secret-auto"], { invite_only: true, history_public_to_subscribers: false });
    await sendStreamMessage(alice.client, "secret-auto", "old news");
    await subscribeTo(alice.client, ["secret-auto"], { principals: [bob.email] });
    expect((await send(bob.client, "secret-auto", "old news")).body.automatic_new_visibility_policy).toBe(FOLLOWED);
    // Once Bob has a message of the topic, his next one there is no longer a start (after unfollowing).
    await setPolicy(bob, "secret-auto", "old news", INHERIT);
    expect((await send(bob.client, "secret-auto", "old news")).body).not.toHaveProperty("automatic_new_visibility_policy");
  });

  test("bots and private messages change no policy", async () => {
    const bot = await alice.client.post("/bots", { full_name: "Auto Bot", short_name: "autobot", bot_type: 1 });
    expect(bot.body.result).toBe("success");
    const botClient = server.client((await alice.client.get(`/users/${bot.body.user_id}`)).body.user.email, bot.body.api_key);
    await subscribeTo(botClient, ["auto"]);
    expect((await send(botClient, "auto", "bot topic")).body).not.toHaveProperty("automatic_new_visibility_policy");
    expect((await botClient.post("/register", { event_types: ["user_topic"] })).body.user_topics).toEqual([]);
    const direct = await alice.client.post("/messages", { type: "private", to: JSON.stringify([bob.id]), content: "hi" });
    expect(direct.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
  });
});
