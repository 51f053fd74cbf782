// A user's personal settings as Zulip 9.0 has them (UserBaseSettings.property_types, feature level
// 277): each one's type, the values Zulip accepts, the column that stores it, and the Zulip 3.x
// setting it was, if any, whose name and values the legacy endpoints, /register keys and events keep.
import { JsonableError } from "../errors.ts";
import { isLanguageCode } from "./languages.ts";
import { isValidTimezone } from "./timezones.ts";

export type SettingValue = boolean | number | string;

/** Zulip's notification sounds (static/audio/notification_sounds), plus "none". */
export const NOTIFICATION_SOUNDS = [
  "ascend", "beep_boop", "bink", "bright", "brlip", "chime", "deep tom", "ding", "double tap", "down", "dry bongos",
  "dutdut", "fast ascend", "flute", "friendly", "kick roll", "loud tintong", "metallic snare", "none", "pan",
  "practicechat", "shaker", "simple", "stairs", "subtle", "swish", "tintong", "up", "wood block", "zaping", "zing", "zulip",
] as const;

export const EMOJISETS = ["google", "google-blob", "twitter", "text"] as const;

/** 3.x's default_view values; 9.0's web_home_view adds the inbox. */
export const DEFAULT_VIEWS = ["recent_topics", "all_messages"] as const;
const WEB_HOME_VIEWS = ["recent_topics", "inbox", "all_messages"];

/** The legacy sections (and event types) of Zulip 3.x that carried a setting. */
export type LegacySection = "display" | "notification";

export interface LegacySetting {
  section: LegacySection;
  /** Its 3.x name, where it differs. */
  name?: string;
  /** Values 3.x accepted, where they differ from 9.0's. */
  allowed?: readonly SettingValue[];
  /** 9.0's value as 3.x said it, and back, where they differ. */
  toLegacy?: (value: SettingValue) => SettingValue;
  fromLegacy?: (value: SettingValue) => SettingValue;
}

export interface PersonalSetting {
  /** Zulip 9.0's name: the user_settings key, the PATCH /settings parameter, the event's property. */
  name: string;
  type: "boolean" | "integer" | "string";
  /** The user_profile column that stores it (its own name unless it was renamed). */
  column: string;
  /** The values Zulip 9.0 accepts, where it lists them ("Invalid <name>" otherwise). */
  allowed?: readonly SettingValue[];
  /** A check of its own; throws a JsonableError in Zulip's words. */
  check?: (value: SettingValue) => void;
  /** The Zulip 3.x setting it is; legacy events and /register keys go to clients without user_settings_object. */
  legacy?: LegacySetting;
}

const ONE_TO_THREE = [1, 2, 3];
const ONE_TO_FOUR = [1, 2, 3, 4];
/** Zulip's PositiveSmallIntegerField columns hold 0 to 32767. */
const SMALL_INT_MAX = 32767;
/** Zulip refuses an email batching period over a week. */
const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

/** 9.0's desktop_icon_count_display (1 all, 2 DMs+mentions+followed topics, 3 DMs+mentions, 4 none) as 3.x's (1 all, 2 PMs+mentions, 3 none). */
const ICON_COUNT_TO_LEGACY: Record<number, number> = { 1: 1, 2: 2, 3: 2, 4: 3 };
const ICON_COUNT_FROM_LEGACY: Record<number, number> = { 1: 1, 2: 3, 3: 4 };
/** realm_name_in_email_notifications_policy: 1 automatic, 2 always, 3 never; 3.x's boolean was "always". */
const REALM_NAME_ALWAYS = 2;
const REALM_NAME_AUTOMATIC = 1;

function invalid(name: string): JsonableError {
  return new JsonableError(`Invalid ${name}`, { extra: { var_name: name } });
}

function smallPositive(name: string) {
  return (value: SettingValue) => {
    if ((value as number) < 0 || (value as number) > SMALL_INT_MAX) throw invalid(name);
  };
}

