// The web client keeps its message list whole through what takes its event queue away (issue 34:
// "recovering from BAD_EVENT_QUEUE_ID and a server restart without losing or duplicating a
// message"): a queue deleted under it, an events process SIGKILLed and started again behind a
// front (postgres, separate API and events processes), the whole server restarted on its data
// directory (embedded), and a `restart` event of a new version. Each time the person's list shows
// every message once, in order, without a page reload, and they can still send.
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { zulipVersionFields } from "@chat/core";
import { sendRestartEvents } from "../../apps/events/src/restart-events.ts";
import { MESSAGE_ROW, newPerson, useBrowser, waitForMessages, type Person, type Problem } from "../support/browser.ts";
import { ApiClient } from "../support/client.ts";
import { subscribeTo } from "../support/messages.ts";
import type { ServerProcess } from "../support/processes.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type Mode, type TestServer } from "../support/server.ts";
import { useTierProcesses } from "../support/tier-processes.ts";
import { createTestUser } from "../support/users.ts";

jest.setTimeout(180_000);

/** Generous: two cores shared with other test runs. */
const WAIT = 45_000;
const STREAM = "recovery";

// Helpers on the page -----------------------------------------------------------------------------

// What the page functions see of the DOM (the test's tsconfig has no DOM library).
type PageGlobal = { document: { querySelectorAll(selector: string): Iterable<{ dataset: Record<string, string | undefined> }> } } & Record<string, unknown>;

/** The message ids the list shows, top to bottom. */
function shownIds(page: Page): Promise<number[]> {
  return page.evaluate((selector) => [...(globalThis as unknown as PageGlobal).document.querySelectorAll(selector)].map((el) => Number(el.dataset.messageId)), MESSAGE_ROW);
}

/** Waits until every id of `ids` is shown, then checks the list: each id once, ascending. */
async function expectShownOnce(page: Page, ids: number[]): Promise<number[]> {
  await page.waitForFunction(
    ({ selector, want }) => {
      const shown = new Set([...(globalThis as unknown as PageGlobal).document.querySelectorAll(selector)].map((el) => Number(el.dataset.messageId)));
      return want.every((id) => shown.has(id));
    },
    { selector: MESSAGE_ROW, want: ids },
    { timeout: WAIT, polling: 200 },
  ).catch(async (error: unknown) => {
    throw new Error(`the list never showed all of [${ids.join(", ")}]; it shows [${(await shownIds(page)).join(", ")}]\n${String(error)}`);
  });
  const shown = await shownIds(page);
  expect(shown.filter((id, i) => shown.indexOf(id) !== i)).toEqual([]);
  expect(shown).toEqual([...shown].sort((a, b) => a - b));
  expect(ids.filter((id) => !shown.includes(id))).toEqual([]);
  return shown;
}

/** Marks the window: the mark survives anything but a reload. */
async function markWindow(page: Page): Promise<void> {
  await page.evaluate(() => {
    (globalThis as unknown as PageGlobal).__recoveryMark = true;
  });
}
async function expectNotReloaded(page: Page): Promise<void> {
  expect(await page.evaluate(() => (globalThis as unknown as PageGlobal).__recoveryMark === true)).toBe(true);
}

/** Counts the page's POST /json/register answers and keeps the last queue id. */
function watchRegisters(page: Page): { count: () => number; queueId: () => string | null } {
  let count = 0;
  let queueId: string | null = null;
  page.on("response", (response) => {
    const url = new URL(response.url());
    if (url.pathname !== "/json/register" || response.request().method() !== "POST") return;
    void response
      .json()
      .then((body: { result?: string; queue_id?: string }) => {
        if (body.result !== "success") return;
        count++;
        queueId = body.queue_id ?? null;
      })
      .catch(() => undefined);
  });
  return { count: () => count, queueId: () => queueId };
}

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = WAIT): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends through the compose box of the topic on screen and waits for the message to show. */
async function sendFromPage(page: Page, text: string): Promise<void> {
  const editor = page.locator(".compose textarea");
  if ((await editor.count()) === 0) await page.locator(".compose-reply").first().click();
  await editor.first().fill(text);
  await editor.first().press("Enter");
  await page.locator(MESSAGE_ROW, { hasText: text }).first().waitFor({ timeout: WAIT });
  expect(await page.locator(MESSAGE_ROW, { hasText: text }).count()).toBe(1);
}

/** The unread count the sidebar shows for a channel (0 when it shows none). */
async function sidebarUnread(page: Page, streamName: string): Promise<number> {
  const row = page.locator("a.sb-stream").filter({ has: page.locator(".sb-label", { hasText: new RegExp(`^${streamName}$`) }) }).locator(".sb-count:not(.sb-count-muted)").first();
  if ((await row.count()) === 0) return 0;
  const label = (await row.getAttribute("aria-label")) ?? "";
  return Number(/^(\d+)/.exec(label)?.[1] ?? 0);
}

