// Small helpers for tests about existing messages: sending, subscribing, and event queues.
import type { ApiClient, Params } from "./client.ts";
import { drainEvents } from "./events.ts";

export async function sendStreamMessage(client: ApiClient, stream: string, topic: string, content = "hello"): Promise<number> {
  const res = await client.post("/messages", { type: "stream", to: stream, topic, content });
  if (res.body.result !== "success") throw new Error(`sending to ${stream}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export async function sendPrivateMessage(client: ApiClient, to: number[], content = "psst"): Promise<number> {
  const res = await client.post("/messages", { type: "private", to, content });
  if (res.body.result !== "success") throw new Error(`sending privately: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Subscribes `principals` (emails; default the caller) to streams, creating them with `extra`. */
export async function subscribeTo(client: ApiClient, streams: string[], extra: Params = {}): Promise<void> {
  const res = await client.post("/users/me/subscriptions", { subscriptions: streams.map((name) => ({ name })), ...extra });
  if (res.body.result !== "success") throw new Error(`subscribing to ${streams}: ${JSON.stringify(res.body)}`);
}

export async function registerQueue(client: ApiClient, eventTypes: string[], extra: Params = {}): Promise<string> {
  const res = await client.post("/register", { event_types: eventTypes, ...extra });
  if (res.body.result !== "success") throw new Error(`register failed: ${JSON.stringify(res.body)}`);
  return res.body.queue_id;
}

/**
 * The events of the given types a queue holds once `marker` has arrived: `marker` is an event the
 * caller caused after the action under test, so the queue has caught up with that action.
 */
export async function eventsUntil(client: ApiClient, queueId: string, predicate: (event: Record<string, any>) => boolean, timeoutMs = 5000): Promise<Array<Record<string, any>>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const events = await drainEvents(client, queueId);
    if (events.some(predicate)) return events.filter((e) => e.type !== "heartbeat");
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no matching event within ${timeoutMs} ms; saw ${JSON.stringify(await drainEvents(client, queueId))}`);
}
