// Signing a browser in and out (the web client's pages, outside /api/v1): GET /login shows a form
// (pages.ts: no script), POST /accounts/login/ checks the password exactly as POST /fetch_api_key
// does (the same rate limits, argon2, the same throttle of failed logins) and starts a browser
// session (browser-session.ts), POST /accounts/logout/ ends it. The login form is protected from
// cross-site posts by a double submit: a `csrftoken` cookie and the same value in a hidden field
// (a page of another site can set neither). A failure never says whether the account exists.
import { Router, type Request, type Response } from "express";
import {
  AuthenticationFailedError,
  authenticatePassword,
  createBrowserSession,
  deleteBrowserSession,
  RateLimitedError,
  RealmDeactivatedError,
  UserDeactivatedError,
  type Realm,
} from "@chat/core";
import {
  clearedSessionCookies,
  CSRF_COOKIE,
  CSRF_HEADER,
  csrfTokenFor,
  endpoint,
  formCsrfCookie,
  limitByIp,
  newFormCsrfToken,
  originMatchesHost,
  params,
  parseParams,
  realmOf,
  requestCookies,
  requireRealm,
  route,
  sameToken,
  serve,
  sessionCookies,
  sessionTokenOf,
} from "@chat/http";
import { html, sendPage, type Page } from "../pages.ts";
import type { ApiServices } from "../services.ts";
import { throttledLogin } from "./auth.ts";

/** The form field of the CSRF token (Django's name, which Zulip's forms use). */
const CSRF_FIELD = "csrfmiddlewaretoken";
/** A form's token as this server makes them: 32 bytes (or an HMAC-SHA256), base64url. */
const FORM_TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** Where to go after logging in: the web client's hash route, nothing else (no open redirect). */
const NEXT = /^#[^\s\u0000-\u001f\u007f]{0,1000}$/;

const NEXT_PARAM = params.string().default("").maxLength(1001).describe("The web client's hash route (`#narrow/...`) to open after logging in; anything else opens `/`.");

export const browserLoginEndpoints = {
  loginForm: endpoint({
    method: "get",
    root: true,
    path: "/login",
    tag: "authentication",
    auth: "none",
    summary: "The login page of the web client: email address and password",
    description: "Sets a `csrftoken` cookie the form sends back (unless the browser has one); no script.",
    params: { next: NEXT_PARAM },
    response: { html: "The form." },
  }),
  login: endpoint({
    method: "post",
    root: true,
    path: "/accounts/login/",
    tag: "authentication",
    auth: "none",
    summary: "Log a browser in: starts a session (cookies `sessionid` and `csrftoken`) and goes to the web client",
    description:
      "Checked as POST /fetch_api_key checks a password, with its rate limits (failed logins per account and per client address: past them, 429). The form's `csrfmiddlewaretoken` must equal the `csrftoken` cookie, and an `Origin` header, if any, must be this host (else 403). A wrong address or password shows the form again, with the same words whether or not the account exists.",
    params: {
      username: params.string().default("").maxLength(254).describe("The account's email address."),
      password: params.string().default("").maxLength(1000),
      [CSRF_FIELD]: params.string().default("").maxLength(100).describe("The `csrftoken` cookie's value."),
      next: NEXT_PARAM,
    },
    response: { html: "The form again, saying what was wrong." },
    redirects: { 302: "Logged in: to the web client (`/`, with the `next` hash)." },
    htmlStatuses: [403, 429],
    errorStatuses: [403],
  }),
  logout: endpoint({
    method: "post",
    root: true,
    path: "/accounts/logout/",
    tag: "authentication",
    auth: "none",
    summary: "Log a browser out: ends its session and clears its cookies",
    description: "The session's CSRF token (the `csrftoken` cookie) in the `X-CSRFToken` header or the `csrfmiddlewaretoken` field, else 403. Without a session, only clears the cookies.",
    params: { [CSRF_FIELD]: params.string().default("").maxLength(100).describe("The `csrftoken` cookie's value, unless sent as `X-CSRFToken`.") },
    response: { html: "Not answered: the success is the redirect." },
    redirects: { 302: "To the login page." },
    htmlStatuses: [403],
    errorStatuses: [403],
  }),
};

function loginPage(realm: Realm, csrfToken: string, next: string, error: string | null, email = ""): Page {
  return {
    title: `Log in to ${realm.name}`,
    referrerPolicy: "same-origin",
    body: html`${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
<form method="post" action="/accounts/login/">
<input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}">
${next === "" ? null : html`<input type="hidden" name="next" value="${next}">`}
<label for="username">Email address</label>
<input type="email" id="username" name="username" value="${email}" required maxlength="254" autocomplete="username" autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" required maxlength="1000" autocomplete="current-password">
<button type="submit">Log in</button>
</form>
<p class="muted"><a href="/accounts/password/reset/">Forgot your password?</a></p>`,
  };
}

