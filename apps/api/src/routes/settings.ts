import { Router } from "express";
import { setEnterSends, updateDisplaySettings, updateNotificationSettings } from "@chat/core";
import { actorOf, changedSettingsBody, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

const bool = () => params.bool().optional();
const int = () => params.int().optional();
// Zulip 3.x read these strings JSON-encoded; clients of the era send them so.
const string = () => params.jsonOrPlainString().optional();

const NOTIFICATION_PARAMS = {
  enable_stream_desktop_notifications: bool(),
  enable_stream_email_notifications: bool(),
  enable_stream_push_notifications: bool(),
  enable_stream_audible_notifications: bool(),
  wildcard_mentions_notify: bool(),
  notification_sound: string(),
  enable_desktop_notifications: bool(),
  enable_sounds: bool(),
  enable_offline_email_notifications: bool(),
  enable_offline_push_notifications: bool(),
  enable_online_push_notifications: bool(),
  enable_digest_emails: bool(),
  enable_login_emails: bool(),
  message_content_in_email_notifications: bool(),
  pm_content_in_desktop_notifications: bool(),
  desktop_icon_count_display: int(),
  realm_name_in_notifications: bool(),
  presence_enabled: bool(),
};

const DISPLAY_PARAMS = {
  twenty_four_hour_time: bool(),
  dense_mode: bool(),
  starred_message_counts: bool(),
  fluid_layout_width: bool(),
  high_contrast_mode: bool(),
  color_scheme: int(),
  translate_emoticons: bool(),
  default_language: string(),
  default_view: string(),
  left_side_userlist: bool(),
  emojiset: string(),
  demote_inactive_streams: int(),
  timezone: string(),
};

export const settingsEndpoints = {
  notifications: endpoint({
    method: "patch",
    path: "/settings/notifications",
    tag: "users",
    auth: "basic",
    summary: "Change the user's notification settings",
    params: NOTIFICATION_PARAMS,
    response: changedSettingsBody(NOTIFICATION_PARAMS),
  }),
  display: endpoint({
    method: "patch",
    path: "/settings/display",
    tag: "users",
    auth: "basic",
    summary: "Change the user's display settings",
    params: DISPLAY_PARAMS,
    response: changedSettingsBody(DISPLAY_PARAMS),
  }),
  enterSends: endpoint({
    method: "post",
    path: "/users/me/enter-sends",
    tag: "users",
    auth: "basic",
    summary: "Whether Enter sends a message in the web app",
    params: { enter_sends: params.bool() },
    response: EMPTY_SUCCESS,
  }),
};

export function settingsRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = settingsEndpoints;

  serve(
    router,
    E.notifications,
    route(async (req, res) => {
      const actor = actorOf(res);
      const requested = parseParams(req, E.notifications.params);
      const changed = await actions.run(originOf(req, actor), (tx, events) => updateNotificationSettings(tx, events, actor, requested));
      success(res, changed);
    }),
  );

  serve(
    router,
    E.display,
    route(async (req, res) => {
      const actor = actorOf(res);
      const requested = parseParams(req, E.display.params);
      const changed = await actions.run(originOf(req, actor), (tx, events) => updateDisplaySettings(tx, events, actor, requested));
      success(res, changed);
    }),
  );

  serve(
    router,
    E.enterSends,
    route(async (req, res) => {
      const actor = actorOf(res);
      const { enter_sends } = parseParams(req, E.enterSends.params);
      await actions.run(originOf(req, actor), (tx) => setEnterSends(tx, actor, enter_sends));
      success(res);
    }),
  );
  return router;
}