const bool = (name: string, legacy?: LegacySetting): PersonalSetting => ({ name, type: "boolean", column: name, legacy });
const choice = (name: string, allowed: readonly number[], legacy?: LegacySetting): PersonalSetting => ({ name, type: "integer", column: name, allowed, legacy });
const display: LegacySetting = { section: "display" };
const notification: LegacySetting = { section: "notification" };

/**
 * Every personal setting, in the order the legacy endpoints report and announce them (3.x's
 * notification settings, then its display settings), then those newer than 3.x.
 */
export const PERSONAL_SETTINGS: readonly PersonalSetting[] = [
  // Zulip 3.x's notification settings.
  bool("enable_stream_desktop_notifications", notification),
  bool("enable_stream_email_notifications", notification),
  bool("enable_stream_push_notifications", notification),
  bool("enable_stream_audible_notifications", notification),
  bool("wildcard_mentions_notify", notification),
  {
    name: "notification_sound",
    type: "string",
    column: "notification_sound",
    check: (value) => {
      if (!(NOTIFICATION_SOUNDS as readonly string[]).includes(value as string)) throw new JsonableError(`Invalid notification sound '${value}'`);
    },
    legacy: notification,
  },
  bool("enable_desktop_notifications", notification),
  bool("enable_sounds", notification),
  bool("enable_offline_email_notifications", notification),
  bool("enable_offline_push_notifications", notification),
  bool("enable_online_push_notifications", notification),
  bool("enable_digest_emails", notification),
  bool("enable_login_emails", notification),
  bool("message_content_in_email_notifications", notification),
  bool("pm_content_in_desktop_notifications", notification),
  choice("desktop_icon_count_display", ONE_TO_FOUR, {
    section: "notification",
    allowed: ONE_TO_THREE,
    toLegacy: (value) => ICON_COUNT_TO_LEGACY[value as number],
    fromLegacy: (value) => ICON_COUNT_FROM_LEGACY[value as number],
  }),
  choice("realm_name_in_email_notifications_policy", ONE_TO_THREE, {
    section: "notification",
    name: "realm_name_in_notifications",
    toLegacy: (value) => value === REALM_NAME_ALWAYS,
    fromLegacy: (value) => (value === true ? REALM_NAME_ALWAYS : REALM_NAME_AUTOMATIC),
  }),
  bool("presence_enabled", notification),
  // Zulip 3.x's display settings.
  bool("twenty_four_hour_time", display),
  bool("dense_mode", display),
  bool("starred_message_counts", display),
  bool("fluid_layout_width", display),
  bool("high_contrast_mode", display),
  choice("color_scheme", ONE_TO_THREE, display),
  bool("translate_emoticons", display),
  {
    name: "default_language",
    type: "string",
    column: "default_language",
    check: (value) => {
      if (!isLanguageCode(value as string)) throw invalid("default_language");
    },
    legacy: display,
  },
  { name: "web_home_view", type: "string", column: "default_view", allowed: WEB_HOME_VIEWS, legacy: { section: "display", name: "default_view", allowed: DEFAULT_VIEWS } },
  bool("left_side_userlist", display),
  { name: "emojiset", type: "string", column: "emojiset", allowed: EMOJISETS, legacy: display },
  choice("demote_inactive_streams", ONE_TO_THREE, display),
  {
    name: "timezone",
    type: "string",
    column: "timezone",
    check: (value) => {
      if (!isValidTimezone(value as string)) throw invalid("timezone");
    },
    legacy: display,
  },
  // Newer than 3.x: only in user_settings and its events.
  bool("enter_sends"),
  bool("enable_drafts_synchronization"),
  bool("display_emoji_reaction_users"),
  bool("web_escape_navigates_to_home_view"),
  { name: "web_font_size_px", type: "integer", column: "web_font_size_px", check: smallPositive("web_font_size_px") },
  { name: "web_line_height_percent", type: "integer", column: "web_line_height_percent", check: smallPositive("web_line_height_percent") },
  { name: "web_animate_image_previews", type: "string", column: "web_animate_image_previews", allowed: ["always", "on_hover", "never"] },
  choice("web_mark_read_on_scroll_policy", ONE_TO_THREE),
  choice("web_channel_default_view", [1, 2]),
  choice("web_stream_unreads_count_display_policy", ONE_TO_THREE),
  bool("web_navigate_to_sent_message"),
  choice("user_list_style", ONE_TO_THREE),
  {
    name: "email_notifications_batching_period_seconds",
    type: "integer",
    column: "email_notifications_batching_period_seconds",
    check: (value) => {
      if ((value as number) <= 0 || (value as number) > MAX_BATCHING_PERIOD_SECONDS) throw new JsonableError(`Invalid email batching period: ${value} seconds`);
    },
  },
  bool("enable_marketing_emails"),
  bool("enable_followed_topic_desktop_notifications"),
  bool("enable_followed_topic_email_notifications"),
  bool("enable_followed_topic_push_notifications"),
  bool("enable_followed_topic_audible_notifications"),
  bool("enable_followed_topic_wildcard_mentions_notify"),
  choice("automatically_follow_topics_policy", ONE_TO_FOUR),
  choice("automatically_unmute_topics_in_muted_streams_policy", ONE_TO_FOUR),
  bool("automatically_follow_topics_where_mentioned"),
  bool("send_stream_typing_notifications"),
  bool("send_private_typing_notifications"),
  bool("send_read_receipts"),
  // Feature level 293: whether administrators may export the user's private data (a user setting, not an organization default).
  bool("allow_private_data_export"),
  bool("receives_typing_notifications"),
  // Zulip 10.0 (feature levels 329 and 350).
  bool("web_suggest_update_timezone"),
  bool("hide_ai_features"),
];

