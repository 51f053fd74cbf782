// Long polls as a client with many queues makes them: plain node:http on a keep-alive agent, one
// request per queue, reporting how each connection ended (the tests count resets).
import http from "node:http";
import { ApiClient } from "./client.ts";
import { checkResponse } from "./openapi.ts";

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
          const body = JSON.parse(text);
          checkResponse("GET", path, res.statusCode ?? 0, body, res.headers["content-type"]);
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body });
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

/**
 * Creates `users` members (`<name><n>@example.com`) through the owner's API process and registers
 * `queuesPerUser` message queues for each, on the events process `eventsUrl(n)` names: the
 * pollers, user by user.
 */
export async function usersWithQueues(
  owner: ApiClient,
  apiUrl: string,
  options: { name: string; users: number; queuesPerUser: number; eventsUrl: (user: number) => string },
): Promise<RawPoller[][]> {
  const result: RawPoller[][] = [];
  for (let u = 0; u < options.users; u++) {
    const email = `${options.name}${u}@example.com`;
    const created = await owner.post("/users", { email, password: `${options.name}-password`, full_name: `${options.name} ${u}`, short_name: `${options.name}${u}` });
    if (created.body.result !== "success") throw new Error(`creating ${email}: ${JSON.stringify(created.body)}`);
    const apiKey = (await new ApiClient(apiUrl, null).post("/dev_fetch_api_key", { username: email })).body.api_key as string;
    const client = new ApiClient(options.eventsUrl(u), { email, apiKey });
    const registered = await Promise.all(Array.from({ length: options.queuesPerUser }, () => client.post("/register", { event_types: ["message"] })));
    result.push(
      registered.map((res) => {
        if (res.body.result !== "success") throw new Error(`registering for ${email}: ${JSON.stringify(res.body)}`);
        return { auth: basicAuth(email, apiKey), queueId: res.body.queue_id, lastEventId: res.body.last_event_id, received: [] };
      }),
    );
  }
  return result;
}

/** The long-poll loops of many clients, running until `stop` (then each ends with its next answer). */
export interface PollLoops {
  /** What went wrong, one line per client that gave up. */
  failures: string[];
  /** Polls answered 503 and tried again. */
  retried: number;
  stop(): void;
  done: Promise<void>;
}

/**
 * Each poller polls `port(poller)` again as soon as an answer comes, as a client does: a 503 is
 * tried again after a pause; a connection error is a failure unless `onConnectionError` moves the
 * poller (to another node) and returns true; `onAnswer` sees each successful answer.
 */
export function pollLoops<P extends RawPoller>(
  agent: http.Agent,
  pollers: P[],
  hooks: { port(poller: P): number; onConnectionError(poller: P, error: NodeJS.ErrnoException): boolean; onAnswer?(poller: P, answer: PollAnswer): void },
): PollLoops {
  let stopping = false;
  const loops: PollLoops = {
    failures: [],
    retried: 0,
    stop: () => {
      stopping = true;
    },
    done: Promise.resolve(),
  };
  loops.done = Promise.all(
    pollers.map(async (poller) => {
      while (!stopping) {
        let answer: PollAnswer;
        try {
          answer = await rawPoll(agent, hooks.port(poller), poller);
        } catch (error) {
          if (hooks.onConnectionError(poller, error as NodeJS.ErrnoException)) continue;
          loops.failures.push(`${poller.queueId} on port ${hooks.port(poller)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
          return;
        }
        if (asksToRetry(answer)) {
          loops.retried++;
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        if (answer.status !== 200 || answer.body.result !== "success") {
          loops.failures.push(`${poller.queueId}: ${answer.status} ${JSON.stringify(answer.body)}`);
          return;
        }
        takeEvents(poller, answer);
        hooks.onAnswer?.(poller, answer);
      }
    }),
  ).then(() => undefined);
  return loops;
}
