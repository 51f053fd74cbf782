// Outgoing webhooks (issue 15), on Postgres and Redis with the tiers in their own processes: an API
// process and one worker process, calling a receiver on loopback that answers at once.
//   - Throughput: messages that mention a bot are sent while no worker runs; then one worker starts
//     and the receiver counts deliveries per second once a fifth of them arrived (steady state).
//     Ceiling: a bare Node client (its own process, keep-alive, the same concurrency) posting the
//     same payloads to the same receiver, after a warm-up round; the median of three rounds.
//     Target: at least half the ceiling.
//   - Latency: one message at a time at light load, from POST /messages to the receiver having the
//     request. Target: p99 under 50 ms. Ceiling: the same POST /messages alone.
import { spawn } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Redis from "ioredis";
import { BusKeys } from "@chat/bus";
import { startProcess, type ServerProcess } from "../test/support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL } from "../test/support/services.ts";
import { basicAuth, benchServerEnv, settlePostgres } from "./lib/environment.ts";
import { request } from "./lib/http-client.ts";
import { machineCpuMs, processCpuMs, redisCpuMs } from "./lib/process-cpu.ts";
import { percentile, report } from "./lib/stats.ts";
import { waitUntil } from "./lib/wait.ts";

const MESSAGES = Number(process.env.BENCH_WEBHOOK_MESSAGES ?? 20000);
const LATENCY_SAMPLES = Number(process.env.BENCH_WEBHOOK_LATENCY_SAMPLES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 64);
/** One organization's share of the worker: all of it unless set, so that the figure is the worker's own. */
const CONCURRENCY_PER_REALM = Number(process.env.BENCH_WEBHOOK_CONCURRENCY_PER_REALM ?? CONCURRENCY);

interface Receiver {
  url: string;
  count: number;
  /** Called with each request body as it arrives. */
  onRequest: ((body: string) => void) | null;
  bodies: string[];
  keepBodies: boolean;
  close(): Promise<void>;
}

/** The bot's service: answers every request at once, as a bot that needs to say nothing. */
async function startReceiver(): Promise<Receiver> {
  const answer = Buffer.from(JSON.stringify({ response_not_required: true }));
  const receiver: Receiver = { url: "", count: 0, onRequest: null, bodies: [], keepBodies: false, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      receiver.count++;
      if (receiver.keepBodies || receiver.onRequest) {
        const body = Buffer.concat(chunks).toString();
        if (receiver.keepBodies) receiver.bodies.push(body);
        receiver.onRequest?.(body);
      }
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": answer.length });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bot`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

async function redisCount(sortedSetKey: string): Promise<number> {
  const redis = new Redis(REDIS_URL);
  try {
    return await redis.zcard(sortedSetKey);
  } finally {
    redis.disconnect();
  }
}

/** The ceiling: bare-poster.ts in its own process posts the payloads; resolves to requests per second. */
function barePosts(url: string, payloadsFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(__dirname, "lib/bare-poster.ts"), url, payloadsFile, String(CONCURRENCY)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`bare poster exited with ${code}`));
      const [rate, cpuPerPost] = out.trim().split(" ").map(Number);
      process.stdout.write(`  CPU per post of the bare client: ${cpuPerPost} µs\n`);
      resolve(rate);
    });
  });
}

async function api(baseUrl: string, auth: string, method: string, route: string, params: Record<string, string>): Promise<Record<string, any>> {
  const res = await request(`${baseUrl}/api/v1${route}`, {
    method,
    headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
  });
  const body = JSON.parse(res.body) as Record<string, any>;
  if (body.result !== "success") throw new Error(`${method} ${route}: ${res.body}`);
  return body;
}