export const PERSONAL_SETTINGS_BY_NAME: ReadonlyMap<string, PersonalSetting> = new Map(PERSONAL_SETTINGS.map((setting) => [setting.name, setting]));

/** A setting's 3.x name (its own where it was not renamed). */
export function legacyName(setting: PersonalSetting): string {
  return setting.legacy?.name ?? setting.name;
}

/** The settings each 3.x section had, in order. */
export function legacySettings(section: LegacySection): PersonalSetting[] {
  return PERSONAL_SETTINGS.filter((setting) => setting.legacy?.section === section);
}

/** The value as 3.x said it. */
export function toLegacyValue(setting: PersonalSetting, value: SettingValue): SettingValue {
  return setting.legacy?.toLegacy ? setting.legacy.toLegacy(value) : value;
}

/** Refuses a value Zulip 9.0 refuses, in its words. */
export function checkSettingValue(setting: PersonalSetting, value: SettingValue): void {
  if (setting.allowed && !setting.allowed.includes(value)) throw invalid(setting.name);
  setting.check?.(value);
}

/** A value sent to a 3.x endpoint under the setting's 3.x name: refused as 3.x did, else as 9.0 says it. */
export function fromLegacyValue(setting: PersonalSetting, value: SettingValue): SettingValue {
  const legacy = setting.legacy;
  if (legacy?.allowed && !legacy.allowed.includes(value)) throw invalid(legacyName(setting));
  return legacy?.fromLegacy ? legacy.fromLegacy(value) : value;
}

/**
 * The user's value of each setting, keyed by Zulip 9.0's name, from their row. Settings that are
 * not personal here (email_address_visibility) are the caller's to add.
 */
export function personalSettingValues(user: object): Record<string, SettingValue> {
  const row = user as Record<string, unknown>;
  return Object.fromEntries(PERSONAL_SETTINGS.map((setting) => [setting.name, row[setting.column] as SettingValue]));
}
