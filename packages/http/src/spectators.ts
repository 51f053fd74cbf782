// Requests from spectators: people who are not logged in, reading an organization's web-public
// streams (packages/core/src/queries/spectators.ts). A request is a spectator's only if it carries
// no credentials at all; wrong or expired ones are still the ordinary 401.
import type { Request, RequestHandler, Response } from "express";
import { NotLoggedInError } from "@chat/core";
import { isSessionRequest, SESSION_CHALLENGE, sessionTokenOf } from "./browser-session.ts";
import { countIpRequest, type RateLimits } from "./rate-limit.ts";

/**
 * No HTTP Basic (under /api/v1, where cookies are not credentials), or under /json/ no session
 * cookie, and no `api_key` parameter.
 */
export function isSpectatorRequest(req: Request): boolean {
  if (req.headers.authorization !== undefined || req.query.api_key !== undefined) return false;
  if (isSessionRequest(req)) {
    const token = sessionTokenOf(req);
    return token === undefined || token === "";
  }
  return true;
}

/**
 * A handler for spectators' requests only (the rest go on to the route's authentication): each is
 * counted per client address, as requests without credentials are, and the 401 of an organization
 * that lets no spectators in asks for credentials as the ordinary one does.
 */
export function spectatorRoute(options: { rateLimits: RateLimits }, handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res, next) => {
    if (!isSpectatorRequest(req)) return next();
    (async () => {
      await countIpRequest(options.rateLimits, req);
      await handler(req, res);
    })().catch((error: unknown) => {
      if (error instanceof NotLoggedInError) res.setHeader("WWW-Authenticate", isSessionRequest(req) ? SESSION_CHALLENGE : 'Basic realm="zulip"');
      next(error);
    });
  };
}
