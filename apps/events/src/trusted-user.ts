// The user of /register and DELETE /events (and GET /events when Express answers it), as this
// node's copy of them where it has one (poll-auth.ts): the registration's authentication leaves a
// checked copy that the client's polls, its next registration and its DELETE then use with no
// statement, trusted on the same terms as a poll's (until Postgres notifies a change to its user's
// or realm's row). Anything a copy cannot settle (no credentials, a wrong key, a deactivated user)
// is requireUser's, whose errors and counts are the ordinary ones.
import type { RequestHandler } from "express";
import { countUserRequest, isSessionRequest, requireUser, type AuthOptions } from "@chat/http";
import type { PollAuthenticator } from "./poll-auth.ts";

export function requireUserKnownToNode(auth: PollAuthenticator, options: AuthOptions): RequestHandler {
  const ordinary = requireUser(options);
  return (req, res, next) => {
    // Under /json/ the session is the credential, never a copy of Basic's.
    if (isSessionRequest(req)) return ordinary(req, res, next);
    auth.authenticate(req).then(
      async (actor) => {
        if (actor === undefined) return ordinary(req, res, next);
        await countUserRequest(options.rateLimits, req, actor.id);
        res.locals.actor = actor;
        next();
      },
    ).catch(next);
  };
}
