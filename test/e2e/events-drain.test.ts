// Graceful shutdown of an events node under 1,000 held long polls, on real processes: SIGTERM
// makes it fail readiness, stop accepting, and answer every held poll at once (each answer closing
// its connection), so clients poll the other node with the same queue; no connection is reset and
// every message sent before, during and after reaches every queue exactly once.
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { pollLoops, usersWithQueues, type RawPoller } from "../support/raw-poll.ts";
import type { ServerProcess } from "../support/processes.ts";
import { useTierProcesses } from "../support/tier-processes.ts";

jest.setTimeout(240_000);

const USERS = 20;
const QUEUES_PER_USER = 50;
const MESSAGES = 12;
const SIGTERM_AFTER_MESSAGE = 4;

/**
 * A load balancer's readiness probe: a connection of its own each time. (A pooled keep-alive socket
 * could be the idle one the draining server closes just as the probe is written on it.) Resolves
 * to the status, or to the connection error's code.
 */
function readiness(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    http
      .get({ host: "127.0.0.1", port, path: "/health/ready", agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}

/**
 * Probes readiness from the moment of SIGTERM until two probes in a row say not ready, or one is
 * refused: what each got and when it was sent. A draining node must answer the second too (still
 * accepting while not ready). Probing at once, not after a pause, keeps the probes inside the
 * shutdown delay even when this busy process's timers fire late (a 200 ms pause took 900 ms under
 * load here).
 */
async function probeDraining(port: number, since: number): Promise<string[]> {
  const seen: string[] = [];
  let previous: number | string = 200;
  for (;;) {
    const sentAfter = Date.now() - since;
    const status = await readiness(port);
    seen.push(`${status} sent ${sentAfter} ms after SIGTERM`);
    if (typeof status === "string" || (status !== 200 && previous !== 200) || sentAfter > 10_000) return seen;
    previous = status;
    await sleep(20);
  }
}

/** How a server process ended, if it did, and the end of what it printed: for failure messages. */
function howItEnded(node: ServerProcess): string {
  return `exit code ${node.child.exitCode}, signal ${node.child.signalCode}; its output ends:\n${node.output().slice(-4000)}`;
}

interface Poller extends RawPoller {
  /** Switched to the other node once its node said it is closing. */
  node: 0 | 1;
}

describe("an events node shutting down under 1,000 held polls", () => {
  const tiers = useTierProcesses({ EVENT_HEARTBEAT_SECONDS: "60", EVENT_QUEUES_PER_USER: String(QUEUES_PER_USER) });

  test("answers every held poll at once, resets no connection, and loses no event", async () => {
    const api = await tiers.start("api");
    const nodes = await Promise.all([tiers.start("events", { SHUTDOWN_DELAY_SECONDS: "5" }), tiers.start("events")]);
    const ports = nodes.map((node) => node.port!);
    const apiUrl = `http://127.0.0.1:${api.port}`;
    const owner = await tiers.owner(api);

    // 20 users with 50 queues each, registered on the node that stays.
    const queues = await usersWithQueues(owner, apiUrl, { name: "drain", users: USERS, queuesPerUser: QUEUES_PER_USER, eventsUrl: () => `http://127.0.0.1:${ports[1]}` });
    const pollers: Poller[] = queues.flat().map((poller) => ({ ...poller, node: 0 }));

    // Every client polls the first node until an answer says its connection closes.
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    let heldAnsweredAt = 0;
    let sigtermAt = 0;
    const loops = pollLoops(agent, pollers, {
      port: (poller) => ports[poller.node],
      // The first node no longer accepts: the load balancer's next choice.
      onConnectionError: (poller, error) => {
        if (error.code !== "ECONNREFUSED" || poller.node !== 0) return false;
        poller.node = 1;
        return true;
      },
      onAnswer: (poller, answer) => {
        if (poller.node === 0 && sigtermAt > 0) heldAnsweredAt = Math.max(heldAnsweredAt, Date.now());
        if (answer.connection === "close") poller.node = 1;
      },
    });
    await sleep(3000);

    const sent: number[] = [];
    let exited: Promise<void> | null = null;
    for (let i = 0; i < MESSAGES; i++) {
      const res = await owner.post("/messages", { type: "stream", to: "general", topic: "drain", content: `message ${i}` });
      expect(res.body.result).toBe("success");
      sent.push(res.body.id);
      if (i === SIGTERM_AFTER_MESSAGE) {
        // Its held polls have the last message by now; they are held again.
        await sleep(1000);
        const before = await readiness(ports[0]);
        if (before !== 200) throw new Error(`the first node is not ready before SIGTERM (${before}): ${howItEnded(nodes[0])}`);
        sigtermAt = Date.now();
        exited = nodes[0].stop();
        // Not ready at once, while it still accepts connections (SHUTDOWN_DELAY_SECONDS).
        const probes = await probeDraining(ports[0], sigtermAt);
        const [last, beforeLast] = [probes.at(-1)!, probes.at(-2)];
        if (!last.startsWith("503 ") || !beforeLast?.startsWith("503 ")) throw new Error(`readiness while draining: ${probes.join(", ")}; the node's ${howItEnded(nodes[0])}`);
      }
      await sleep(150);
    }
    await exited;
    const deadline = Date.now() + 30_000;
    while (pollers.some((poller) => poller.received.length < sent.length) && loops.failures.length === 0 && Date.now() < deadline) await sleep(200);
    loops.stop();
    // The loops end as their polls do: a last message wakes them.
    await owner.post("/messages", { type: "stream", to: "general", topic: "drain", content: "the end" });
    await loops.done;
    agent.destroy();

    expect(loops.failures.slice(0, 5)).toEqual([]);
    if (nodes[0].child.exitCode !== 0) throw new Error(`the first node did not exit cleanly: ${howItEnded(nodes[0])}`);
    // Every held poll was answered at once, not held to its 60 s heartbeat or cut off: a thousand
    // reads take a few hundred ms here, seconds on a loaded CI machine (4.3 s seen), far from 60.
    expect(heldAnsweredAt - sigtermAt).toBeLessThan(15_000);
    process.stdout.write(`drain: 1,000 held polls answered ${heldAnsweredAt - sigtermAt} ms after SIGTERM; ${loops.retried} polls asked to retry (503)\n`);
    const wrong = pollers.filter((poller) => JSON.stringify(poller.received.filter((id) => sent.includes(id)).sort((a, b) => a - b)) !== JSON.stringify(sent));
    expect(wrong.map((poller) => poller.received).slice(0, 3)).toEqual([]);
    expect(nodes[0].output()).not.toContain("Unhandled error event");
    expect(nodes[0].output()).not.toMatch(/"level":"error"/);
  });
});
