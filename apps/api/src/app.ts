import { Router, type Express } from "express";
import { createHttpApp, requireUser } from "@chat/http";
import { authRoutes } from "./routes/auth.ts";
import { messageRoutes } from "./routes/messages.ts";
import { serverSettingsRoutes } from "./routes/server-settings.ts";
import { userRoutes } from "./routes/users.ts";
import type { ApiServices } from "./services.ts";

/** The API tier: everything under /api/v1 but /register and /events. */
export function apiRouter(services: ApiServices): Router {
  const api = Router();
  // Endpoints that need no credentials come first; everything after requires HTTP Basic.
  api.use(serverSettingsRoutes(services));
  api.use(authRoutes(services));
  api.use(requireUser({ prisma: services.prisma, externalHost: services.ctx.externalHost }));
  api.use(userRoutes(services));
  api.use(messageRoutes(services));
  return api;
}

export function createApiApp(services: ApiServices): Express {
  return createHttpApp({ api: apiRouter(services) });
}
