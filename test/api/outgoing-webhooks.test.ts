// Outgoing webhook and embedded bots, end to end in both modes: a bot made through the API, a
// message that triggers it, the worker tier's call to a real receiver on loopback, and the reply
// (or the failure notices) that come back as messages.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import type { ApiClient } from "../support/client.ts";
import type { ChangeBatch } from "@chat/bus";
import { jobRuns } from "@chat/metrics";

const ENV = {
  OUTGOING_WEBHOOK_TIMEOUT_SECONDS: "1",
  OUTGOING_WEBHOOK_ATTEMPTS: "3",
  OUTGOING_WEBHOOK_BACKOFF_MS: "50",
};

interface Bot {
  id: number;
  email: string;
  fullName: string;
  apiKey: string;
  token: string;
}

async function createBot(server: TestServer, owner: ApiClient, fields: Record<string, unknown>): Promise<Bot> {
  const res = await owner.post("/bots", { bot_type: 3, ...fields });
  if (res.body.result !== "success") throw new Error(`creating a bot: ${JSON.stringify(res.body)}`);
  const service = await server.running.services.db.prisma.service.findFirst({ where: { user_id: res.body.user_id } });
  const row = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: res.body.user_id } });
  return { id: row.id, email: row.email, fullName: row.full_name, apiKey: res.body.api_key, token: service?.token ?? "" };
}

type Message = Record<string, any>;

/** The newest messages `client` can see in a narrow. */
async function messages(client: ApiClient, narrow: unknown[]): Promise<Message[]> {
  const res = await client.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow, apply_markdown: false });
  if (res.body.result !== "success") throw new Error(JSON.stringify(res.body));
  return res.body.messages;
}

