// The state POST /register returns, section by section (Zulip's fetch_initial_state_data). Each
// section is named for the event type that keeps it current, so `event_types` selects sections.
import type { PrismaClient } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { Actor } from "../models.ts";
import { avatarUrl } from "../lib/avatars.ts";
import { formatStream, formatSubscription, inheritedNotificationSettings, resolveNullNotificationSettings } from "../lib/stream-format.ts";
import { subscribersByRecipient, subscriptionsOf, type SubscriptionWithStream } from "../queries/subscriptions.ts";
import { mutedTopicsOf } from "../actions/muted-topics.ts";
import { formatUser } from "../lib/user-format.ts";
import { isAdmin, isGuest, isOwner } from "../lib/roles.ts";
import { getProfileData } from "../queries/users.ts";
import { getAlertWords } from "../queries/alert-words.ts";
import { getRealmPresences } from "../queries/presence.ts";
import { getUserStatuses } from "../queries/user-status.ts";
import { ORGANIZATION_STATE_SECTIONS } from "./organization-state.ts";
import { fetchRawUnreadMessages, finishUnreadState } from "./unread-state.ts";

export interface RegisterOptions {
  eventTypes: string[] | null;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  allPublicStreams: boolean;
  includeSubscribers: boolean;
  narrow: Array<[string, string]>;
  notificationSettingsNull: boolean;
  bulkMessageDeletion: boolean;
}

export type State = Record<string, unknown>;

type Section = (prisma: PrismaClient, actor: Actor, options: RegisterOptions, ctx: ServerContext) => Promise<State>;

const GLOBAL_NOTIFICATION_SETTINGS = [
  "enable_stream_desktop_notifications",
  "enable_stream_email_notifications",
  "enable_stream_push_notifications",
  "enable_stream_audible_notifications",
  "notification_sound",
  "wildcard_mentions_notify",
  "enable_desktop_notifications",
  "pm_content_in_desktop_notifications",
  "enable_sounds",
  "enable_offline_email_notifications",
  "message_content_in_email_notifications",
  "enable_offline_push_notifications",
  "enable_online_push_notifications",
  "desktop_icon_count_display",
  "enable_digest_emails",
  "enable_login_emails",
  "realm_name_in_notifications",
  "presence_enabled",
] as const;

const DISPLAY_SETTINGS = [
  "default_language",
  "twenty_four_hour_time",
  "left_side_userlist",
  "emojiset",
  "dense_mode",
  "fluid_layout_width",
  "high_contrast_mode",
  "color_scheme",
  "translate_emoticons",
  "starred_message_counts",
  "demote_inactive_streams",
  "default_view",
  "timezone",
] as const;

const REALM_SETTINGS = [
  "name",
  "description",
  "invite_required",
  "emails_restricted_to_domains",
  "disallow_disposable_email_addresses",
  "create_stream_policy",
  "invite_to_stream_policy",
  "user_group_edit_policy",
  "private_message_policy",
  "wildcard_mention_policy",
  "bot_creation_policy",
  "email_address_visibility",
  "waiting_period_threshold",
  "allow_message_editing",
  "allow_message_deleting",
  "allow_community_topic_editing",
  "allow_edit_history",
  "message_content_edit_limit_seconds",
  "message_content_delete_limit_seconds",
  "mandatory_topics",
  "name_changes_disabled",
  "email_changes_disabled",
  "avatar_changes_disabled",
  "inline_image_preview",
  "inline_url_embed_preview",
  "send_welcome_emails",
  "message_content_allowed_in_email_notifications",
  "digest_emails_enabled",
  "digest_weekday",
  "default_language",
  "default_twenty_four_hour_time",
  "video_chat_provider",
  "message_retention_days",
  "icon_source",
  "logo_source",
  "notifications_stream_id",
  "signup_notifications_stream_id",
] as const;

function wants(options: RegisterOptions, eventType: string): boolean {
  return options.eventTypes === null || options.eventTypes.includes(eventType);
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[], prefix = ""): State {
  const result: State = {};
  for (const key of keys) result[`${prefix}${String(key)}`] = source[key];
  return result;
}