export async function benchWebhooks(): Promise<boolean> {
  const database = await createTestDatabase();
  const redis = createRedisPrefix();
  const receiver = await startReceiver();
  const env = { ...benchServerEnv(database.url, redis.prefix), OUTGOING_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", OUTGOING_WEBHOOK_CONCURRENCY: String(CONCURRENCY), OUTGOING_WEBHOOK_CONCURRENCY_PER_REALM: String(CONCURRENCY_PER_REALM) };
  const processes: ServerProcess[] = [];
  try {
    const apiProcess = await startProcess({ ...env, ROLE: "api" });
    processes.push(apiProcess);
    const baseUrl = `http://127.0.0.1:${apiProcess.port}`;
    const login = JSON.parse((await request(`${baseUrl}/api/v1/fetch_api_key`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "username=owner%40example.com&password=bench-password" })).body);
    const auth = basicAuth("owner@example.com", login.api_key);
    await api(baseUrl, auth, "POST", "/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "bench" }]) });
    await api(baseUrl, auth, "POST", "/bots", { full_name: "Bench Bot", short_name: "benchbot", bot_type: "3", payload_url: receiver.url });
    const send = (i: number) => api(baseUrl, auth, "POST", "/messages", { type: "stream", to: "bench", topic: `t${i % 10}`, content: `@**Bench Bot** message ${i}` });

    // Throughput: the messages wait in the change stream until the worker starts.
    process.stdout.write(`sending ${MESSAGES} messages that mention the bot, no worker running...\n`);
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < MESSAGES) await send(next++);
    }));
    await settlePostgres(database.url);
    // The warm-up calls' bodies are kept for the ceiling; the measured ones cost the receiver only a count.
    receiver.keepBodies = true;
    // BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the worker.
    const worker = await startProcess({ ...env, ROLE: "worker" }, { nodeArgs: process.env.BENCH_WORKER_NODE_ARGS?.split(/\s+/).filter(Boolean) });
    processes.push(worker);
    // Steady state, as the ceiling's client is measured after a warm-up round: the rate from the
    // fifth of the calls on, once the worker's code is compiled and its connections are open.
    await waitUntil("the warm-up deliveries", () => receiver.count >= MESSAGES / 5, 120_000);
    receiver.keepBodies = false;
    const firstAt = performance.now();
    const firstCount = receiver.count;
    const cpuAtStart = { worker: processCpuMs(worker.child.pid), redis: redisCpuMs(), receiver: process.cpuUsage(), machine: machineCpuMs() };
    await waitUntil("every delivery", () => receiver.count >= MESSAGES, 300_000);
    const deliveriesPerSecond = (receiver.count - firstCount) / ((performance.now() - firstAt) / 1000);
    // Completed jobs are kept (their ids dedupe), so they can be counted.
    const jobs = await redisCount(`${new BusKeys(redis.prefix).jobs()}:service-bot:completed`);
    process.stdout.write(`  ${jobs} jobs, ${(MESSAGES / jobs).toFixed(1)} calls per job\n`);
    {
      const calls = receiver.count - firstCount;
      const receiverCpu = process.cpuUsage(cpuAtStart.receiver);
      const perCall = (ms: number) => ((ms * 1000) / calls).toFixed(0);
      const machine = machineCpuMs();
      process.stdout.write(`  machine while measured: busy ${perCall(machine.busy - cpuAtStart.machine.busy)} µs per call, idle ${perCall(machine.idle - cpuAtStart.machine.idle)} µs per call\n`);
      process.stdout.write(
        `  CPU per call while measured: worker ${perCall(processCpuMs(worker.child.pid) - cpuAtStart.worker)} µs, ` +
          `Redis ${perCall(redisCpuMs() - cpuAtStart.redis)} µs, receiver ${perCall((receiverCpu.user + receiverCpu.system) / 1000)} µs\n`,
      );
    }
    const payloads = path.join(os.tmpdir(), `bench-webhook-payloads-${process.pid}.json`);
    // As many posts as measured deliveries, of the bodies the worker sent.
    const measured = receiver.count - firstCount;
    await writeFile(payloads, JSON.stringify(Array.from({ length: measured }, (_, i) => receiver.bodies[i % receiver.bodies.length])));
    receiver.bodies = [];
    const bare = await barePosts(receiver.url, payloads);
    await rm(payloads, { force: true });
    const throughputMet = report({
      name: `deliveries through one worker process (${MESSAGES} messages, concurrency ${CONCURRENCY}, ${CONCURRENCY_PER_REALM} for the one organization)`,
      value: deliveriesPerSecond,
      unit: "deliveries/s",
      ceilings: [{ name: "bare Node client posting the same payloads (median of 3 rounds)", value: bare }],
      target: { limit: bare * 0.5, higherIsBetter: true },
    });

    // Latency at light load: one message at a time, a pause between them.
    const delivered = new Map<number, number>();
    receiver.onRequest = (body) => {
      const match = /message (\d+)/.exec(body);
      if (match) delivered.set(Number(match[1]), performance.now());
    };
    const latencies: number[] = [];
    const sendTimes: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES + 20; i++) {
      const id = MESSAGES + i;
      const start = performance.now();
      await send(id);
      const sent = performance.now();
      await waitUntil(`delivery of ${id}`, () => delivered.has(id), 10_000);
      if (i >= 20) {
        latencies.push(delivered.get(id)! - start);
        sendTimes.push(sent - start);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const latencyMet = report({
      name: `POST /messages to the receiver, p99 of ${LATENCY_SAMPLES} at light load (p50 ${percentile(latencies, 50).toFixed(1)} ms)`,
      value: percentile(latencies, 99),
      unit: "ms",
      ceilings: [{ name: "POST /messages alone, p99", value: percentile(sendTimes, 99) }],
      target: { limit: 50 },
    });
    return throughputMet && latencyMet;
  } finally {
    for (const child of processes.reverse()) await child.stop();
    await receiver.close();
    await database.drop();
    await redis.clear();
  }
}
