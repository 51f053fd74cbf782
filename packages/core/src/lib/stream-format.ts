import type { StreamModel, SubscriptionModel, Tx } from "@chat/db";
import { groupSettingValues, type GroupSettingValue } from "./group-setting-values.ts";

export const STREAM_POST_POLICY_EVERYONE = 1;
export const STREAM_POST_POLICY_ADMINS = 2;
export const STREAM_POST_POLICY_RESTRICT_NEW_MEMBERS = 3;

/**
 * A channel's permission settings (Zulip 10.0's Stream.stream_permission_group_settings), each a
 * group-setting value in the API (feature levels 320, 325, 333, 342, 357) and a `<name>_id` column.
 */
export const STREAM_GROUP_SETTING_NAMES = [
  "can_add_subscribers_group",
  "can_administer_channel_group",
  "can_remove_subscribers_group",
  "can_send_message_group",
  "can_subscribe_group",
] as const;
export type StreamGroupSettingName = (typeof STREAM_GROUP_SETTING_NAMES)[number];

/** The group a channel setting holds. */
export function streamSettingGroupId(stream: StreamModel, name: StreamGroupSettingName): number | null {
  return (stream as unknown as Record<string, number | null>)[`${name}_id`] ?? null;
}

/** The API values of these streams' settings (anonymous groups as members and subgroups): at most three queries. */
export function streamGroupValues(db: Pick<Tx, "$queryRaw">, streams: readonly StreamModel[]): Promise<Map<number, GroupSettingValue>> {
  return groupSettingValues(db, streams.flatMap((stream) => STREAM_GROUP_SETTING_NAMES.map((name) => streamSettingGroupId(stream, name))));
}

/** Stream objects for these streams, with their settings' values read in one go. */
export async function formatStreams(db: Pick<Tx, "$queryRaw">, streams: readonly StreamModel[]): Promise<Array<Record<string, unknown>>> {
  const values = await streamGroupValues(db, streams);
  return streams.map((stream) => formatStream(stream, values));
}

/**
 * The Stream object of the contract. `groupValues` (streamGroupValues) shows the permission
 * settings; a setting whose group it lacks is shown by the group's id.
 */
export function formatStream(stream: StreamModel, groupValues: ReadonlyMap<number, GroupSettingValue>): Record<string, unknown> {
  const settings: Record<string, GroupSettingValue> = {};
  for (const name of STREAM_GROUP_SETTING_NAMES) {
    const id = streamSettingGroupId(stream, name);
    if (id !== null) settings[name] = groupValues.get(id) ?? id;
  }
  return {
    stream_id: stream.id,
    name: stream.name,
    description: stream.description,
    rendered_description: stream.rendered_description,
    invite_only: stream.invite_only,
    is_web_public: stream.is_web_public,
    stream_post_policy: stream.stream_post_policy,
    is_announcement_only: stream.stream_post_policy === STREAM_POST_POLICY_ADMINS,
    history_public_to_subscribers: stream.history_public_to_subscribers,
    first_message_id: stream.first_message_id,
    message_retention_days: stream.message_retention_days,
    date_created: Math.floor(stream.date_created.getTime() / 1000),
    // Who may post, administer, subscribe others, subscribe, unsubscribe others: group-setting
    // values. stream_post_policy (kept in step with can_send_message_group) is the integer policy
    // closest to it that lets no fewer users post (feature level 333).
    ...settings,
    // Feature level 254; null for streams from before it was kept.
    creator_id: stream.creator_id ?? null,
    // Feature level 199: messages a week over the last four weeks, null under a week old (refreshed by a worker).
    stream_weekly_traffic: stream.stream_weekly_traffic ?? null,
    // Feature level 315: archived (DELETE /streams/{id}); listed only to archived_channels clients.
    is_archived: stream.deactivated,
    // Feature level 323: messages in the last 180 days (kept by the worker, actions/stream-activity.ts).
    is_recently_active: stream.is_recently_active,
  };
}

/** Zulip's stream email address: `Name+token@host` (a mail domain has no port). */
export function streamEmailAddress(stream: StreamModel, emailDomain: string): string {
  const local = stream.name.replace(/[^a-zA-Z0-9]+/g, "").slice(0, 32) || "stream";
  return `${local}+${stream.email_token}@${emailDomain.replace(/:\d+$/, "")}`;
}

export const SUBSCRIPTION_NOTIFICATION_SETTINGS = [
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
] as const;

export interface GlobalNotificationSettings {
  enable_stream_desktop_notifications: boolean;
  enable_stream_audible_notifications: boolean;
  enable_stream_push_notifications: boolean;
  enable_stream_email_notifications: boolean;
  wildcard_mentions_notify: boolean;
}

/** What a null ("inherit") stream notification setting means for this user. */
export function inheritedNotificationSettings(user: GlobalNotificationSettings): Record<string, boolean> {
  return {
    desktop_notifications: user.enable_stream_desktop_notifications,
    audible_notifications: user.enable_stream_audible_notifications,
    push_notifications: user.enable_stream_push_notifications,
    email_notifications: user.enable_stream_email_notifications,
    wildcard_mentions_notify: user.wildcard_mentions_notify,
  };
}

/** For clients without `notification_settings_null`: nulls become the inherited values. */
export function resolveNullNotificationSettings(subscription: Record<string, unknown>, inherited: Record<string, boolean>): Record<string, unknown> {
  const resolved = { ...subscription };
  for (const key of SUBSCRIPTION_NOTIFICATION_SETTINGS) if (resolved[key] === null) resolved[key] = inherited[key];
  return resolved;
}

/** The Subscription object: the stream's fields plus this user's properties. */
export function formatSubscription(
  subscription: SubscriptionModel,
  stream: StreamModel,
  options: { emailDomain: string; subscribers?: number[] | string[]; groupValues: ReadonlyMap<number, GroupSettingValue> },
): Record<string, unknown> {
  const result: Record<string, unknown> = {
    ...formatStream(stream, options.groupValues),
    color: subscription.color,
    is_muted: subscription.is_muted,
    in_home_view: !subscription.is_muted,
    pin_to_top: subscription.pin_to_top,
    desktop_notifications: subscription.desktop_notifications,
    audible_notifications: subscription.audible_notifications,
    push_notifications: subscription.push_notifications,
    email_notifications: subscription.email_notifications,
    wildcard_mentions_notify: subscription.wildcard_mentions_notify,
    email_address: streamEmailAddress(stream, options.emailDomain),
  };
  if (options.subscribers) result.subscribers = options.subscribers;
  return result;
}

// Zulip's stream color palette; a new subscription takes the first color the user is not using.
export const STREAM_COLORS = [
  "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5", "#f5ce6e",
  "#c2726a", "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063", "#9987e1", "#e4523d",
  "#c2c2c2", "#4f8de4", "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
];

export function pickStreamColor(usedColors: Iterable<string>): string {
  const used = new Set(usedColors);
  return STREAM_COLORS.find((color) => !used.has(color)) ?? STREAM_COLORS[used.size % STREAM_COLORS.length];
}
