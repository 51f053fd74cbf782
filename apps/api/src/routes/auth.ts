import { Router } from "express";
import { authenticatePassword, getActiveUserByEmail, JsonableError } from "@chat/core";
import { params, parseParams, realmOf, requireRealm, route, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

export function authRoutes(services: ApiServices): Router {
  const router = Router();
  const realm = requireRealm({ prisma: services.prisma, externalHost: services.ctx.externalHost });

  router.post(
    "/fetch_api_key",
    realm,
    route(async (req, res) => {
      const { username, password } = parseParams(req, { username: params.string(), password: params.string() });
      const user = await authenticatePassword(services.prisma, realmOf(res), username, password);
      success(res, { api_key: user.api_key, email: user.email, user_id: user.id });
    }),
  );

  router.post(
    "/dev_fetch_api_key",
    realm,
    route(async (req, res) => {
      if (!services.ctx.devMode) throw new JsonableError("DevAuthBackend not enabled.", { code: "BAD_REQUEST", status: 400 });
      const { username } = parseParams(req, { username: params.string() });
      const user = await getActiveUserByEmail(services.prisma, realmOf(res), username);
      success(res, { api_key: user.api_key, email: user.email, user_id: user.id });
    }),
  );
  return router;
}
