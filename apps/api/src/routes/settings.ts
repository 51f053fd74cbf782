import { Router } from "express";
import {
  checkHumanUser,
  checkPersonalSettings,
  JsonableError,
  PASSWORD_MAX_LENGTH,
  PERSONAL_SETTINGS,
  prepareOwnPasswordChange,
  setEnterSends,
  updateAccountSettings,
  updateDisplaySettings,
  updateNotificationSettings,
  updatePersonalSettings,
  WrongPasswordError,
  type PersonalSetting,
  type SettingsRequest,
} from "@chat/core";
import {
  actorOf,
  changedSettingsBody,
  clientIp,
  EMPTY_SUCCESS,
  endpoint,
  loginAccountKey,
  originOf,
  params,
  parseParams,
  route,
  schema,
  serve,
  success,
  successBody,
} from "@chat/http";
import type { ApiServices } from "../services.ts";

const bool = () => params.bool().optional();
const int = () => params.int().optional();
// Zulip 3.x read these strings JSON-encoded; clients of the era send them so.
const string = () => params.jsonOrPlainString().optional();

function settingParam(setting: PersonalSetting) {
  if (setting.type === "boolean") return bool();
  return setting.type === "integer" ? int() : string();
}

const paramsOf = (settings: readonly PersonalSetting[]) => Object.fromEntries(settings.map((setting) => [setting.name, settingParam(setting)]));

/** Zulip 9.0's personal settings by its names (lib/personal-settings.ts), for PATCH /settings. */
const PERSONAL_PARAMS = {
  ...paramsOf(PERSONAL_SETTINGS),
  email_address_visibility: int().describe("Who may see the user's real email address (feature level 163): 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators."),
};

/** The 3.x endpoints take the settings newer than 3.x too, by 9.0's names (as Zulip 9.0's aliases of PATCH /settings). */
const NEWER_PARAMS = paramsOf(PERSONAL_SETTINGS.filter((setting) => setting.legacy === undefined));

// Zulip 3.x's names and values (desktop_icon_count_display 1 to 3, default_view, realm_name_in_notifications).
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
  ...NEWER_PARAMS,
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
  ...NEWER_PARAMS,
};

// Zulip 3.x's json_change_settings: each is "" unless sent, and "" changes nothing. Zulip 9.0's
// personal settings come with them.
const ACCOUNT_PARAMS = {
  full_name: params.string().default("").describe("A new full name; ignored for non-administrators when the organization disables name changes."),
  email: params.string().default("").describe("A new email address: refused (this server has no email change flow yet) unless it is the current one."),
  old_password: params.string().default("").describe("The current password, required with new_password."),
  new_password: params.string().default("").maxLength(PASSWORD_MAX_LENGTH).describe("A new password: at least 6 characters, not a common password or a simple pattern."),
  ...PERSONAL_PARAMS,
};

export const settingsEndpoints = {
  account: endpoint({
    method: "patch",
    path: "/settings",
    tag: "users",
    auth: "basic",
    summary: "Change the user's password, full name or personal settings",
    description:
      "Zulip 3.x's `json_change_settings` with Zulip 9.0's personal settings (each change is a `user_settings` event; the answer names none of them). With none of `full_name`, `email`, `new_password` and the settings: `Please fill out all fields.`. A wrong `old_password` is `Wrong password!` and counts as a failed login; past the account's or address's failed logins the answer is `You're making too many attempts! Try again in N seconds.` (400, as Zulip) even with the right password. Bots are refused.",
    params: ACCOUNT_PARAMS,
    response: successBody({}, { full_name: schema.string() }),
  }),
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
    E.account,
    route(async (req, res) => {
      const actor = actorOf(res);
      // Zulip's @human_users_only comes before anything is read.
      checkHumanUser(actor);
      const { full_name, email, old_password, new_password, ...settings } = parseParams(req, E.account.params);
      const p = { full_name, email, old_password, new_password };
      const request = settings as SettingsRequest;
      const asksSettings = Object.values(request).some((value) => value !== undefined);
      const asksAccount = full_name !== "" || email !== "" || new_password !== "";
      // Zulip checks the settings' values before the password.
      if (asksSettings) checkPersonalSettings(actor, request);
      // The old password is a login: throttled and counted as POST /fetch_api_key's (Zulip's authenticate).
      const account = loginAccountKey(actor.realm.string_id, actor.delivery_email);
      const ip = clientIp(req);
      if (p.new_password !== "") {
        const wait = await services.rateLimits.loginThrottled(account, ip);
        if (wait !== null) throw new JsonableError(`You're making too many attempts! Try again in ${Math.ceil(wait)} seconds.`);
      }
      try {
        const passwordChange = p.new_password === "" ? null : await prepareOwnPasswordChange(services.prisma, actor.id, p.old_password, p.new_password);
        const changed = await actions.run(originOf(req, actor), async (tx, events) => {
          const result = asksAccount || !asksSettings ? await updateAccountSettings(tx, events, actor, { fullName: p.full_name, email: p.email, newPassword: p.new_password, passwordChange }) : {};
          if (asksSettings) await updatePersonalSettings(tx, events, actor, request, services.ctx);
          return result;
        });
        success(res, changed);
      } catch (error) {
        if (error instanceof WrongPasswordError) await services.rateLimits.countLoginFailure(account, ip);
        throw error;
      }
    }),
  );

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