/** The `next` to keep: a hash route, or nothing. */
function nextOf(value: string): string {
  return NEXT.test(value) ? value : "";
}

/** The browser's form token, or a new one set as its cookie. */
function formCsrfToken(req: Request, res: Response): string {
  const current = requestCookies(req).get(CSRF_COOKIE);
  if (current !== undefined && FORM_TOKEN.test(current)) return current;
  const token = newFormCsrfToken();
  res.append("Set-Cookie", formCsrfCookie(req, token));
  return token;
}

function sendForbidden(res: Response, reason: string): void {
  sendPage(res, 403, {
    title: "The form has expired",
    body: html`<p>${reason}</p><p><a href="/login">Go to the login page</a> and try again.</p>`,
  });
}

/** A header carries ASCII only: anything else in a hash route goes as percent-encoded UTF-8. */
function asciiLocation(location: string): string {
  return location.replace(/[^\x21-\x7e]+/g, (text) => [...Buffer.from(text, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join(""));
}

function redirect(res: Response, location: string): void {
  res.status(302).set({ Location: asciiLocation(location), "Cache-Control": "no-store", "Content-Length": "0" }).end();
}

export function browserLoginRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, ctx } = services;
  const E = browserLoginEndpoints;
  // As POST /fetch_api_key: counted per client address, then the realm the Host names (a JSON 404 if none).
  const before = [limitByIp(services.rateLimits), requireRealm({ prisma, externalHost: ctx.externalHost })];

  serve(
    router,
    E.loginForm,
    ...before,
    route(async (req, res) => {
      const { next } = parseParams(req, E.loginForm.params);
      sendPage(res, 200, loginPage(realmOf(res), formCsrfToken(req, res), nextOf(next), null));
    }),
  );

  serve(
    router,
    E.login,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const p = parseParams(req, E.login.params);
      const next = nextOf(p.next);
      const cookieToken = requestCookies(req).get(CSRF_COOKIE);
      if (!originMatchesHost(req)) return sendForbidden(res, "This form was sent from another site.");
      if (!sameToken(p[CSRF_FIELD], cookieToken)) return sendForbidden(res, "The form's security token is missing or does not match this browser's (are cookies turned on?).");
      const username = p.username.trim();
      const again = (status: number, error: string, headers: Record<string, string> = {}) =>
        sendPage(res, status, loginPage(realm, cookieToken!, next, error, username), headers);
      let user;
      try {
        user = await throttledLogin(services.rateLimits, req, realm, username, () => authenticatePassword(prisma, realm, username, p.password));
      } catch (error) {
        if (error instanceof AuthenticationFailedError) return again(200, "Incorrect email address or password.");
        // Only the right password reaches these: they say nothing to someone who does not have it.
        if (error instanceof UserDeactivatedError) return again(200, "Your account is deactivated. An administrator of the organization can reactivate it.");
        if (error instanceof RealmDeactivatedError) return again(200, "This organization has been deactivated.");
        if (error instanceof RateLimitedError) {
          const minutes = Math.max(1, Math.ceil(error.retryAfterSeconds / 60));
          return again(429, `Too many failed attempts to log in. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`, error.headers);
        }
        throw error;
      }
      // A new token every time (a session is never one the browser brought along), the old one ended.
      const previous = sessionTokenOf(req);
      if (previous !== undefined) await deleteBrowserSession(prisma, previous);
      const header = req.headers["user-agent"];
      const { token } = await createBrowserSession(prisma, user, typeof header === "string" ? header : undefined);
      for (const value of sessionCookies(req, token, await csrfTokenFor(prisma, token))) res.append("Set-Cookie", value);
      redirect(res, `/${next}`);
    }),
  );

  serve(
    router,
    E.logout,
    ...before,
    route(async (req, res) => {
      const p = parseParams(req, E.logout.params);
      const token = sessionTokenOf(req);
      if (token !== undefined && token !== "") {
        if (!originMatchesHost(req)) return sendForbidden(res, "This request was sent from another site.");
        const header = req.headers[CSRF_HEADER];
        const sent = typeof header === "string" && header !== "" ? header : p[CSRF_FIELD];
        if (!sameToken(sent, await csrfTokenFor(prisma, token))) return sendForbidden(res, "The request's security token is missing or does not match this browser's session.");
        await deleteBrowserSession(prisma, token);
      }
      for (const value of clearedSessionCookies(req)) res.append("Set-Cookie", value);
      redirect(res, "/login");
    }),
  );
  return router;
}
