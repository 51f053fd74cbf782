// The event tier's capacity figures (issue 16), each beside a bare Node ceiling from the same run:
// - sustained delivery: copies of one real send to a stream of 200 long-polling users are published
//   straight to the change stream at a fixed rate; message events the pollers receive per second.
//   Ceiling: a bare Node server waking 200 held polls on every POST, 4 POSTing at once.
// - memory per idle held poll at 10,000 held, on an events process that does nothing else.
//   Ceiling: a bare Node server holding as many.
// - /register in the embedded single process (PGlite, in-process bus), 4 concurrent.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { BusKeys } from "@chat/bus";
import { PGlite } from "@electric-sql/pglite";
import Redis from "ioredis";
import { startProcess } from "../../test/support/processes.ts";
import { startBareFanout } from "./bare-fanout.ts";
import { runConcurrent } from "./concurrency.ts";
import { basicAuth } from "./environment.ts";
import { request } from "./http-client.ts";
import { newPollAgent, pollForever, type Poller } from "./long-polls.ts";
import { processCpuMs, processRssBytes } from "./process-cpu.ts";
import { seedRealmWith, type SeededUser } from "./seed.ts";
import { percentile } from "./stats.ts";
import { waitUntil } from "./wait.ts";

const FORM = "application/x-www-form-urlencoded";
const SENDERS = 4;

function post(url: string, user: SeededUser, form: Record<string, string>) {
  return request(url, { method: "POST", headers: { Authorization: basicAuth(user.email, user.apiKey), "Content-Type": FORM }, body: new URLSearchParams(form).toString() });
}

/** Registers a queue for message events; throws on anything but success. */
export async function registerForMessages(eventsUrl: string, user: SeededUser): Promise<Poller> {
  const res = await post(`${eventsUrl}/api/v1/register`, user, { event_types: JSON.stringify(["message"]) });
  if (res.status !== 200) throw new Error(`POST /register: ${res.status} ${res.body.slice(0, 200)}`);
  const { queue_id, last_event_id } = JSON.parse(res.body) as { queue_id: string; last_event_id: number };
  return { user, queueId: queue_id, lastEventId: last_event_id };
}

export interface SustainedFigures {
  deliveriesPerSecond: number;
  offeredPerSecond: number;
  eventsCpuUsPerDelivery: number;
  eventsPerAnswer: number;
  bareDeliveriesPerSecond: number;
}

/**
 * What one events process delivers: `pollers` (one queue each, no other queue in the store)
 * long-poll while the change stream gets a message to a stream only they are subscribed to,
 * `batchesPerSecond` of them, for `seconds` after a warm-up. The batches are copies of one real
 * send's, published straight to the stream (each with its own batch id): the API process and
 * Postgres, which share this machine's two cores, would otherwise be what is measured.
 */
