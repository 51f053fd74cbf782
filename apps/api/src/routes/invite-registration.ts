// Registering through an invitation's link `/join/<key>/` (Zulip's confirmation flow), two ways:
// - JSON for a client (no credentials): GET /api/v1/invitations/{key} says what the link opens
//   (organization, address, role), POST /api/v1/invitations/{key}/accept creates the account and
//   answers its API key, as POST /fetch_api_key does.
// - Pages for a browser following the email (pages.ts, no script): GET /join/<key>/ shows a form,
//   POST creates the account, starts a browser session (as POST /accounts/login/) and goes to the
//   web client. The form is protected from cross-site posts as the login form is (a `csrftoken`
//   cookie and the same value in a hidden field, and the Origin checked).
// Both are counted per client address (limitByIp) like every request without credentials.
import { Router, type Request, type Response } from "express";
import {
  acceptInvite,
  checkInviteKey,
  createBrowserSession,
  hashNewPassword,
  inviteKeyError,
  JsonableError,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  realmUri,
  type InviteKeyState,
  type Realm,
} from "@chat/core";
import {
  CSRF_COOKIE,
  csrfTokenFor,
  endpoint,
  formCsrfCookie,
  limitByIp,
  newFormCsrfToken,
  originMatchesHost,
  originOf,
  params,
  parseParams,
  realmOf,
  requestCookies,
  requestProtocol,
  requireRealm,
  route,
  sameToken,
  schema,
  serve,
  sessionCookies,
  success,
  successBody,
} from "@chat/http";
import { html, sendPage, type Page } from "../pages.ts";
import type { ApiServices } from "../services.ts";

const KEY = { key: { schema: { type: "string" }, description: "The key of the invitation's link (`/join/<key>/`)." } };
const CSRF_FIELD = "csrfmiddlewaretoken";
const FORM_TOKEN = /^[A-Za-z0-9_-]{43}$/;

const ACCOUNT_PARAMS = {
  full_name: params.string().default("").maxLength(1000).describe("The new user's name."),
  password: params.string().default("").maxLength(1000).describe(`At least ${PASSWORD_MIN_LENGTH} and at most ${PASSWORD_MAX_LENGTH} characters, not a common password or a simple pattern.`),
  email: params.string().default("").maxLength(254).describe("A reusable link's new address (an email invitation's address is its own, and this is ignored)."),
};

export const inviteRegistrationEndpoints = {
  check: endpoint({
    method: "get",
    path: "/invitations/{key}",
    pathParams: KEY,
    tag: "authentication",
    auth: "none",
    summary: "What an invitation's link opens: the organization, the address (an email invitation's), the role",
    description: "An unknown key is 404 (`Invalid invitation link.`); an expired, used or revoked one 400.",
    params: {},
    response: successBody({
      realm_name: schema.string(),
      realm_url: schema.string(),
      email: { anyOf: [{ type: "string" }, { type: "null" }] },
      is_multiuse: schema.boolean(),
      invited_as: schema.integer(),
      invited_by: schema.object({ user_id: schema.integer(), full_name: schema.string() }),
      expiry_date: { anyOf: [{ type: "integer" }, { type: "null" }] },
    }),
  }),
  accept: endpoint({
    method: "post",
    path: "/invitations/{key}/accept",
    pathParams: KEY,
    tag: "authentication",
    auth: "none",
    summary: "Create the account an invitation's link opens; answers its API key",
    description: "An email invitation works once; a reusable link takes any address the organization takes (`email`).",
    params: ACCOUNT_PARAMS,
    response: successBody({ api_key: schema.string(), email: schema.string(), user_id: schema.integer() }),
  }),
};

export const invitePageEndpoints = {
  form: endpoint({
    method: "get",
    root: true,
    path: "/join/{key}/",
    pathParams: KEY,
    tag: "authentication",
    auth: "none",
    summary: "An invitation's page: a form to create the account",
    description: "Sets a `csrftoken` cookie the form sends back (unless the browser has one); no script.",
    params: {},
    response: { html: "The form." },
    htmlStatuses: [400, 404],
  }),
  submit: endpoint({
    method: "post",
    root: true,
    path: "/join/{key}/",
    pathParams: KEY,
    tag: "authentication",
    auth: "none",
    summary: "Create the account an invitation's link opens, and log the browser in",
    description:
      "The form's `csrfmiddlewaretoken` must equal the `csrftoken` cookie, and an `Origin` header, if any, must be this host (else 403). A refused name, address or password shows the form again (400).",
    params: { ...ACCOUNT_PARAMS, password_confirm: params.string().default("").maxLength(1000).describe("The same password again."), [CSRF_FIELD]: params.string().default("").maxLength(100) },
    response: { html: "The form again, saying what was wrong." },
    redirects: { 302: "Account created and logged in: to the web client (`/`)." },
    htmlStatuses: [400, 403, 404],
    errorStatuses: [403],
  }),
};

/** Runs the action, with a password checked and hashed beforehand, outside the transaction. */
async function createAccount(services: ApiServices, req: Request, realm: Realm, key: string, p: { full_name: string; password: string; email: string }) {
  const hashed = await hashNewPassword(p.password);
  return services.actions.run(originOf(req, { realm_id: realm.id }), (tx, events) =>
    acceptInvite(tx, events, services.ctx, realm, key, { email: p.email, fullName: p.full_name, passwordHash: hashed.hash }),
  );
}

