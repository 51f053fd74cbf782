// The event tier (issue 16), on Postgres and Redis with the tiers in their own processes (an API
// process for sends, an events process for /register and /events), on a realm of 1,000 users and
// 100 streams. Each figure is printed beside a ceiling from the same run:
//   - POST /register with the full state, 4 at once, as different users: p50 and p95, and the
//     events process's CPU per register. Ceiling: a bare Node server answering the same bytes.
//   - Fan-out: 1,000 users each long-poll their queue; a message to the stream they all read; the
//     time until the last of them has it (median of the rounds), and the events process's CPU per
//     delivery, the client's next poll included. Ceiling: a bare Node server holding the same
//     clients' same polls and answering them all at once with a real answer's bytes, its rounds
//     taken turn about with ours.
import { startProcess, type ServerProcess } from "../test/support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL } from "../test/support/services.ts";
import { startBareFanout } from "./lib/bare-fanout.ts";
import { startBareServer } from "./lib/bare-server.ts";
import { runConcurrent } from "./lib/concurrency.ts";
import { basicAuth, benchServerEnv, settlePostgres } from "./lib/environment.ts";
import { request } from "./lib/http-client.ts";
import { machineCpuMs, processCpuMs, redisCpuMs } from "./lib/process-cpu.ts";
import { seedRealm, type SeededUser } from "./lib/seed.ts";
import { percentile, report } from "./lib/stats.ts";
import { waitUntil } from "./lib/wait.ts";
import { newPollAgent, pollErrors, pollForever, retried503, type Poller } from "./lib/long-polls.ts";
import { measureEmbeddedRegister, measureHeldPollMemory, measureSustained, registerForMessages } from "./lib/event-capacity.ts";

const USERS = 1000;
const STREAMS = 100;
const REGISTERS = Number(process.env.BENCH_REGISTERS ?? 200);
const REGISTER_WARMUP = 40;
const FANOUT_ROUNDS = Number(process.env.BENCH_FANOUT_ROUNDS ?? 15);
const FANOUT_WARMUP_ROUNDS = 3;
const SUSTAINED_POLLERS = 200;
const SUSTAINED_SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS ?? 10);
const HELD_POLLS = Number(process.env.BENCH_HELD_POLLS ?? 10_000);
/** Offered to the 200 queues: 30,000 deliveries a second. */
const SUSTAINED_BATCHES_PER_SECOND = Number(process.env.BENCH_SUSTAINED_BATCHES ?? 150);
const FORM = "application/x-www-form-urlencoded";

