// Password reset by email, as Zulip's web pages outside /api/v1: a form asks for an address
// (POST sends a link to it, or a note that it has no account, and answers the same either way),
// and the link's page sets a new password once. Pages for a browser (pages.ts), in the realm the
// Host names; limited per client address like every request without credentials, and the emails
// per address and per client (Zulip's password_reset_form_by_email and sends_email_by_ip).
import { Router, type Request, type Response } from "express";
import {
  checkPasswordResetToken,
  isValidEmail,
  hashNewPassword,
  JsonableError,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PASSWORD_RESET_VALID_HOURS,
  queueEmail,
  realmUri,
  requestPasswordReset,
  resetPasswordWithToken,
  type PasswordResetTokenState,
  type Realm,
} from "@chat/core";
import { clientIp, endpoint, limitByIp, originOf, params, parseParams, realmOf, requestProtocol, requireRealm, route, serve } from "@chat/http";
import { html, sendPage, type SafeHtml } from "../pages.ts";
import type { ApiServices } from "../services.ts";

const FORM_PATH = "/accounts/password/reset/";
const TOKEN = { token: { schema: { type: "string" }, description: "The link's token, as the email gives it." } };

export const passwordResetEndpoints = {
  requestForm: endpoint({
    method: "get",
    root: true,
    path: "/accounts/password/reset/",
    tag: "authentication",
    auth: "none",
    summary: "A page asking for the address to send a password reset link to",
    params: {},
    response: { html: "The form." },
  }),
  request: endpoint({
    method: "post",
    root: true,
    path: "/accounts/password/reset/",
    tag: "authentication",
    auth: "none",
    summary: "Send a password reset link to an account's address",
    description:
      "The answer is the same whether or not the address has an account in the organization (the email sent says which). At most 2 emails an hour and 5 a day to one address, and 5 a day asked from one client address (Zulip's limits): past them, 429.",
    params: { email: params.string().default("").maxLength(254, "Enter a valid email address.").describe("The account's email address.") },
    response: { html: "A page saying to check the mailbox." },
    htmlStatuses: [400, 429],
  }),
  resetForm: endpoint({
    method: "get",
    root: true,
    path: "/accounts/password/reset/{token}/",
    pathParams: TOKEN,
    tag: "authentication",
    auth: "none",
    summary: "A password reset link's page: a form for the new password",
    params: {},
    response: { html: "The form." },
    htmlStatuses: [400, 404],
  }),
  reset: endpoint({
    method: "post",
    root: true,
    path: "/accounts/password/reset/{token}/",
    pathParams: TOKEN,
    tag: "authentication",
    auth: "none",
    summary: "Set the new password a reset link was sent for",
    description: "Uses the link up, and every other of the account's. A link unknown here is 404; expired, used or of a deactivated account, 400; a password refused, 400 with the form again.",
    params: {
      new_password: params.string().default("").describe(`At least ${PASSWORD_MIN_LENGTH} and at most ${PASSWORD_MAX_LENGTH} characters, not a common password or a simple pattern.`),
      new_password_confirm: params.string().default("").describe("The same again."),
    },
    response: { html: "A page saying the password is set." },
    htmlStatuses: [400, 404],
  }),
};

function requestFormPage(realm: Realm, error: string | null, email = ""): { title: string; body: SafeHtml } {
  return {
    title: `Reset your password for ${realm.name}`,
    body: html`${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
<p>Enter your account's email address, and we will email you a link to choose a new password.</p>
<form method="post" action="">
<label for="email">Email address</label>
<input type="email" id="email" name="email" value="${email}" required maxlength="254" autocomplete="email" autofocus>
<button type="submit">Send me a link</button>
</form>`,
  };
}

function resetFormPage(realm: Realm, email: string, error: string | null): { title: string; body: SafeHtml } {
  return {
    title: `Choose a new password`,
    body: html`${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
<p>For <strong>${email}</strong> on ${realm.name}.</p>
<form method="post" action="">
<input type="hidden" name="username" value="${email}" autocomplete="username">
<label for="new_password">New password</label>
<input type="password" id="new_password" name="new_password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password" autofocus>
<label for="new_password_confirm">New password again</label>
<input type="password" id="new_password_confirm" name="new_password_confirm" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password">
<p class="muted">At least ${PASSWORD_MIN_LENGTH} characters; not a common password or a simple pattern.</p>
<button type="submit">Set password</button>
</form>`,
  };
}

