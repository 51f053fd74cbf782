import { Router } from "express";
import { limitByIp, requireUser, type HotRoute } from "@chat/http";
import { authRoutes } from "./routes/auth.ts";
import { messageFetchHotRoute, messageFetchRoutes } from "./routes/message-fetch.ts";
import { messageRoutes, messageSendHotRoute } from "./routes/messages.ts";
import { renderRoutes } from "./routes/render.ts";
import { messageEditRoutes } from "./routes/message-edit.ts";
import { serverSettingsRoutes } from "./routes/server-settings.ts";
import { streamRoutes } from "./routes/streams.ts";
import { subscriptionRoutes } from "./routes/subscriptions.ts";
import { userRoutes } from "./routes/users.ts";
import { alertWordRoutes } from "./routes/alert-words.ts";
import { presenceRoutes } from "./routes/presence.ts";
import { settingsRoutes } from "./routes/settings.ts";
import { typingRoutes } from "./routes/typing.ts";
import { userStatusRoutes } from "./routes/user-status.ts";
import { userGroupRoutes } from "./routes/user-groups.ts";
import { linkifierRoutes } from "./routes/linkifiers.ts";
import { realmEmojiRoutes } from "./routes/realm-emoji.ts";
import { realmRoutes } from "./routes/realm.ts";
import { defaultStreamRoutes } from "./routes/default-streams.ts";
import { profileFieldRoutes } from "./routes/profile-fields.ts";
import { messageFlagRoutes } from "./routes/message-flags.ts";
import { reactionRoutes } from "./routes/reactions.ts";
import { messageDeleteRoutes } from "./routes/message-delete.ts";
import { botStorageRoutes } from "./routes/bot-storage.ts";
import { attachmentRoutes } from "./routes/attachments.ts";
import { avatarRoutes } from "./routes/avatars.ts";
import { botRoutes } from "./routes/bots.ts";
import { publicFileRoutes } from "./routes/public-files.ts";
import { uploadFileRoutes, uploadRoutes } from "./routes/uploads.ts";
import type { ApiServices } from "./services.ts";

/** The API tier: everything under /api/v1 but /register and /events. */
export function apiRouter(services: ApiServices): Router {
  const api = Router();
  // Endpoints that need no credentials come first; everything after requires HTTP Basic.
  // Counted per client address whether or not credentials came along, since nothing checks them.
  api.use(["/server_settings", "/fetch_api_key", "/dev_fetch_api_key"], limitByIp(services.rateLimits));
  api.use(serverSettingsRoutes(services));
  api.use(authRoutes(services));
  // GET /messages authenticates itself, keeping the user for its hot route (apiHotRoutes).
  api.use(messageFetchRoutes(services));
  api.use(requireUser({ prisma: services.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits }));
  api.use(userRoutes(services));
  api.use(renderRoutes(services));
  api.use(messageRoutes(services));
  api.use(messageEditRoutes(services));
  api.use(subscriptionRoutes(services));
  api.use(streamRoutes(services));
  api.use(settingsRoutes(services));
  api.use(typingRoutes(services));
  api.use(userStatusRoutes(services));
  api.use(alertWordRoutes(services));
  api.use(presenceRoutes(services));
  api.use(userGroupRoutes(services));
  api.use(linkifierRoutes(services));
  api.use(realmEmojiRoutes(services));
  api.use(realmRoutes(services));
  api.use(defaultStreamRoutes(services));
  api.use(profileFieldRoutes(services));
  api.use(messageFlagRoutes(services));
  api.use(reactionRoutes(services));
  api.use(messageDeleteRoutes(services));
  api.use(botStorageRoutes(services));
  api.use(uploadRoutes(services));
  api.use(attachmentRoutes(services));
  api.use(avatarRoutes(services));
  api.use(botRoutes(services));
  return api;
}

/** Files at Zulip's paths outside /api/v1: uploads (authenticated), avatars, emoji and the icon. */
export function fileRoutes(services: ApiServices): Router {
  return Router().use(uploadFileRoutes(services)).use(publicFileRoutes(services));
}

/** The API's hot routes, answered before Express where they can be (hot-routes.ts). */
export function apiHotRoutes(services: ApiServices): HotRoute[] {
  return [messageFetchHotRoute(services), messageSendHotRoute(services)];
}