/** The server's count of `client`'s unread messages in a stream. */
async function serverUnread(client: ApiClient, streamName: string): Promise<number> {
  const answer = await client.get("/messages", {
    anchor: "newest",
    num_before: 1000,
    num_after: 0,
    narrow: JSON.stringify([
      { operator: "stream", operand: streamName },
      { operator: "is", operand: "unread" },
    ]),
  });
  return (answer.body.messages as unknown[]).length;
}

/** Avatars from Gravatar: the test machine is offline. */
const offline = (problem: Problem) => problem.text.includes("secure.gravatar.com");

/** Problems that an outage causes by design: failed polls (the front's 502, a refused connection). */
const outageProblem = (problem: Problem) =>
  offline(problem) ||
  (problem.kind === "requestfailed" && /\/json\//.test(problem.text)) ||
  (problem.kind === "http" && /\/json\/(events|register)/.test(problem.text)) ||
  (problem.kind === "console" && /Failed to load resource|502|503|ERR_CONNECTION/.test(problem.text));

async function send(client: ApiClient, topic: string, content: string): Promise<number> {
  const res = await client.post("/messages", { type: "stream", to: STREAM, topic, content });
  if (res.body.result !== "success") throw new Error(`sending: ${JSON.stringify(res.body)}`);
  return res.body.id as number;
}

async function topicIds(client: ApiClient, topic: string): Promise<number[]> {
  const answer = await client.get("/messages", {
    anchor: "newest",
    num_before: 1000,
    num_after: 0,
    narrow: JSON.stringify([
      { operator: "stream", operand: STREAM },
      { operator: "topic", operand: topic },
    ]),
  });
  return (answer.body.messages as Array<{ id: number }>).map((m) => m.id);
}

async function streamId(client: ApiClient): Promise<number> {
  const streams = await client.get("/streams");
  return (streams.body.streams as Array<{ name: string; stream_id: number }>).find((s) => s.name === STREAM)!.stream_id;
}

// 1 and 4: one server process, both modes ---------------------------------------------------------

describe.each(MODES)("the web client recovers its event queue (%s)", (mode: Mode) => {
  const handle = useBrowser();
  let server: TestServer;
  let alice: ApiClient;
  let bob: { client: ApiClient; email: string };
  let person: Person;
  let registers: ReturnType<typeof watchRegisters>;
  let stream: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    const a = await createTestUser(server, "Alice Sender");
    const b = await createTestUser(server, "Bob Reader");
    alice = a.client;
    bob = b;
    await subscribeTo(server.owner, [STREAM], { principals: JSON.stringify([OWNER_EMAIL, a.email, b.email]) });
    stream = await streamId(server.owner);
    await send(alice, "lost queue", "before anything happens");
    await send(alice, "elsewhere", "an unread message in another topic");
    person = await newPerson(handle.browser, server, { email: b.email, password: "member-pass" }, { login: "http" });
    registers = watchRegisters(person.page);
    await person.page.goto(`/#narrow/channel/${stream}-${STREAM}/topic/${encodeURIComponent("lost queue")}`);
    await waitForMessages(person.page, WAIT);
    await waitFor("the first register", () => registers.queueId() !== null);
    await markWindow(person.page);
  }, 120_000);

  afterAll(async () => {
    await person?.close();
    await server?.stop();
  });

  test("a queue deleted under it: BAD_EVENT_QUEUE_ID, then every message once", async () => {
    const started = Date.now();
    const before = registers.count();
    const lost = registers.queueId()!;
    const sent = [await send(alice, "lost queue", "message 1, just before the queue goes")];
    const deleted = await bob.client.delete("/events", { queue_id: lost });
    expect(deleted.body.result).toBe("success");
    sent.push(await send(alice, "lost queue", "message 2, right after"));
    // Another unread one where Bob is not looking, for the counts.
    await send(alice, "elsewhere", "message in another topic, while the queue is gone");
    sent.push(await send(alice, "lost queue", "message 3, a moment later"));

    await waitFor("the client to register again", () => registers.count() > before && registers.queueId() !== lost);
    const all = await topicIds(alice, "lost queue");
    const shown = await expectShownOnce(person.page, all);
    expect(shown).toEqual(all);
    expect(sent.every((id) => shown.includes(id))).toBe(true);
    await expectNotReloaded(person.page);

    // Unread counts agree with the server once reading has settled.
    let counts: number[] = [];
    await waitFor("the sidebar's unread count to match the server's", async () => {
      counts = [await sidebarUnread(person.page, STREAM), await serverUnread(bob.client, STREAM)];
      return counts[0] === counts[1];
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}: the sidebar shows ${counts[0]}, the server has ${counts[1]}`);
    });
    expect(await serverUnread(bob.client, STREAM)).toBeGreaterThanOrEqual(2);

    await sendFromPage(person.page, "Bob still sends after the lost queue");
    // The poll that met the deleted queue answered 400, as it should.
    person.problems.expectNone((p) => offline(p) || (p.kind === "console" && /status of 400 .*\/json\/events/.test(p.text)));
    person.problems.clear();
    process.stdout.write(`reconnect (${mode}) lost queue: recovered in ${Date.now() - started} ms\n`);
  });

  test("a `restart` event of a new version: registers again, nothing lost or doubled", async () => {
    const started = Date.now();
    const before = registers.count();
    const old = registers.queueId()!;
    const sent = [await send(alice, "lost queue", "restart 1, before")];
    await expectShownOnce(person.page, sent);
    const current = zulipVersionFields();
    const appended = await sendRestartEvents(server.running.services.bus.queues, { ...current, zulip_feature_level: current.zulip_feature_level + 1, zulip_version: `${current.zulip_version}-next` });
    expect(appended).toBeGreaterThanOrEqual(1);
    sent.push(await send(alice, "lost queue", "restart 2, right after"));
    sent.push(await send(alice, "lost queue", "restart 3, a moment later"));

    // The client waits up to 3 s (spreading a restart's clients) before it registers again.
    await waitFor("the client to register again", () => registers.count() > before && registers.queueId() !== old);
    sent.push(await send(alice, "lost queue", "restart 4, on the new queue"));
    const all = await topicIds(alice, "lost queue");
    expect(await expectShownOnce(person.page, all)).toEqual(all);
    await expectNotReloaded(person.page);
    await sendFromPage(person.page, "Bob still sends after the restart event");
    person.problems.expectNone(offline);
    process.stdout.write(`reconnect (${mode}) restart event: recovered in ${Date.now() - started} ms\n`);
  });
});

// 3: the whole server restarted on its data directory (embedded) ------------------------------------

(MODES.includes("embedded") ? describe : describe.skip)("the web client through a whole-server restart (embedded)", () => {
  const handle = useBrowser();
  let dataDir: string;
  let server: TestServer | null = null;
  let person: Person | null = null;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "web-reconnect-"));
  });
  afterAll(async () => {
    await person?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("registers again on the new server; the session still works; nothing lost or doubled", async () => {
    const started = Date.now();
    server = await startTestServer("embedded", { DATA_DIR: dataDir });
    const port = new URL(server.baseUrl).port;
    const a = await createTestUser(server, "Alice Sender");
    const b = await createTestUser(server, "Bob Reader");
    await subscribeTo(server.owner, [STREAM], { principals: JSON.stringify([OWNER_EMAIL, a.email, b.email]) });
    const stream = await streamId(server.owner);
    const alice = (email: string, key: string) => new ApiClient(server!.baseUrl, { email, apiKey: key });
    const aliceKey = a.client.credentials!.apiKey;
    await send(a.client, "restart", "before the restart");

    person = await newPerson(handle.browser, server, { email: b.email, password: "member-pass" }, { login: "http" });
    const registers = watchRegisters(person.page);
    await person.page.goto(`/#narrow/channel/${stream}-${STREAM}/topic/restart`);
    await waitForMessages(person.page, WAIT);
    await waitFor("the first register", () => registers.queueId() !== null);
    await markWindow(person.page);
    const before = registers.count();
    const sent = [await send(a.client, "restart", "just before the restart")];
    await expectShownOnce(person.page, sent);

    await server.stop();
    server = null;
    // Down: the client notices and says so.
    await person.page.locator(".topbar-reconnecting").waitFor({ timeout: WAIT });
    server = await startTestServer("embedded", { DATA_DIR: dataDir, PORT: port });
    expect(new URL(server.baseUrl).port).toBe(port);
    const aliceAgain = alice(a.email, aliceKey);
    sent.push(await send(aliceAgain, "restart", "right after the restart"));
    sent.push(await send(aliceAgain, "restart", "a moment later"));

    await waitFor("the client to register again", () => registers.count() > before);
    const all = await topicIds(aliceAgain, "restart");
    expect(await expectShownOnce(person.page, all)).toEqual(all);
    await person.page.locator(".topbar-reconnecting").waitFor({ state: "detached", timeout: WAIT });
    await expectNotReloaded(person.page);
    // The session (in the database) outlived the process: Bob sends with it.
    await sendFromPage(person.page, "Bob sends after the restart");
    expect(new URL(person.page.url()).pathname).toBe("/");
    person.problems.expectNone(outageProblem);
    process.stdout.write(`reconnect (embedded) whole-server restart: ${Date.now() - started} ms in all\n`);
  });
});

