// Long polls as a client with many queues makes them: plain node:http on a keep-alive agent, one
// request per queue, reporting how each connection ended (the tests count resets).
import http from "node:http";

export interface RawPoller {
  auth: string;
  queueId: string;
  lastEventId: number;
  /** Message ids in the order received. */
  received: number[];
}

export interface PollAnswer {
  status: number;
  connection: string | undefined;
  body: { result: string; events?: Array<{ id: number; type: string; message?: { id: number } }>; code?: string };
}

export function basicAuth(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`;
}

/** One GET /events for the poller's queue from its last event id; rejects on a connection error. */
export function rawPoll(agent: http.Agent, port: number, poller: RawPoller): Promise<PollAnswer> {
  return new Promise((resolve, reject) => {
    const path = `/api/v1/events?queue_id=${encodeURIComponent(poller.queueId)}&last_event_id=${poller.lastEventId}`;
    const req = http.get({ host: "127.0.0.1", port, path, agent, headers: { Authorization: poller.auth } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) });
        } catch (error) {
          reject(error);
        }
      });
      res.on("error", reject);
    });
    req.on("error", reject);
  });
}

/** Takes the answer's events: the last event id advances, message ids are recorded in order. */
export function takeEvents(poller: RawPoller, answer: PollAnswer): void {
  for (const event of answer.body.events ?? []) {
    poller.lastEventId = Math.max(poller.lastEventId, event.id);
    if (event.type === "message") poller.received.push(event.message!.id);
  }
}

/**
 * A 503 SERVICE_UNAVAILABLE: the server asks the client to come back (Zulip's clients retry after
 * a pause). On a loaded machine a burst of a thousand polls can meet a backing service's timeout.
 */
export function asksToRetry(answer: PollAnswer): boolean {
  return answer.status === 503 && answer.body.code === "SERVICE_UNAVAILABLE";
}
