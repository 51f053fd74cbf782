// The state POST /register returns, section by section (Zulip's fetch_initial_state_data). Each
// section has Zulip's name, which `event_types` and `fetch_event_types` select; mostly the name of
// the event type that keeps it current (see EVENT_SECTIONS for the others).
import { Prisma, type PrismaClient, type StreamModel } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { Actor, UserProfile } from "../models.ts";
import { avatarUrl, realmIconUrl } from "../lib/avatars.ts";
import { formatStream, formatStreams, formatSubscription, inheritedNotificationSettings, resolveNullNotificationSettings, streamGroupValues } from "../lib/stream-format.ts";
import { subscribersByRecipient, subscriptionsOf, type SubscriptionWithStream } from "../queries/subscriptions.ts";
import { mutedTopicsOf, userTopicsOf } from "../queries/user-topics.ts";
import { mutedUsersOf } from "../queries/muted-users.ts";
import { EMBEDDED_BOTS } from "../lib/embedded-bots.ts";
import { ownedBotDicts } from "../queries/bots.ts";
import { isAdmin, isGuest, isOwner, isModerator } from "../lib/roles.ts";
import { legacyRealmPolicies } from "../lib/permissions.ts";
import { getAlertWords } from "../queries/alert-words.ts";
import { getDrafts } from "../queries/drafts.ts";
import { getSavedSnippets } from "../actions/saved-snippets.ts";
import { getScheduledMessages } from "../queries/scheduled-messages.ts";
import { getRealmPresences, getRealmPresencesSince, lastPresenceUpdateId, websitePresence } from "../queries/presence.ts";
import { getUserStatuses } from "../queries/user-status.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { archivedStreamsOf, metadataAccessViaGroupsSql, occupiedStreamsOf } from "../queries/streams.ts";
import { botDomain, isSystemBot } from "../actions/system-bots.ts";
import { EMOJISETS, legacyName, legacySettings, NOTIFICATION_SOUNDS, personalSettingValues, toLegacyValue, type LegacySection } from "../lib/personal-settings.ts";
import { ORGANIZATION_STATE_SECTIONS } from "./organization-state.ts";
import { defaultStreamGroupsWithIds, defaultStreamIdsOf } from "../lib/default-stream-ids.ts";
import { fetchRecentConversations } from "./recent-conversations.ts";
import { fetchRawUnreadMessages, finishUnreadState } from "./unread-state.ts";
import { JsonText } from "./json-text.ts";
import { restrictRealmUsers, restrictUserKeyedSections } from "./restricted-users.ts";
import { readRealmUsers, showOwnDeliveryEmail } from "./realm-state-cache.ts";
import { MODERN_REALM_LIMITS, modernRealmValue, REMOVED_REGISTER_POLICIES } from "../lib/modern-realm-settings.ts";
import { serverEmojiDataUrl } from "../lib/server-emoji-data.ts";
import { DEFAULT_EXTERNAL_ACCOUNTS } from "../actions/profile-fields.ts";
import { linkifierDicts } from "../actions/linkifiers.ts";
import { getRealmPlaygrounds } from "../actions/realm-playgrounds.ts";
import { nextOnboardingSteps } from "../actions/onboarding-steps.ts";
import { realmUserDefaultValues } from "../actions/realm-user-defaults.ts";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_GUESSES, PASSWORD_MIN_LENGTH } from "../lib/passwords.ts";
import { normalizedColor } from "../lib/validation.ts";
import { canAddSubscribers, canCreatePrivateStreams, canCreatePublicStreams, canInviteUsersByEmail, realmGroupSystemNames, serverSupportedPermissionSettings } from "../lib/group-permissions.ts";
import { realmGroupSettingsForApi } from "../lib/group-setting-values.ts";
import { webPublicStreamsEnabled } from "../lib/web-public.ts";
import { getRealmDomains } from "../queries/realm-domains.ts";
import { editHistoryPolicyName } from "../lib/edit-history-policy.ts";
import { EMPTY_TOPIC_DISPLAY_NAME, topicForClient } from "../lib/empty-topic.ts";