async function waitForMessage(client: ApiClient, narrow: unknown[], predicate: (m: Message) => boolean, timeoutMs = 10_000): Promise<Message> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await messages(client, narrow)).find(predicate);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no such message within ${timeoutMs} ms; saw ${JSON.stringify((await messages(client, narrow)).map((m) => m.content))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Service bot call attempts this process has recorded with this outcome (the worker tier runs in the test's process). */
async function callAttempts(outcome: string): Promise<number> {
  const { values } = await jobRuns.get();
  return values.find((v) => v.labels.kind === "service bot call" && v.labels.outcome === outcome)?.value ?? 0;
}

/** Sends a marker after the action and waits until the marker was delivered, so that anything the action queued has been handled. */
async function settle(receiver: WebhookReceiver, send: () => Promise<unknown>, count: number): Promise<void> {
  await send();
  await receiver.waitForRequests(count);
}

describe.each(MODES)("outgoing webhooks (%s)", (mode) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let alice: TestUser;
  let bob: TestUser;
  let echo: Bot;

  beforeAll(async () => {
    server = await startTestServer(mode, ENV);
    receiver = await startWebhookReceiver();
    alice = await createTestUser(server, "Alice Author");
    bob = await createTestUser(server, "Bob Builder");
    await subscribeTo(alice.client, ["bots"]);
    await subscribeTo(bob.client, ["bots"]);
    echo = await createBot(server, alice.client, { full_name: "Echo Bot", short_name: "echo", payload_url: receiver.url });
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.received = [];
    receiver.answer = () => ({ json: { response_not_required: true } });
  });

  const streamNarrow = (topic: string) => [{ operator: "stream", operand: "bots" }, { operator: "topic", operand: topic }];

  test("a mention in a stream calls the service with Zulip's payload, and its content comes back as the bot's reply", async () => {
    receiver.answer = (request) => ({ json: { content: `pong: ${request.json?.data}` } });
    const id = await sendStreamMessage(bob.client, "bots", "ping", `@**Echo Bot** ping **now**`);
    const [request] = await receiver.waitForRequests(1);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toBe("ZulipOutgoingWebhook/3.0");
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers.cookie).toBeUndefined();
    expect(request.json).toEqual({
      data: "@**Echo Bot** ping **now**",
      trigger: "mention",
      token: echo.token,
      bot_email: echo.email,
      bot_full_name: "Echo Bot",
      message: expect.objectContaining({
        id,
        type: "stream",
        display_recipient: "bots",
        subject: "ping",
        sender_id: bob.id,
        sender_email: bob.email,
        sender_full_name: "Bob Builder",
        content: "@**Echo Bot** ping **now**",
        content_type: "text/x-markdown",
        rendered_content: expect.stringContaining("<strong>now</strong>"),
        avatar_url: expect.any(String),
        timestamp: expect.any(Number),
      }),
    });
    expect(echo.token).toMatch(/^[A-Za-z0-9]{32}$/);
    const reply = await waitForMessage(bob.client, streamNarrow("ping"), (m) => m.sender_id === echo.id);
    expect(reply).toMatchObject({ content: "pong: @**Echo Bot** ping **now**", subject: "ping", display_recipient: "bots", client: "OutgoingWebhookResponse" });
  });

  test("a change read again, alone or among new ones (the sweeper republished it), calls nobody twice", async () => {
    // What the API publishes, as the outbox sweeper would publish it again after a crash.
    const changes = server.running.services.bus.changes;
    const published: ChangeBatch[] = [];
    const publish = changes.publish.bind(changes);
    changes.publish = async (batches) => {
      published.push(...batches);
      return publish(batches);
    };
    try {
      const first = await sendStreamMessage(bob.client, "bots", "again", "@**Echo Bot** once");
      await receiver.waitForRequests(1);
      const change = published.find((batch) => JSON.stringify(batch).includes('"services":'))!;
      await publish([change]);
      const second = await sendStreamMessage(bob.client, "bots", "again", "@**Echo Bot** twice?");
      await receiver.waitForRequests(2);
      // In one read with a new change: only the new one's call is made.
      const newer = published.find((batch) => batch !== change && JSON.stringify(batch).includes('"services":'))!;
      await publish([change, newer, change]);
      const third = await sendStreamMessage(bob.client, "bots", "again", "@**Echo Bot** marker");
      await receiver.waitForRequests(3);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.map((request) => request.json?.message.id)).toEqual([first, second, third]);
    } finally {
      changes.publish = publish;
    }
  });

  test("a private message to the bot triggers private_message; the reply goes to the same conversation", async () => {
    receiver.answer = () => ({ json: { content: "got it" } });
    await sendPrivateMessage(bob.client, [echo.id], "hello bot");
    const [request] = await receiver.waitForRequests(1);
    expect(request.json).toMatchObject({ trigger: "direct_message", data: "hello bot", message: { type: "private" } });
    const narrow = [{ operator: "pm-with", operand: echo.email }];
    const reply = await waitForMessage(bob.client, narrow, (m) => m.sender_id === echo.id);
    expect(reply.content).toBe("got it");
    expect(reply.display_recipient.map((u: { id: number }) => u.id).sort()).toEqual([bob.id, echo.id].sort());
  });

  test("response_string (zulip_bots' older form) is a reply; response_not_required and an empty content are none", async () => {
    receiver.answer = (request) => {
      const data = String(request.json?.data);
      if (data.includes("old")) return { json: { response_string: "old form" } };
      if (data.includes("quiet")) return { json: { response_not_required: true, content: "ignored" } };
      return { json: { content: "   " } };
    };
    await sendStreamMessage(bob.client, "bots", "forms", "@**Echo Bot** quiet");
    await sendStreamMessage(bob.client, "bots", "forms", "@**Echo Bot** empty");
    await sendStreamMessage(bob.client, "bots", "forms", "@**Echo Bot** old");
    await waitForMessage(bob.client, streamNarrow("forms"), (m) => m.sender_id === echo.id && m.content === "old form");
    await receiver.waitForRequests(3);
    expect((await messages(bob.client, streamNarrow("forms"))).filter((m) => m.sender_id === echo.id).map((m) => m.content)).toEqual(["old form"]);
  });

  test("a server error is retried with backoff; after the last attempt the conversation and the owner are told", async () => {
    receiver.answer = () => ({ status: 500, body: "upstream <b>broke</b> ```x```" });
    const id = await sendStreamMessage(bob.client, "bots", "broken", "@**Echo Bot** hi");
    const requests = await receiver.waitForRequests(3);
    // Backoff: 50 ms, then 100 ms.
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(45);
    expect(requests[2].at - requests[1].at).toBeGreaterThanOrEqual(95);
    const notice = await waitForMessage(bob.client, streamNarrow("broken"), (m) => m.sender_id === echo.id);
    expect(notice.content).toBe("Failure! Third party responded with 500");
    const owner = await waitForMessage(alice.client, [{ operator: "pm-with", operand: echo.email }], (m) => m.content.includes(`/near/${id}`));
    expect(owner.content).toContain(`[A message](/#narrow/stream/`);
    expect(owner.content).toContain("triggered an outgoing webhook.");
    expect(owner.content).toContain("The webhook got a response with status code *500*.");
    // The payload in a fence it cannot close.
    expect(owner.content).toContain("````\nupstream <b>broke</b> ```x```\n````");
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(3);
  });

  test("a client error is not retried", async () => {
    receiver.answer = () => ({ status: 404, body: "no such hook" });
    await sendStreamMessage(bob.client, "bots", "missing", "@**Echo Bot** hi");
    const notice = await waitForMessage(bob.client, streamNarrow("missing"), (m) => m.sender_id === echo.id);
    expect(notice.content).toBe("Failure! Third party responded with 404");
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
  });

  test("a service slower than the timeout is retried, then reported unavailable", async () => {
    receiver.answer = () => ({ delayMs: 1500, json: { content: "too late" } });
    const id = await sendStreamMessage(bob.client, "bots", "slow", "@**Echo Bot** hi");
    await receiver.waitForRequests(3, 15_000);
    const notice = await waitForMessage(bob.client, streamNarrow("slow"), (m) => m.sender_id === echo.id, 15_000);
    expect(notice.content).toBe("Failure! Bot is unavailable");
    const owner = await waitForMessage(alice.client, [{ operator: "pm-with", operand: echo.email }], (m) => m.content.includes(`/near/${id}`));
    expect(owner.content).toContain("A timeout occurred.");
    await new Promise((r) => setTimeout(r, 1700));
    expect((await messages(bob.client, streamNarrow("slow"))).filter((m) => m.sender_id === echo.id).map((m) => m.content)).toEqual(["Failure! Bot is unavailable"]);
  });

  test("bad JSON and an oversized answer fail at once, each saying why", async () => {
    receiver.answer = (request) => (String(request.json?.data).includes("big") ? { bytes: 2 * 1024 * 1024, chunked: true } : { body: "{not json", status: 200 });
    await sendStreamMessage(bob.client, "bots", "garbled", "@**Echo Bot** json");
    await sendStreamMessage(bob.client, "bots", "huge", "@**Echo Bot** big");
    expect((await waitForMessage(bob.client, streamNarrow("garbled"), (m) => m.sender_id === echo.id)).content).toBe("Failure! Invalid JSON in response");
    expect((await waitForMessage(bob.client, streamNarrow("huge"), (m) => m.sender_id === echo.id)).content).toBe("Failure! The response was too large.");
    expect(receiver.received).toHaveLength(2);
  });

  test("no trigger: a message without the mention, a silent mention, one from a bot, a deactivated bot", async () => {
    const other = await createBot(server, alice.client, { full_name: "Quiet Bot", short_name: "quiet", payload_url: receiver.url });
    await sendStreamMessage(bob.client, "bots", "none", "Echo Bot is not mentioned here");
    await sendStreamMessage(bob.client, "bots", "none", "@_**Echo Bot** silently");
    // A bot's message never calls a bot: two of them would answer each other forever.
    await sendStreamMessage(server.client(echo.email, echo.apiKey), "bots", "none", "@**Quiet Bot** from a bot");
    expect((await alice.client.delete(`/bots/${other.id}`)).body.result).toBe("success");
    await sendStreamMessage(bob.client, "bots", "none", "@**Quiet Bot** deactivated");
    // The marker: a real trigger after all of them.
    await settle(receiver, () => sendStreamMessage(bob.client, "bots", "none", "@**Echo Bot** marker"), 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.map((r) => r.json?.data)).toEqual(["@**Echo Bot** marker"]);
  });

  test("a group mention reaches the bots in the group", async () => {
    const group = await alice.client.post("/user_groups/create", { name: "helpers", description: "bots that help", members: [echo.id, bob.id] });
    expect(group.body.result).toBe("success");
    await sendStreamMessage(alice.client, "bots", "group", "@*helpers* anyone?");
    const [request] = await receiver.waitForRequests(1);
    expect(request.json).toMatchObject({ trigger: "mention", data: "@*helpers* anyone?" });
  });

  test("a private stream: only a bot subscribed to it is called", async () => {
    await subscribeTo(bob.client, ["secret-room"], { invite_only: true });
    await sendStreamMessage(bob.client, "secret-room", "t", "@**Echo Bot** can you read this?");
    await subscribeTo(bob.client, ["secret-room"], { principals: [echo.id] });
    await settle(receiver, () => sendStreamMessage(bob.client, "secret-room", "t", "@**Echo Bot** now you can"), 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.map((r) => r.json?.data)).toEqual(["@**Echo Bot** now you can"]);
  });

  test("the Slack-compatible interface: a form, and `text` as the reply; private messages refused", async () => {
    const slack = await createBot(server, alice.client, { full_name: "Slack Bot", short_name: "slack", payload_url: receiver.url, interface_type: 2 });
    receiver.answer = () => ({ json: { text: "from slack" } });
    const id = await sendStreamMessage(bob.client, "bots", "slack", "@**Slack Bot** hello");
    const [request] = await receiver.waitForRequests(1);
    expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(request.form).toMatchObject({
      token: slack.token,
      channel_name: "bots",
      text: "@**Slack Bot** hello",
      trigger_word: "mention",
      user_id: String(bob.id),
      user_name: "Bob Builder",
      service_id: String(slack.id),
    });
    expect(request.form!.timestamp).toMatch(/^\d+$/);
    expect((await waitForMessage(bob.client, streamNarrow("slack"), (m) => m.sender_id === slack.id)).content).toBe("from slack");
    expect(id).toBeGreaterThan(0);
    await sendPrivateMessage(bob.client, [slack.id], "private");
    const narrow = [{ operator: "pm-with", operand: slack.email }];
    expect((await waitForMessage(bob.client, narrow, (m) => m.sender_id === slack.id)).content).toBe("Failure! Slack outgoing webhooks don't support private messages.");
    expect(receiver.received).toHaveLength(1);
  });

  test("a reply too long for a message is truncated, not lost", async () => {
    receiver.answer = () => ({ json: { content: "é".repeat(6000) } });
    await sendStreamMessage(bob.client, "bots", "long", "@**Echo Bot** talk a lot");
    const reply = await waitForMessage(bob.client, streamNarrow("long"), (m) => m.sender_id === echo.id);
    expect(reply.content.endsWith("\n[message truncated]")).toBe(true);
    expect(Buffer.byteLength(reply.content)).toBeLessThanOrEqual(10_000);
  });
});

