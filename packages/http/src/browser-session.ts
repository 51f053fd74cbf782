// Browser sessions: the web client's way in. `sessionid` (HttpOnly, SameSite=Lax) holds the
// session's random token (core's browser-sessions.ts keeps only its SHA-256); `csrftoken`
// (readable by the client's script, SameSite=Strict) holds a keyed hash of that token, so a
// request's CSRF token is checked with no state: a page of another site can neither read the
// cookie nor compute the hash. Under /json/ (the API of /api/v1 for a browser) a request is
// authenticated by the session only, never by HTTP Basic (as Zulip's /json), and an unsafe method
// must carry `X-CSRFToken`; an `Origin` header, when sent, must name this host.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { PrismaClient } from "@chat/db";
import { authenticateBrowserSession, BROWSER_SESSION_DAYS, JsonableError, NotLoggedInError, serverSecret, type Actor } from "@chat/core";
import type { AuthOptions } from "./auth.ts";
import { requestSubdomain } from "./auth.ts";
import { requestProtocol } from "./forwarded.ts";
import { countIpRequest, countUserRequest } from "./rate-limit.ts";

export const SESSION_COOKIE = "sessionid";
export const CSRF_COOKIE = "csrftoken";
/** The header an unsafe /json/ request carries its CSRF token in (Django's name). */
export const CSRF_HEADER = "x-csrftoken";
/** What a 401 under /json/ asks for (rest-interface.md, Authentication): a session, not Basic. */
export const SESSION_CHALLENGE = "session";
const SESSION_MAX_AGE_SECONDS = BROWSER_SESSION_DAYS * 24 * 3600;

/** Zulip's CsrfFailureError: 403, CSRF_FAILED, the reason in the body too. */
export class CsrfFailedError extends JsonableError {
  constructor(reason: string) {
    super(`CSRF error: ${reason}`, { code: "CSRF_FAILED", status: 403, extra: { reason } });
  }
}

/** The request's cookies (the first of a repeated name); values percent-decoded where they can be. */
export function requestCookies(req: Pick<IncomingMessage, "headers">): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = req.headers.cookie;
  if (typeof header !== "string" || header.length > 16_384) return cookies;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (name === "" || cookies.has(name)) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // Kept as sent: it is compared, never interpreted.
    }
    cookies.set(name, value);
  }
  return cookies;
}

export function sessionTokenOf(req: Pick<IncomingMessage, "headers">): string | undefined {
  return requestCookies(req).get(SESSION_COOKIE);
}

/** The key of the CSRF hashes, shared by every node (server_secret), read once per process and database. */
const csrfKeys = new WeakMap<PrismaClient, Promise<string>>();

function csrfKey(prisma: PrismaClient): Promise<string> {
  let key = csrfKeys.get(prisma);
  if (key === undefined) {
    key = serverSecret(prisma, "browser-csrf");
    // A failure (the database away) is not remembered.
    key.catch(() => csrfKeys.delete(prisma));
    csrfKeys.set(prisma, key);
  }
  return key;
}

/** The CSRF token of a session: a keyed hash of its token, so it is checked with no lookup. */
export async function csrfTokenFor(prisma: PrismaClient, sessionToken: string): Promise<string> {
  return createHmac("sha256", await csrfKey(prisma)).update(`csrf\n${sessionToken}`).digest("base64url");
}

/** A random token for the login form's double submit (no session exists yet). */
export function newFormCsrfToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Constant-time equality of two tokens (of any lengths). */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== "string" || typeof b !== "string" || a === "" || b === "") return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function cookie(req: Request, name: string, value: string, attributes: { httpOnly: boolean; sameSite: "Lax" | "Strict"; maxAge: number }): string {
  const parts = [`${name}=${value}`, "Path=/", `Max-Age=${attributes.maxAge}`, `SameSite=${attributes.sameSite}`];
  if (attributes.maxAge === 0) parts.push("Expires=Thu, 01 Jan 1970 00:00:00 GMT");
  if (attributes.httpOnly) parts.push("HttpOnly");
  if (requestProtocol(req) === "https") parts.push("Secure");
  return parts.join("; ");
}

/** The Set-Cookie values of a session: its token (HttpOnly) and its CSRF token (for the client's script). */
export function sessionCookies(req: Request, sessionToken: string, csrfToken: string, maxAgeSeconds = SESSION_MAX_AGE_SECONDS): string[] {
  return [
    cookie(req, SESSION_COOKIE, sessionToken, { httpOnly: true, sameSite: "Lax", maxAge: maxAgeSeconds }),
    cookie(req, CSRF_COOKIE, csrfToken, { httpOnly: false, sameSite: "Strict", maxAge: maxAgeSeconds }),
  ];
}

