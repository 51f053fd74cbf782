// The state POST /register returns, section by section (Zulip's fetch_initial_state_data). Each
// section has Zulip's name, which `event_types` and `fetch_event_types` select; mostly the name of
// the event type that keeps it current (see EVENT_SECTIONS for the others).
import { Prisma, type PrismaClient, type StreamModel } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { Actor, UserProfile } from "../models.ts";
import { avatarUrl, realmIconUrl } from "../lib/avatars.ts";
import { formatStream, formatSubscription, inheritedNotificationSettings, resolveNullNotificationSettings } from "../lib/stream-format.ts";
import { subscribersByRecipient, subscriptionsOf, type SubscriptionWithStream } from "../queries/subscriptions.ts";
import { mutedTopicsOf } from "../actions/muted-topics.ts";
import { EMBEDDED_BOTS } from "../lib/embedded-bots.ts";
import { ownedBotDicts } from "../queries/bots.ts";
import { isAdmin, isGuest, isOwner } from "../lib/roles.ts";
import { canCreateStreams, canSubscribeOthers } from "../lib/permissions.ts";
import { seesDeliveryEmails } from "../lib/email-visibility.ts";
import { getAlertWords } from "../queries/alert-words.ts";
import { getRealmPresences } from "../queries/presence.ts";
import { getUserStatuses } from "../queries/user-status.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { occupiedStreamsOf } from "../queries/streams.ts";
import { botDomain, isSystemBot } from "../actions/system-bots.ts";
import { EMOJISETS, NOTIFICATION_SOUNDS } from "../actions/settings.ts";
import { ORGANIZATION_STATE_SECTIONS } from "./organization-state.ts";
import { fetchRecentConversations } from "./recent-conversations.ts";
import { fetchRawUnreadMessages, finishUnreadState } from "./unread-state.ts";
import { JsonText } from "./json-text.ts";
import { readRealmUsers } from "./realm-state-cache.ts";

export interface RegisterOptions {
  /** Section names (Zulip's, or an alias) to fetch; null for all. */
  eventTypes: string[] | null;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  allPublicStreams: boolean;
  includeSubscribers: boolean;
  narrow: Array<[string, string]>;
  notificationSettingsNull: boolean;
  bulkMessageDeletion: boolean;
  /** Capabilities of Zulip 4.0 and later (client_capabilities); each false when not declared. */
  userSettingsObject: boolean;
  streamTypingNotifications: boolean;
  userAvatarUrlFieldOptional: boolean;
  includeDeactivatedGroups: boolean;
  /**
   * The client declared a capability newer than Zulip 3.x (MODERN_CAPABILITIES): it gets events
   * in the shapes of today's Zulip where those replaced 3.x's without a capability of their own
   * (plural peer_add, realm_user deactivation as an update, message_type "direct"). A client that
   * declares none gets 3.x's shapes, which every client of that era parses.
   */
  modernClient: boolean;
  /** The organization's URL as this request reached it (`realm_uri`). */
  realmUri: string;
}

export type State = Record<string, unknown>;

function realmQuota(own: bigint | null, serverDefault: number): number | null {
  if (own !== null) return Number(own);
  return serverDefault > 0 ? serverDefault : null;
}

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
  "add_emoji_by_admins_only",
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
] as const;

/** Older names this server answered to before it used Zulip's, still accepted. */
const SECTION_ALIASES: Record<string, string> = {
  user_group: "realm_user_groups",
};

/** Zulip's section name for a name a client sent. */
export function sectionName(name: string): string {
  return SECTION_ALIASES[name] ?? name;
}

function wants(options: RegisterOptions, section: string): boolean {
  return options.eventTypes === null || options.eventTypes.some((name) => sectionName(name) === section);
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[], prefix = ""): State {
  const result: State = {};
  for (const key of keys) result[`${prefix}${String(key)}`] = source[key];
  return result;
}