/** The page for a link that opens nothing, and its status. */
function deadLinkPage(state: Exclude<PasswordResetTokenState, { status: "valid" }>): { status: number; title: string; body: SafeHtml } {
  const again = html`<p><a href="${FORM_PATH}">Ask for a new link</a>.</p>`;
  switch (state.status) {
    case "unknown":
      return { status: 404, title: "This link is not valid", body: html`<p>Check that you copied the whole link from the email.</p>${again}` };
    case "expired":
      return { status: 400, title: "This link has expired", body: html`<p>A password reset link works for ${PASSWORD_RESET_VALID_HOURS} hours.</p>${again}` };
    case "used":
      return { status: 400, title: "This link has been used", body: html`<p>A link works once, and setting the password ends every link sent before.</p>${again}` };
    case "deactivated":
      return { status: 400, title: "This account is deactivated", body: html`<p>An administrator of the organization can reactivate it.</p>` };
  }
}

function sendDeadLink(res: Response, state: Exclude<PasswordResetTokenState, { status: "valid" }>): void {
  const { status, ...page } = deadLinkPage(state);
  sendPage(res, status, page);
}

export function passwordResetRoutes(services: ApiServices): Router {
  const router = Router();
  const { ctx } = services;
  const E = passwordResetEndpoints;
  // Counted like every request without credentials, then the realm the Host names (a JSON 404 if none).
  const before = [limitByIp(services.rateLimits), requireRealm({ prisma: services.prisma, externalHost: ctx.externalHost })];
  const linkOptions = (req: Request) => ({ externalHost: ctx.externalHost, protocol: requestProtocol(req) });
  // Checked against the token pattern before any query, so any text (NUL included) is just unknown.
  const tokenOf = (req: Request) => String(req.params.token);

  serve(
    router,
    E.requestForm,
    ...before,
    route(async (_req, res) => {
      sendPage(res, 200, requestFormPage(realmOf(res), null));
    }),
  );

  serve(
    router,
    E.request,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const email = parseParams(req, E.request.params).email.trim();
      if (!isValidEmail(email)) {
        sendPage(res, 400, requestFormPage(realm, "Enter a valid email address.", email));
        return;
      }
      const wait = await services.rateLimits.countPasswordResetEmail(email, clientIp(req));
      if (wait !== null) {
        const minutes = Math.ceil(wait / 60);
        sendPage(
          res,
          429,
          { title: "Too many requests", body: html`<p>Too many password reset emails were asked for this address, or from your network. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.</p>` },
          { "Retry-After": String(Math.ceil(wait)) },
        );
        return;
      }
      const outgoing = await services.actions.run(originOf(req, { realm_id: realm.id }), (tx) => requestPasswordReset(tx, linkOptions(req), realm, email));
      if (outgoing) await queueEmail(services.jobs, outgoing);
      sendPage(res, 200, {
        title: "Check your email",
        body: html`<p>If <strong>${email}</strong> has an account on ${realm.name}, we have sent it a link to choose a new password. The link works for ${PASSWORD_RESET_VALID_HOURS} hours.</p>
<p class="muted">No email? Check the spam folder, and that the address is the one you log in with.</p>`,
      });
    }),
  );

  serve(
    router,
    E.resetForm,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const state = await checkPasswordResetToken(services.prisma, realm, tokenOf(req));
      if (state.status !== "valid") return sendDeadLink(res, state);
      sendPage(res, 200, resetFormPage(realm, state.user.delivery_email, null));
    }),
  );

  serve(
    router,
    E.reset,
    ...before,
    route(async (req, res) => {
      const realm = realmOf(res);
      const token = tokenOf(req);
      const { new_password, new_password_confirm } = parseParams(req, E.reset.params);
      const current = await checkPasswordResetToken(services.prisma, realm, token);
      if (current.status !== "valid") return sendDeadLink(res, current);
      if (new_password !== new_password_confirm) {
        sendPage(res, 400, resetFormPage(realm, current.user.delivery_email, "The two passwords do not match."));
        return;
      }
      let state: PasswordResetTokenState;
      try {
        const hashed = await hashNewPassword(new_password);
        state = await services.actions.run(originOf(req, { realm_id: realm.id }), (tx) => resetPasswordWithToken(tx, realm, token, hashed));
      } catch (error) {
        // A password refused (too short, too weak): the form again, the link still good.
        if (error instanceof JsonableError) {
          sendPage(res, 400, resetFormPage(realm, current.user.delivery_email, error.message));
          return;
        }
        throw error;
      }
      // Another submission of the link got there first.
      if (state.status !== "valid") return sendDeadLink(res, state);
      const login = realmUri(realm.string_id, ctx.externalHost, requestProtocol(req));
      sendPage(res, 200, {
        title: "Your password is set",
        body: html`<p>You can now log in to <a href="${login}">${realm.name}</a> as <strong>${state.user.delivery_email}</strong> with your new password.</p>`,
      });
    }),
  );
  return router;
}
