// GET /events answered before Express (hot-routes.ts): when a message reaches a big stream every
// long poll is answered at once and comes straight back, and Express's routing, middleware and
// response helpers were a third of what each cost. It serves the plain poll only; anything else
// (no copy of the user that still holds, an unusual parameter, a queue that is not the user's)
// goes to the ordinary route, which answers as it always has, errors included.
import type { ServerResponse } from "node:http";
import { hotRoute, tagRequestUser, type HotRoute } from "@chat/http";
import type { QueueStore } from "@chat/bus";
import { pollConnection, pollEvents, readEventsJson } from "./long-poll.ts";
import type { PollAuthenticator } from "./poll-auth.ts";
import type { LongPollWaiters } from "./waiters.ts";

export interface EventsHotRouteServices {
  queues: QueueStore;
  waiters: LongPollWaiters;
  auth: PollAuthenticator;
  heartbeatMs: number;
}

const QUEUE_ID = /^[\x21-\x7e]{1,100}$/;
const EVENT_ID = /^(-1|0|[1-9][0-9]{0,9})$/;
const PARAMETERS = new Set(["queue_id", "last_event_id", "dont_block"]);

/** The poll's parameters if they are plainly what the ordinary route would read; else undefined. */
function pollParameters(query: Record<string, string | string[] | undefined>): { queueId: string; lastEventId: number; dontBlock: boolean } | undefined {
  for (const name of Object.keys(query)) if (!PARAMETERS.has(name)) return undefined;
  const { queue_id: queueId, last_event_id: lastEventId = "-1", dont_block: dontBlock = "false" } = query;
  if (typeof queueId !== "string" || !QUEUE_ID.test(queueId)) return undefined;
  if (typeof lastEventId !== "string" || !EVENT_ID.test(lastEventId) || Number(lastEventId) > 2 ** 31 - 1) return undefined;
  if (dontBlock !== "true" && dontBlock !== "false") return undefined;
  return { queueId, lastEventId: Number(lastEventId), dontBlock: dontBlock === "true" };
}

export function eventsHotRoute(services: EventsHotRouteServices): HotRoute {
  return hotRoute({
    method: "GET",
    path: "/api/v1/events",
    async handle({ req, query }, res) {
      const params = pollParameters(query);
      if (params === undefined) return false;
      const actor = await services.auth.authenticate(req);
      if (actor === undefined) return false;
      tagRequestUser(req, actor.id);
      // Polls are not rate limited (rate-limit.ts exempts them): a client re-polls after every answer.
      // A literal, not `{ ...params, userId }`: spread objects each got a shape of their own
      // (V8 map and descriptors, about 450 bytes a held poll in a heap snapshot).
      const poll = { queueId: params.queueId, lastEventId: params.lastEventId, dontBlock: params.dontBlock, userId: actor.id };
      const events = await pollEvents(services.queues, services.waiters, services.heartbeatMs, poll, pollConnection(res), readEventsJson);
      // Gone or not the user's: the ordinary route says BAD_EVENT_QUEUE_ID.
      if (events === null) return false;
      // The client went away: nothing to answer.
      if (events === "closed") return true;
      // The events as the queue keeps them, JSON text with their ids: never parsed and written again.
      sendJsonText(res, `{"result":"success","msg":"","events":[${events.join(",")}],"queue_id":${JSON.stringify(params.queueId)}}`, services.waiters.draining);
      return true;
    },
  });
}

/** A small JSON answer in one write, headers and body together (a Buffer body is a second write). */
function sendJsonText(res: ServerResponse, body: string, closeConnection: boolean): void {
  const headers = { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) };
  // Shutting down: the client's next poll opens a connection, to another node.
  res.writeHead(200, closeConnection ? { ...headers, Connection: "close" } : headers);
  res.end(body);
}
