// `restart` events (Zulip's send_restart_events): each queue records the API version its /register
// reported; an event node that starts speaking another version tells every live queue of an older
// one to register again, since what that client learned of the server (feature level, shapes it
// was promised) no longer holds. Several nodes starting at once append it once per queue: the
// append is idempotent per source id, and the source id names the version.
import type { EventPayload, QueueAppend, QueueStore } from "@chat/bus";
import { zulipVersionFields } from "@chat/core";
import { queueSettings } from "./queue-settings.ts";

type VersionFields = ReturnType<typeof zulipVersionFields>;

/** What a queue records of the version its /register reported (QueueSettings.apiVersion). */
export function apiVersionKey(fields: VersionFields = zulipVersionFields()): string {
  return `${fields.zulip_version}|${fields.zulip_feature_level}|${fields.zulip_merge_base}`;
}

/** Zulip's server_generation: when this process started, in seconds. */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/**
 * Appends a `restart` event to every live queue registered under another API version than
 * `current` (queues from before versions were recorded included), among those that take
 * `restart` events (event_types). Returns how many.
 */
export async function sendRestartEvents(queues: QueueStore, current: VersionFields = zulipVersionFields()): Promise<number> {
  const key = apiVersionKey(current);
  // Without `immediate` since feature level 240 (web clients get `web_reload_client` for that).
  const event: EventPayload = { type: "restart", ...current, server_generation: SERVER_GENERATION };
  // A page at a time, so a node holds one page of an organization's queues, not all of them. A
  // queue a page repeats is appended to once (the append is idempotent per source id) but counted
  // again; the count is for the log and the tests.
  let sent = 0;
  for await (const page of queues.allQueues()) {
    const appends: QueueAppend[] = [];
    for (const queue of page) {
      const settings = queueSettings(queue);
      if (settings.apiVersion === key) continue;
      if (settings.eventTypes !== null && settings.eventTypes !== undefined && !settings.eventTypes.includes("restart")) continue;
      appends.push({ queueId: queue.id, events: [event] });
    }
    if (appends.length > 0) await queues.append(`restart:${key}`, appends);
    sent += appends.length;
  }
  return sent;
}