/** Zulip's Stream.MAX_NAME_LENGTH and MAX_DESCRIPTION_LENGTH. */
const STREAM_NAME_MAX_LENGTH = 60;
const STREAM_DESCRIPTION_MAX_LENGTH = 1024;

/** Zulip's authentication backends as realm_authentication_methods names them; this server has email and password. */
const AUTHENTICATION_METHODS = { Email: true, Google: false, GitHub: false, GitLab: false, LDAP: false, Dev: false, RemoteUser: false, AzureAD: false, SAML: false, Apple: false };

/**
 * Which of these streams are live: a notification stream is -1 when unset or deactivated, as
 * Zulip. From the node's copy of the realm's active streams when it keeps one.
 */
async function liveStreamIds(prisma: PrismaClient, ids: Array<number | null>, copy?: Promise<ReadonlyMap<number, StreamModel>>): Promise<Set<number>> {
  const wanted = ids.filter((id): id is number => id !== null);
  if (wanted.length === 0) return new Set();
  if (copy) {
    const streams = await copy;
    return new Set(wanted.filter((id) => streams.has(id)));
  }
  const rows = await prisma.$queryRaw<{ id: number }[]>`SELECT id FROM stream WHERE id = ANY(${wanted}::int[]) AND NOT deactivated`;
  return new Set(rows.map((row) => row.id));
}