export async function measureSustained(options: {
  apiUrl: string;
  eventsUrl: string;
  eventsPid: number;
  pollers: Poller[];
  seconds: number;
  batchesPerSecond: number;
  realmId: number;
  redis: { url: string; prefix: string; shards: number };
}): Promise<SustainedFigures> {
  const { apiUrl, eventsUrl, pollers, seconds } = options;
  const sender = pollers[0].user;
  const subscribed = await post(`${apiUrl}/api/v1/users/me/subscriptions`, sender, {
    subscriptions: JSON.stringify([{ name: "sustained" }]),
    principals: JSON.stringify(pollers.map((poller) => poller.user.id)),
  });
  if (subscribed.status !== 200) throw new Error(`subscribing the pollers: ${subscribed.status} ${subscribed.body}`);

  let counting = false;
  let delivered = 0;
  let answers = 0;
  const agent = newPollAgent();
  const polls = pollForever(eventsUrl, pollers, (events) => {
    if (!counting) return;
    answers++;
    for (const event of events) if (event.type === "message") delivered++;
  }, agent);
  await sleep(1000);

  // The batch of one real send, as the API process published it.
  const sent = await post(`${apiUrl}/api/v1/messages`, sender, { type: "stream", to: "sustained", topic: "sustained", content: "a message of **sustained** delivery, about as long as most" });
  if (sent.status !== 200) throw new Error(`POST /messages: ${sent.status} ${sent.body}`);
  const redis = new Redis(options.redis.url);
  let offered = 0;
  let figures: Omit<SustainedFigures, "bareDeliveriesPerSecond">;
  try {
    const realmId = options.realmId;
    const streamKey = new BusKeys(options.redis.prefix).changeStream(realmId % options.redis.shards);
    const [[, fields]] = (await redis.xrevrange(streamKey, "+", "-", "COUNT", 1)) as [string, string[]][];
    const template = JSON.parse(fields[1]) as { id: string; realmId: number; events: unknown[] };
    const eventsJson = JSON.stringify(template.events);
    let n = 0;
    let publishing = true;
    // Paced by the clock: as many as are due by now, every 10 ms or so.
    const publishStart = performance.now();
    const publisher = (async () => {
      while (publishing) {
        const due = Math.floor(((performance.now() - publishStart) / 1000) * options.batchesPerSecond);
        const pipeline = redis.pipeline();
        for (; n < due; n++) {
          pipeline.xadd(streamKey, "*", "b", `{"id":"sustained-${n}","realmId":${realmId},"events":${eventsJson}}`);
          if (counting) offered++;
        }
        await pipeline.exec();
        await sleep(10);
      }
    })();
    await sleep(2000);
    counting = true;
    const cpuStart = processCpuMs(options.eventsPid);
    const started = performance.now();
    await sleep(seconds * 1000);
    counting = false;
    const elapsedS = (performance.now() - started) / 1000;
    const cpuMs = processCpuMs(options.eventsPid) - cpuStart;
    publishing = false;
    await publisher;
    const counted = delivered;
    const countedAnswers = answers;
    await sleep(2000);
    polls.stop();
    agent.destroy();
    await polls.done;
    figures = {
      deliveriesPerSecond: counted / elapsedS,
      offeredPerSecond: (offered * pollers.length) / elapsedS,
      eventsCpuUsPerDelivery: (cpuMs * 1000) / Math.max(1, counted),
      eventsPerAnswer: counted / Math.max(1, countedAnswers),
    };
  } finally {
    redis.disconnect();
  }

  // The ceiling: a bare server waking the same number of held polls on every POST.
  const bare = await startBareFanout(JSON.stringify({ result: "success", msg: "", events: [{ type: "message", id: 1, message: { content: "x".repeat(600) } }], queue_id: "x" }));
  let bareDelivered = 0;
  let bareCounting = false;
  let bareElapsedS = 0;
  try {
    const bareAgent = newPollAgent();
    let stopped = false;
    const barePolls = Promise.all(
      pollers.map(async () => {
        while (!stopped) {
          const res = await request(`${bare.url}/poll`, { agent: bareAgent }).catch(() => null);
          if (stopped || res === null) return;
          JSON.parse(res.body);
          if (bareCounting) bareDelivered++;
        }
      }),
    );
    await sleep(1000);
    let triggering = true;
    const triggers = Array.from({ length: SENDERS }, async () => {
      while (triggering) await request(`${bare.url}/trigger`, { method: "POST", body: "" });
    });
    await sleep(2000);
    bareCounting = true;
    const bareStarted = performance.now();
    await sleep(seconds * 1000);
    bareCounting = false;
    bareElapsedS = (performance.now() - bareStarted) / 1000;
    triggering = false;
    await Promise.all(triggers);
    stopped = true;
    bareAgent.destroy();
    await barePolls;
  } finally {
    await bare.close();
  }
  return { ...figures, bareDeliveriesPerSecond: bareDelivered / bareElapsedS };
}

export interface HeldPollMemory {
  kibPerPoll: number;
  bareKibPerPoll: number;
}

/**
 * RSS per idle held poll: a fresh events process (`env`) holding one poll for each queue in
 * `pollers`, against its RSS before (once it has held a few polls, and settled). The queues were registered elsewhere: they live in Redis.
 */
