// A user's own personal settings (Zulip's do_change_user_setting), through PATCH /settings as
// Zulip 9.0 takes them and through Zulip 3.x's PATCH /settings/notifications and /settings/display,
// which keep 3.x's names, values and answer. Every value is checked before anything is written;
// each change is announced to the user's clients as a `user_settings` event, which carries the 3.x
// event of a setting 3.x had for the queues without user_settings_object (fanout.ts picks).
import type { Tx } from "@chat/db";
import type { EventPayload } from "@chat/bus";
import type { EventRecorder } from "../events.ts";
import { JsonableError } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";
import { languageName } from "../lib/languages.ts";
import {
  checkSettingValue,
  fromLegacyValue,
  legacyName,
  legacySettings,
  PERSONAL_SETTINGS,
  toLegacyValue,
  type PersonalSetting,
  type SettingValue,
} from "../lib/personal-settings.ts";
import { userIdsWhoCanAccess } from "../queries/user-access.ts";
import { activeAdminIds } from "../queries/users.ts";
import { deleteAllDrafts } from "./drafts.ts";
import { changeUserEmailAddressVisibility } from "./email-visibility.ts";
import type { ServerContext } from "../context.ts";
import { EMAIL_ADDRESS_VISIBILITY_VALUES } from "../lib/email-visibility.ts";

/**
 * The key under which a `user_settings` event carries the 3.x event of the same change
 * (update_display_settings or update_global_notifications): the fan-out sends that one too to the
 * queues registered without user_settings_object, and strips the key for everyone.
 */
export const LEGACY_SETTING_EVENT_KEY = "__legacy_setting_event";

/** The parameters each 3.x endpoint took, by their 3.x names. */
export const NOTIFICATION_SETTINGS = legacySettings("notification").map(legacyName);
export const DISPLAY_SETTINGS = legacySettings("display").map(legacyName);

/** Requested values by parameter name (undefined: not sent). */
export type SettingsRequest = Record<string, SettingValue | undefined>;

