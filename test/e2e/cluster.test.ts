// The local cluster as `npm run cluster` starts it: nginx from the system's packages with
// infra/nginx/nginx.conf in front of 2 API processes, 2 events processes and a worker, on a
// database and Redis prefix of this file's own. A client's whole flow goes through nginx; then
// every process is restarted, one at a time, while 50 clients long-poll and a sender sends: no
// client request fails beyond one retry, no client registers again, and every client gets every
// message once, in order.
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { startLocalCluster, type LocalCluster } from "../../apps/server/src/local-cluster.ts";
import { ApiClient } from "../support/client.ts";
import { rawPoll, takeEvents, usersWithQueues, type PollAnswer, type RawPoller } from "../support/raw-poll.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "../support/services.ts";

jest.setTimeout(300_000);

const OWNER = "owner@example.com";

let database: TestDatabase;
let redis: TestRedisPrefix;
let cluster: LocalCluster;
let owner: ApiClient;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createRedisPrefix();
  cluster = await startLocalCluster({
    api: 2,
    events: 2,
    port: 0,
    env: {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redis.prefix,
      DEV_MODE: "true",
      BOOTSTRAP_OWNER_EMAIL: OWNER,
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
      SHUTDOWN_DELAY_SECONDS: "1",
      EVENT_HEARTBEAT_SECONDS: "20",
      RATE_LIMITING: "false",
      LOG_LEVEL: "info",
      NODE_ENV: "production",
    },
  });
  const key = await new ApiClient(cluster.url, null).post("/dev_fetch_api_key", { username: OWNER });
  owner = new ApiClient(cluster.url, { email: OWNER, apiKey: key.body.api_key });
});

afterAll(async () => {
  await cluster?.stop();
  await database?.drop();
  await redis?.clear();
});

test("a client's flow through nginx: register, long-poll, send, fetch, upload and download", async () => {
  const registered = await owner.post("/register", { event_types: ["message"] });
  expect(registered.body.result).toBe("success");
  const polled = owner.get("/events", { queue_id: registered.body.queue_id, last_event_id: registered.body.last_event_id });
  await sleep(300);
  const sent = await owner.post("/messages", { type: "stream", to: "general", topic: "cluster", content: "through nginx" });
  expect(sent.body.result).toBe("success");
  const events = (await polled).body.events as Array<{ type: string; message: { id: number } }>;
  expect(events.map((event) => [event.type, event.message.id])).toEqual([["message", sent.body.id]]);
  const page = await owner.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [["stream", "general"]] });
  expect(page.body.messages.map((m: { id: number }) => m.id)).toContain(sent.body.id);

  const uploaded = await owner.raw("post", "/user_uploads").attach("file", Buffer.from("through nginx, both ways"), "notes.txt");
  expect(uploaded.body.result).toBe("success");
  const download = await fetch(`${cluster.url}${uploaded.body.uri as string}`, { headers: { Authorization: `Basic ${Buffer.from(`${OWNER}:${owner.credentials!.apiKey}`).toString("base64")}` } });
  expect([download.status, await download.text()]).toEqual([200, "through nginx, both ways"]);
});

test("a browser's flow through nginx: login on the API tier, /json/register and a /json/events long poll on the events tier, logout", async () => {
  const page = await fetch(`${cluster.url}/login`);
  expect(page.status).toBe(200);
  const formToken = /csrftoken=([^;]*)/.exec(page.headers.get("set-cookie") ?? "")![1];
  const login = await fetch(`${cluster.url}/accounts/login/`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: `csrftoken=${formToken}`, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ username: OWNER, password: "owner-password", csrfmiddlewaretoken: formToken }).toString(),
  });
  expect([login.status, login.headers.get("location")]).toEqual([302, "/"]);
  const cookies = Object.fromEntries(login.headers.getSetCookie().map((line) => line.slice(0, line.indexOf(";")).split("=") as [string, string]));
  const browser = { Cookie: `sessionid=${cookies.sessionid}; csrftoken=${cookies.csrftoken}`, "X-CSRFToken": cookies.csrftoken };
  const form = { ...browser, "Content-Type": "application/x-www-form-urlencoded" };
  // Only the events tier serves /register: an answer proves nginx sent it there.
  const registered = (await (await fetch(`${cluster.url}/json/register`, { method: "POST", headers: form, body: "event_types=%5B%22message%22%5D" })).json()) as { result: string; queue_id: string; last_event_id: number };
  expect(registered.result).toBe("success");
  const polled = fetch(`${cluster.url}/json/events?queue_id=${encodeURIComponent(registered.queue_id)}&last_event_id=${registered.last_event_id}`, { headers: browser }).then((res) => res.json() as Promise<{ events: Array<{ type: string; message: { id: number } }> }>);
  await sleep(300);
  const sent = await fetch(`${cluster.url}/json/messages`, { method: "POST", headers: form, body: new URLSearchParams({ type: "stream", to: "general", topic: "cluster", content: "from a browser" }).toString() });
  const { id } = (await sent.json()) as { id: number };
  expect((await polled).events.map((event) => [event.type, event.message.id])).toEqual([["message", id]]);
  const logout = await fetch(`${cluster.url}/accounts/logout/`, { method: "POST", redirect: "manual", headers: browser });
  expect(logout.status).toBe(302);
  expect((await fetch(`${cluster.url}/json/users/me`, { headers: browser })).status).toBe(401);
});

