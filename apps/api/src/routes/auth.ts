import { Router, type Request } from "express";
import { AuthenticationFailedError, authenticatePassword, getActiveUserByEmail, JsonableError, RateLimitedError, type Actor, type Realm } from "@chat/core";
import { clientIp, endpoint, loginAccountKey, params, parseParams, realmOf, requireRealm, route, schema, serve, success, successBody, type RateLimits } from "@chat/http";
import type { ApiServices } from "../services.ts";

/**
 * A login throttled as Zulip's authenticate_by_username: an account or address past its failed
 * logins waits, even with the right password, until the window passes; only failures count.
 */
export async function throttledLogin(limits: RateLimits, req: Request, realm: Realm, username: string, login: () => Promise<Actor>): Promise<Actor> {
  const account = loginAccountKey(realm.string_id, username);
  const ip = clientIp(req);
  const wait = await limits.loginThrottled(account, ip);
  if (wait !== null) throw new RateLimitedError(wait);
  try {
    return await login();
  } catch (error) {
    if (error instanceof AuthenticationFailedError) await limits.countLoginFailure(account, ip);
    throw error;
  }
}

const API_KEY_BODY = successBody({ api_key: schema.string(), email: schema.string(), user_id: schema.integer() });

export const authEndpoints = {
  fetchApiKey: endpoint({
    method: "post",
    path: "/fetch_api_key",
    tag: "authentication",
    auth: "none",
    summary: "An API key for an email address (or username) and password",
    params: { username: params.string(), password: params.string() },
    response: API_KEY_BODY,
  }),
  devFetchApiKey: endpoint({
    method: "post",
    path: "/dev_fetch_api_key",
    tag: "authentication",
    auth: "none",
    summary: "An API key for any user, without a password (development servers only)",
    params: { username: params.string() },
    response: API_KEY_BODY,
  }),
};

export function authRoutes(services: ApiServices): Router {
  const router = Router();
  const realm = requireRealm({ prisma: services.prisma, externalHost: services.ctx.externalHost });
  const E = authEndpoints;

  serve(
    router,
    E.fetchApiKey,
    realm,
    route(async (req, res) => {
      const { username, password } = parseParams(req, E.fetchApiKey.params);
      const user = await throttledLogin(services.rateLimits, req, realmOf(res), username, () => authenticatePassword(services.prisma, realmOf(res), username, password));
      // The address the user logs in with, which HTTP Basic takes (Zulip's delivery_email), not
      // the one others are shown while addresses are hidden.
      success(res, { api_key: user.api_key, email: user.delivery_email, user_id: user.id });
    }),
  );

  serve(
    router,
    E.devFetchApiKey,
    realm,
    route(async (req, res) => {
      if (!services.ctx.devMode) throw new JsonableError("DevAuthBackend not enabled.", { code: "BAD_REQUEST", status: 400 });
      const { username } = parseParams(req, E.devFetchApiKey.params);
      const user = await throttledLogin(services.rateLimits, req, realmOf(res), username, () => getActiveUserByEmail(services.prisma, realmOf(res), username));
      success(res, { api_key: user.api_key, email: user.delivery_email, user_id: user.id });
    }),
  );
  return router;
}
