import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { PrismaClient } from "@chat/db";
import { authenticateApiKey, getRealmForSubdomain, NotLoggedInError, subdomainForHost, type Actor, type Realm } from "@chat/core";

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

/** HTTP Basic (email, API key); the acting user lands in res.locals.actor. */
export function requireUser(options: AuthOptions): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const credentials = parseBasic(req.headers.authorization);
      if (!credentials) {
        res.setHeader("WWW-Authenticate", 'Basic realm="zulip"');
        throw new NotLoggedInError();
      }
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
