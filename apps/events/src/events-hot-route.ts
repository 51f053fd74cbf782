// GET /events answered before Express (hot-routes.ts): when a message reaches a big stream every
// long poll is answered at once and comes straight back, and Express's routing, middleware and
// response helpers were a third of what each cost. It serves the plain poll only; anything else
// (no copy of the user that still holds, an unusual parameter, a queue that is not the user's)
// goes to the ordinary route, which answers as it always has, errors included.
import type { ServerResponse } from "node:http";
import { hotRoute, tagRequestUser, type HotRoute, type HotSettle } from "@chat/http";
import type { Actor } from "@chat/core";
import { LongPoll, readEventsJson, type PollOutcome, type PollServices } from "./long-poll.ts";
import type { PollAuthenticator } from "./poll-auth.ts";

export interface EventsHotRouteServices extends PollServices {
  auth: PollAuthenticator;
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

/** A poll answered by the hot route: its outcome is written here, or the request goes to Express. */
class HotPoll extends LongPoll<string> {
  constructor(
    services: EventsHotRouteServices,
    private readonly res: ServerResponse,
    private readonly settleRequest: HotSettle,
    params: { queueId: string; lastEventId: number; dontBlock: boolean },
    userId: number,
  ) {
    super(services, readEventsJson, params.queueId, params.lastEventId, params.dontBlock, userId);
  }

  protected settle(outcome: PollOutcome<string> | undefined, error: unknown): void {
    const { res } = this;
    if (outcome === undefined) this.settleRequest(res.req, res, false, error);
    // Gone or not the user's: the ordinary route says BAD_EVENT_QUEUE_ID.
    else if (outcome === null) this.settleRequest(res.req, res, false);
    // The client went away: nothing to answer.
    else if (outcome === "closed") this.settleRequest(res.req, res, true);
    else {
      // The events as the queue keeps them, JSON text with their ids: never parsed and written again.
      sendJsonText(res, `{"result":"success","msg":"","events":[${outcome.join(",")}],"queue_id":${JSON.stringify(this.queueId)}}`, this.services.waiters.draining);
      this.settleRequest(res.req, res, true);
    }
  }
}

export function eventsHotRoute(services: EventsHotRouteServices): HotRoute {
  const begin = (res: ServerResponse, settle: HotSettle, params: { queueId: string; lastEventId: number; dontBlock: boolean }, actor: Actor) => {
    tagRequestUser(res.req, actor.id);
    // Polls are not rate limited (rate-limit.ts exempts them): a client re-polls after every answer.
    new HotPoll(services, res, settle, params, actor.id).start(res);
  };
  return hotRoute({
    method: "GET",
    path: "/api/v1/events",
    serve({ req, query }, res, settle) {
      const params = pollParameters(query);
      if (params === undefined) {
        settle(req, res, false);
        return;
      }
      // A user whose copy is trusted (poll-auth.ts), as nearly every re-poll's: begun at once.
      const trusted = services.auth.authenticateNow(req);
      if (trusted !== undefined) {
        begin(res, settle, params, trusted);
        return;
      }
      services.auth.authenticate(req).then(
        (actor) => (actor === undefined ? settle(req, res, false) : begin(res, settle, params, actor)),
        (error: unknown) => settle(req, res, false, error),
      );
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
