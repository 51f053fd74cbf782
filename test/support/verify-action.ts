// Zulip's verify_action: register a queue and keep its state, run an action, apply the events the
// queue received to the kept state, and compare with the state a new /register returns. One check
// catches a missing event, a wrong payload and a wrong state section at once.
import { applyEvents } from "@chat/core";
import type { ApiClient } from "./client.ts";

/**
 * Not state that events keep: the answer's own facts, and when the presences were read and the
 * newest presence change then (feature levels 70 and 263), which presence events do not carry.
 */
const NOT_STATE = new Set(["result", "msg", "queue_id", "last_event_id", "server_timestamp", "presence_last_update_id"]);

function stateOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key]) => !NOT_STATE.has(key)));
}

/** JSON with sorted keys: equal for equal data whatever the key order or the realm of its objects. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

export async function registerState(client: ApiClient, eventTypes: string[], extra: Record<string, unknown> = {}): Promise<{ queueId: string; state: Record<string, unknown> }> {
  const res = await client.post("/register", { event_types: eventTypes, ...extra });
  if (res.body.result !== "success") throw new Error(`register failed: ${JSON.stringify(res.body)}`);
  return { queueId: res.body.queue_id, state: stateOf(res.body) };
}

/** Whether the registration declares user_list_incomplete (feature level 232), which changes how realm_user remove applies. */
function userListIncomplete(registerParams: Record<string, unknown>): boolean {
  const capabilities = registerParams.client_capabilities;
  if (typeof capabilities !== "string") return false;
  return (JSON.parse(capabilities) as Record<string, unknown>).user_list_incomplete === true;
}

/** Whether the registration declares archived_channels (feature level 315), which changes how stream delete applies. */
function archivedChannels(registerParams: Record<string, unknown>): boolean {
  const capabilities = registerParams.client_capabilities;
  if (typeof capabilities !== "string") return false;
  return (JSON.parse(capabilities) as Record<string, unknown>).archived_channels === true;
}

/**
 * Runs `action` and returns the events `client` received for it, after checking that applying them
 * to the state from before gives the state from after. Fails if they never agree within the timeout.
 */
export async function verifyAction(
  client: ApiClient,
  eventTypes: string[],
  action: () => Promise<unknown>,
  timeoutMs = 5000,
  /** More /register parameters (client_capabilities), for both registrations. */
  registerParams: Record<string, unknown> = {},
): Promise<Array<Record<string, any>>> {
  const { queueId, state } = await registerState(client, eventTypes, registerParams);
  // Appliers need the user's id, which the state holds only with the realm_user section.
  const userId = (state.user_id as number | undefined) ?? (await client.get("/users/me")).body.user_id;
  await action();
  const received: Array<Record<string, any>> = [];
  let lastEventId = -1;
  const deadline = Date.now() + timeoutMs;
  let expected: Record<string, unknown> = {};
  let applied: Record<string, unknown> = {};
  let fakeEmailDomain: string | undefined;
  while (Date.now() < deadline) {
    const res = await client.get("/events", { queue_id: queueId, last_event_id: lastEventId, dont_block: true });
    for (const event of res.body.events as Array<Record<string, any>>) {
      lastEventId = Math.max(lastEventId, event.id);
      if (event.type !== "heartbeat") received.push(event);
    }
    // "Unknown user" placeholders are addressed at the realm's fake email domain (realm_bot_domain).
    if (fakeEmailDomain === undefined && received.some((e) => e.type === "realm_user" && e.op === "remove")) {
      fakeEmailDomain = (await client.post("/register", { fetch_event_types: ["realm"] })).body.realm_bot_domain as string;
    }
    applied = applyEvents(structuredClone(state), received, userId, null, { userListIncomplete: userListIncomplete(registerParams), fakeEmailDomain, archivedChannels: archivedChannels(registerParams) });
    expected = (await registerState(client, eventTypes, registerParams)).state;
    if (received.length > 0 && canonical(applied) === canonical(expected)) return received;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(applied).toEqual(expected);
  throw new Error(`no events arrived for the action; state stayed ${JSON.stringify(state)}`);
}