export interface RegisterOptions {
  /** Section names (Zulip's, or an alias) to fetch; null for all. */
  eventTypes: string[] | null;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  /** Feature level 263: only the presences changed after this update id (implies slim_presence). */
  presenceLastUpdateId?: number;
  /** Feature level 288: presences reported within this many days (14 when not given). */
  presenceHistoryLimitDays?: number;
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
  /** user_list_incomplete (feature level 232): users a guest may not access are left out, not "Unknown user". */
  userListIncomplete?: boolean;
  /** linkifier_url_template (feature level 176): realm_linkifiers with templates, and realm_filters empty. */
  linkifierUrlTemplate?: boolean;
  /** archived_channels (feature level 315): archived streams in `streams` and the subscription lists. */
  archivedChannels?: boolean;
  /**
   * The client declared a capability newer than Zulip 3.x (MODERN_CAPABILITIES): it gets events
   * in the shapes of today's Zulip where those replaced 3.x's without a capability of their own
   * (plural peer_add, realm_user deactivation as an update, message_type "direct"). A client that
   * declares none gets 3.x's shapes, which every client of that era parses.
   */
  modernClient: boolean;
  /** empty_topic_name (feature level 334): the empty topic as "" (else as realm_empty_topic_display_name) in unread_msgs, user_topics and events. */
  emptyTopicName?: boolean;
  /** The organization's URL as this request reached it (`realm_uri`). */
  realmUri: string;
  /** How often an idle long poll gets a heartbeat (EVENT_HEARTBEAT_SECONDS); Zulip's 45 when unset. */
  heartbeatSeconds?: number;
}

export type State = Record<string, unknown>;

function realmQuota(own: bigint | null, serverDefault: number): number | null {
  if (own !== null) return Number(own);
  return serverDefault > 0 ? serverDefault : null;
}

type Section = (prisma: PrismaClient, actor: Actor, options: RegisterOptions, ctx: ServerContext) => Promise<State>;

const REALM_SETTINGS = [
  "name",
  "description",
  "invite_required",
  "emails_restricted_to_domains",
  "disallow_disposable_email_addresses",
  "create_stream_policy",
  "invite_to_stream_policy",
  "invite_to_realm_policy",
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
  "enable_read_receipts",
  "org_type",
  "want_advertise_in_communities_directory",
  "jitsi_server_url",
  "enable_guest_user_indicator",
  "require_unique_names",
  "giphy_rating",
  "default_code_block_language",
] as const;

/** Zulip's default JITSI_SERVER_URL: the server's Jitsi, where an organization names none. */
const SERVER_JITSI_SERVER_URL = "https://meet.jit.si";

/** Zulip's server_generation: when this process started, in seconds. */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/** Zulip's Realm.GIPHY_RATING_OPTIONS (feature level 55); no GIPHY key here, so only the choice is kept. */
const GIPHY_RATING_OPTIONS = {
  disabled: { name: "GIPHY integration disabled", id: 0 },
  y: { name: "Allow GIFs rated Y (Very young audience)", id: 1 },
  g: { name: "Allow GIFs rated G (General audience)", id: 2 },
  pg: { name: "Allow GIFs rated PG (Parental guidance)", id: 3 },
  "pg-13": { name: "Allow GIFs rated PG-13 (Parental guidance - under 13)", id: 4 },
  r: { name: "Allow GIFs rated R (Restricted)", id: 5 },
};

/** Zulip's upload limits for avatars, icons and logos, in MiB (settings.MAX_*_FILE_SIZE_MIB). */
const MAX_IMAGE_FILE_SIZE_MIB = { avatar: 5, icon: 5, logo: 5 };

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

/**
 * Timings clients follow (Zulip's defaults): how often to report presence and when a user reads as
 * offline; when to send typing start and stop notices and when a start notice lapses.
 */
const CLIENT_TIMINGS = {
  server_presence_ping_interval_seconds: 60,
  server_presence_offline_threshold_seconds: 140,
  server_typing_started_expiry_period_milliseconds: 15000,
  server_typing_stopped_wait_period_milliseconds: 5000,
  server_typing_started_wait_period_milliseconds: 10000,
};