/** The login form's pre-session CSRF cookie (double submit), for the browser's session only. */
export function formCsrfCookie(req: Request, token: string): string {
  return cookie(req, CSRF_COOKIE, token, { httpOnly: false, sameSite: "Strict", maxAge: 12 * 3600 });
}

/** Set-Cookie values that remove both cookies (logging out). */
export function clearedSessionCookies(req: Request): string[] {
  return sessionCookies(req, "", "", 0);
}

/**
 * The user the request's session cookie names in the organization its Host names, or null: no
 * cookie, an unknown, expired or ended session, another organization's, a deactivated user or
 * organization. One statement by primary key each time, nothing cached: a logout, deactivation or
 * password change is seen by the next request on every node. A session last renewed over an hour
 * ago is renewed, and its cookies with it when the request is Express's.
 */
export async function browserSessionActor(req: IncomingMessage, options: Pick<AuthOptions, "prisma" | "externalHost">): Promise<Actor | null> {
  const token = sessionTokenOf(req);
  if (token === undefined || token === "") return null;
  const found = await authenticateBrowserSession(options.prisma, requestSubdomain(req, options.externalHost), token);
  if (found === null) return null;
  const res = (req as Partial<Request>).res;
  if (found.renewedUntil !== null && res !== undefined && !res.headersSent) {
    const maxAge = Math.max(0, Math.floor((found.renewedUntil.getTime() - Date.now()) / 1000));
    for (const value of sessionCookies(req as Request, token, await csrfTokenFor(options.prisma, token), maxAge)) res.append("Set-Cookie", value);
  }
  return found.actor;
}

/** Requests under /json/ (marked by jsonSessionGate): authenticated by the session, never Basic. */
const sessionRequests = new WeakSet<IncomingMessage>();

export function isSessionRequest(req: IncomingMessage): boolean {
  return sessionRequests.has(req);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether an `Origin` header, if the request has one, names the host the request was sent to.
 * Browsers send it on every cross-origin request and on same-origin unsafe ones; the scheme is not
 * compared, since behind a proxy that does not say X-Forwarded-Proto the server cannot know it.
 */
export function originMatchesHost(req: Pick<IncomingMessage, "headers">): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const host = req.headers.host;
  if (typeof host !== "string" || origin === "null") return false;
  try {
    return new URL(origin).host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

/** The 401 a /json/ request without a usable session gets (counted per client address, as Basic's). */
async function notLoggedIn(options: AuthOptions, req: Request, res: Response): Promise<never> {
  await countIpRequest(options.rateLimits, req);
  res.setHeader("WWW-Authenticate", SESSION_CHALLENGE);
  throw new NotLoggedInError();
}

/**
 * Mounted in front of the API at /json/: marks the request as a session's (requireUser then reads
 * the session, not Basic), refuses another origin, and for an unsafe method wants a session and
 * its CSRF token in `X-CSRFToken` before anything else runs.
 */
export function jsonSessionGate(options: AuthOptions): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    sessionRequests.add(req);
    (async () => {
      if (!originMatchesHost(req)) throw new CsrfFailedError("Origin checking failed.");
      if (SAFE_METHODS.has(req.method)) return;
      const token = sessionTokenOf(req);
      // A spectator's registration (Zulip's anonymous /json/register) carries no session, so there
      // is nothing for a forged request to ride on: the route answers it as a spectator's or not.
      if ((token === undefined || token === "") && req.method === "POST" && req.path === "/register") return;
      if (token === undefined || token === "") await notLoggedIn(options, req, res);
      const header = req.headers[CSRF_HEADER];
      if (!sameToken(typeof header === "string" ? header : undefined, await csrfTokenFor(options.prisma, token!))) throw new CsrfFailedError("CSRF token missing or incorrect.");
    })().then(() => next(), next);
  };
}

/**
 * requireUser's reading of a /json/ request (or a download's cookie): the session's user, counted
 * per user, or a 401 asking for a session.
 */
export async function requireSessionActor(options: AuthOptions, req: Request, res: Response): Promise<Actor> {
  const actor = await browserSessionActor(req, options);
  if (actor === null) return notLoggedIn(options, req, res);
  await countUserRequest(options.rateLimits, req, actor.id);
  return actor;
}