interface Client extends RawPoller {
  retries: number;
}

/** A request that may be tried once more (a connection error, or 502/503/504 from nginx or a draining node). */
function retryable(answer: PollAnswer | Error): boolean {
  return answer instanceof Error || [502, 503, 504].includes(answer.status);
}

test("a rolling restart of every process under 50 polling clients and a sender: no request fails past one retry, nothing is lost or doubled", async () => {
  const port = Number(new URL(cluster.url).port);
  const pollers: Client[] = (await usersWithQueues(owner, cluster.url, { name: "rolling", users: 10, queuesPerUser: 5, eventsUrl: () => cluster.url })).flat().map((p) => ({ ...p, retries: 0 }));
  expect(pollers).toHaveLength(50);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const failures: string[] = [];
  const t0 = Date.now();
  let stopping = false;

  const loops = Promise.all(
    pollers.map(async (poller) => {
      let failedOnce = false;
      while (!stopping) {
        const answer = await rawPoll(agent, port, poller).catch((error: Error) => error);
        if (retryable(answer)) {
          if (failedOnce) {
            failures.push(`${poller.queueId} at ${Date.now() - t0} ms: failed twice in a row: ${answer instanceof Error ? answer.message : `${answer.status} ${JSON.stringify(answer.body)}`}`);
            return;
          }
          failedOnce = true;
          poller.retries++;
          await sleep(200);
          continue;
        }
        failedOnce = false;
        if (answer instanceof Error || answer.status !== 200 || answer.body.result !== "success") {
          // BAD_EVENT_QUEUE_ID would make a client register again: a failure here.
          failures.push(`${poller.queueId}: ${answer instanceof Error ? answer.message : `${answer.status} ${JSON.stringify(answer.body)}`}`);
          return;
        }
        takeEvents(poller, answer);
      }
    }),
  );

  const sent: number[] = [];
  let sendRetries = 0;
  let sending = true;
  const sender = (async () => {
    for (let n = 0; sending; n++) {
      let res = await owner.post("/messages", { type: "stream", to: "general", topic: "rolling", content: `rolling ${n}` }).catch((error: Error) => error);
      if (res instanceof Error || res.status !== 200) {
        sendRetries++;
        await sleep(200);
        res = await owner.post("/messages", { type: "stream", to: "general", topic: "rolling", content: `rolling ${n}` }).catch((error: Error) => error);
      }
      if (res instanceof Error || res.status !== 200) {
        failures.push(`send ${n} failed twice: ${res instanceof Error ? res.message : `${res.status} ${JSON.stringify(res.body)}`}`);
        return;
      }
      sent.push(res.body.id as number);
      await sleep(100);
    }
  })();

  await sleep(2000);
  const restarts: string[] = [];
  for (const member of cluster.processes) {
    const started = Date.now();
    await cluster.restart(member);
    restarts.push(`${member.name} ${started - t0}+${Date.now() - started} ms`);
    await sleep(500);
  }
  await sleep(1000);
  sending = false;
  await sender;
  const deadline = Date.now() + 30_000;
  while (pollers.some((poller) => poller.received.length < sent.length) && failures.length === 0 && Date.now() < deadline) await sleep(200);
  stopping = true;
  // Each loop ends with its next answer: one more message wakes them all.
  const end = (await owner.post("/messages", { type: "stream", to: "general", topic: "rolling", content: "the end" })).body.id as number;
  await loops;
  agent.destroy();

  const pollRetries = pollers.reduce((sum, poller) => sum + poller.retries, 0);
  process.stdout.write(
    `rolling restart: ${restarts.join(", ")}; ${sent.length} messages sent (${sendRetries} sends retried once); ` +
      `50 clients, ${pollRetries} polls retried once (most by one client: ${Math.max(...pollers.map((p) => p.retries))})\n`,
  );
  if (failures.length > 0) process.stdout.write(`nginx:\n${cluster.nginxErrors().split("\n").filter((line) => !line.includes("no live upstreams")).slice(-40).join("\n")}\n`);
  expect(failures.slice(0, 5)).toEqual([]);
  expect(sent.length).toBeGreaterThan(20);
  // Every message once, in order, and no other (a send that failed yet committed would show here).
  const wrong = pollers.filter((poller) => JSON.stringify(poller.received.filter((id) => id !== end)) !== JSON.stringify(sent));
  expect(wrong.map((poller) => ({ queue: poller.queueId, received: poller.received })).slice(0, 3)).toEqual([]);
  for (const member of cluster.processes) expect(member.output()).not.toMatch(/"level":"error"/);
});