export async function measureHeldPollMemory(env: Record<string, string>, pollers: Poller[]): Promise<HeldPollMemory> {
  const node = await startProcess({ ...env, ROLE: "events", EVENT_HEARTBEAT_SECONDS: "600", METRICS_PORT: "0" }, { nodeArgs: GC_ON_SIGNAL });
  let perPoll = 0;
  try {
    const url = `http://127.0.0.1:${node.port}`;
    const hold = async (agent: ReturnType<typeof newPollAgent>, some: Poller[]) => {
      const polls = pollForever(url, some, () => undefined, agent);
      // Idle held polls: a connected socket is not yet a held poll (the node authenticates and
      // reads each queue first), so wait until the node holds them all, as its metrics say.
      const deadline = Date.now() + 120_000;
      while ((await heldPolls(node.metricsPort!)) < some.length) {
        if (Date.now() > deadline) throw new Error(`the events node did not come to hold ${some.length} polls`);
        await sleep(200);
      }
      return async () => {
        polls.stop();
        await polls.done;
      };
    };
    perPoll = await heldMemory(node.child.pid!, pollers.length, (agent) => hold(agent, pollers), (agent) => hold(agent, pollers.slice(0, WARM_POLLS)));
  } finally {
    await node.stop();
  }
  const bare = await startBareFanout("{}", GC_ON_SIGNAL);
  let barePerPoll = 0;
  try {
    const hold = async (agent: ReturnType<typeof newPollAgent>, count: number) => {
      const polls = Promise.all(Array.from({ length: count }, () => request(`${bare.url}/poll`, { agent }).catch(() => null)));
      return async () => {
        await polls;
      };
    };
    barePerPoll = await heldMemory(bare.pid, pollers.length, (agent) => hold(agent, pollers.length), (agent) => hold(agent, WARM_POLLS));
  } finally {
    await bare.close();
  }
  return { kibPerPoll: perPoll / 1024, bareKibPerPoll: barePerPoll / 1024 };
}

/** The events node's held polls (chat_long_polls_held on its METRICS_PORT). */
async function heldPolls(metricsPort: number): Promise<number> {
  const res = await request(`http://127.0.0.1:${metricsPort}/metrics`);
  const line = res.body.split("\n").find((text) => text.startsWith("chat_long_polls_held "));
  return line === undefined ? 0 : Number(line.slice(line.indexOf(" ") + 1));
}

/**
 * Both processes measured run with a full collection on SIGUSR2 (gc-on-signal.cjs), and every
 * reading of RSS follows one: read whenever, RSS held the garbage of the polls' burst (ten thousand
 * logins) or not, as V8 happened to have collected it, and the figure moved from 6 to 15 KiB a
 * poll between runs of the same code.
 */
const GC_ON_SIGNAL = ["--expose-gc", "--require", fileURLToPath(new URL("./gc-on-signal.cjs", import.meta.url))];
/** How long after a signalled collection RSS is read. */
const AFTER_GC_MS = 500;

/** RSS after a full collection. */
async function collectedRss(pid: number): Promise<number> {
  process.kill(pid, "SIGUSR2");
  await sleep(AFTER_GC_MS);
  return processRssBytes(pid);
}

/** How long RSS is followed once every poll is held; V8 shrinks a heap grown by a burst after 10-20 s. */
const SETTLE_MS = 20_000;
const SAMPLE_MS = 2_000;
/** How long RSS is followed, for its lowest, before the polls (after the warm-up's). */
const BASELINE_MS = 10_000;
/** Polls held and released before the baseline: they start what a first poll starts. */
const WARM_POLLS = 10;

/**
 * Bytes of RSS per poll while `count` polls are held, idle, from a settled baseline: after every
 * poll is held, the lowest RSS seen over SETTLE_MS. Three seconds after the burst, as this was
 * measured before, the heap still held the burst's garbage (or, before every poll was held, not
 * yet the polls), which made the figure depend on when V8 happened to collect it.
 */
