// The shapes responses and events share (the API document's components.schemas): each written
// once, and referred to by name (`schema.ref("Message")`) from the endpoints' contracts. A shape
// lists every field the server sends; a field present only sometimes is optional, never absent
// from the list. The tests validate every response and event against them (openapi.ts).
import { schema as s } from "./endpoints.ts";
import type { JsonSchema } from "./params.ts";
import { EVENT_SCHEMAS } from "./event-shapes.ts";
import { PERSONAL_SETTINGS } from "@chat/core";

const string = s.string();
const integer = s.integer();
const boolean = s.boolean();
const nullableInteger = s.nullable(integer);
const nullableString = s.nullable(string);
const nullableBoolean = s.nullable(boolean);
const stringList = s.array(string);
const integerList = s.array(integer);

/**
 * A group-setting value (Zulip 10.0, feature level 309): a named group's id, or an anonymous group
 * as its direct members and direct subgroups.
 */
const GROUP_SETTING_VALUE = s.anyOf(integer, s.object({ direct_members: integerList, direct_subgroups: integerList }));

/** Roles: 100 owner, 200 administrator, 400 member, 600 guest. */
const ROLE = s.enum(100, 200, 300, 400, 600);

/** A linkifier link's URL (Zulip 3.x; `{text, url}` objects are feature level 46). */
const TOPIC_LINK = string;

const REACTION = s.object({
  emoji_name: string,
  emoji_code: string,
  reaction_type: s.enum("unicode_emoji", "realm_emoji", "zulip_extra_emoji"),
  user_id: integer,
  user: s.object({ user_id: integer, email: string, full_name: string }),
});

/** A message's submessage: its widget, or a change to it; content is JSON text. */
const SUBMESSAGE = s.object({ msg_type: string, content: string, message_id: integer, sender_id: integer, id: integer });

const DISPLAY_RECIPIENT_USER = s.object({ id: integer, email: string, full_name: string, short_name: string, is_mirror_dummy: boolean });

/** The fields of a Message (as GET /messages and `message` events show it). */
const MESSAGE_FIELDS = {
  required: {
    id: integer,
    sender_id: integer,
    sender_full_name: string,
    sender_short_name: string,
    sender_email: string,
    sender_realm_str: string,
    recipient_id: integer,
    type: s.enum("stream", "private"),
    display_recipient: s.anyOf(string, s.array(DISPLAY_RECIPIENT_USER)),
    subject: string,
    topic_links: s.array(TOPIC_LINK),
    subject_links: s.array(TOPIC_LINK),
    content: string,
    content_type: s.enum("text/html", "text/x-markdown"),
    timestamp: integer,
    client: string,
    is_me_message: boolean,
    reactions: s.array(s.ref("Reaction")),
    submessages: s.array(s.ref("Submessage")),
    avatar_url: nullableString,
  },
  optional: {
    stream_id: integer,
    flags: stringList,
    /** When the content was last edited (a move alone no longer sets it, feature level 365). */
    last_edit_timestamp: integer,
    /** When the message was last moved to another channel or topic; not for resolving a topic (feature level 365). */
    last_moved_timestamp: integer,
    /** With a search narrow: the content and topic with the matches marked. */
    match_content: string,
    match_subject: string,
  },
};

const MESSAGE = s.object(MESSAGE_FIELDS.required, MESSAGE_FIELDS.optional);

const PROFILE_DATA = s.dict(s.object({ value: string }, { rendered_value: nullableString }));

const USER_FIELDS = {
  required: {
    user_id: integer,
    email: string,
    full_name: string,
    is_active: boolean,
    is_admin: boolean,
    is_owner: boolean,
    is_guest: boolean,
    is_bot: boolean,
    role: ROLE,
    timezone: string,
    date_joined: string,
    avatar_url: nullableString,
    avatar_version: integer,
    avatar_source: s.enum("G", "U"),
  },
  optional: {
    bot_type: nullableInteger,
    bot_owner_id: nullableInteger,
    /** For those who may see it; to clients of today's API always, null for the others (feature level 163). */
    delivery_email: nullableString,
    profile_data: PROFILE_DATA,
    /** The server's own bots (cross_realm_bots). */
    is_cross_realm_bot: boolean,
    /** The server's own bots (cross_realm_bots), feature level 83's name. */
    is_system_bot: boolean,
  },
};