export async function benchEvents(): Promise<boolean> {
  const database = await createTestDatabase();
  const redis = createRedisPrefix();
  const env = benchServerEnv(database.url, redis.prefix);
  const processes: ServerProcess[] = [];
  try {
    const apiProcess = await startProcess({ ...env, ROLE: "api" });
    processes.push(apiProcess);
    const apiUrl = `http://127.0.0.1:${apiProcess.port}`;
    process.stdout.write(`seeding ${USERS} users and ${STREAMS} streams...\n`);
    const { realmId, users } = await seedRealm(database.url, { users: USERS, streams: STREAMS, subscribersPerStream: [10, 100] });
    await settlePostgres(database.url);
    const eventsProcess = await startProcess({ ...env, ROLE: "events" }, { nodeArgs: process.env.BENCH_EVENTS_NODE_ARGS?.split(/\s+/).filter(Boolean) });
    processes.push(eventsProcess);
    const eventsUrl = `http://127.0.0.1:${eventsProcess.port}`;
    const eventsCpu = () => processCpuMs(eventsProcess.child.pid);

    // /register with the full state, 4 at once, each as another user.
    let registerBody = "";
    const register = async (i: number) => {
      const user = users[i % users.length];
      const res = await request(`${eventsUrl}/api/v1/register`, { method: "POST", headers: { Authorization: basicAuth(user.email, user.apiKey), "Content-Type": FORM }, body: "" });
      if (res.status !== 200) throw new Error(`POST /register: ${res.status} ${res.body.slice(0, 200)}`);
      registerBody = res.body;
      // Every 16th answer is parsed in full; the rest only for their queue id: parsing 452 KiB
      // takes the load generator CPU that the server and Postgres then lack.
      const queue_id = i % 16 === 0 ? (JSON.parse(res.body) as { queue_id: string }).queue_id : /"queue_id":"([^"]+)"/.exec(res.body)?.[1];
      if (!queue_id) throw new Error("POST /register: no queue_id in the answer");
      // The queue is not what is measured: deleted, so the store holds only the fan-out's.
      await request(`${eventsUrl}/api/v1/events?queue_id=${encodeURIComponent(queue_id)}`, { method: "DELETE", headers: { Authorization: basicAuth(user.email, user.apiKey) } });
    };
    await runConcurrent(REGISTER_WARMUP, 4, (i) => register(REGISTERS + i));
    const registerCpuStart = eventsCpu();
    const machineStart = machineCpuMs();
    const registers = await runConcurrent(REGISTERS, 4, register);
    const registerCpuMs = (eventsCpu() - registerCpuStart) / REGISTERS;
    const machine = machineCpuMs();
    process.stdout.write(`  machine per /register: busy ${((machine.busy - machineStart.busy) / REGISTERS).toFixed(1)} ms, idle ${((machine.idle - machineStart.idle) / REGISTERS).toFixed(1)} ms\n`);
    const bare = await startBareServer(registerBody);
    let bareRegisters;
    try {
      bareRegisters = await runConcurrent(REGISTERS, 4, () => request(`${bare.url}/api/v1/register`, { method: "POST", headers: { "Content-Type": FORM }, body: "" }), { warmup: REGISTER_WARMUP });
    } finally {
      await bare.close();
    }
    process.stdout.write(`  /register answers ${Math.round(registerBody.length / 1024)} KiB; p95 ${percentile(registers.samples, 95).toFixed(1)} ms (bare ${percentile(bareRegisters.samples, 95).toFixed(2)} ms)\n`);
    const registerMet = report({
      name: "POST /register, full state, 4 concurrent, p50",
      value: percentile(registers.samples, 50),
      unit: "ms",
      ceilings: [{ name: "bare Node HTTP answering the same bytes, 4 concurrent", value: percentile(bareRegisters.samples, 50) }],
      target: { limit: 40 },
    });
    const registerCpuMet = report({ name: "events process CPU per /register", value: registerCpuMs, unit: "ms", ceilings: [], target: { limit: 10 } });

    // Fan-out: every user long-polls a queue of their own; a message to `general` reaches them all.
    const pollers: Poller[] = [];
    await runConcurrent(USERS, 8, async (i) => {
      const user = users[i];
      const res = await request(`${eventsUrl}/api/v1/register`, {
        method: "POST",
        headers: { Authorization: basicAuth(user.email, user.apiKey), "Content-Type": FORM },
        body: new URLSearchParams({ event_types: JSON.stringify(["message"]) }).toString(),
      });
      if (res.status !== 200) throw new Error(`POST /register: ${res.status} ${res.body.slice(0, 200)}`);
      const { queue_id, last_event_id } = JSON.parse(res.body) as { queue_id: string; last_event_id: number };
      pollers.push({ user, queueId: queue_id, lastEventId: last_event_id });
    });
    const sender = users[0];
    // Both sides' clients do the same work per answer: parse it, and read each event's round from
    // its content.
    const arrivalRecorder = (record: (round: string, at: number) => void) => (events: Array<Record<string, unknown>>) => {
      const now = performance.now();
      for (const event of events) {
        const content = (event.message as { content?: string } | undefined)?.content;
        if (event.type !== "message" || !content) continue;
        const round = /fanout round (\d+)/.exec(content)?.[1];
        if (round !== undefined) record(round, now);
      }
    };
    const arrivals = new Map<string, number[]>();
    // A real answer of a round, as it came: what the bare server answers with.
    let answerBody = "";
    const pollAgent = newPollAgent();
    const polls = pollForever(
      eventsUrl,
      pollers,
      arrivalRecorder((round, at) => (arrivals.get(round) ?? arrivals.set(round, []).get(round)!).push(at)),
      pollAgent,
      (body) => {
        if (answerBody === "" && body.includes("fanout round")) answerBody = body;
      },
    );
    const sendMs: number[] = [];
    const fanoutRound = async (round: number): Promise<number> => {
      const start = performance.now();
      const res = await request(`${apiUrl}/api/v1/messages`, {
        method: "POST",
        headers: { Authorization: basicAuth(sender.email, sender.apiKey), "Content-Type": FORM },
        body: new URLSearchParams({ type: "stream", to: "general", topic: "fan-out", content: `fanout round ${round}` }).toString(),
      });
      if (res.status !== 200) throw new Error(`POST /messages: ${res.status} ${res.body}`);
      sendMs.push(performance.now() - start);
      await waitUntil(`round ${round} at every poller`, () => (arrivals.get(String(round))?.length ?? 0) >= USERS, 30_000);
      const last = Math.max(...arrivals.get(String(round))!);
      // Every poller polls again before the next round.
      await new Promise((r) => setTimeout(r, 200));
      return last - start;
    };
    // Until every poll is held.
    await new Promise((r) => setTimeout(r, 1000));
    for (let r = 0; r < FANOUT_WARMUP_ROUNDS; r++) await fanoutRound(1000 + r);
    if (answerBody === "") throw new Error("no answer of a fan-out round was captured for the bare ceiling");

    // The ceiling: a bare Node server holding a poll of each user as well, answering them all at
    // once with the same bytes as a real answer (body and headers), to the same clients sending
    // the same requests (path, query and credentials), so that only the server differs. Its rounds
    // alternate with ours, so that both meet the same machine: a shared machine's speed drifted by
    // more than the gap measured between a block of our rounds and a block of its rounds a minute
    // later. Each side's polls are idle while the other's round runs.
    const bareFanout = await startBareFanout(answerBody, [], { "Content-Type": "application/json; charset=utf-8", "X-Request-Id": "00000000-0000-4000-8000-000000000000" });
    const bareLastMs: number[] = [];
    const lastClientMs: number[] = [];
    let fanoutCpuUs = 0;
    let bareCpuUs = 0;
    try {
      let answered = 0;
      let lastAt = 0;
      const bareAgent = newPollAgent();
      const barePolls = pollForever(
        bareFanout.url,
        pollers.map((poller) => ({ ...poller })),
        arrivalRecorder((_round, at) => {
          answered++;
          lastAt = at;
        }),
        bareAgent,
      );
      const bareRound = async (): Promise<number> => {
        answered = 0;
        const start = performance.now();
        await request(`${bareFanout.url}/trigger`, { method: "POST", body: "" });
        await waitUntil("the bare fan-out", () => answered >= USERS, 30_000);
        // Every poller polls again before the next round.
        await new Promise((r) => setTimeout(r, 200));
        return lastAt - start;
      };
      // Until every bare poll is held (each opens its connection first).
      for (let tries = 0; Number((await request(`${bareFanout.url}/held`, { method: "POST", body: "" })).body) < USERS; tries++) {
        if (tries === 300) throw new Error("the bare polls were not all held within 30 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      for (let r = 0; r < FANOUT_WARMUP_ROUNDS; r++) await bareRound();
      const fanoutCpuStart = eventsCpu();
      const bareCpuStart = processCpuMs(bareFanout.pid);
      const fanoutRedisStart = redisCpuMs();
      for (let r = 0; r < FANOUT_ROUNDS; r++) {
        lastClientMs.push(await fanoutRound(r));
        bareLastMs.push(await bareRound());
      }
      // Over the whole alternation: each process's CPU while the other's round ran (idle polls,
      // timers) is counted as its own, which the deliveries' and re-polls' dwarf.
      fanoutCpuUs = ((eventsCpu() - fanoutCpuStart) * 1000) / (FANOUT_ROUNDS * USERS);
      bareCpuUs = ((processCpuMs(bareFanout.pid) - bareCpuStart) * 1000) / (FANOUT_ROUNDS * USERS);
      process.stdout.write(`  Redis CPU per delivery: ${(((redisCpuMs() - fanoutRedisStart) * 1000) / (FANOUT_ROUNDS * USERS)).toFixed(1)} µs; send alone ${percentile(sendMs, 50).toFixed(1)} ms (median)\n`);
      if (process.env.BENCH_VERBOSE) process.stdout.write(`  ours ${lastClientMs.map((x) => x.toFixed(0)).join(" ")}\n  bare ${bareLastMs.map((x) => x.toFixed(0)).join(" ")}\n`);
      const pairwise = lastClientMs.map((ours, i) => bareLastMs[i] / ours);
      process.stdout.write(`  rounds taken turn about; ratio of each round to the bare round after it, median ${percentile(pairwise, 50).toFixed(2)}\n`);
      barePolls.stop();
      bareAgent.destroy();
      await barePolls.done;
    } finally {
      await bareFanout.close();
    }
    polls.stop();
    pollAgent.destroy();
    await polls.done;
    const fanoutMet = report({
      name: `a message to a stream of ${USERS} long-polling users: the last client has it, median of ${FANOUT_ROUNDS}`,
      value: percentile(lastClientMs, 50),
      unit: "ms",
      ceilings: [{ name: `bare Node server answering ${USERS} held polls`, value: percentile(bareLastMs, 50) }],
      target: { limit: percentile(bareLastMs, 50) * 1.5 },
    });
    const fanoutCpuMet = report({
      name: "events process CPU per delivery, the next poll included",
      value: fanoutCpuUs,
      unit: "µs",
      ceilings: [{ name: "bare Node server per held poll answered and polled again", value: bareCpuUs }],
      target: { limit: 150 },
    });

    // Sustained: 200 of those queues stay (the rest are deleted), on a stream of their own.
    await runConcurrent(USERS - SUSTAINED_POLLERS, 8, (i) => {
      const { user, queueId } = pollers[SUSTAINED_POLLERS + i];
      return request(`${eventsUrl}/api/v1/events?queue_id=${encodeURIComponent(queueId)}`, { method: "DELETE", headers: { Authorization: basicAuth(user.email, user.apiKey) } });
    });
    const sustained = await measureSustained({
      apiUrl,
      eventsUrl,
      eventsPid: eventsProcess.child.pid!,
      pollers: pollers.slice(0, SUSTAINED_POLLERS),
      seconds: SUSTAINED_SECONDS,
      batchesPerSecond: SUSTAINED_BATCHES_PER_SECOND,
      realmId,
      redis: { url: REDIS_URL, prefix: redis.prefix, shards: 4 },
    });
    process.stdout.write(
      `  sustained: ${sustained.offeredPerSecond.toFixed(0)} deliveries/s offered (${SUSTAINED_BATCHES_PER_SECOND} batches/s to ${SUSTAINED_POLLERS} queues); ` +
        `${sustained.eventsPerAnswer.toFixed(1)} events per answer; events process CPU ${sustained.eventsCpuUsPerDelivery.toFixed(1)} µs per delivery\n`,
    );
    const sustainedMet = report({
      name: `deliveries per second from one events process to ${SUSTAINED_POLLERS} long-polling users, sustained`,
      value: sustained.deliveriesPerSecond,
      unit: "deliveries/s",
      ceilings: [{ name: `bare Node server waking ${SUSTAINED_POLLERS} held polls on every POST, ${4} POSTing at once`, value: sustained.bareDeliveriesPerSecond }],
      target: { limit: 25_000, higherIsBetter: true },
    });

    // Memory: HELD_POLLS queues (registered here) held idle on an events process of their own.
    const held: Poller[] = [];
    await runConcurrent(HELD_POLLS, 8, async (i) => void held.push(await registerForMessages(eventsUrl, users[i % users.length])));
    const memory = await measureHeldPollMemory(env, held);
    if (retried503 > 0) process.stdout.write(`  polls answered 503 and tried again so far: ${retried503}\n`);
    if (pollErrors.length > 0) process.stdout.write(`  polls that failed without an answer: ${pollErrors.length} (first: ${pollErrors[0]})\n`);
    const memoryMet = report({
      name: `RSS per idle held poll, ${HELD_POLLS} held`,
      value: memory.kibPerPoll,
      unit: "KiB",
      ceilings: [{ name: `bare Node server holding ${HELD_POLLS} polls`, value: memory.bareKibPerPoll }],
      target: { limit: 12 },
    });

    // The embedded single process, on the same realm.
    const embedded = await measureEmbeddedRegister({ users: USERS, streams: STREAMS, registers: REGISTERS, warmup: REGISTER_WARMUP });
    process.stdout.write(`  embedded /register: p95 ${embedded.p95.toFixed(1)} ms; CPU ${embedded.cpuMsPerRegister.toFixed(1)} ms per register (its database included)\n`);
    const embeddedMet = report({
      name: "POST /register, full state, 4 concurrent, embedded (PGlite, in-process bus), p50",
      value: embedded.p50,
      unit: "ms",
      ceilings: [{ name: "bare Node HTTP answering the same bytes, 4 concurrent", value: percentile(bareRegisters.samples, 50) }],
      target: { limit: 100 },
    });
    return registerMet && registerCpuMet && fanoutMet && fanoutCpuMet && sustainedMet && memoryMet && embeddedMet;
  } finally {
    for (const child of processes.reverse()) await child.stop();
    await database.drop();
    await redis.clear();
  }
}
