// GET /events answered before Express (hot-routes.ts): when a message reaches a big stream every
// long poll is answered at once and comes straight back, and Express's routing, middleware and
// response helpers were a third of what each cost. It serves the plain poll only; anything else
// (no copy of the user that still holds, an unusual parameter, a queue that is not the user's)
// goes to the ordinary route, which answers as it always has, errors included.
import type { ServerResponse } from "node:http";
import { countHotRequest, hotRoute, sendJsonBody, tagRequestUser, type HotRoute, type HotSettle, type RateLimits } from "@chat/http";
import { queueOwner, type AnnouncedEvents } from "@chat/bus";
import type { Actor } from "@chat/core";
import { LongPoll, readEventsJson, type PollOutcome, type PollServices } from "./long-poll.ts";
import type { PollAuthenticator } from "./poll-auth.ts";

export interface EventsHotRouteServices extends PollServices {
  auth: PollAuthenticator;
  rateLimits: RateLimits;
}

const QUEUE_ID = /^[\x21-\x7e]{1,100}$/;
const EVENT_ID = /^(-1|0|[1-9][0-9]{0,9})$/;

interface PollParameters {
  queueId: string;
  lastEventId: number;
  dontBlock: boolean;
}

/**
 * The poll's parameters, read from the query string as sent, if they are plainly what the
 * ordinary route would read; else undefined. Read here rather than by node:querystring, whose
 * object and strings were a good part of a re-poll's garbage: anything unusual (another
 * parameter, one given twice, a name that is encoded, a value that does not decode) is declined.
 */
function pollParameters(search: string): PollParameters | undefined {
  let queueId: string | undefined;
  let lastEventId: string | undefined;
  let dontBlock: string | undefined;
  for (let start = 0; start < search.length; ) {
    let end = search.indexOf("&", start);
    if (end === -1) end = search.length;
    // As querystring: empty pieces ("a=1&&b=2") are nothing.
    if (end > start) {
      const equals = search.indexOf("=", start);
      const nameEnd = equals === -1 || equals > end ? end : equals;
      const value = queryValue(search, nameEnd === end ? end : nameEnd + 1, end);
      if (value === undefined) return undefined;
      // Names compared in place: a slice of each, per poll, was garbage.
      if (queueId === undefined && isName(search, start, nameEnd, "queue_id")) queueId = value;
      else if (lastEventId === undefined && isName(search, start, nameEnd, "last_event_id")) lastEventId = value;
      else if (dontBlock === undefined && isName(search, start, nameEnd, "dont_block")) dontBlock = value;
      else return undefined;
    }
    start = end + 1;
  }
  if (queueId === undefined || !QUEUE_ID.test(queueId)) return undefined;
  lastEventId ??= "-1";
  if (!EVENT_ID.test(lastEventId) || Number(lastEventId) > 2 ** 31 - 1) return undefined;
  dontBlock ??= "false";
  if (dontBlock !== "true" && dontBlock !== "false") return undefined;
  return { queueId, lastEventId: Number(lastEventId), dontBlock: dontBlock === "true" };
}

/** Whether `search` from `start` to `end` is `name`, as sent. */
function isName(search: string, start: number, end: number, name: string): boolean {
  return end - start === name.length && search.startsWith(name, start);
}

/** A query value decoded as querystring decodes it ("+" is a space), or undefined if it does not decode. */
function queryValue(search: string, start: number, end: number): string | undefined {
  const raw = search.slice(start, end);
  const plus = raw.indexOf("+") !== -1;
  if (!plus && raw.indexOf("%") === -1) return raw;
  try {
    return decodeURIComponent(plus ? raw.replaceAll("+", " ") : raw);
  } catch {
    return undefined;
  }
}

const ANSWER_HEAD = Buffer.from('{"result":"success","msg":"","events":[');
const ANSWER_QUEUE_ID = Buffer.from('],"queue_id":');

/** A poll answered by the hot route: its outcome is written here, or the request goes to Express. */
class HotPoll extends LongPoll<string> {
  constructor(
    services: EventsHotRouteServices,
    private readonly res: ServerResponse,
    private readonly settleRequest: HotSettle,
    params: PollParameters,
    userId: number,
  ) {
    super(services, readEventsJson, params.queueId, params.lastEventId, params.dontBlock, userId);
  }