/** The realm's active public streams by id, from the node's copy when it keeps one. */
async function publicStreams(prisma: PrismaClient, realmId: number, ctx: ServerContext): Promise<StreamModel[]> {
  if (!ctx.realmState) return prisma.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE realm_id = ${realmId} AND NOT deactivated AND NOT invite_only ORDER BY id`;
  return [...(await ctx.realmState.streams(realmId)).values()].filter((stream) => !stream.invite_only).sort((a, b) => a.id - b.id);
}

/**
 * The realm's occupied streams (queries/streams.ts), each with whether the actor is subscribed.
 * With the node's copy of the streams only their ids are read; the rows are read when the copy
 * lacks one (a stream created since the generation the copy is kept under).
 */
async function occupiedStreamsFor(prisma: PrismaClient, actor: Actor, ctx: ServerContext): Promise<Array<{ stream: StreamModel; subscribed: boolean }>> {
  const read = <Row>(columns: "st.id" | "st.*") => prisma.$queryRaw<Array<Row & { subscribed: boolean }>>`
    SELECT ${Prisma.raw(columns)}, EXISTS (SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.user_id = ${actor.id} AND s.active) AS subscribed
    FROM stream st WHERE ${occupiedStreamsOf(actor.realm_id)} ORDER BY st.id`;
  if (ctx.realmState) {
    const [ids, streams] = await Promise.all([read<{ id: number }>("st.id"), ctx.realmState.streams(actor.realm_id)]);
    if (ids.every((row) => streams.has(row.id))) return ids.map((row) => ({ stream: streams.get(row.id)!, subscribed: row.subscribed }));
  }
  return (await read<StreamModel>("st.*")).map(({ subscribed, ...stream }) => ({ stream, subscribed }));
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

  // Zulip's get_starred_message_ids: oldest first, at most 10,000.
  async starred_messages(prisma, actor) {
    const rows = await prisma.$queryRaw<{ message_id: number }[]>`
      SELECT message_id FROM user_message WHERE user_id = ${actor.id} AND (flags & ${FLAG_BITS.starred}) <> 0 ORDER BY message_id LIMIT 10000`;
    return { starred_messages: rows.map((row) => row.message_id) };
  },

  async recent_private_conversations(prisma, actor) {
    return { recent_private_conversations: await fetchRecentConversations(prisma, actor.id) };
  },

  async pointer(_prisma, actor) {
    return { pointer: actor.pointer };
  },

  // Every user of the realm, bots included, as Zulip's realm_users (realm-state-cache.ts); from an
  // event node's copy as JSON text when it keeps one (realm-state-cache.ts).
  async realm_user(prisma, actor, options, ctx) {
    let users: State;
    if (ctx.realmState) {
      const text = await ctx.realmState.realmUsers(actor.realm_id, { clientGravatar: options.clientGravatar, role: actor.role });
      users = { realm_users: text.active, realm_non_active_users: text.inactive, cross_realm_bots: JSON.parse(text.systemBots) as unknown };
    } else {
      const withDeliveryEmail = seesDeliveryEmails(actor.role, actor.realm.email_address_visibility);
      const read = await readRealmUsers(prisma, actor.realm_id, { clientGravatar: options.clientGravatar, withDeliveryEmail });
      users = { realm_users: read.active, realm_non_active_users: read.inactive, cross_realm_bots: read.systemBots };
    }
    return {
      ...users,
      user_id: actor.id,
      email: actor.email,
      delivery_email: actor.delivery_email,
      full_name: actor.full_name,
      is_admin: isAdmin(actor),
      is_owner: isOwner(actor),
      is_guest: isGuest(actor),
      role: actor.role,
      enter_sends: actor.enter_sends,
      // One's own avatar always as a URL, whatever client_gravatar says (Zulip #8253).
      avatar_source: actor.avatar_source,
      avatar_url: avatarUrl(actor, false),
      avatar_url_medium: avatarUrl(actor, false, true),
      // What subscribe.ts enforces (Zulip's can_create_streams, can_subscribe_other_users).
      can_create_streams: canCreateStreams(actor),
      can_subscribe_other_users: canSubscribeOthers(actor),
    };
  },

  // The bots one administers (Zulip's get_owned_bot_dicts): all of the realm's for administrators,
  // deactivated ones included, with their services and default streams.
  async realm_bot(prisma, actor) {
    const bots = await prisma.$queryRaw<UserProfile[]>`
      SELECT * FROM user_profile WHERE realm_id = ${actor.realm_id} AND is_bot AND (${isAdmin(actor)} OR bot_owner_id = ${actor.id}) ORDER BY id`;
    return { realm_bots: await ownedBotDicts(prisma, bots.filter((bot) => !isSystemBot(bot))) };
  },

  // The embedded bots this server runs, with the configuration each asks for (Zulip's
  // get_embedded_bots). It has no incoming webhook integrations.
  async realm_embedded_bots() {
    return { realm_embedded_bots: EMBEDDED_BOTS.map((bot) => ({ name: bot.name, config: { ...bot.config } })) };
  },

  async realm_incoming_webhook_bots() {
    return { realm_incoming_webhook_bots: [] };
  },

  // Organizations here restrict no email domains.
  async realm_domains() {
    return { realm_domains: [] };
  },

  // Hotspots are the web app's onboarding tips; this server has none to show.
  async hotspots() {
    return { hotspots: [] };
  },

  async subscription(prisma, actor, options, ctx) {
    const [all, streams] = await Promise.all([subscriptionsOf(prisma, actor.id, { activeOnly: false }), publicStreams(prisma, actor.realm_id, ctx)]);
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

  async stream(prisma, actor, _options, ctx) {
    const streams = await occupiedStreamsFor(prisma, actor, ctx);
    const visible = streams.filter(({ stream, subscribed }) => (stream.invite_only || isGuest(actor) ? subscribed : true)).map(({ stream }) => stream);
    return { streams: visible.map(formatStream), stream_name_max_length: STREAM_NAME_MAX_LENGTH, stream_description_max_length: STREAM_DESCRIPTION_MAX_LENGTH };
  },

  async realm(prisma, actor, options, ctx) {
    const realm = actor.realm;
    const live = await liveStreamIds(prisma, [realm.notifications_stream_id, realm.signup_notifications_stream_id], ctx.realmState?.streams(realm.id));
    const liveOrNone = (id: number | null) => (id !== null && live.has(id) ? id : -1);
    return {
      ...pick(realm, REALM_SETTINGS, "realm_"),
      realm_notifications_stream_id: liveOrNone(realm.notifications_stream_id),
      realm_signup_notifications_stream_id: liveOrNone(realm.signup_notifications_stream_id),
      realm_uri: options.realmUri,
      realm_icon_url: realmIconUrl(realm),
      realm_bot_domain: botDomain(ctx),
      realm_authentication_methods: AUTHENTICATION_METHODS,
      realm_email_auth_enabled: true,
      realm_password_auth_enabled: true,
      realm_push_notifications_enabled: false,
      realm_presence_disabled: false,
      realm_is_zephyr_mirror_realm: false,
      realm_available_video_chat_providers: {},
      max_stream_name_length: STREAM_NAME_MAX_LENGTH,
      max_stream_description_length: STREAM_DESCRIPTION_MAX_LENGTH,
      max_topic_length: 60,
      max_message_length: 10000,
      // Zulip 3.x: the largest upload in MiB, and the organization's quota in bytes (null: none).
      max_file_upload_size_mib: Math.floor((ctx.uploads?.maxFileBytes ?? 25 * 1024 * 1024) / (1024 * 1024)),
      realm_upload_quota: realmQuota(realm.upload_quota_bytes, ctx.uploads?.realmQuotaBytes ?? 0),
    };
  },

  async update_global_notifications(_prisma, actor) {
    return { ...pick(actor, GLOBAL_NOTIFICATION_SETTINGS), available_notification_sounds: NOTIFICATION_SOUNDS.filter((sound) => sound !== "none") };
  },

  async update_display_settings(_prisma, actor) {
    return { ...pick(actor, DISPLAY_SETTINGS), emojiset_choices: EMOJISET_CHOICES };
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

  // Sent with every response (as Zulip from feature level 3); a section so that asking is valid.
  async zulip_version() {
    return {};
  },
};

/** Zulip's UserProfile.emojiset_choices(). */
const EMOJISET_NAMES: Record<(typeof EMOJISETS)[number], string> = { google: "Google modern", "google-blob": "Google classic", twitter: "Twitter", text: "Plain text" };
const EMOJISET_CHOICES = EMOJISETS.map((key) => ({ key, text: EMOJISET_NAMES[key] }));

/**
 * The sections each event type keeps current, where they are not just the section of its own name.
 * /register applies an arrived event only if it keeps a fetched section (Zulip skips event types
 * not in fetch_event_types; matching through sections, a `user_group` event still reaches a
 * fetched `realm_user_groups`).
 */
const EVENT_SECTIONS: Record<string, string[]> = {
  message: ["message", "update_message_flags", "recent_private_conversations"],
  update_message_flags: ["update_message_flags", "starred_messages"],
  update_message: ["update_message_flags"],
  delete_message: ["message", "update_message_flags", "starred_messages", "recent_private_conversations"],
  user_group: ["realm_user_groups"],
  stream: ["stream", "subscription"],
};

/** Whether /register applies an event of this type, given the sections it fetched (null: all). */
export function appliesToFetched(eventType: string, fetched: string[] | null): boolean {
  if (fetched === null) return true;
  const sections = new Set(fetched.map(sectionName));
  return (EVENT_SECTIONS[eventType] ?? [eventType]).some((section) => sections.has(section));
}

/** The state as clients get it, once events are applied (Zulip's post_process_state). */
export function finishState(state: State): State {
  finishUnreadState(state);
  return state;
}

/** The sections a registration asked for; unknown names have no state and are skipped. */
export async function fetchInitialState(prisma: PrismaClient, actor: Actor, options: RegisterOptions, ctx: ServerContext): Promise<State> {
  return fetchSections(prisma, actor, options, ctx, Object.keys(STATE_SECTIONS).filter((section) => wants(options, section)));
}

/** These sections, read afresh (also for the ones events left stale). */
export async function fetchSections(prisma: PrismaClient, actor: Actor, options: RegisterOptions, ctx: ServerContext, sections: string[]): Promise<State> {
  const parts = await Promise.all(sections.map((section) => STATE_SECTIONS[section](prisma, actor, options, ctx)));
  return Object.assign({}, ...parts);
}