// 2: the events process SIGKILLed and started again (postgres, separate processes) ------------------

/**
 * One origin for the browser in front of separate API and events processes, as nginx routes them:
 * /register and /events (under /json and /api/v1) to the events process, everything else to the
 * API process. While the events process is down its requests answer 502.
 */
class Front {
  readonly server: http.Server;
  events: number;
  private readonly agent = new http.Agent({ keepAlive: true });
  constructor(
    private readonly api: number,
    events: number,
  ) {
    this.events = events;
    this.server = http.createServer((req, res) => {
      const pathname = new URL(req.url ?? "/", "http://front").pathname;
      const toEvents = /^\/(json|api\/v1)\/(register|events)$/.test(pathname);
      const upstream = http.request(
        { host: "127.0.0.1", port: toEvents ? this.events : this.api, method: req.method, path: req.url, headers: req.headers, agent: this.agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on("error", () => res.destroy());
        },
      );
      upstream.on("error", () => {
        if (res.headersSent) return void res.destroy();
        res.writeHead(502, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ result: "error", msg: "Bad gateway", code: "BAD_GATEWAY" }));
      });
      req.pipe(upstream);
    });
  }
  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as AddressInfo).port;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.agent.destroy();
  }
}

(MODES.includes("postgres") ? describe : describe.skip)("the web client through an events process killed and started again (postgres)", () => {
  const handle = useBrowser();
  const tiers = useTierProcesses({ EXTERNAL_HOST: "chat.test", EVENT_HEARTBEAT_SECONDS: "5" });
  let front: Front | null = null;
  let person: Person | null = null;

  afterAll(async () => {
    await person?.close();
    await front?.close();
  });

  test("shows that it is reconnecting, then every message once; sending still works", async () => {
    const started = Date.now();
    const api = await tiers.start("api");
    let events: ServerProcess = await tiers.start("events");
    const owner = await tiers.owner(api);
    front = new Front(api.port!, events.port!);
    const frontUrl = `http://127.0.0.1:${await front.listen()}`;

    const users: Array<{ email: string; client: ApiClient }> = [];
    for (const [email, name] of [
      ["alice@example.com", "Alice Sender"],
      ["bob@example.com", "Bob Reader"],
    ]) {
      const created = await owner.post("/users", { email, password: "member-pass", full_name: name, short_name: name.split(" ")[0] });
      expect(created.body.result).toBe("success");
      const login = await new ApiClient(`http://127.0.0.1:${api.port}`, null).post("/fetch_api_key", { username: email, password: "member-pass" });
      users.push({ email, client: new ApiClient(`http://127.0.0.1:${api.port}`, { email, apiKey: login.body.api_key }) });
    }
    const [alice, bob] = users;
    await subscribeTo(owner, [STREAM], { principals: JSON.stringify([alice.email, bob.email]) });
    const stream = await streamId(owner);
    await send(alice.client, "kill", "before the kill");

    person = await newPerson(handle.browser, frontUrl, { email: bob.email, password: "member-pass" }, { login: "http" });
    const registers = watchRegisters(person.page);
    await person.page.goto(`/#narrow/channel/${stream}-${STREAM}/topic/kill`);
    await waitForMessages(person.page, WAIT);
    await waitFor("the first register", () => registers.queueId() !== null);
    await markWindow(person.page);
    const sent = [await send(alice.client, "kill", "live before the kill")];
    await expectShownOnce(person.page, sent);

    await events.kill();
    await person.page.locator(".topbar-reconnecting").waitFor({ timeout: WAIT });
    // Sent while no events process runs: they reach the queue once one takes it over.
    sent.push(await send(alice.client, "kill", "sent while the events process is down (1)"));
    sent.push(await send(alice.client, "kill", "sent while the events process is down (2)"));
    events = await tiers.start("events");
    front.events = events.port!;
    sent.push(await send(alice.client, "kill", "sent after the new events process started"));

    const all = await topicIds(alice.client, "kill");
    expect(await expectShownOnce(person.page, all)).toEqual(all);
    await person.page.locator(".topbar-reconnecting").waitFor({ state: "detached", timeout: WAIT });
    await expectNotReloaded(person.page);
    await sendFromPage(person.page, "Bob sends after the events process came back");
    person.problems.expectNone(outageProblem);
    process.stdout.write(`reconnect (postgres) events process killed: ${Date.now() - started} ms in all, ${registers.count()} registers\n`);
  });
});