async function heldMemory(
  pid: number,
  count: number,
  hold: (agent: ReturnType<typeof newPollAgent>) => Promise<() => Promise<void>>,
  warm: (agent: ReturnType<typeof newPollAgent>) => Promise<() => Promise<void>>,
): Promise<number> {
  // The baseline is a process that has served a few polls (its code paths compiled, its pools
  // and clients connected, the database client's memory grown to its working size) and settled:
  // two seconds after start, as before, RSS was still moving by tens of megabytes either way
  // (the start-up's young generation not yet shrunk; first-use allocations not yet made), a
  // start-up cost that then counted as the polls'.
  const warmAgent = newPollAgent();
  const releaseWarm = await warm(warmAgent);
  await sleep(1000);
  warmAgent.destroy();
  await releaseWarm();
  // V8's memory reducer shrinks a heap grown by a burst once allocation stays low for a while.
  await sleep(BASELINE_MS);
  let before = Infinity;
  for (let waited = 0; waited < BASELINE_MS; waited += SAMPLE_MS) {
    await sleep(SAMPLE_MS);
    before = Math.min(before, await collectedRss(pid));
  }
  const agent = newPollAgent();
  const release = await hold(agent);
  const connected = () => Object.values(agent.sockets).reduce((sum, list) => sum + (list?.length ?? 0), 0);
  await waitUntil(`${count} polls connected`, () => connected() >= count, 60_000, 50);
  let held = Infinity;
  for (let waited = 0; waited < SETTLE_MS; waited += SAMPLE_MS) {
    await sleep(SAMPLE_MS);
    held = Math.min(held, await collectedRss(pid));
  }
  agent.destroy();
  await release();
  return (held - before) / count;
}

export interface EmbeddedRegisterFigures {
  p50: number;
  p95: number;
  cpuMsPerRegister: number;
}

/**
 * POST /register with the full state on the embedded single process (PGlite under a data
 * directory, the in-process bus), on the same realm, seeded while the server is stopped.
 */
export async function measureEmbeddedRegister(options: { users: number; streams: number; registers: number; warmup: number }): Promise<EmbeddedRegisterFigures> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "bench-embedded-"));
  const env = { ROLE: "all", PORT: "0", BIND_ADDRESS: "127.0.0.1", DATA_DIR: dataDir, BOOTSTRAP_OWNER_PASSWORD: "bench-password", RATE_LIMITING: "false", LOG_LEVEL: "info" };
  try {
    // Once to create and bootstrap the database, then seeded directly.
    await (await startProcess(env)).stop();
    const pglite = await PGlite.create(path.join(dataDir, "pglite"));
    let users: SeededUser[];
    try {
      ({ users } = await seedRealmWith(pglite, { users: options.users, streams: options.streams, subscribersPerStream: [10, 100] }));
    } finally {
      await pglite.close();
    }
    const node = await startProcess(env);
    try {
      const url = `http://127.0.0.1:${node.port}`;
      const register = async (i: number) => {
        const user = users[i % users.length];
        const res = await request(`${url}/api/v1/register`, { method: "POST", headers: { Authorization: basicAuth(user.email, user.apiKey), "Content-Type": FORM }, body: "" });
        if (res.status !== 200) throw new Error(`embedded POST /register: ${res.status} ${res.body.slice(0, 200)}`);
        const queueId = /"queue_id":"([^"]+)"/.exec(res.body)?.[1] ?? "";
        await request(`${url}/api/v1/events?queue_id=${encodeURIComponent(queueId)}`, { method: "DELETE", headers: { Authorization: basicAuth(user.email, user.apiKey) } });
      };
      await runConcurrent(options.warmup, 4, (i) => register(options.registers + i));
      const cpuStart = processCpuMs(node.child.pid);
      const { samples } = await runConcurrent(options.registers, 4, register);
      const cpuMs = processCpuMs(node.child.pid) - cpuStart;
      return { p50: percentile(samples, 50), p95: percentile(samples, 95), cpuMsPerRegister: cpuMs / options.registers };
    } finally {
      await node.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