const USER = s.object(USER_FIELDS.required, USER_FIELDS.optional);

const OWN_USER = s.object(
  { result: s.const("success"), msg: string, ...USER_FIELDS.required, short_name: string, client_id: string, max_message_id: integer, pointer: integer },
  USER_FIELDS.optional,
);

const STREAM_FIELDS = {
  stream_id: integer,
  name: string,
  description: string,
  rendered_description: string,
  invite_only: boolean,
  is_web_public: boolean,
  stream_post_policy: s.enum(1, 2, 3, 4),
  is_announcement_only: boolean,
  history_public_to_subscribers: boolean,
  first_message_id: nullableInteger,
  message_retention_days: nullableInteger,
  date_created: integer,
  // Who created it (feature level 254), null if unknown.
  creator_id: nullableInteger,
  // Archived (feature level 315); messages in the last 180 days (feature level 323).
  is_archived: boolean,
  is_recently_active: boolean,
  // Zulip 10.0's channel permissions, each a group-setting value: who may subscribe others (342),
  // administer it (325), unsubscribe others (any group since 320), post (333; stream_post_policy
  // is the integer policy closest to it that lets no fewer post), subscribe themselves (357).
  can_add_subscribers_group: GROUP_SETTING_VALUE,
  can_administer_channel_group: GROUP_SETTING_VALUE,
  can_remove_subscribers_group: GROUP_SETTING_VALUE,
  can_send_message_group: GROUP_SETTING_VALUE,
  can_subscribe_group: GROUP_SETTING_VALUE,
};

/** Messages a week, on streams since feature level 199 (null: too new to say; this server does not count). */
const STREAM_OPTIONAL_FIELDS = { stream_weekly_traffic: nullableInteger };

const STREAM = s.object(STREAM_FIELDS, STREAM_OPTIONAL_FIELDS);

/** A stream with its subscribers (never_subscribed, with include_subscribers). */
const STREAM_WITH_SUBSCRIBERS = s.object(STREAM_FIELDS, { ...STREAM_OPTIONAL_FIELDS, subscribers: integerList });

const SUBSCRIPTION = s.object(
  {
    ...STREAM_FIELDS,
    color: string,
    is_muted: boolean,
    in_home_view: boolean,
    pin_to_top: boolean,
    desktop_notifications: nullableBoolean,
    audible_notifications: nullableBoolean,
    push_notifications: nullableBoolean,
    email_notifications: nullableBoolean,
    wildcard_mentions_notify: nullableBoolean,
    email_address: string,
    stream_weekly_traffic: nullableInteger,
  },
  // User ids in /register and events, emails from GET /users/me/subscriptions.
  { subscribers: s.anyOf(integerList, stringList) },
);

const ATTACHMENT = s.object({
  id: integer,
  name: string,
  path_id: string,
  size: integer,
  create_time: integer,
  // `name` is the message's time, as Zulip has it.
  messages: s.array(s.object({ id: integer, name: integer })),
});

const EDIT_HISTORY_SNAPSHOT = s.object(
  { topic: string, timestamp: integer, user_id: nullableInteger },
  {
    content: string,
    rendered_content: string,
    prev_content: string,
    prev_rendered_content: string,
    content_html_diff: string,
    prev_topic: string,
    // A move to another stream (feature level 118): the stream ids after and before.
    stream: integer,
    prev_stream: integer,
  },
);

const REALM_EMOJI = s.object({
  id: string,
  name: string,
  source_url: string,
  deactivated: boolean,
  author: s.nullable(s.object({ id: integer, email: string, full_name: string })),
  author_id: nullableInteger,
  still_url: nullableString,
});

const CUSTOM_PROFILE_FIELD = s.object(
  { id: integer, name: string, type: integer, hint: string, field_data: string, order: integer },
  // Feature levels 244, 146 (display_in_profile_summary only when true, as Zulip) and 296.
  { required: boolean, display_in_profile_summary: s.const(true), editable_by_user: boolean },
);

