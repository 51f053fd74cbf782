import { Router, type Request } from "express";
import { AuthenticationFailedError, authenticatePassword, getActiveUserByEmail, JsonableError, RateLimitedError, type Actor, type Realm } from "@chat/core";
import { clientIp, loginAccountKey, params, parseParams, realmOf, requireRealm, route, success, type RateLimits } from "@chat/http";
import type { ApiServices } from "../services.ts";

/**
 * A login throttled as Zulip's authenticate_by_username: an account or address past its failed
 * logins waits, even with the right password, until the window passes; only failures count.
 */
async function throttledLogin(limits: RateLimits, req: Request, realm: Realm, username: string, login: () => Promise<Actor>): Promise<Actor> {
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

export function authRoutes(services: ApiServices): Router {
  const router = Router();
  const realm = requireRealm({ prisma: services.prisma, externalHost: services.ctx.externalHost });

  router.post(
    "/fetch_api_key",
    realm,
    route(async (req, res) => {
      const { username, password } = parseParams(req, { username: params.string(), password: params.string() });
      const user = await throttledLogin(services.rateLimits, req, realmOf(res), username, () => authenticatePassword(services.prisma, realmOf(res), username, password));
      success(res, { api_key: user.api_key, email: user.email, user_id: user.id });
    }),
  );

  router.post(
    "/dev_fetch_api_key",
    realm,
    route(async (req, res) => {
      if (!services.ctx.devMode) throw new JsonableError("DevAuthBackend not enabled.", { code: "BAD_REQUEST", status: 400 });
      const { username } = parseParams(req, { username: params.string() });
      const user = await throttledLogin(services.rateLimits, req, realmOf(res), username, () => getActiveUserByEmail(services.prisma, realmOf(res), username));
      success(res, { api_key: user.api_key, email: user.email, user_id: user.id });
    }),
  );
  return router;
}
