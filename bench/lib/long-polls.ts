// Long polls as the event benchmarks hold them: one keep-alive connection per poller, polling
// again as soon as each answers.
import http from "node:http";
import { basicAuth } from "./environment.ts";
import { request } from "./http-client.ts";
import type { SeededUser } from "./seed.ts";

/** Polls answered 503 and tried again, over all pollForever calls (reported by the benchmark). */
export let retried503 = 0;
/** Polls that failed without an answer (a connection refused or reset), while not stopped. */
export const pollErrors: string[] = [];

/** Connections for long polls: one per poller, all held at once. */
export function newPollAgent(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 20_000 });
}

export interface Poller {
  user: SeededUser;
  queueId: string;
  lastEventId: number;
}

/**
 * Holds one long poll per poller until `stop`, polling again as soon as each answers; `onEvents`
 * sees every answer's events, and `onBody` (if given) its body as it came. Resolves once every
 * poll has ended.
 */
export function pollForever(
  baseUrl: string,
  pollers: Poller[],
  onEvents: (events: Array<Record<string, unknown>>) => void,
  agent: http.Agent,
  onBody?: (body: string) => void,
): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  const done = Promise.all(
    pollers.map(async (poller) => {
      const auth = basicAuth(poller.user.email, poller.user.apiKey);
      while (!stopped) {
        const res = await request(`${baseUrl}/api/v1/events?queue_id=${encodeURIComponent(poller.queueId)}&last_event_id=${poller.lastEventId}`, { headers: { Authorization: auth }, agent }).catch((error: unknown) => {
          if (!stopped) pollErrors.push(String(error));
          return null;
        });
        if (stopped || res === null) return;
        // As Zulip's clients: a 503 (ten thousand polls authenticating at once can wait out the
        // database pool) is tried again after a pause.
        if (res.status === 503) {
          retried503++;
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        if (res.status !== 200) throw new Error(`GET /events: ${res.status} ${res.body}`);
        onBody?.(res.body);
        const { events } = JSON.parse(res.body) as { events: Array<Record<string, unknown> & { id: number }> };
        if (events.length > 0) poller.lastEventId = events[events.length - 1].id;
        onEvents(events);
      }
    }),
  ).then(() => undefined);
  return {
    stop: () => {
      stopped = true;
    },
    done,
  };
}

