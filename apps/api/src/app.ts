import { Router } from "express";
import { limitByIp, requireUser, type Endpoint, type HotRoute } from "@chat/http";
import { authEndpoints, authRoutes } from "./routes/auth.ts";
import { messageFetchHotRoute, messageFetchEndpoints, messageFetchRoutes } from "./routes/message-fetch.ts";
import { messageEndpoints, messageRoutes, messageSendHotRoute } from "./routes/messages.ts";
import { renderEndpoints, renderRoutes } from "./routes/render.ts";
import { messageEditEndpoints, messageEditRoutes } from "./routes/message-edit.ts";
import { serverSettingsEndpoints, serverSettingsRoutes } from "./routes/server-settings.ts";
import { streamEndpoints, streamRoutes } from "./routes/streams.ts";
import { subscriptionEndpoints, subscriptionRoutes } from "./routes/subscriptions.ts";
import { userTopicEndpoints, userTopicRoutes } from "./routes/user-topics.ts";
import { userEndpoints, userRoutes } from "./routes/users.ts";
import { alertWordEndpoints, alertWordRoutes } from "./routes/alert-words.ts";
import { draftEndpoints, draftRoutes } from "./routes/drafts.ts";
import { savedSnippetEndpoints, savedSnippetRoutes } from "./routes/saved-snippets.ts";
import { messageReportEndpoints, messageReportRoutes } from "./routes/message-reports.ts";
import { scheduledMessageEndpoints, scheduledMessageRoutes } from "./routes/scheduled-messages.ts";
import { mutedUserEndpoints, mutedUserRoutes } from "./routes/muted-users.ts";
import { presenceEndpoints, presenceRoutes } from "./routes/presence.ts";
import { settingsEndpoints, settingsRoutes } from "./routes/settings.ts";
import { typingEndpoints, typingRoutes } from "./routes/typing.ts";
import { userStatusEndpoints, userStatusRoutes } from "./routes/user-status.ts";
import { userGroupEndpoints, userGroupRoutes } from "./routes/user-groups.ts";
import { linkifierEndpoints, linkifierRoutes } from "./routes/linkifiers.ts";
import { realmPlaygroundEndpoints, realmPlaygroundRoutes } from "./routes/realm-playgrounds.ts";
import { realmUserDefaultEndpoints, realmUserDefaultRoutes } from "./routes/realm-user-defaults.ts";
import { topicDeleteEndpoints, topicDeleteRoutes } from "./routes/topic-delete.ts";
import { realmEmojiEndpoints, realmEmojiRoutes } from "./routes/realm-emoji.ts";
import { realmExportEndpoints, realmExportFileEndpoints, realmExportFileRoutes, realmExportRoutes } from "./routes/realm-export.ts";
import { realmEndpoints, realmRoutes } from "./routes/realm.ts";
import { defaultStreamEndpoints, defaultStreamRoutes } from "./routes/default-streams.ts";
import { profileFieldEndpoints, profileFieldRoutes } from "./routes/profile-fields.ts";
import { messageFlagEndpoints, messageFlagRoutes } from "./routes/message-flags.ts";
import { reactionEndpoints, reactionRoutes } from "./routes/reactions.ts";
import { submessageEndpoints, submessageRoutes } from "./routes/submessages.ts";
import { messageDeleteEndpoints, messageDeleteRoutes } from "./routes/message-delete.ts";
import { botStorageEndpoints, botStorageRoutes } from "./routes/bot-storage.ts";
import { attachmentEndpoints, attachmentRoutes } from "./routes/attachments.ts";
import { avatarEndpoints, avatarRoutes } from "./routes/avatars.ts";
import { botEndpoints, botRoutes } from "./routes/bots.ts";
import { pushDeviceEndpoints, pushDeviceRoutes } from "./routes/push-devices.ts";
import { readReceiptEndpoints, readReceiptRoutes } from "./routes/read-receipts.ts";
import { publicFileEndpoints, publicFileRoutes } from "./routes/public-files.ts";
import { passwordResetEndpoints, passwordResetRoutes } from "./routes/password-reset.ts";
import { browserLoginEndpoints, browserLoginRoutes } from "./routes/browser-login.ts";
import { inviteEndpoints, inviteRoutes } from "./routes/invites.ts";
import { messageMatchEndpoints, messageMatchRoutes } from "./routes/message-matches.ts";
import { streamMemberEndpoints, streamMemberRoutes } from "./routes/stream-members.ts";
import { externalServiceEndpoints, externalServiceRoutes, jwtRoutes } from "./routes/external-services.ts";
import { realmDomainEndpoints, realmDomainRoutes } from "./routes/realm-domains.ts";
import { invitePageEndpoints, invitePageRoutes, inviteRegistrationEndpoints, inviteRegistrationRoutes } from "./routes/invite-registration.ts";
import { uploadEndpoints, uploadFileEndpoints, uploadFileRoutes, uploadRoutes } from "./routes/uploads.ts";
import type { ApiServices } from "./services.ts";
import { spectatorRoutes } from "./routes/spectators.ts";
import { webClientEndpoints, webClientRoutes } from "./web-client.ts";