/** The user's row, locked, so concurrent changes of the same setting are compared in turn. */
async function lockedUser(tx: Tx, userId: number): Promise<UserProfile> {
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${userId} FOR UPDATE`;
  return tx.userProfile.findUniqueOrThrow({ where: { id: userId } });
}

interface Requested {
  setting: PersonalSetting;
  /** The parameter it came in, and its value as sent (the 3.x endpoints answer with those). */
  param: string;
  sent: SettingValue;
  /** Its value in Zulip 9.0's terms. */
  value: SettingValue;
}

/**
 * The settings a request asks for, checked, in PERSONAL_SETTINGS order. `legacy`: a 3.x endpoint,
 * where the settings 3.x had go by their 3.x names and values and the others by 9.0's.
 */
function readRequest(request: SettingsRequest, legacy: boolean): Requested[] {
  const requested: Requested[] = [];
  for (const setting of PERSONAL_SETTINGS) {
    const param = legacy ? legacyName(setting) : setting.name;
    const sent = request[param];
    if (sent === undefined) continue;
    const value = legacy ? fromLegacyValue(setting, sent) : sent;
    checkSettingValue(setting, value);
    requested.push({ setting, param, sent, value });
  }
  return requested;
}

/** Who may see the user's real address (feature level 163): one of Zulip 9.0's values. */
function checkEmailAddressVisibility(value: SettingValue | undefined): void {
  if (value === undefined) return;
  if (!EMAIL_ADDRESS_VISIBILITY_VALUES.includes(value as number)) throw new JsonableError("Invalid email_address_visibility", { extra: { var_name: "email_address_visibility" } });
}

function settingEvent(user: UserProfile, setting: PersonalSetting, old: SettingValue, value: SettingValue): EventPayload {
  const event: EventPayload = { type: "user_settings", op: "update", property: setting.name, value };
  if (setting.name === "default_language") event.language_name = languageName(value as string);
  const legacy = setting.legacy;
  if (legacy === undefined) return event;
  const legacyValue = toLegacyValue(setting, value);
  // 9.0's desktop_icon_count_display 2 and 3 are both 3.x's 2: no change for a 3.x client.
  if (legacyValue === toLegacyValue(setting, old)) return event;
  const name = legacyName(setting);
  const legacyEvent: EventPayload =
    legacy.section === "display"
      ? { type: "update_display_settings", user: user.email, setting_name: name, setting: legacyValue }
      : { type: "update_global_notifications", user: user.email, notification_name: name, setting: legacyValue };
  if (setting.name === "default_language") legacyEvent.language_name = event.language_name;
  event[LEGACY_SETTING_EVENT_KEY] = legacyEvent;
  return event;
}

/**
 * Writes the requested settings that differ from the stored ones and announces each; returns the
 * changed ones by parameter, with the values as sent. A new timezone also reaches the organization.
 */
async function changeSettings(tx: Tx, events: EventRecorder, actor: Actor, requested: Requested[], { statusEvent = true } = {}): Promise<Record<string, SettingValue>> {
  if (requested.length === 0) return {};
  const user = await lockedUser(tx, actor.id);
  const row = user as unknown as Record<string, SettingValue>;
  const changed = requested.filter(({ setting, value }) => row[setting.column] !== value);
  if (changed.length === 0) return {};
  await tx.userProfile.update({ where: { id: user.id }, data: Object.fromEntries(changed.map(({ setting, value }) => [setting.column, value])) });
  const answer: Record<string, SettingValue> = {};
  for (const { setting, param, sent, value } of changed) {
    answer[param] = sent;
    events.send(settingEvent(user, setting, row[setting.column], value), [user.id]);
    // Zulip deletes the drafts, with no events: clients keep their own, only the synchronising stops.
    if (setting.name === "enable_drafts_synchronization" && value === false) await deleteAllDrafts(tx, user.id);
    // A status's `away` is presence_enabled turned over since feature level 148: the organization hears of it so.
    if (setting.name === "presence_enabled" && statusEvent) {
      events.send({ type: "user_status", user_id: user.id, away: value === false }, await userIdsWhoCanAccess(tx, user.realm_id, user.id));
    }
    // The organization's administrators follow who consents to private data exports (feature level 312).
    if (setting.name === "allow_private_data_export") {
      events.send({ type: "realm_export_consent", user_id: user.id, consented: value }, await activeAdminIds(tx, user.realm_id));
    }
    if (setting.name === "timezone") {
      const person = { email: user.email, user_id: user.id, timezone: value };
      events.send({ type: "realm_user", op: "update", person }, await userIdsWhoCanAccess(tx, user.realm_id, user.id));
    }
  }
  return answer;
}

/**
 * POST /users/me/status's `away` (feature level 148): presence_enabled, the other way round. The
 * status's own event says `away`, so the setting's change sends no second one.
 */
export async function setAwayAsPresence(tx: Tx, events: EventRecorder, actor: Actor, away: boolean): Promise<void> {
  await changeSettings(tx, events, actor, readRequest({ presence_enabled: !away }, false), { statusEvent: false });
}

/** Checks a PATCH /settings request's personal settings (Zulip 9.0's names and values), before anything is written. */
export function checkPersonalSettings(_actor: Actor, request: SettingsRequest): void {
  readRequest(request, false);
  checkEmailAddressVisibility(request.email_address_visibility);
}

/**
 * PATCH /settings: Zulip 9.0's personal settings. Answers nothing of them, as Zulip. A new
 * email_address_visibility also changes what others are shown (actions/email-visibility.ts).
 */
export async function updatePersonalSettings(tx: Tx, events: EventRecorder, actor: Actor, request: SettingsRequest, ctx?: ServerContext): Promise<void> {
  checkHumanUser(actor);
  const visibility = request.email_address_visibility;
  checkEmailAddressVisibility(visibility);
  await changeSettings(tx, events, actor, readRequest(request, false));
  if (visibility !== undefined) {
    if (ctx === undefined) throw new Error("email_address_visibility needs the server context");
    await changeUserEmailAddressVisibility(tx, events, ctx, actor.id, visibility as number);
  }
}

/** PATCH /settings/notifications and /settings/display, as Zulip 3.x: answers with what changed. */
export async function updateLegacySettings(tx: Tx, events: EventRecorder, actor: Actor, request: SettingsRequest): Promise<Record<string, SettingValue>> {
  checkHumanUser(actor);
  return changeSettings(tx, events, actor, readRequest(request, true));
}

/** PATCH /settings/notifications (Zulip 3.x's json_change_notify_settings). */
export const updateNotificationSettings = updateLegacySettings;

/** PATCH /settings/display (Zulip 3.x's update_display_settings_backend). */
export const updateDisplaySettings = updateLegacySettings;

/**
 * Whether Enter sends in the compose box (POST /users/me/enter-sends; human users only, as
 * Zulip's change_enter_sends). Zulip 3.x sends no event for it: clients read it once, from /register.
 */
export async function setEnterSends(tx: Tx, actor: Actor, enterSends: boolean): Promise<void> {
  checkHumanUser(actor);
  await tx.userProfile.update({ where: { id: actor.id }, data: { enter_sends: enterSends } });
}