describe.each(MODES)("outgoing webhook destinations (%s)", (mode) => {
  let receiver: WebhookReceiver;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await receiver?.close();
  });

  async function botOn(env: Record<string, string>): Promise<{ server: TestServer; alice: TestUser; bot: Bot }> {
    const server = await startTestServer(mode, { ...ENV, OUTGOING_WEBHOOK_ATTEMPTS: "2", ...env });
    servers.push(server);
    const alice = await createTestUser(server, "Alice Author");
    await subscribeTo(alice.client, ["bots"]);
    const bot = await createBot(server, alice.client, { full_name: "Local Bot", short_name: "local", payload_url: receiver.url });
    return { server, alice, bot };
  }

  test("outside development, a loopback service is never called; the owner learns only that it did not answer", async () => {
    const { alice, bot } = await botOn({ DEV_MODE: "false" });
    const id = await sendStreamMessage(alice.client, "bots", "local", "@**Local Bot** hi");
    const narrow = [{ operator: "stream", operand: "bots" }, { operator: "topic", operand: "local" }];
    expect((await waitForMessage(alice.client, narrow, (m) => m.sender_id === bot.id)).content).toBe("Failure! Bot is unavailable");
    const owner = await waitForMessage(alice.client, [{ operator: "pm-with", operand: bot.email }], (m) => m.content.includes(`/near/${id}`));
    expect(owner.content).toContain("A connection error occurred. Is my bot server down?");
    expect(owner.content).not.toContain("127.0.0.1");
    expect(receiver.received).toHaveLength(0);
  });

  test("a refused destination is not retried: the conversation and the owner are told at once, once", async () => {
    // A minute's backoff: a retry would keep the notices away far longer than the test waits.
    const { server, alice, bot } = await botOn({ DEV_MODE: "false", OUTGOING_WEBHOOK_ATTEMPTS: "4", OUTGOING_WEBHOOK_BACKOFF_MS: "60000" });
    // The same by a name that resolves to loopback, and by a name that does not exist (which must
    // look the same to the owner, so it is not retried either).
    const byName = await createBot(server, alice.client, { full_name: "Named Bot", short_name: "named", payload_url: `http://localhost:${receiver.port}/hook` });
    const nowhere = await createBot(server, alice.client, { full_name: "Nowhere Bot", short_name: "nowhere", payload_url: "http://no-such-host.invalid/hook" });
    const retriesBefore = await callAttempts("retry");
    const id = await sendStreamMessage(alice.client, "bots", "refused", "@**Local Bot** @**Named Bot** @**Nowhere Bot** hi");
    const narrow = [{ operator: "stream", operand: "bots" }, { operator: "topic", operand: "refused" }];
    for (const each of [bot, byName, nowhere]) {
      expect((await waitForMessage(alice.client, narrow, (m) => m.sender_id === each.id)).content).toBe("Failure! Bot is unavailable");
      const owner = await waitForMessage(alice.client, [{ operator: "pm-with", operand: each.email }], (m) => m.content.includes(`/near/${id}`));
      expect(owner.content).toContain("A connection error occurred. Is my bot server down?");
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(await callAttempts("retry")).toBe(retriesBefore);
    expect((await messages(alice.client, narrow)).filter((m) => m.sender_id !== alice.id)).toHaveLength(3);
    for (const each of [bot, byName, nowhere]) {
      expect((await messages(alice.client, [{ operator: "pm-with", operand: each.email }])).filter((m) => m.content.includes(`/near/${id}`))).toHaveLength(1);
    }
    expect(receiver.received).toHaveLength(0);
  });

  test("OUTGOING_WEBHOOK_ALLOWED_HOSTS lets an operator allow an internal service", async () => {
    const { alice } = await botOn({ DEV_MODE: "false", OUTGOING_WEBHOOK_ALLOWED_HOSTS: "127.0.0.0/8" });
    await sendStreamMessage(alice.client, "bots", "allowed", "@**Local Bot** hi");
    const [request] = await receiver.waitForRequests(1);
    expect(request.json?.data).toBe("@**Local Bot** hi");
  });
});