/**
 * How long a client waits on GET /events before giving up (zulip-flutter's request timeout): Zulip's
 * 90 s, longer if heartbeats are further apart, so one always arrives well before.
 */
export function longpollTimeoutSeconds(heartbeatSeconds = 45): number {
  return Math.max(90, heartbeatSeconds + 40);
}

/** Zulip's Stream.MAX_NAME_LENGTH and MAX_DESCRIPTION_LENGTH. */
const STREAM_NAME_MAX_LENGTH = 60;
const STREAM_DESCRIPTION_MAX_LENGTH = 1024;

/**
 * Zulip's authentication backends as realm_authentication_methods names them, in feature level
 * 243's form; this server has email and password only (single sign-on needs outside services).
 */
const AUTHENTICATION_METHODS = Object.fromEntries(
  ["Email", "Google", "GitHub", "GitLab", "LDAP", "Dev", "RemoteUser", "AzureAD", "SAML", "Apple", "OpenID Connect"].map((name) =>
    name === "Email" ? [name, { enabled: true, available: true }] : [name, { enabled: false, available: false, unavailable_reason: "Not offered by this server." }],
  ),
);

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

  // Deactivated groups only for clients with include_deactivated_groups (feature level 294).
  async realm_user_groups(prisma, actor, options, ctx) {
    const state = await ORGANIZATION_STATE_SECTIONS.realm_user_groups(prisma, actor, options, ctx);
    if (options.includeDeactivatedGroups) return state;
    return { realm_user_groups: (state.realm_user_groups as Array<{ deactivated: boolean }>).filter((group) => !group.deactivated) };
  },

  async message(prisma, actor) {
    const [row] = await prisma.$queryRaw<{ max: number | null }[]>`SELECT max(message_id) AS max FROM user_message WHERE user_id = ${actor.id}`;
    return { max_message_id: row?.max ?? -1 };
  },

  // Unread counts only for clients that follow both new messages and read changes, as Zulip. The
  // raw form is what events update; finishState turns it into `unread_msgs`.
  async update_message_flags(prisma, actor, options) {
    return wants(options, "message") ? { raw_unread_msgs: await fetchRawUnreadMessages(prisma, actor.id, options.emptyTopicName === true) } : {};
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
    // Clients of today's API get delivery_email for everyone, null where they may not see it (feature level 163).
    const allDeliveryEmails = options.modernClient;
    if (ctx.realmState) {
      const text = await ctx.realmState.realmUsers(actor.realm_id, { clientGravatar: options.clientGravatar, role: actor.role, allDeliveryEmails });
      users = { realm_users: text.active, realm_non_active_users: text.inactive, cross_realm_bots: JSON.parse(text.systemBots) as unknown };
    } else {
      const read = await readRealmUsers(prisma, actor.realm_id, { clientGravatar: options.clientGravatar, withDeliveryEmail: { role: actor.role, modern: allDeliveryEmails } });
      users = { realm_users: read.active, realm_non_active_users: read.inactive, cross_realm_bots: read.systemBots };
    }
    // One's own address is one's own, whatever one's email_address_visibility (today's clients).
    if (allDeliveryEmails) users.realm_users = showOwnDeliveryEmail(users.realm_users, actor);
    // A guest the realm's can_access_all_users_group leaves out knows only some users (restricted-users.ts).
    users = await restrictRealmUsers(prisma, actor, users, { userListIncomplete: options.userListIncomplete === true, realmUri: options.realmUri, emailDomain: botDomain(ctx) });
    return {
      ...users,
      user_id: actor.id,
      email: actor.email,
      delivery_email: actor.delivery_email,
      full_name: actor.full_name,
      is_admin: isAdmin(actor),
      is_owner: isOwner(actor),
      is_guest: isGuest(actor),
      is_moderator: isModerator(actor),
      role: actor.role,
      enter_sends: actor.enter_sends,
      // One's own avatar always as a URL, whatever client_gravatar says (Zulip #8253).
      avatar_source: actor.avatar_source,
      avatar_url: avatarUrl(actor, false),
      avatar_url_medium: avatarUrl(actor, false, true),
      // What subscribe.ts enforces (Zulip's can_create_streams, can_subscribe_other_users).
      // Zulip 9.0: either kind of stream (the realm's can_create_*_channel_group, lib/group-permissions.ts).
      can_create_streams: (await canCreatePublicStreams(prisma, actor)) || (await canCreatePrivateStreams(prisma, actor)),
      // Zulip 10.0: the realm's can_add_subscribers_group (removed from today's API at feature level
      // 341; 3.x clients still read it) and can_invite_users_group (321).
      ...(options.modernClient ? {} : { can_subscribe_other_users: await canAddSubscribers(prisma, actor) }),
      can_invite_others_to_realm: await canInviteUsersByEmail(prisma, actor),
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

  // The organization's email domains (/realm/domains; Zulip's get_realm_domains).
  async realm_domains(prisma, actor) {
    return { realm_domains: await getRealmDomains(prisma, actor.realm_id) };
  },

  // Hotspots are the web app's onboarding tips; this server has none to show.
  async hotspots() {
    return { hotspots: [] };
  },

  async subscription(prisma, actor, options, ctx) {
    const includeArchived = options.archivedChannels === true;
    const [all, active, archived] = await Promise.all([
      subscriptionsOf(prisma, actor.id, { activeOnly: false, includeArchived }),
      publicStreams(prisma, actor.realm_id, ctx),
      // Archived public streams are never_subscribed ones too for clients that know them (feature level 362).
      includeArchived ? prisma.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE realm_id = ${actor.realm_id} AND deactivated AND NOT invite_only ORDER BY id` : [],
    ]);
    // Private streams whose metadata the user sees through its groups: its channel administrators,
    // can_add_subscribers_group and can_subscribe_group (feature level 349).
    const viaGroups = await prisma.$queryRaw<StreamModel[]>`
      SELECT st.* FROM stream st WHERE st.realm_id = ${actor.realm_id} AND st.invite_only AND (NOT st.deactivated OR ${includeArchived})
        AND ${metadataAccessViaGroupsSql(actor)} ORDER BY st.id`;
    const streams = [...active, ...archived, ...viaGroups].sort((a, b) => a.id - b.id);
    const viaGroupIds = new Set(viaGroups.map((stream) => stream.id));
    const known = new Set(all.map((s) => s.stream.id));
    // Guests see only the web-public streams they are not in.
    const neverSubscribed = streams.filter((s) => !known.has(s.id) && (!isGuest(actor) || s.is_web_public));
    const recipients = [...all.filter((s) => s.subscription.active || !s.stream.invite_only || viaGroupIds.has(s.stream.id)).map((s) => s.stream), ...neverSubscribed].map((s) => s.recipient_id!);
    const subscribers = options.includeSubscribers ? await subscribersByRecipient(prisma, recipients, "ids") : null;
    const groupValues = await streamGroupValues(prisma, [...all.map((s) => s.stream), ...neverSubscribed]);
    const inherited = inheritedNotificationSettings(actor);
    const format = ({ subscription, stream }: SubscriptionWithStream) => {
      // Subscribers of a private stream one has left are not one's business (unless its groups make them so).
      const visible = subscription.active || !stream.invite_only || viaGroupIds.has(stream.id);
      const ids = subscribers && visible ? ((subscribers.get(stream.recipient_id!) as number[] | undefined) ?? []) : undefined;
      const formatted = formatSubscription(subscription, stream, { emailDomain: ctx.externalHost, subscribers: ids, groupValues });
      if (options.modernClient) formatted.color = normalizedColor(subscription.color);
      return options.notificationSettingsNull ? formatted : resolveNullNotificationSettings(formatted, inherited);
    };
    return {
      subscriptions: all.filter((s) => s.subscription.active).map(format),
      unsubscribed: all.filter((s) => !s.subscription.active).map(format),
      never_subscribed: neverSubscribed.map((stream) => ({
        ...formatStream(stream, groupValues),
        ...(subscribers ? { subscribers: (subscribers.get(stream.recipient_id!) as number[] | undefined) ?? [] } : {}),
      })),
    };
  },

  // The legacy list (muted topics only), left out for clients that ask for `user_topic` by name:
  // they have the same in `user_topics` (as Zulip 9).
  async muted_topics(prisma, actor, options) {
    if (options.eventTypes !== null && wants(options, "user_topic")) return {};
    const muted = await mutedTopicsOf(prisma, actor.id);
    return { muted_topics: options.emptyTopicName ? muted : muted.map(([stream, topic, at]) => [stream, topicForClient(topic, false), at]) };
  },

  async user_topic(prisma, actor, options) {
    const userTopics = await userTopicsOf(prisma, actor.id);
    return { user_topics: options.emptyTopicName ? userTopics : userTopics.map((item) => ({ ...item, topic_name: topicForClient(item.topic_name, false) })) };
  },

  async stream(prisma, actor, options, ctx) {
    const streams = await occupiedStreamsFor(prisma, actor, ctx);
    // Archived streams only for clients that declared archived_channels (feature level 315).
    if (options.archivedChannels) {
      const archived = await prisma.$queryRaw<Array<StreamModel & { subscribed: boolean }>>`
        SELECT st.*, EXISTS (SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.user_id = ${actor.id} AND s.active) AS subscribed
        FROM stream st WHERE ${archivedStreamsOf(actor.realm_id)}`;
      streams.push(...archived.map(({ subscribed, ...stream }) => ({ stream, subscribed })));
      streams.sort((a, b) => a.stream.id - b.stream.id);
    }
    // Web-public streams too, for guests (feature level 205); private ones whose groups let the
    // user see them (feature level 349).
    const viaGroups = new Set(
      (await prisma.$queryRaw<{ id: number }[]>`SELECT st.id FROM stream st WHERE st.realm_id = ${actor.realm_id} AND st.invite_only AND ${metadataAccessViaGroupsSql(actor)}`).map((row) => row.id),
    );
    const visible = streams
      .filter(({ stream, subscribed }) => (stream.invite_only || isGuest(actor) ? subscribed || stream.is_web_public || viaGroups.has(stream.id) : true))
      .map(({ stream }) => stream);
    return { streams: await formatStreams(prisma, visible), stream_name_max_length: STREAM_NAME_MAX_LENGTH, stream_description_max_length: STREAM_DESCRIPTION_MAX_LENGTH };
  },

  async realm(prisma, actor, options, ctx) {
    const realm = actor.realm;
    const live = await liveStreamIds(prisma, [realm.notifications_stream_id, realm.signup_notifications_stream_id, realm.zulip_update_announcements_stream_id, realm.moderation_request_channel_id], ctx.realmState?.streams(realm.id));
    const liveOrNone = (id: number | null) => (id !== null && live.has(id) ? id : -1);
    const settings = pick(realm, REALM_SETTINGS, "realm_");
    // Feature level 358 (realm_allow_edit_history, kept in step, says whether it is not "none").
    settings.realm_message_edit_history_visibility_policy = editHistoryPolicyName(realm.message_edit_history_visibility_policy);
    // The integer policies and 3.x booleans, as the superset of each group setting that replaced
    // them (feature levels 280 to 352): what older clients read, whatever the stored integers say.
    const legacy = legacyRealmPolicies(await realmGroupSystemNames(prisma, realm));
    for (const name of REALM_SETTINGS) if (name in legacy) settings[`realm_${name}`] = legacy[name];
    if (options.modernClient) {
      for (const name of REALM_SETTINGS) settings[`realm_${name}`] = modernRealmValue(name, settings[`realm_${name}`]);
      // A personal setting since feature level 163: user_settings has it, realm_user_settings_defaults what new users start with.
      delete settings.realm_email_address_visibility;
      // Zulip 9.0's limits for moving messages; of the integer policies, only the ones Zulip 10.0
      // still sends, deprecated (feature levels 280, 299, 352).
      Object.assign(settings, pick(realm, MODERN_REALM_LIMITS, "realm_"));
      for (const name of REMOVED_REGISTER_POLICIES) delete settings[`realm_${name}`];
      settings.realm_create_public_stream_policy = legacy.create_public_stream_policy;
      settings.realm_create_private_stream_policy = legacy.create_private_stream_policy;
      settings.realm_create_web_public_stream_policy = legacy.create_web_public_stream_policy;
    }
    const uploadQuota = realmQuota(realm.upload_quota_bytes, ctx.uploads?.realmQuotaBytes ?? 0);
    return {
      ...settings,
      realm_notifications_stream_id: liveOrNone(realm.notifications_stream_id),
      realm_signup_notifications_stream_id: liveOrNone(realm.signup_notifications_stream_id),
      // Feature levels 241 and 242's names.
      realm_new_stream_announcements_stream_id: liveOrNone(realm.notifications_stream_id),
      realm_signup_announcements_stream_id: liveOrNone(realm.signup_notifications_stream_id),
      realm_zulip_update_announcements_stream_id: liveOrNone(realm.zulip_update_announcements_stream_id),
      // Feature levels 331 and 348.
      realm_moderation_request_channel_id: liveOrNone(realm.moderation_request_channel_id),
      realm_enable_guest_user_dm_warning: realm.enable_guest_user_dm_warning,
      // Feature level 350: this server has no AI to summarize topics with.
      server_can_summarize_topics: false,
      // Feature level 369: no navigation tour video here.
      navigation_tour_video_url: null,
      realm_uri: options.realmUri,
      // Feature level 257's name for realm_uri.
      realm_url: options.realmUri,
      realm_date_created: Math.floor(realm.date_created.getTime() / 1000),
      realm_icon_url: realmIconUrl(realm),
      realm_bot_domain: botDomain(ctx),
      realm_authentication_methods: AUTHENTICATION_METHODS,
      realm_email_auth_enabled: true,
      realm_password_auth_enabled: true,
      realm_push_notifications_enabled: false,
      realm_presence_disabled: false,
      realm_is_zephyr_mirror_realm: false,
      realm_available_video_chat_providers: { disabled: { name: "None", id: 0 }, jitsi_meet: { name: "Jitsi Meet", id: 1 } },
      max_stream_name_length: STREAM_NAME_MAX_LENGTH,
      max_stream_description_length: STREAM_DESCRIPTION_MAX_LENGTH,
      max_topic_length: 60,
      max_message_length: 10000,
      // Zulip 3.x: the largest upload in MiB, and the organization's quota in bytes (null: none).
      max_file_upload_size_mib: Math.floor((ctx.uploads?.maxFileBytes ?? 25 * 1024 * 1024) / (1024 * 1024)),
      realm_upload_quota: uploadQuota,
      // Zulip 9's: the quota in MiB (feature levels 72 and 251).
      realm_upload_quota_mib: uploadQuota === null ? null : Math.floor(uploadQuota / (1024 * 1024)),
      // Spectators (feature levels 109, 110): the organization's choice, and whether the server allows web-public streams.
      realm_enable_spectator_access: realm.enable_spectator_access,
      server_web_public_streams_enabled: webPublicStreamsEnabled(ctx),
      // What this server has not: an organization type.
      realm_plan_type: 1, // self-hosted: no plan limits
      zulip_plan_is_not_limited: true,
      realm_push_notifications_enabled_end_timestamp: null,
      realm_logo_url: "",
      realm_night_logo_url: "",
      realm_night_logo_source: "D",
      upgrade_text_for_wide_organization_logo: "",
      settings_send_digest_emails: false,
      server_generation: SERVER_GENERATION,
      development_environment: false,
      server_inline_image_preview: true,
      server_inline_url_embed_preview: false,
      server_avatar_changes_disabled: false,
      server_name_changes_disabled: false,
      server_needs_upgrade: false,
      // Feature level 332: Zulip's defaults (MIN/MAX_DEACTIVATED_REALM_DELETION_DAYS); this server deletes no deactivated organization.
      server_min_deactivated_realm_deletion_days: 14,
      server_max_deactivated_realm_deletion_days: null,
      server_jitsi_server_url: SERVER_JITSI_SERVER_URL,
      jitsi_server_url: realm.jitsi_server_url ?? SERVER_JITSI_SERVER_URL,
      max_avatar_file_size_mib: MAX_IMAGE_FILE_SIZE_MIB.avatar,
      max_icon_file_size_mib: MAX_IMAGE_FILE_SIZE_MIB.icon,
      max_logo_file_size_mib: MAX_IMAGE_FILE_SIZE_MIB.logo,
      giphy_rating_options: GIPHY_RATING_OPTIONS,
      realm_default_external_accounts: DEFAULT_EXTERNAL_ACCOUNTS,
      password_min_length: PASSWORD_MIN_LENGTH,
      password_min_guesses: PASSWORD_MIN_GUESSES,
      // Feature level 338.
      password_max_length: PASSWORD_MAX_LENGTH,
      server_emoji_data_url: serverEmojiDataUrl(options.realmUri),
      event_queue_longpoll_timeout_seconds: longpollTimeoutSeconds(options.heartbeatSeconds),
      ...CLIENT_TIMINGS,
      // No thumbnails are made here: clients show the uploaded images themselves.
      server_thumbnail_formats: [],
      // Group-based permission settings (system group ids) and what each may be (feature level 221).
      // Every realm group setting as a group-setting value (feature levels 280 to 367; 314 for
      // create_multiuse_invite_group and can_access_all_users_group).
      ...(await realmGroupSettingsForApi(prisma, realm)),
      server_supported_permission_settings: serverSupportedPermissionSettings(),
      // Feature level 334: what clients show for the empty topic (and what clients without empty_topic_name get for it).
      realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    };
  },

  async muted_users(prisma, actor) {
    return { muted_users: await mutedUsersOf(prisma, actor.id) };
  },

  // Linkifiers in feature level 176's form go only to clients declaring linkifier_url_template;
  // others get none, as from Zulip 9 (3.x clients have them as realm_filters).
  async realm_linkifiers(prisma, actor, options) {
    return { realm_linkifiers: options.linkifierUrlTemplate ? await linkifierDicts(prisma, actor.realm_id) : [] };
  },

  // Zulip 3.x's tuples; empty for clients with linkifier_url_template, as Zulip 9.
  async realm_filters(prisma, actor, options, ctx) {
    return options.linkifierUrlTemplate ? { realm_filters: [] } : ORGANIZATION_STATE_SECTIONS.realm_filters(prisma, actor, options, ctx);
  },

  // Default channels as ids for today's clients (feature level 330); 3.x-era clients read whole streams (lib/default-stream-ids.ts).
  async default_streams(prisma, actor, options, ctx) {
    const state = await ORGANIZATION_STATE_SECTIONS.default_streams(prisma, actor, options, ctx);
    return options.modernClient ? { realm_default_streams: defaultStreamIdsOf(state.realm_default_streams) } : state;
  },

  async default_stream_groups(prisma, actor, options, ctx) {
    const state = await ORGANIZATION_STATE_SECTIONS.default_stream_groups(prisma, actor, options, ctx);
    return options.modernClient ? { realm_default_stream_groups: defaultStreamGroupsWithIds(state.realm_default_stream_groups) } : state;
  },

  // Code playgrounds (feature levels 49 and 196).
  async realm_playgrounds(prisma, actor) {
    return { realm_playgrounds: await getRealmPlaygrounds(prisma, actor.realm_id) };
  },

  // Feature level 233's name for hotspots: Zulip 9.0's one-time notices the user has not marked read.
  async onboarding_steps(prisma, actor) {
    return { onboarding_steps: await nextOnboardingSteps(prisma, actor.id) };
  },

  // What new users' personal settings start as (feature level 95).
  async realm_user_settings_defaults(prisma, actor) {
    return {
      realm_user_settings_defaults: {
        ...(await realmUserDefaultValues(prisma, actor.realm)),
        email_address_visibility: actor.realm.email_address_visibility,
        available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
        emojiset_choices: EMOJISET_CHOICES,
      },
    };
  },

  // No Zoom integration here: nobody has connected an account.
  async video_calls() {
    return { has_zoom_token: false };
  },

  // No GIPHY key: clients offer no GIF picker.
  async giphy() {
    return { giphy_api_key: "" };
  },

  // Zulip 3.x's top-level settings, by its names and values; a client with user_settings_object
  // has them in user_settings only (as Zulip 5.0 and later).
  async update_global_notifications(_prisma, actor, options) {
    if (options.userSettingsObject) return {};
    return { ...legacySettingValues(actor, "notification"), available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS };
  },

  async update_display_settings(_prisma, actor, options) {
    if (options.userSettingsObject) return {};
    return { ...legacySettingValues(actor, "display"), emojiset_choices: EMOJISET_CHOICES };
  },

  // Zulip 9.0's personal settings (feature level 89's user_settings object), with who may see the
  // user's real address (feature level 163; lib/email-visibility.ts).
  async user_settings(_prisma, actor) {
    return {
      user_settings: {
        ...personalSettingValues(actor),
        email_address_visibility: actor.email_address_visibility,
        available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
        emojiset_choices: EMOJISET_CHOICES,
      },
    };
  },

  async presence(prisma, actor, options) {
    if (options.presenceLastUpdateId !== undefined) {
      const since = await getRealmPresencesSince(prisma, actor.realm_id, options.presenceLastUpdateId, options.presenceHistoryLimitDays);
      return { presences: since.presences, presence_last_update_id: since.lastUpdateId, server_timestamp: Date.now() / 1000 };
    }
    const [presences, lastUpdateId] = await Promise.all([getRealmPresences(prisma, actor.realm_id, options.slimPresence, options.presenceHistoryLimitDays), lastPresenceUpdateId(prisma, actor.realm_id)]);
    // Today's clients without slim_presence get Zulip's form since feature level 178 (no client names).
    const shown = options.modernClient && !options.slimPresence ? Object.fromEntries(Object.entries(presences).map(([key, info]) => [key, websitePresence(info as Record<string, { status: string; timestamp: number }>)])) : presences;
    return { presences: shown, presence_last_update_id: lastUpdateId, server_timestamp: Date.now() / 1000 };
  },

  async user_status(prisma, actor) {
    return { user_status: await getUserStatuses(prisma, actor.realm_id) };
  },

  async alert_words(prisma, actor) {
    return { alert_words: await getAlertWords(prisma, actor.id) };
  },

  // Feature level 87: the newest drafts first (queries/drafts.ts).
  async drafts(prisma, actor) {
    return { drafts: await getDrafts(prisma, actor.id, { newestFirst: true }) };
  },

  // Feature level 363: no plans nor billing here, so nothing is pending.
  async realm_billing() {
    return { realm_billing: { has_pending_sponsorship_request: false } };
  },

  // Feature level 297: the user's saved snippets, oldest first.
  async saved_snippets(prisma, actor) {
    return { saved_snippets: await getSavedSnippets(prisma, actor.id) };
  },

  // Feature level 179: the user's messages not yet sent, failed ones included.
  async scheduled_messages(prisma, actor) {
    return { scheduled_messages: await getScheduledMessages(prisma, actor.id) };
  },

  // Sent with every response (as Zulip from feature level 3); a section so that asking is valid.
  async zulip_version() {
    return {};
  },
};

const AVAILABLE_NOTIFICATION_SOUNDS = NOTIFICATION_SOUNDS.filter((sound) => sound !== "none");

/** A 3.x section's settings as 3.x named and valued them. */
function legacySettingValues(actor: Actor, section: LegacySection): State {
  const values = personalSettingValues(actor);
  return Object.fromEntries(legacySettings(section).map((setting) => [legacyName(setting), toLegacyValue(setting, values[setting.name])]));
}

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
  // enter_sends is also the realm_user section's.
  user_settings: ["user_settings", "realm_user"],
  user_topic: ["user_topic", "update_message_flags"],
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
  // Presences and statuses of users a restricted guest may not access are not theirs to see.
  return restrictUserKeyedSections(prisma, actor, Object.assign({}, ...parts) as State);
}