export const STATE_SECTIONS: Record<string, Section> = {
  ...ORGANIZATION_STATE_SECTIONS,

  async message(prisma, actor) {
    const [row] = await prisma.$queryRaw<{ max: number | null }[]>`SELECT max(message_id) AS max FROM user_message WHERE user_id = ${actor.id}`;
    return { max_message_id: row?.max ?? -1 };
  },

  // Unread counts only for clients that follow both new messages and read changes, as Zulip. The
  // raw form is what events update; finishState turns it into `unread_msgs`.
  async update_message_flags(prisma, actor, options) {
    return wants(options, "message") ? { raw_unread_msgs: await fetchRawUnreadMessages(prisma, actor.id) } : {};
  },

  async pointer(_prisma, actor) {
    return { pointer: actor.pointer };
  },

  async realm_user(prisma, actor, options) {
    const users = await prisma.userProfile.findMany({ where: { realm_id: actor.realm_id }, orderBy: { id: "asc" } });
    const profiles = await getProfileData(prisma, users.map((u) => u.id));
    const forAdmin = isAdmin(actor);
    const format = (user: (typeof users)[number]) =>
      formatUser(user, { clientGravatar: options.clientGravatar, forAdmin, profileData: profiles.get(user.id) });
    return {
      realm_users: users.filter((u) => u.is_active && !u.is_bot).map(format),
      realm_non_active_users: users.filter((u) => !u.is_active && !u.is_bot).map(format),
      realm_bots: users.filter((u) => u.is_active && u.is_bot).map(format),
      cross_realm_bots: [],
      user_id: actor.id,
      email: actor.email,
      delivery_email: actor.delivery_email,
      full_name: actor.full_name,
      is_admin: isAdmin(actor),
      is_owner: isOwner(actor),
      is_guest: isGuest(actor),
      role: actor.role,
      avatar_source: actor.avatar_source,
      avatar_url: avatarUrl(actor, options.clientGravatar),
      avatar_url_medium: avatarUrl(actor, options.clientGravatar, true),
      can_create_streams: !isGuest(actor) && (actor.realm.create_stream_policy !== 2 || isAdmin(actor)),
      can_subscribe_other_users: !isGuest(actor),
    };
  },

  async subscription(prisma, actor, options, ctx) {
    const all = await subscriptionsOf(prisma, actor.id, { activeOnly: false });
    const streams = await prisma.stream.findMany({ where: { realm_id: actor.realm_id, deactivated: false, invite_only: false }, orderBy: { id: "asc" } });
    const known = new Set(all.map((s) => s.stream.id));
    const neverSubscribed = isGuest(actor) ? [] : streams.filter((s) => !known.has(s.id));
    const recipients = [...all.filter((s) => s.subscription.active || !s.stream.invite_only).map((s) => s.stream), ...neverSubscribed].map((s) => s.recipient_id!);
    const subscribers = options.includeSubscribers ? await subscribersByRecipient(prisma, recipients, "ids") : null;
    const inherited = inheritedNotificationSettings(actor);
    const format = ({ subscription, stream }: SubscriptionWithStream) => {
      // Subscribers of a private stream one has left are not one's business.
      const visible = subscription.active || !stream.invite_only;
      const ids = subscribers && visible ? ((subscribers.get(stream.recipient_id!) as number[] | undefined) ?? []) : undefined;
      const formatted = formatSubscription(subscription, stream, { emailDomain: ctx.externalHost, subscribers: ids });
      return options.notificationSettingsNull ? formatted : resolveNullNotificationSettings(formatted, inherited);
    };
    return {
      subscriptions: all.filter((s) => s.subscription.active).map(format),
      unsubscribed: all.filter((s) => !s.subscription.active).map(format),
      never_subscribed: neverSubscribed.map((stream) => ({
        ...formatStream(stream),
        ...(subscribers ? { subscribers: (subscribers.get(stream.recipient_id!) as number[] | undefined) ?? [] } : {}),
      })),
    };
  },

  async muted_topics(prisma, actor) {
    return { muted_topics: await mutedTopicsOf(prisma, actor.id) };
  },

  async stream(prisma, actor) {
    const streams = await prisma.stream.findMany({ where: { realm_id: actor.realm_id, deactivated: false }, orderBy: { id: "asc" } });
    const subscribed = new Set(
      (await prisma.subscription.findMany({ where: { user_id: actor.id, active: true }, select: { recipient_id: true } })).map((s) => s.recipient_id),
    );
    const visible = streams.filter((s) => (s.invite_only || isGuest(actor) ? subscribed.has(s.recipient_id!) : true));
    return { streams: visible.map(formatStream) };
  },

  async realm(_prisma, actor) {
    return {
      ...pick(actor.realm, REALM_SETTINGS, "realm_"),
      realm_uri: "",
      realm_available_video_chat_providers: {},
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_topic_length: 60,
      max_message_length: 10000,
    };
  },

  async update_global_notifications(_prisma, actor) {
    return pick(actor, GLOBAL_NOTIFICATION_SETTINGS);
  },

  async update_display_settings(_prisma, actor) {
    return pick(actor, DISPLAY_SETTINGS);
  },

  async presence(prisma, actor, options) {
    return { presences: await getRealmPresences(prisma, actor.realm_id, options.slimPresence) };
  },

  async user_status(prisma, actor) {
    return { user_status: await getUserStatuses(prisma, actor.realm_id) };
  },

  async alert_words(prisma, actor) {
    return { alert_words: await getAlertWords(prisma, actor.id) };
  },
};

/** The state as clients get it, once events are applied (Zulip's post_process_state). */
export function finishState(state: State): State {
  finishUnreadState(state);
  return state;
}

/** The sections a registration asked for; unknown event types have no state and are skipped. */
export async function fetchInitialState(prisma: PrismaClient, actor: Actor, options: RegisterOptions, ctx: ServerContext): Promise<State> {
  const wanted = Object.keys(STATE_SECTIONS).filter((type) => wants(options, type));
  const parts = await Promise.all(wanted.map((type) => STATE_SECTIONS[type](prisma, actor, options, ctx)));
  return Object.assign({}, ...parts);
}