const USER_GROUP = s.object(
  {
    id: integer,
    name: string,
    description: string,
    // Active users only (feature level 303).
    members: integerList,
    direct_subgroup_ids: integerList,
    is_system_group: boolean,
    deactivated: boolean,
    // Feature level 292: null for groups older than the fields.
    creator_id: nullableInteger,
    date_created: nullableInteger,
    // Zulip 10.0's group settings (feature levels 283-324), each a group-setting value.
    can_add_members_group: GROUP_SETTING_VALUE,
    can_join_group: GROUP_SETTING_VALUE,
    can_leave_group: GROUP_SETTING_VALUE,
    can_manage_group: GROUP_SETTING_VALUE,
    can_mention_group: GROUP_SETTING_VALUE,
    can_remove_members_group: GROUP_SETTING_VALUE,
  },
  {},
);

/** Zulip's GroupPermissionSetting (feature level 221; 326 removed allow_owners_group and id_field_name). */
const GROUP_PERMISSION_SETTING = s.object({
  require_system_group: boolean,
  allow_internet_group: boolean,
  allow_nobody_group: boolean,
  allow_everyone_group: boolean,
  default_group_name: string,
  default_for_system_groups: nullableString,
  allowed_system_groups: stringList,
});

// Its streams as ids for today's clients (feature level 330), whole streams for 3.x-era ones (lib/default-stream-ids.ts).
const DEFAULT_STREAM_GROUP = s.object({ id: integer, name: string, description: string, streams: s.anyOf(s.array(s.ref("Stream")), integerList) });

/** GET /bots. */
const BOT = s.object({
  user_id: integer,
  username: string,
  full_name: string,
  api_key: string,
  avatar_url: string,
  default_sending_stream: nullableString,
  default_events_register_stream: nullableString,
  default_all_public_streams: boolean,
});

/** An outgoing webhook bot's service, or an embedded bot's. */
const BOT_SERVICE = s.anyOf(s.object({ base_url: string, interface: integer, token: string }), s.object({ service_name: string, config_data: s.dict(string) }));

/** realm_bots in /register and realm_bot events: a bot as its owner (or an administrator) sees it. */
const OWNED_BOT = s.object({
  email: string,
  user_id: integer,
  full_name: string,
  bot_type: nullableInteger,
  is_active: boolean,
  api_key: string,
  default_sending_stream: nullableString,
  default_events_register_stream: nullableString,
  default_all_public_streams: boolean,
  owner_id: nullableInteger,
  avatar_url: string,
  services: s.array(s.ref("BotService")),
});

/** One client's presence; `aggregated` has no `pushable`. */
const CLIENT_PRESENCE = s.object({ status: s.enum("active", "idle", "offline"), timestamp: integer }, { client: string, pushable: boolean });

/** A user's presence by client name, with `aggregated`. */
const USER_PRESENCE = s.dict(CLIENT_PRESENCE);

/** A user's presence as slim_presence has it (Zulip's modern form). */
const MODERN_PRESENCE = s.object({ active_timestamp: integer, idle_timestamp: integer });

/** Every user's presence, by email (or in the modern form by user id, with slim_presence). */
const REALM_PRESENCES = s.dict(s.anyOf(USER_PRESENCE, MODERN_PRESENCE));

const TOPIC = s.object({ name: string, max_id: integer });

/** [pattern, url_format_string, id]. */
const LINKIFIER = { type: "array", prefixItems: [string, string, integer], minItems: 3, maxItems: 3 };

const EXTERNAL_AUTHENTICATION_METHOD = s.object({ name: string, display_name: string, display_icon: nullableString, login_url: string, signup_url: string });

const UNREAD_MSGS = s.object({
  count: integer,
  pms: s.array(s.object({ other_user_id: integer, sender_id: integer, unread_message_ids: integerList })),
  streams: s.array(s.object({ stream_id: integer, topic: string, unread_message_ids: integerList }, { sender_ids: integerList })),
  huddles: s.array(s.object({ user_ids_string: string, unread_message_ids: integerList })),
  mentions: integerList,
  old_unreads_missing: boolean,
});

/** Zulip 9.0's user_settings object (POST /register): every personal setting, with the values Zulip allows. */
const USER_SETTINGS = s.object({
  ...Object.fromEntries(PERSONAL_SETTINGS.map((setting) => [setting.name, setting.allowed ? s.enum(...(setting.allowed as Array<string | number>)) : { boolean, integer, string }[setting.type]])),
  email_address_visibility: s.enum(1, 2, 3, 4, 5),
  available_notification_sounds: stringList,
  emojiset_choices: s.array(s.object({ key: string, text: string })),
});