describe.each(MODES)("service bot calls per message (%s)", (mode) => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let alice: TestUser;
  let bots: Bot[];

  beforeAll(async () => {
    server = await startTestServer(mode, { ...ENV, OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE: "3" });
    receiver = await startWebhookReceiver();
    alice = await createTestUser(server, "Alice Author");
    await subscribeTo(alice.client, ["bots"]);
    bots = [];
    for (const n of [1, 2, 3, 4, 5]) bots.push(await createBot(server, alice.client, { full_name: `Crowd Bot ${n}`, short_name: `crowd${n}`, payload_url: receiver.url }));
    const group = await alice.client.post("/user_groups/create", { name: "crowd", description: "five bots", members: [alice.id, ...bots.map((b) => b.id)] });
    expect(group.body.result).toBe("success");
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.received = [];
  });

  /** The bots called (by their service's token), once a marker call to the last bot shows everything before it was handled. */
  async function calledFor(send: () => Promise<unknown>, expected: number): Promise<string[]> {
    await send();
    await receiver.waitForRequests(expected);
    await settle(receiver, () => sendStreamMessage(alice.client, "bots", "marker", "@**Crowd Bot 5** marker"), expected + 1);
    await new Promise((r) => setTimeout(r, 300));
    return receiver.received.filter((r) => r.json?.data !== "@**Crowd Bot 5** marker").map((r) => String(r.json?.token));
  }

  test("a stream message calls at most OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE bots: those named first, then the group's by id", async () => {
    const called = await calledFor(() => sendStreamMessage(alice.client, "bots", "crowd", "@**Crowd Bot 4** and @*crowd*, anyone?"), 3);
    expect(called.sort()).toEqual([bots[3].token, bots[0].token, bots[1].token].sort());
  });

  test("a private message to more bots than that calls the first by id", async () => {
    const called = await calledFor(() => sendPrivateMessage(alice.client, bots.map((b) => b.id).reverse(), "all of you"), 3);
    expect(called.sort()).toEqual(bots.slice(0, 3).map((b) => b.token).sort());
  });
});

