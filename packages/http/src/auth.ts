import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { PrismaClient } from "@chat/db";
import { authenticateApiKey, authenticateApiKeyVersioned, getRealmForSubdomain, NotLoggedInError, subdomainForHost, type Actor, type ActorCache, type ActorVersion, type Realm } from "@chat/core";

export interface AuthOptions {
  prisma: PrismaClient;
  externalHost: string;
}

export function requestSubdomain(req: Request, externalHost: string): string {
  return subdomainForHost(req.headers.host, externalHost);
}

function parseBasic(header: string | undefined): { email: string; apiKey: string } | null {
  if (!header) return null;
  const [scheme, encoded] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() !== "basic" || !encoded) return null;
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) return null;
  return { email: decoded.slice(0, colon), apiKey: decoded.slice(colon + 1) };
}

function credentialsOf(req: Request, res: Response): { email: string; apiKey: string } {
  const credentials = parseBasic(req.headers.authorization);
  if (!credentials) {
    res.setHeader("WWW-Authenticate", 'Basic realm="zulip"');
    throw new NotLoggedInError();
  }
  return credentials;
}

/**
 * Authenticates against the database and keeps the actor in `actors`: for requireCachedUser's
 * routes, the first time and whenever the copy turned out stale.
 */
export async function authenticateFresh(options: AuthOptions & { actors: ActorCache }, req: Request, res: Response): Promise<Actor> {
  const credentials = credentialsOf(req, res);
  const subdomain = requestSubdomain(req, options.externalHost);
  const { actor, version } = await authenticateApiKeyVersioned(options.prisma, subdomain, credentials.email, credentials.apiKey);
  options.actors.set(subdomain, credentials.email, credentials.apiKey, actor, version);
  res.locals.actor = actor;
  res.locals.actorVersion = null;
  return actor;
}

/**
 * HTTP Basic, for a hot read-only route that checks the actor inside its own query: the acting
 * user may come from this node's copy, and then res.locals.actorVersion holds the versions the
 * route must check (see actor-cache.ts), answering again after authenticateFresh if they fail.
 */
export function requireCachedUser(options: AuthOptions & { actors: ActorCache }): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const credentials = credentialsOf(req, res);
      const cached = options.actors.get(requestSubdomain(req, options.externalHost), credentials.email, credentials.apiKey);
      if (cached) {
        res.locals.actor = cached.actor;
        res.locals.actorVersion = cached.version;
      } else {
        await authenticateFresh(options, req, res);
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The versions a route of requireCachedUser must check, or null when the actor was just read. */
export function actorVersionOf(res: Response): ActorVersion | null {
  return (res.locals.actorVersion as ActorVersion | null | undefined) ?? null;
}

/** HTTP Basic (email, API key); the acting user lands in res.locals.actor. */
export function requireUser(options: AuthOptions): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const credentials = credentialsOf(req, res);
      res.locals.actor = await authenticateApiKey(options.prisma, requestSubdomain(req, options.externalHost), credentials.email, credentials.apiKey);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The realm the Host names, for endpoints that need no credentials. */
export function requireRealm(options: AuthOptions): RequestHandler {
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