/** A muted topic: [stream name, topic, when muted (UNIX time)]. */
const MUTED_TOPIC = { type: "array", prefixItems: [string, string, integer], minItems: 2, maxItems: 3 };

/** A synchronised draft (feature level 87): `to` the stream's id or the people's; type "" goes nowhere yet. */
const DRAFT = s.object({ id: integer, type: s.enum("", "stream", "private"), to: integerList, topic: string, content: string, timestamp: integer });

/** A saved snippet (feature level 297): `date_created` in Unix seconds. */
const SAVED_SNIPPET = s.object({ id: integer, title: string, content: string, date_created: integer });

/** A scheduled message not yet sent (feature level 179): a stream's `to` is its id, a direct message's the people's. */
const SCHEDULED_MESSAGE_COMMON = { scheduled_message_id: integer, content: string, rendered_content: string, scheduled_delivery_timestamp: integer, failed: boolean };
const SCHEDULED_MESSAGE = s.oneOf(
  s.object({ ...SCHEDULED_MESSAGE_COMMON, type: s.const("stream"), to: integer, topic: string }),
  s.object({ ...SCHEDULED_MESSAGE_COMMON, type: s.const("private"), to: integerList }),
);

/**
 * POST /register: the queue, and the sections of state `fetch_event_types` (else `event_types`)
 * asked for. Every section the server can send is listed here.
 */