/** The API tier: everything under /api/v1 but /register and /events. */
export function apiRouter(services: ApiServices): Router {
  const api = Router();
  // Endpoints that need no credentials come first; everything after requires HTTP Basic.
  // Counted per client address whether or not credentials came along, since nothing checks them.
  api.use(["/server_settings", "/fetch_api_key", "/dev_fetch_api_key", "/jwt/fetch_api_key"], limitByIp(services.rateLimits));
  api.use(serverSettingsRoutes(services));
  api.use(authRoutes(services));
  api.use(jwtRoutes(services));
  // Registering through an invitation: counted per client address, no credentials (invite-registration.ts).
  api.use(inviteRegistrationRoutes(services));
  // GET /messages authenticates itself, keeping the user for its hot route (apiHotRoutes).
  api.use(messageFetchRoutes(services));
  // What spectators (no credentials) may read besides; requests with credentials pass through.
  api.use(spectatorRoutes(services));
  api.use(requireUser({ prisma: services.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits }));
  // Before the routes of /messages/{message_id} and /streams/{stream_id}, whose ids these paths are not.
  api.use(messageMatchRoutes(services));
  api.use(streamMemberRoutes(services));
  api.use(externalServiceRoutes());
  api.use(realmDomainRoutes(services));
  api.use(userRoutes(services));
  api.use(renderRoutes(services));
  api.use(messageRoutes(services));
  api.use(messageEditRoutes(services));
  api.use(draftRoutes(services));
  api.use(savedSnippetRoutes(services));
  api.use(messageReportRoutes(services));
  api.use(scheduledMessageRoutes(services));
  api.use(subscriptionRoutes(services));
  api.use(userTopicRoutes(services));
  api.use(streamRoutes(services));
  api.use(settingsRoutes(services));
  api.use(typingRoutes(services));
  api.use(userStatusRoutes(services));
  api.use(alertWordRoutes(services));
  api.use(mutedUserRoutes(services));
  api.use(presenceRoutes(services));
  api.use(userGroupRoutes(services));
  api.use(linkifierRoutes(services));
  api.use(realmPlaygroundRoutes(services));
  api.use(realmUserDefaultRoutes(services));
  api.use(topicDeleteRoutes(services));
  api.use(realmEmojiRoutes(services));
  api.use(realmExportRoutes(services));
  api.use(realmRoutes(services));
  api.use(defaultStreamRoutes(services));
  api.use(profileFieldRoutes(services));
  api.use(messageFlagRoutes(services));
  api.use(reactionRoutes(services));
  api.use(submessageRoutes(services));
  api.use(messageDeleteRoutes(services));
  api.use(botStorageRoutes(services));
  api.use(uploadRoutes(services));
  api.use(attachmentRoutes(services));
  api.use(avatarRoutes(services));
  api.use(botRoutes(services));
  api.use(pushDeviceRoutes());
  api.use(readReceiptRoutes(services));
  api.use(inviteRoutes(services));
  return api;
}

/**
 * What is served outside /api/v1, at Zulip's paths: files (uploads, authenticated; avatars, emoji
 * and the icon), the password reset pages, and the web client (web-client.ts: `/` and /static/web/).
 */
export function fileRoutes(services: ApiServices): Router {
  return Router().use(uploadFileRoutes(services)).use(publicFileRoutes(services)).use(passwordResetRoutes(services)).use(browserLoginRoutes(services)).use(invitePageRoutes(services)).use(realmExportFileRoutes(services)).use(webClientRoutes(services));
}

/** The API's hot routes, answered before Express where they can be (hot-routes.ts). */
export function apiHotRoutes(services: ApiServices): HotRoute[] {
  return [messageFetchHotRoute(services), messageSendHotRoute(services)];
}

/** The contracts of the API tier's endpoints under /api/v1 (openapi.ts), in the document's order. */
export const apiEndpoints: Endpoint[] = [
  serverSettingsEndpoints,
  authEndpoints,
  inviteRegistrationEndpoints,
  messageFetchEndpoints,
  messageMatchEndpoints,
  messageEndpoints,
  renderEndpoints,
  messageEditEndpoints,
  scheduledMessageEndpoints,
  draftEndpoints,
  savedSnippetEndpoints,
  messageReportEndpoints,
  messageDeleteEndpoints,
  readReceiptEndpoints,
  messageFlagEndpoints,
  reactionEndpoints,
  submessageEndpoints,
  uploadEndpoints,
  attachmentEndpoints,
  streamEndpoints,
  streamMemberEndpoints,
  subscriptionEndpoints,
  userTopicEndpoints,
  defaultStreamEndpoints,
  userEndpoints,
  avatarEndpoints,
  alertWordEndpoints,
  mutedUserEndpoints,
  presenceEndpoints,
  settingsEndpoints,
  typingEndpoints,
  userStatusEndpoints,
  userGroupEndpoints,
  botEndpoints,
  botStorageEndpoints,
  pushDeviceEndpoints,
  realmEndpoints,
  linkifierEndpoints,
  realmPlaygroundEndpoints,
  realmUserDefaultEndpoints,
  topicDeleteEndpoints,
  realmEmojiEndpoints,
  realmExportEndpoints,
  profileFieldEndpoints,
  inviteEndpoints,
  externalServiceEndpoints,
  realmDomainEndpoints,
].flatMap((group) => Object.values(group) as Endpoint[]);

/** The contracts of what is served outside /api/v1: files, the password reset pages and the web client. */
export const fileEndpoints: Endpoint[] = [uploadFileEndpoints, publicFileEndpoints, passwordResetEndpoints, browserLoginEndpoints, invitePageEndpoints, realmExportFileEndpoints, webClientEndpoints].flatMap((group) => Object.values(group) as Endpoint[]);
