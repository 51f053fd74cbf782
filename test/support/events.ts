// Polling helpers. Every poll goes through ApiClient, which checks the answer against the API
// document: each event against its type's (and op's) schema (`Event`, packages/http/src/event-shapes.ts).
import type { ApiClient } from "./client.ts";

/** Polls a queue (dont_block) until an event matching `predicate` arrives, or fails after `timeoutMs`. */
export async function waitForEvent(
  client: ApiClient,
  queueId: string,
  predicate: (event: Record<string, any>) => boolean,
  { timeoutMs = 5000, acknowledge = true }: { timeoutMs?: number; acknowledge?: boolean } = {},
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  let lastEventId = -1;
  const seen = new Map<number, unknown>();
  while (Date.now() < deadline) {
    // Each poll acknowledges the events before it unless `acknowledge` is false.
    const res = await client.get("/events", { queue_id: queueId, last_event_id: acknowledge ? lastEventId : -1, dont_block: true });
    if (res.body.result !== "success") throw new Error(`GET /events failed: ${JSON.stringify(res.body)}`);
    for (const event of res.body.events) {
      seen.set(event.id, event);
      lastEventId = Math.max(lastEventId, event.id);
      if (predicate(event)) return event;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no matching event within ${timeoutMs} ms; saw ${JSON.stringify([...seen.values()])}`);
}

/** Every event currently in the queue after lastEventId, without waiting. */
export async function drainEvents(client: ApiClient, queueId: string, lastEventId = -1): Promise<Array<Record<string, any>>> {
  const res = await client.get("/events", { queue_id: queueId, last_event_id: lastEventId, dont_block: true });
  if (res.body.result !== "success") throw new Error(`GET /events failed: ${JSON.stringify(res.body)}`);
  return res.body.events;
}