function formPage(realm: Realm, state: Extract<InviteKeyState, { status: "valid" }>, csrfToken: string, error: string | null, values: { full_name: string; email: string }): Page {
  const { invite, referrer } = state;
  return {
    title: `Join ${realm.name}`,
    referrerPolicy: "same-origin",
    body: html`${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
<p>${referrer.full_name} invited you to join ${realm.name}.</p>
<form method="post" action="">
<input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}">
${
  invite.is_multiuse
    ? html`<label for="email">Email address</label>
<input type="email" id="email" name="email" value="${values.email}" required maxlength="254" autocomplete="email">`
    : html`<p>Your account's address: <strong>${invite.email ?? ""}</strong></p>
<input type="hidden" name="username" value="${invite.email ?? ""}" autocomplete="username">`
}
<label for="full_name">Full name</label>
<input type="text" id="full_name" name="full_name" value="${values.full_name}" required maxlength="100" autocomplete="name" autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password">
<label for="password_confirm">Password again</label>
<input type="password" id="password_confirm" name="password_confirm" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password">
<p class="muted">At least ${PASSWORD_MIN_LENGTH} characters; not a common password or a simple pattern.</p>
<button type="submit">Create account</button>
</form>`,
  };
}

function sendDeadLink(res: Response, state: Exclude<InviteKeyState, { status: "valid" }>): void {
  const error = inviteKeyError(state);
  const why: Record<typeof state.status, string> = {
    unknown: "Check that you copied the whole link from the email.",
    expired: "Ask the person who invited you for a new invitation.",
    used: "This invitation has already made an account: log in with it.",
    revoked: "Ask the person who invited you for a new invitation.",
  };
  sendPage(res, error.status, {
    title: error.message,
    body: html`<p>${why[state.status]}</p><p><a href="/login">Go to the login page</a>.</p>`,
  });
}

/** The browser's form token, or a new one set as its cookie (as the login page does). */
function formCsrfToken(req: Request, res: Response): string {
  const current = requestCookies(req).get(CSRF_COOKIE);
  if (current !== undefined && FORM_TOKEN.test(current)) return current;
  const token = newFormCsrfToken();
  res.append("Set-Cookie", formCsrfCookie(req, token));
  return token;
}

/** The JSON endpoints, under /api/v1 before credentials are required. */
export function inviteRegistrationRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, ctx } = services;
  const E = inviteRegistrationEndpoints;
  const before = [limitByIp(services.rateLimits), requireRealm({ prisma, externalHost: ctx.externalHost })];

  serve(
    router,
    E.check,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const state = await checkInviteKey(prisma, realm, String(req.params.key));
      if (state.status !== "valid") throw inviteKeyError(state);
      const { invite, referrer } = state;
      success(res, {
        realm_name: realm.name,
        realm_url: realmUri(realm.string_id, ctx.externalHost, requestProtocol(req)),
        email: invite.is_multiuse ? null : invite.email,
        is_multiuse: invite.is_multiuse,
        invited_as: invite.invited_as,
        invited_by: { user_id: referrer.id, full_name: referrer.full_name },
        expiry_date: invite.expires_at === null ? null : Math.floor(invite.expires_at.getTime() / 1000),
      });
    }),
  );

  serve(
    router,
    E.accept,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const key = String(req.params.key);
      const p = parseParams(req, E.accept.params);
      // A dead link says so before the password is judged.
      const state = await checkInviteKey(prisma, realm, key);
      if (state.status !== "valid") throw inviteKeyError(state);
      const user = await createAccount(services, req, realm, key, p);
      success(res, { api_key: user.api_key, email: user.delivery_email, user_id: user.id });
    }),
  );
  return router;
}

/** The pages at `/join/<key>/`, outside /api/v1. */
export function invitePageRoutes(services: ApiServices): Router {
  const router = Router();
  const { prisma, ctx } = services;
  const E = invitePageEndpoints;
  const before = [limitByIp(services.rateLimits), requireRealm({ prisma, externalHost: ctx.externalHost })];

  serve(
    router,
    E.form,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const state = await checkInviteKey(prisma, realm, String(req.params.key));
      if (state.status !== "valid") return sendDeadLink(res, state);
      sendPage(res, 200, formPage(realm, state, formCsrfToken(req, res), null, { full_name: "", email: "" }));
    }),
  );

  serve(
    router,
    E.submit,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const key = String(req.params.key);
      const p = parseParams(req, E.submit.params);
      const cookieToken = requestCookies(req).get(CSRF_COOKIE);
      const forbidden = (reason: string) =>
        sendPage(res, 403, { title: "The form has expired", body: html`<p>${reason}</p><p>Open the invitation's link again and try again.</p>` });
      if (!originMatchesHost(req)) return forbidden("This form was sent from another site.");
      if (!sameToken(p[CSRF_FIELD], cookieToken)) return forbidden("The form's security token is missing or does not match this browser's (are cookies turned on?).");
      const state = await checkInviteKey(prisma, realm, key);
      if (state.status !== "valid") return sendDeadLink(res, state);
      const again = (error: string) => sendPage(res, 400, formPage(realm, state, cookieToken!, error, { full_name: p.full_name, email: p.email }));
      if (p.password !== p.password_confirm) return again("The two passwords do not match.");
      let user;
      try {
        user = await createAccount(services, req, realm, key, p);
      } catch (error) {
        if (error instanceof JsonableError) {
          // Another submission of the link got there first, or it ended meanwhile.
          const now = await checkInviteKey(prisma, realm, key);
          if (now.status !== "valid") return sendDeadLink(res, now);
          return again(error.message);
        }
        throw error;
      }
      const header = req.headers["user-agent"];
      const { token } = await createBrowserSession(prisma, user, typeof header === "string" ? header : undefined);
      for (const value of sessionCookies(req, token, await csrfTokenFor(prisma, token))) res.append("Set-Cookie", value);
      res.status(302).set({ Location: "/", "Cache-Control": "no-store", "Content-Length": "0" }).end();
    }),
  );
  return router;
}
