import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { PrismaClient } from "@chat/db";
import {
  authenticateApiKey,
  authenticateApiKeyVersioned,
  getRealmForSubdomain,
  InvalidApiKeyError,
  InvalidArgumentError,
  NotLoggedInError,
  RateLimitedError,
  subdomainForHost,
  type Actor,
  type ActorCache,
  type ActorVersion,
  type Realm,
} from "@chat/core";
import { clientIp, countIpRequest, countUserRequest, loginAccountKey, type RateLimits } from "./rate-limit.ts";
import { isSessionRequest, requireSessionActor, sessionTokenOf } from "./browser-session.ts";

export interface AuthOptions {
  prisma: PrismaClient;
  externalHost: string;
  rateLimits: RateLimits;
  /**
   * Also take the key alone from the `api_key` query parameter (Zulip's override_api_url_scheme):
   * only file downloads, whose links a client opens where it cannot set a header.
   */
  apiKeyParameter?: boolean;
  /**
   * Without Basic (or the api_key parameter), also take the browser session's cookie: only file
   * downloads, which the web client's pages load as images and links (a GET, so no CSRF token).
   */
  sessionCookie?: boolean;
}

export function requestSubdomain(req: Pick<IncomingMessage, "headers">, externalHost: string): string {
  return subdomainForHost(req.headers.host, externalHost);
}

/** The `api_key` query parameter, when the route takes it and Basic is absent. */
function parseApiKeyParameter(req: Request): { email: null; apiKey: string } | null {
  const value = req.query.api_key;
  if (typeof value !== "string" || value === "") return null;
  if (value.includes("\u0000")) throw new InvalidArgumentError("api_key contains NULL (0x00) characters.", "api_key");
  return { email: null, apiKey: value };
}

export function parseBasic(header: string | undefined): { email: string; apiKey: string } | null {
  if (!header) return null;
  const [scheme, encoded] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() !== "basic" || !encoded) return null;
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) return null;
  // Postgres stores no NUL in text, so such credentials must not reach the lookup.
  if (decoded.includes("\u0000")) throw new InvalidArgumentError("api_key contains NULL (0x00) characters.", "api_key");
  return { email: decoded.slice(0, colon), apiKey: decoded.slice(colon + 1) };
}

/**
 * The user a request's HTTP Basic names, counted for the rate limits: a request without
 * credentials per client address, a wrong API key as a failed login, the rest per user.
 */
async function authenticateRequest<T extends { actor: Actor }>(
  options: AuthOptions,
  req: Request,
  res: Response,
  authenticate: (subdomain: string, credentials: { email: string | null; apiKey: string }) => Promise<T>,
): Promise<T> {
  const credentials = parseBasic(req.headers.authorization) ?? (options.apiKeyParameter ? parseApiKeyParameter(req) : null);
  if (!credentials) {
    await countIpRequest(options.rateLimits, req);
    res.setHeader("WWW-Authenticate", 'Basic realm="zulip"');
    throw new NotLoggedInError();
  }
  const subdomain = requestSubdomain(req, options.externalHost);
  let result: T;
  try {
    result = await authenticate(subdomain, credentials);
  } catch (error) {
    // A right key is never refused for others' wrong ones (anyone could lock a user's apps out
    // with a few): past the limit, wrong keys are answered 429 rather than 401.
    if (error instanceof InvalidApiKeyError) {
      // A key without an address (the api_key parameter) counts against the client address only.
      const wait = await options.rateLimits.countLoginFailure(credentials.email === null ? null : loginAccountKey(subdomain, credentials.email), clientIp(req));
      if (wait !== null) throw new RateLimitedError(wait);
    }
    throw error;
  }
  await countUserRequest(options.rateLimits, req, result.actor.id);
  return result;
}

/**
 * requireUser for the ordinary route behind a hot route that acts as this node's copy of its
 * user (hot-routes.ts, actor-cache.ts): the user read here is kept for the hot route's next request.
 */
export function requireUserKeepingCopy(options: AuthOptions & { actors: ActorCache }): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (isSessionRequest(req)) {
        res.locals.actor = await requireSessionActor(options, req, res);
        return next();
      }
      const { actor } = await authenticateRequest(options, req, res, async (subdomain, credentials) => {
        const { actor, version } = await authenticateApiKeyVersioned(options.prisma, subdomain, credentials.email, credentials.apiKey);
        if (credentials.email !== null) options.actors.set(subdomain, credentials.email, credentials.apiKey, actor, version);
        return { actor };
      });
      res.locals.actor = actor;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The node's copy of the user a hot request's HTTP Basic names, with the versions the route must
 * check inside its own query (actor-cache.ts); undefined when there is none (or no credentials).
 */
export function cachedActorFor(options: { externalHost: string; actors: ActorCache }, req: IncomingMessage): { actor: Actor; version: ActorVersion } | undefined {
  const credentials = parseBasic(req.headers.authorization);
  if (!credentials) return undefined;
  return options.actors.get(requestSubdomain(req, options.externalHost), credentials.email, credentials.apiKey);
}

/**
 * The user a hot request's HTTP Basic names, read as requireUser reads it; undefined without
 * credentials (the ordinary route answers those, with its WWW-Authenticate header).
 */
export async function authenticateHotRequest(options: Omit<AuthOptions, "rateLimits">, req: IncomingMessage): Promise<Actor | undefined> {
  const credentials = parseBasic(req.headers.authorization);
  if (!credentials) return undefined;
  return authenticateApiKey(options.prisma, requestSubdomain(req, options.externalHost), credentials.email, credentials.apiKey);
}

/**
 * HTTP Basic (email, API key), or under /json/ the browser session (browser-session.ts); the acting
 * user lands in res.locals.actor.
 */
export function requireUser(options: AuthOptions): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (isSessionRequest(req)) {
        res.locals.actor = await requireSessionActor(options, req, res);
        return next();
      }
      // A browser's cookie, when nothing else is sent: an ended session is a 401 asking for a
      // session, which (unlike Basic's challenge) makes no browser prompt for a password.
      if (options.sessionCookie && req.headers.authorization === undefined && req.query.api_key === undefined && sessionTokenOf(req)) {
        res.locals.actor = await requireSessionActor(options, req, res);
        return next();
      }
      const { actor } = await authenticateRequest(options, req, res, async (subdomain, credentials) => ({
        actor: await authenticateApiKey(options.prisma, subdomain, credentials.email, credentials.apiKey),
      }));
      res.locals.actor = actor;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The realm the Host names, for endpoints that need no credentials. */
export function requireRealm(options: Omit<AuthOptions, "rateLimits">): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.realm = await getRealmForSubdomain(options.prisma, requestSubdomain(req, options.externalHost));
      next();
    } catch (error) {
      next(error);
    }
  };
}

export function actorOf(res: Response): Actor {
  return res.locals.actor as Actor;
}

export function realmOf(res: Response): Realm {
  return res.locals.realm as Realm;
}
