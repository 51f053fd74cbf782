import type { StreamModel, SubscriptionModel } from "@chat/db";

export const STREAM_POST_POLICY_EVERYONE = 1;
export const STREAM_POST_POLICY_ADMINS = 2;
export const STREAM_POST_POLICY_RESTRICT_NEW_MEMBERS = 3;

/** The Stream object of the contract. */
export function formatStream(stream: StreamModel): Record<string, unknown> {
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
    // Who may unsubscribe others (feature levels 142, 197): a system group's id.
    ...(stream.can_remove_subscribers_group_id === null ? {} : { can_remove_subscribers_group: stream.can_remove_subscribers_group_id }),
    // Feature level 254; null for streams from before it was kept.
    creator_id: stream.creator_id ?? null,
    // Feature level 199: messages a week over the last four weeks, null under a week old (refreshed by a worker).
    stream_weekly_traffic: stream.stream_weekly_traffic ?? null,
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
  options: { emailDomain: string; subscribers?: number[] | string[] },
): Record<string, unknown> {
  const result: Record<string, unknown> = {
    ...formatStream(stream),
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
