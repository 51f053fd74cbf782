// Two events processes, 200 long-polling clients and a sender, on real Postgres and Redis: one
// events process is SIGKILLed mid-stream. Its clients poll the other node with the same queue and
// last_event_id; the survivor takes the dead node's shards over once their leases lapse, handling
// what it left pending first. Every client receives every message exactly once, in order, and
// none registers again. Once on the shared Redis server, once on a Redis Cluster of three masters.
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { pollLoops, usersWithQueues, type RawPoller } from "../support/raw-poll.ts";
import { useTierProcesses } from "../support/tier-processes.ts";

jest.setTimeout(240_000);

const USERS = 4;
const QUEUES_PER_USER = 50;
const MESSAGES = 40;
const KILL_AFTER_MESSAGE = 15;

interface Poller extends RawPoller {
  node: 0 | 1;
  /** Connection errors met (the killed node's), each followed by a poll of the other node. */
  switched: number;
}

describe.each([
  ["one Redis server", false],
  ["a Redis Cluster", true],
])("an events process killed under load, on %s", (redis, redisCluster) => {
  const tiers = useTierProcesses({ EVENT_HEARTBEAT_SECONDS: "60", EVENT_QUEUES_PER_USER: String(QUEUES_PER_USER) }, { redisCluster });

  test("every client gets every message once, in order, without registering again", async () => {
    const api = await tiers.start("api");
    const nodes = await Promise.all([tiers.start("events"), tiers.start("events")]);
    const ports = nodes.map((node) => node.port!);
    const apiUrl = `http://127.0.0.1:${api.port}`;
    const owner = await tiers.owner(api);

    // 200 queues, half of them polled on each node.
    const queues = await usersWithQueues(owner, apiUrl, { name: "killed", users: USERS, queuesPerUser: QUEUES_PER_USER, eventsUrl: (u) => `http://127.0.0.1:${ports[u % 2]}` });
    const pollers: Poller[] = queues.flatMap((ofUser) => ofUser.map((poller, i) => ({ ...poller, node: (i % 2) as 0 | 1, switched: 0 })));

    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const loops = pollLoops(agent, pollers, {
      port: (poller) => ports[poller.node],
      // The killed node: its connections reset, then refuse. The client tries the other node.
      onConnectionError: (poller) => {
        if (poller.node !== 0 || poller.switched > 0) return false;
        poller.node = 1;
        poller.switched++;
        return true;
      },
    });
    await sleep(1500);

    const sent: number[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const res = await owner.post("/messages", { type: "stream", to: "general", topic: "kill", content: `message ${i}` });
      expect(res.body.result).toBe("success");
      sent.push(res.body.id);
      if (i === KILL_AFTER_MESSAGE) await nodes[0].kill();
      await sleep(100);
    }
    const deadline = Date.now() + 60_000;
    while (pollers.some((poller) => poller.received.length < sent.length) && loops.failures.length === 0 && Date.now() < deadline) await sleep(200);
    loops.stop();
    await owner.post("/messages", { type: "stream", to: "general", topic: "kill", content: "the end" });
    await loops.done;
    agent.destroy();

    expect(loops.failures.slice(0, 5)).toEqual([]);
    // Every client of the killed node moved, with its queue: nobody registered again.
    expect(pollers.filter((poller) => poller.node === 0)).toEqual([]);
    const wrong = pollers.filter((poller) => JSON.stringify(poller.received.filter((id) => sent.includes(id))) !== JSON.stringify(sent));
    expect(wrong.slice(0, 3).map((poller) => ({ queue: poller.queueId, received: poller.received }))).toEqual([]);
    process.stdout.write(`kill (${redis}): ${pollers.filter((p) => p.switched > 0).length} clients moved; all ${pollers.length} got ${sent.length} messages once, in order; ${loops.retried} polls asked to retry (503)\n`);
  });
});
