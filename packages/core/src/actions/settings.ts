// A user's own notification and display settings (Zulip's json_change_notify_settings and
// update_display_settings_backend): each setting that differs from the stored value is written,
// reported back, and announced to the user's clients with one event per setting.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { JsonableError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";
import { isLanguageCode, languageName } from "../lib/languages.ts";
import { isValidTimezone } from "../lib/timezones.ts";
import { activeUserIds } from "../queries/users.ts";

export type SettingValue = boolean | number | string;

export const NOTIFICATION_SETTINGS = [
  "enable_stream_desktop_notifications",
  "enable_stream_email_notifications",
  "enable_stream_push_notifications",
  "enable_stream_audible_notifications",
  "wildcard_mentions_notify",
  "notification_sound",
  "enable_desktop_notifications",
  "enable_sounds",
  "enable_offline_email_notifications",
  "enable_offline_push_notifications",
  "enable_online_push_notifications",
  "enable_digest_emails",
  "enable_login_emails",
  "message_content_in_email_notifications",
  "pm_content_in_desktop_notifications",
  "desktop_icon_count_display",
  "realm_name_in_notifications",
  "presence_enabled",
] as const;

export const DISPLAY_SETTINGS = [
  "twenty_four_hour_time",
  "dense_mode",
  "starred_message_counts",
  "fluid_layout_width",
  "high_contrast_mode",
  "color_scheme",
  "translate_emoticons",
  "default_language",
  "default_view",
  "left_side_userlist",
  "emojiset",
  "demote_inactive_streams",
  "timezone",
] as const;

export type NotificationSetting = (typeof NOTIFICATION_SETTINGS)[number];
export type DisplaySetting = (typeof DISPLAY_SETTINGS)[number];

/** Zulip's notification sounds (static/audio/notification_sounds), plus "none". */
export const NOTIFICATION_SOUNDS = [
  "ascend", "beep_boop", "bink", "bright", "brlip", "chime", "deep tom", "ding", "double tap", "down", "dry bongos",
  "dutdut", "fast ascend", "flute", "friendly", "kick roll", "loud tintong", "metallic snare", "none", "pan",
  "practicechat", "shaker", "simple", "stairs", "subtle", "swish", "tintong", "up", "wood block", "zaping", "zing", "zulip",
] as const;

export const EMOJISETS = ["google", "google-blob", "twitter", "text"] as const;
export const DEFAULT_VIEWS = ["recent_topics", "all_messages"] as const;
const ONE_TO_THREE = [1, 2, 3];

function checkIn<T>(name: string, value: T, allowed: readonly T[]): void {
  if (!allowed.includes(value)) throw new JsonableError(`Invalid ${name}`, { extra: { var_name: name } });
}

function checkNotificationValue(name: NotificationSetting, value: SettingValue): void {
  if (name === "notification_sound" && !(NOTIFICATION_SOUNDS as readonly string[]).includes(value as string)) {
    throw new JsonableError(`Invalid notification sound '${value}'`);
  }
  if (name === "desktop_icon_count_display") checkIn(name, value, ONE_TO_THREE);
}

function checkDisplayValue(name: DisplaySetting, value: SettingValue): void {
  switch (name) {
    case "color_scheme":
    case "demote_inactive_streams":
      return checkIn(name, value, ONE_TO_THREE);
    case "emojiset":
      return checkIn(name, value, EMOJISETS as readonly SettingValue[]);
    case "default_view":
      return checkIn(name, value, DEFAULT_VIEWS as readonly SettingValue[]);
    case "default_language":
      if (!isLanguageCode(value as string)) throw new JsonableError("Invalid default_language", { extra: { var_name: name } });
      return;
    case "timezone":
      if (!isValidTimezone(value as string)) throw new JsonableError("Invalid timezone", { extra: { var_name: name } });
      return;
    default:
      return;
  }
}

/** The user's row, locked, so concurrent changes of the same setting are compared in turn. */
async function lockedUser(tx: Tx, userId: number): Promise<UserProfile> {
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${userId} FOR UPDATE`;
  return tx.userProfile.findUniqueOrThrow({ where: { id: userId } });
}

/** Every requested value is checked before anything is written; returns the ones that changed. */
async function changedSettings<K extends string>(
  tx: Tx,
  actor: Actor,
  names: readonly K[],
  requested: Partial<Record<K, SettingValue>>,
  check: (name: K, value: SettingValue) => void,
): Promise<{ user: UserProfile; changed: Partial<Record<K, SettingValue>> }> {
  checkHumanUser(actor);
  for (const name of names) {
    const value = requested[name];
    if (value !== undefined) check(name, value);
  }
  const user = await lockedUser(tx, actor.id);
  const changed: Partial<Record<K, SettingValue>> = {};
  for (const name of names) {
    const value = requested[name];
    if (value !== undefined && (user as unknown as Record<string, unknown>)[name] !== value) changed[name] = value;
  }
  if (Object.keys(changed).length > 0) await tx.userProfile.update({ where: { id: user.id }, data: changed });
  return { user, changed };
}

/** PATCH /settings/notifications. */
export async function updateNotificationSettings(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  requested: Partial<Record<NotificationSetting, SettingValue>>,
): Promise<Partial<Record<NotificationSetting, SettingValue>>> {
  const { user, changed } = await changedSettings(tx, actor, NOTIFICATION_SETTINGS, requested, checkNotificationValue);
  for (const [name, setting] of Object.entries(changed)) {
    events.send({ type: "update_global_notifications", user: user.email, notification_name: name, setting }, [user.id]);
  }
  return changed;
}

/** PATCH /settings/display; a new timezone is also announced to the organization. */
export async function updateDisplaySettings(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  requested: Partial<Record<DisplaySetting, SettingValue>>,
): Promise<Partial<Record<DisplaySetting, SettingValue>>> {
  const { user, changed } = await changedSettings(tx, actor, DISPLAY_SETTINGS, requested, checkDisplayValue);
  for (const [name, setting] of Object.entries(changed)) {
    const event: { type: string } & Record<string, unknown> = { type: "update_display_settings", user: user.email, setting_name: name, setting };
    if (name === "default_language") event.language_name = languageName(setting as string);
    events.send(event, [user.id]);
    if (name === "timezone") {
      const person = { email: user.email, user_id: user.id, timezone: setting };
      events.send({ type: "realm_user", op: "update", person }, await activeUserIds(tx, user.realm_id));
    }
  }
  return changed;
}

/**
 * Whether Enter sends in the compose box (POST /users/me/enter-sends; human users only, as
 * Zulip's change_enter_sends). Zulip 3.x sends no event for it: clients read it once, from /register.
 */
export async function setEnterSends(tx: Tx, actor: Actor, enterSends: boolean): Promise<void> {
  checkHumanUser(actor);
  await tx.userProfile.update({ where: { id: actor.id }, data: { enter_sends: enterSends } });
}