describe.each(MODES)("embedded bots (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Author");
    await subscribeTo(alice.client, ["bots", "followup"]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("helloworld answers beep boop and waves; encrypt answers in ROT13; followup copies to its stream", async () => {
    const hello = await createBot(server, alice.client, { full_name: "Hello Bot", short_name: "hello", bot_type: 4, service_name: "helloworld" });
    const encrypt = await createBot(server, alice.client, { full_name: "Crypt Bot", short_name: "crypt", bot_type: 4, service_name: "encrypt" });
    const followup = await createBot(server, alice.client, { full_name: "Followup Bot", short_name: "followup", bot_type: 4, service_name: "followup" });
    await subscribeTo(alice.client, ["followup"], { principals: [followup.id] });
    const narrow = (topic: string) => [{ operator: "stream", operand: "bots" }, { operator: "topic", operand: topic }];

    const hi = await sendStreamMessage(alice.client, "bots", "hello", "@**Hello Bot** hi");
    expect((await waitForMessage(alice.client, narrow("hello"), (m) => m.sender_id === hello.id)).content).toBe("beep boop");
    const waved = await waitForMessage(alice.client, narrow("hello"), (m) => m.id === hi && m.reactions.length > 0);
    expect(waved.reactions).toMatchObject([{ emoji_name: "wave", user_id: hello.id }]);

    await sendStreamMessage(alice.client, "bots", "crypt", "@**Crypt Bot** Hello, World!");
    expect((await waitForMessage(alice.client, narrow("crypt"), (m) => m.sender_id === encrypt.id)).content).toBe("Encrypted/Decrypted text: Uryyb, Jbeyq!");
    // zulip_bots only handle a stream message that starts with their mention.
    await sendStreamMessage(alice.client, "bots", "crypt", "later: @**Crypt Bot** abc");
    await sendPrivateMessage(alice.client, [encrypt.id], "abc");
    expect((await waitForMessage(alice.client, [{ operator: "pm-with", operand: encrypt.email }], (m) => m.sender_id === encrypt.id)).content).toBe("Encrypted/Decrypted text: nop");
    expect((await messages(alice.client, narrow("crypt"))).filter((m) => m.sender_id === encrypt.id)).toHaveLength(1);

    await sendStreamMessage(alice.client, "bots", "todo", "@**Followup Bot** call the plumber");
    const copied = await waitForMessage(alice.client, [{ operator: "stream", operand: "followup" }], (m) => m.sender_id === followup.id);
    expect(copied).toMatchObject({ subject: alice.email, content: `from ${alice.email}: call the plumber` });
  });
});