const REGISTER_RESPONSE = s.object(
  // A spectator's registration (feature level 149) has no queue: queue_id null, no last_event_id.
  { result: s.const("success"), msg: string, queue_id: nullableString, zulip_version: string, zulip_feature_level: integer, zulip_merge_base: string },
  {
    last_event_id: integer,
    // alert_words
    alert_words: stringList,
    // drafts (feature level 87), scheduled_messages (feature level 179)
    drafts: s.array(s.ref("Draft")),
    scheduled_messages: s.array(s.ref("ScheduledMessage")),
    // saved_snippets (feature level 297)
    saved_snippets: s.array(s.ref("SavedSnippet")),
    // custom_profile_fields
    custom_profile_fields: s.array(s.ref("CustomProfileField")),
    custom_profile_field_types: s.dict(s.object({ id: integer, name: string })),
    // default streams and groups
    realm_default_streams: s.anyOf(s.array(s.ref("Stream")), integerList),
    realm_default_stream_groups: s.array(s.ref("DefaultStreamGroup")),
    // hotspots, invites, ...
    hotspots: s.array(s.object({ name: string, title: string, description: string, delay: s.number() })),
    // message
    max_message_id: integer,
    // muted_topics
    muted_topics: s.array(MUTED_TOPIC),
    // user_topic: the user's topic visibility policies (feature level 134)
    user_topics: s.array(s.object({ stream_id: integer, topic_name: string, last_updated: integer, visibility_policy: s.enum(1, 2, 3) })),
    // pointer
    pointer: integer,
    // presence
    presences: s.ref("RealmPresences"),
    // Feature levels 70 and 263: when the presences were read, and the newest change among them.
    server_timestamp: s.number(),
    presence_last_update_id: integer,
    // realm
    realm_uri: string,
    realm_name: string,
    realm_description: string,
    realm_icon_url: string,
    realm_icon_source: string,
    realm_logo_source: string,
    realm_bot_domain: string,
    // Feature level 243's form: whether each backend is on, and whether it could be.
    realm_authentication_methods: s.dict(s.object({ enabled: boolean, available: boolean }, { unavailable_reason: string })),
    realm_available_video_chat_providers: s.dict(s.any()),
    realm_notifications_stream_id: integer,
    realm_signup_notifications_stream_id: integer,
    realm_message_retention_days: nullableInteger,
    // null (no limit) to clients of today's API, where 3.x clients get 0 (modern-realm-settings.ts).
    realm_message_content_edit_limit_seconds: nullableInteger,
    realm_message_content_delete_limit_seconds: nullableInteger,
    realm_upload_quota: nullableInteger,
    realm_default_language: string,
    realm_digest_weekday: integer,
    realm_email_address_visibility: integer,
    realm_video_chat_provider: integer,
    realm_waiting_period_threshold: integer,
    realm_create_stream_policy: integer,
    realm_invite_to_stream_policy: integer,
    realm_invite_to_realm_policy: integer,
    // Deprecated since feature levels 299 and 352: the superset of the group setting that best
    // approximates it (lib/permissions.ts's legacyRealmPolicies); 3.x clients read them all.
    realm_user_group_edit_policy: integer,
    realm_private_message_policy: integer,
    realm_wildcard_mention_policy: integer,
    realm_bot_creation_policy: integer,
    ...Object.fromEntries(
      [
        "realm_add_emoji_by_admins_only",
        "realm_allow_community_topic_editing",
        "realm_allow_edit_history",
        "realm_allow_message_deleting",
        "realm_allow_message_editing",
        "realm_avatar_changes_disabled",
        "realm_default_twenty_four_hour_time",
        "realm_digest_emails_enabled",
        "realm_disallow_disposable_email_addresses",
        "realm_email_auth_enabled",
        "realm_email_changes_disabled",
        "realm_enable_read_receipts",
        "realm_emails_restricted_to_domains",
        "realm_inline_image_preview",
        "realm_inline_url_embed_preview",
        "realm_invite_required",
        "realm_is_zephyr_mirror_realm",
        "realm_mandatory_topics",
        "realm_message_content_allowed_in_email_notifications",
        "realm_name_changes_disabled",
        "realm_name_in_notifications",
        "realm_password_auth_enabled",
        "realm_presence_disabled",
        "realm_push_notifications_enabled",
        "realm_send_welcome_emails",
      ].map((name) => [name, boolean]),
    ),
    // Feature level 358: who sees messages' edit history (realm_allow_edit_history: not "none").
    realm_message_edit_history_visibility_policy: s.enum("all", "moves", "none"),
    max_stream_name_length: integer,
    max_stream_description_length: integer,
    max_topic_length: integer,
    max_message_length: integer,
    max_file_upload_size_mib: integer,
    realm_url: string,
    realm_date_created: integer,
    // Deprecated (feature levels 102 and 280): the superset of each stream-creation group setting
    // that best approximates it, for clients of today's API.
    realm_create_public_stream_policy: s.enum(1, 2, 3, 4),
    realm_create_private_stream_policy: s.enum(1, 2, 3, 4),
    realm_create_web_public_stream_policy: s.enum(2, 4, 6, 7),
    realm_move_messages_within_stream_limit_seconds: nullableInteger,
    realm_move_messages_between_streams_limit_seconds: nullableInteger,
    realm_upload_quota_mib: nullableInteger,
    realm_enable_spectator_access: boolean,
    server_web_public_streams_enabled: boolean,
    realm_org_type: integer,
    // Every realm group setting as a group-setting value (feature levels 209 to 367; 314 for
    // create_multiuse_invite_group and can_access_all_users_group).
    ...Object.fromEntries(
      [
        "create_multiuse_invite_group", "can_access_all_users_group", "can_create_public_channel_group",
        "can_create_private_channel_group", "can_create_web_public_channel_group", "direct_message_initiator_group",
        "direct_message_permission_group",
        "can_add_custom_emoji_group", "can_add_subscribers_group", "can_create_bots_group", "can_create_groups",
        "can_create_write_only_bots_group", "can_delete_any_message_group", "can_delete_own_message_group",
        "can_invite_users_group", "can_manage_all_groups", "can_manage_billing_group", "can_mention_many_users_group",
        "can_move_messages_between_channels_group", "can_move_messages_between_topics_group", "can_resolve_topics_group",
        "can_summarize_topics_group",
      ].map((name) => [`realm_${name}`, GROUP_SETTING_VALUE]),
    ),
    // Feature level 221: each group setting, what it may be set to and its default.
    server_supported_permission_settings: s.object({ realm: s.dict(s.ref("GroupPermissionSetting")), stream: s.dict(s.ref("GroupPermissionSetting")), group: s.dict(s.ref("GroupPermissionSetting")) }),
    // Zulip 9.0's organization settings that are not permissions (0035), and server facts.
    realm_want_advertise_in_communities_directory: boolean,
    realm_jitsi_server_url: nullableString,
    realm_enable_guest_user_indicator: boolean,
    realm_require_unique_names: boolean,
    realm_giphy_rating: integer,
    realm_default_code_block_language: string,
    realm_new_stream_announcements_stream_id: integer,
    realm_signup_announcements_stream_id: integer,
    realm_zulip_update_announcements_stream_id: integer,
    // Zulip 10.0 (feature levels 331, 338, 348, 350, 363, 369).
    realm_moderation_request_channel_id: integer,
    realm_enable_guest_user_dm_warning: boolean,
    password_max_length: integer,
    server_can_summarize_topics: boolean,
    navigation_tour_video_url: nullableString,
    // Feature level 334: what the empty topic shows as (clients without empty_topic_name get it instead of "").
    realm_empty_topic_display_name: string,
    realm_billing: s.object({ has_pending_sponsorship_request: boolean }),
    realm_plan_type: integer,
    zulip_plan_is_not_limited: boolean,
    realm_push_notifications_enabled_end_timestamp: nullableInteger,
    realm_logo_url: string,
    realm_night_logo_url: string,
    realm_night_logo_source: string,
    upgrade_text_for_wide_organization_logo: string,
    settings_send_digest_emails: boolean,
    server_generation: integer,
    development_environment: boolean,
    server_inline_image_preview: boolean,
    server_inline_url_embed_preview: boolean,
    server_avatar_changes_disabled: boolean,
    server_name_changes_disabled: boolean,
    server_needs_upgrade: boolean,
    server_min_deactivated_realm_deletion_days: s.nullable(integer),
    server_max_deactivated_realm_deletion_days: s.nullable(integer),
    server_jitsi_server_url: nullableString,
    jitsi_server_url: nullableString,
    max_avatar_file_size_mib: integer,
    max_icon_file_size_mib: integer,
    max_logo_file_size_mib: integer,
    giphy_rating_options: s.dict(s.object({ name: string, id: integer })),
    realm_default_external_accounts: s.dict(s.object({ text: string, name: string, hint: string, url_pattern: string })),
    password_min_length: integer,
    password_min_guesses: integer,
    server_emoji_data_url: string,
    event_queue_longpoll_timeout_seconds: integer,
    server_presence_ping_interval_seconds: integer,
    server_presence_offline_threshold_seconds: integer,
    server_typing_started_expiry_period_milliseconds: integer,
    server_typing_stopped_wait_period_milliseconds: integer,
    server_typing_started_wait_period_milliseconds: integer,
    server_thumbnail_formats: s.array(s.object({ name: string, max_width: integer, max_height: integer, animated: boolean, format: string })),
    // The users the user muted (feature level 48), in the order they were muted.
    muted_users: s.array(s.object({ id: integer, timestamp: integer })),
    // realm_linkifiers, realm_playgrounds, onboarding_steps: none here (see initial-state.ts)
    realm_linkifiers: s.array(s.object({ id: integer, pattern: string, url_template: string })),
    realm_playgrounds: s.array(s.object({ id: integer, name: string, pygments_language: string, url_template: string })),
    onboarding_steps: s.array(s.object({ type: string, name: string })),
    has_zoom_token: boolean,
    giphy_api_key: string,
    // realm_bot
    realm_bots: s.array(s.ref("OwnedBot")),
    // realm_domains
    realm_domains: s.array(s.object({ domain: string, allow_subdomains: boolean })),
    // realm_emoji
    realm_emoji: s.dict(s.ref("RealmEmoji")),
    // realm_filters
    realm_filters: s.array(s.ref("Linkifier")),
    // realm_user
    realm_users: s.array(s.ref("User")),
    realm_non_active_users: s.array(s.ref("User")),
    cross_realm_bots: s.array(s.ref("User")),
    avatar_source: string,
    avatar_url: nullableString,
    avatar_url_medium: nullableString,
    can_create_streams: boolean,
    // 3.x clients only since feature level 341.
    can_subscribe_other_users: boolean,
    can_invite_others_to_realm: boolean,
    delivery_email: string,
    email: string,
    full_name: string,
    is_admin: boolean,
    is_owner: boolean,
    is_guest: boolean,
    is_moderator: boolean,
    role: ROLE,
    user_id: integer,
    // realm_user_groups
    realm_user_groups: s.array(s.ref("UserGroup")),
    // recent_private_conversations
    recent_private_conversations: s.array(s.object({ max_message_id: integer, user_ids: integerList })),
    // starred_messages
    starred_messages: integerList,
    // stream
    streams: s.array(s.ref("Stream")),
    stream_name_max_length: integer,
    stream_description_max_length: integer,
    // subscription
    subscriptions: s.array(s.ref("Subscription")),
    unsubscribed: s.array(s.ref("Subscription")),
    never_subscribed: s.array(STREAM_WITH_SUBSCRIBERS),
    // update_display_settings
    twenty_four_hour_time: boolean,
    dense_mode: boolean,
    starred_message_counts: boolean,
    fluid_layout_width: boolean,
    high_contrast_mode: boolean,
    color_scheme: integer,
    translate_emoticons: boolean,
    default_language: string,
    default_view: string,
    left_side_userlist: boolean,
    emojiset: string,
    demote_inactive_streams: integer,
    timezone: string,
    emojiset_choices: s.array(s.object({ key: string, text: string })),
    // update_global_notifications
    enable_stream_desktop_notifications: boolean,
    enable_stream_email_notifications: boolean,
    enable_stream_push_notifications: boolean,
    enable_stream_audible_notifications: boolean,
    wildcard_mentions_notify: boolean,
    notification_sound: string,
    enable_desktop_notifications: boolean,
    enable_sounds: boolean,
    enable_offline_email_notifications: boolean,
    enable_offline_push_notifications: boolean,
    enable_online_push_notifications: boolean,
    enable_digest_emails: boolean,
    enable_login_emails: boolean,
    message_content_in_email_notifications: boolean,
    pm_content_in_desktop_notifications: boolean,
    desktop_icon_count_display: integer,
    realm_name_in_notifications: boolean,
    presence_enabled: boolean,
    available_notification_sounds: stringList,
    enter_sends: boolean,
    // user_settings
    user_settings: USER_SETTINGS,
    // realm_user_settings_defaults (feature level 95): what new users start with.
    realm_user_settings_defaults: s.object({}, {
      ...Object.fromEntries(PERSONAL_SETTINGS.map((setting) => [setting.name, setting.allowed ? s.enum(...(setting.allowed as Array<string | number>)) : { boolean, integer, string }[setting.type]])),
      email_address_visibility: s.enum(1, 2, 3, 4, 5),
      available_notification_sounds: stringList,
      emojiset_choices: s.array(s.object({ key: string, text: string })),
    }),
    // message (unread)
    unread_msgs: s.ref("UnreadMessages"),
    // user_status
    user_status: s.dict(s.object({}, { away: boolean, status_text: string, emoji_name: string, emoji_code: string, reaction_type: string })),
    // embedded bots and incoming webhooks a bot can be
    realm_embedded_bots: s.array(s.object({ name: string, config: s.dict(string) })),
    // `config` was renamed `config_options`, a list (feature level 318).
    realm_incoming_webhook_bots: s.array(s.object({ name: string }, { config: s.dict(string), config_options: s.array(s.object({ key: string, label: string, validator: string })) })),
  },
);