  protected override settleAnnounced(events: AnnouncedEvents): void {
    // Written as bytes: the events' shared text is encoded once for every poll it answers.
    const { res } = this;
    const queueId = JSON.stringify(this.queueId);
    const length = ANSWER_HEAD.length + events.jsonByteLength() + ANSWER_QUEUE_ID.length + queueId.length + 1;
    const body = Buffer.allocUnsafe(length);
    let at = ANSWER_HEAD.copy(body, 0);
    at += events.writeJson(body, at);
    at += ANSWER_QUEUE_ID.copy(body, at);
    // ASCII: the hot route serves only queue ids of printable ASCII.
    at += body.write(queueId, at, "latin1");
    body.write("}", at, "latin1");
    sendJson(res, body, this.services.waiters.draining);
    this.settleRequest(res.req, res, true);
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
      sendJson(res, `{"result":"success","msg":"","events":[${outcome.join(",")}],"queue_id":${JSON.stringify(this.queueId)}}`, this.services.waiters.draining);
      this.settleRequest(res.req, res, true);
    }
  }
}

export function eventsHotRoute(services: EventsHotRouteServices): HotRoute {
  const begin = (res: ServerResponse, settle: HotSettle, params: PollParameters, actor: Actor) => {
    tagRequestUser(res.req, actor.id);
    // Polls are not rate limited (rate-limit.ts exempts them): a client re-polls after every answer.
    new HotPoll(services, res, settle, params, actor.id).start(res);
  };
  return hotRoute({
    method: "GET",
    path: "/api/v1/events",
    serve({ req, search }, res, settle) {
      const params = pollParameters(search);
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
/**
 * DELETE /events (a client closing, or the event benchmark's registrations) answered before
 * Express: only the plain request, the queue id alone (in the query or a form body) of a queue of
 * the user's, as the node's copy of the user (poll-auth.ts); anything else is the ordinary route's.
 */
export function deleteQueueHotRoute(services: EventsHotRouteServices): HotRoute {
  return hotRoute({
    method: "DELETE",
    path: "/api/v1/events",
    async handle({ req, search, body }, res) {
      const queueId = deletedQueueId(search, body);
      if (queueId === undefined) return false;
      const actor = await services.auth.authenticate(req);
      if (actor === undefined) return false;
      tagRequestUser(req, actor.id);
      // A queue id names its user: another's is the ordinary route's (BAD_EVENT_QUEUE_ID), as is
      // one already gone, which the delete finds (with no read of the queue before it).
      if (queueOwner(queueId)?.userId !== actor.id) return false;
      if (!(await countHotRequest(services.rateLimits, req, actor.id))) return false;
      if (!(await services.queues.delete(queueId))) return false;
      sendJsonBody(res, 200, DELETED);
      return true;
    },
  });
}

const DELETED = JSON.stringify({ result: "success", msg: "" });

/** The queue id of a plain DELETE: `queue_id` alone, once, in the query or the body; else undefined. */
function deletedQueueId(search: string, body: Record<string, unknown> | undefined): string | undefined {
  const inBody = body === undefined ? [] : Object.keys(body);
  if (inBody.length > 0) {
    if (search !== "" || inBody.length !== 1 || typeof body!.queue_id !== "string") return undefined;
    return QUEUE_ID.test(body!.queue_id) ? body!.queue_id : undefined;
  }
  if (!search.startsWith("queue_id=") || search.indexOf("&") !== -1) return undefined;
  const queueId = queryValue(search, "queue_id=".length, search.length);
  return queueId !== undefined && QUEUE_ID.test(queueId) ? queueId : undefined;
}

/** A poll's JSON answer. */
function sendJson(res: ServerResponse, body: string | Buffer, closeConnection: boolean): void {
  // Shutting down: the client's next poll opens a connection, to another node.
  sendJsonBody(res, 200, body, closeConnection ? ["Connection", "close"] : []);
}
