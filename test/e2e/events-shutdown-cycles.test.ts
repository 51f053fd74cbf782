// An events node stopped again and again while polls are held and messages flow: every shutdown
// is clean (exit 0, no "[ioredis] Unhandled error event", no error logged), however the polls,
// the fan-out and the Redis connections are caught by it.
import { setTimeout as sleep } from "node:timers/promises";
import { ApiClient } from "../support/client.ts";
import { useTierProcesses } from "../support/tier-processes.ts";

jest.setTimeout(240_000);

const CYCLES = 8;
const POLLS = 50;

describe("an events node shut down repeatedly under load", () => {
  const tiers = useTierProcesses({ EVENT_HEARTBEAT_SECONDS: "60", EVENT_QUEUES_PER_USER: String(POLLS) });

  test(`${CYCLES} shutdowns, each clean`, async () => {
    const api = await tiers.start("api");
    const owner = await tiers.owner(api);
    const outputs: string[] = [];
    let sending = true;
    let sent = 0;
    const sender = (async () => {
      while (sending) {
        await owner.post("/messages", { type: "stream", to: "general", topic: "cycles", content: `message ${sent++}` });
        await sleep(20);
      }
    })();
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const node = await tiers.start("events");
        const client = new ApiClient(`http://127.0.0.1:${node.port}`, owner.credentials);
        const queues = await Promise.all(Array.from({ length: POLLS }, () => client.post("/register", { event_types: ["message"] })));
        // Polls held, woken and coming back while the node stops, at a different moment each cycle.
        let polling = true;
        const pollers = queues.map(async (registered) => {
          let lastEventId = registered.body.last_event_id as number;
          while (polling) {
            const res = await client.get("/events", { queue_id: registered.body.queue_id, last_event_id: lastEventId }).catch(() => null);
            if (res === null || res.body.result !== "success") return;
            for (const event of res.body.events as Array<{ id: number }>) lastEventId = Math.max(lastEventId, event.id);
          }
        });
        await sleep(300 + cycle * 70);
        await node.stop();
        polling = false;
        await Promise.all(pollers);
        outputs.push(node.output());
        expect({ cycle, exitCode: node.child.exitCode }).toEqual({ cycle, exitCode: 0 });
      }
    } finally {
      sending = false;
      await sender;
    }
    expect(sent).toBeGreaterThan(CYCLES);
    const unclean = outputs.map((output, cycle) => ({ cycle, lines: output.split("\n").filter((line) => line.includes("Unhandled error event") || line.includes('"level":"error"')) }));
    expect(unclean.filter(({ lines }) => lines.length > 0)).toEqual([]);
  });
});