/** Every shape of the API document's components.schemas, by name. */
export const API_SCHEMAS: Record<string, JsonSchema> = {
  Message: MESSAGE,
  Reaction: REACTION,
  Submessage: SUBMESSAGE,
  User: USER,
  OwnUser: OWN_USER,
  ProfileData: PROFILE_DATA,
  Stream: STREAM,
  Subscription: SUBSCRIPTION,
  Attachment: ATTACHMENT,
  EditHistorySnapshot: EDIT_HISTORY_SNAPSHOT,
  RealmEmoji: REALM_EMOJI,
  CustomProfileField: CUSTOM_PROFILE_FIELD,
  UserGroup: USER_GROUP,
  GroupPermissionSetting: GROUP_PERMISSION_SETTING,
  DefaultStreamGroup: DEFAULT_STREAM_GROUP,
  Bot: BOT,
  OwnedBot: OWNED_BOT,
  BotService: BOT_SERVICE,
  ClientPresence: CLIENT_PRESENCE,
  UserPresence: USER_PRESENCE,
  RealmPresences: REALM_PRESENCES,
  Topic: TOPIC,
  Linkifier: LINKIFIER,
  ExternalAuthenticationMethod: EXTERNAL_AUTHENTICATION_METHOD,
  UnreadMessages: UNREAD_MSGS,
  Draft: DRAFT,
  SavedSnippet: SAVED_SNIPPET,
  ScheduledMessage: SCHEDULED_MESSAGE,
  RegisterResponse: REGISTER_RESPONSE,
  ...EVENT_SCHEMAS,
};
