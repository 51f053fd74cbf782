// Property-based hostile input over every route: random and boundary values for every parameter a
// route reads (and random extra ones), in the form body or the query string, as a member, an
// admin, and for some routes a guest, a bot (an administrator: every /bots route refuses it) or nobody. Whatever arrives, the answer is a JSON success or a
// JSON error with a message, never a 5xx or a stack trace, and a refused request wrote nothing. Every
// answer is also checked against the API document (support/openapi.ts): its status one the endpoint
// declares, its body valid against that status's schema.
import http from "node:http";
import fc from "fast-check";
import { expressPath } from "@chat/http";
import { apiEndpoints, fileEndpoints } from "../../apps/api/src/app.ts";
import { eventEndpoints } from "../../apps/events/src/routes.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { imagePart, makePng, uploadFiles } from "../support/images.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { checkResponse } from "../support/openapi.ts";

/** Fixed so a CI failure replays locally (FUZZ_SEED explores others); each route's seed is this plus its index in ROUTES. */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
/** Runs per route and actor set; sized so each mode takes under ~3 minutes on a loaded 2-core machine. */
const NUM_RUNS = Number(process.env.FUZZ_NUM_RUNS ?? 30);

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
type Actor = "member" | "admin" | "guest" | "anonymous" | "forged" | "throwaway" | "bot";

/** A path parameter's fixture: a real row of that kind, so hostile values reach past the lookup. */
type Fixture = "message" | "stream" | "userGroup" | "defaultStreamGroup" | "filter" | "profileField" | "victim" | "emoji" | "email" | "realm" | "avatarFile" | "emojiFile" | "bot" | "deactivatedBot";

interface RouteCase {
  method: Method;
  /** Express template under /api/v1, as the route file declares it. */
  path: string;
  /** Every parameter the route reads from the body or query. */
  params: string[];
  /** Which fixture a path parameter names (the template's `:name`s, in order). */
  pathFixtures?: Fixture[];
  /** Who sends; member and admin unless said otherwise. */
  actors?: Actor[];
  /** Served at the root, not under /api/v1 (public files): a success is the file, not JSON. */
  root?: boolean;
  /** A page for a browser (password reset): a success, and its own refusals, are HTML. */
  page?: boolean;
}

/**
 * A request the route accepts, by route key: half the runs start from it and make one or two
 * parameters hostile, so hostile values reach the checks after parsing, and the actions.
 */
const VALID: Record<string, (f: Fixtures) => Record<string, string>> = {
  "POST /users/me/alert_words": () => ({ alert_words: '["fuzzword"]' }),
  "DELETE /users/me/alert_words": () => ({ alert_words: '["fuzzword"]' }),
  "POST /users/me/android_gcm_reg_id": () => ({ token: "fcm-token" }),
  "POST /users/me/apns_device_token": () => ({ token: "c0ffee", appid: "com.zulip.flutter" }),
  "POST /fetch_api_key": (f) => ({ username: f.memberEmail, password: "member-pass" }),
  "POST /dev_fetch_api_key": (f) => ({ username: f.memberEmail }),
  "POST /invites": () => ({ invitee_emails: "fuzz.invitee@example.com", stream_ids: "[]" }),
  "POST /invites/multiuse": () => ({ invite_as: "400", stream_ids: "[]" }),
  "GET /bot_storage": () => ({ keys: '["key"]' }),
  "PUT /bot_storage": () => ({ storage: '{"key":"value"}' }),
  "DELETE /bot_storage": () => ({ keys: '["key"]' }),
  "POST /default_streams": (f) => ({ stream_id: String(f.streamId) }),
  "DELETE /default_streams": (f) => ({ stream_id: String(f.streamId) }),
  "POST /default_stream_groups/create": () => ({ group_name: "fuzz dsg new", description: "d", stream_names: '["general"]' }),
  "PATCH /default_stream_groups/:group_id": () => ({ new_description: "d2" }),
  "POST /default_stream_groups/:group_id/streams": () => ({ op: "add", stream_names: '["general"]' }),
  "POST /realm/filters": () => ({ pattern: "#fuzz(?P<id>[0-9]+)", url_format_string: "https://x.test/%(id)s" }),
  "PATCH /realm/filters/:filter_id": () => ({ pattern: `#fz${Math.random().toString(36).slice(2, 8)}(?P<id>[0-9]+)`, url_template: "https://x.test/{id}" }),
  "POST /realm/playgrounds": () => ({ name: `fuzz ${Math.random().toString(36).slice(2, 8)}`, pygments_language: "Python", url_template: "https://play.test/{?code}" }),
  "PATCH /realm/user_settings_defaults": () => ({ color_scheme: "2" }),
  "POST /users/me/onboarding_steps": () => ({ onboarding_step: "intro_inbox_view_modal" }),
  "POST /streams/:stream_id/delete_topic": () => ({ topic_name: "fuzz topic nobody uses" }),
  "PATCH /messages/:message_id": () => ({ content: "edited", topic: "fuzz 2" }),
  "GET /messages/matches_narrow": (f) => ({ msg_ids: `[${f.messageId}]`, narrow: '[{"operator":"search","operand":"fuzz"}]' }),
  "POST /realm/domains": () => ({ domain: "fuzz.example.org", allow_subdomains: "false" }),
  "PATCH /realm/domains/:domain": () => ({ allow_subdomains: "true" }),
  "GET /calls/bigbluebutton/create": () => ({ meeting_name: "fuzz" }),
  "GET /messages": () => ({ anchor: "newest", num_before: "5", num_after: "0", narrow: '[["stream","general"]]' }),
  "POST /messages/flags": (f) => ({ messages: `[${f.messageId}]`, op: "add", flag: "starred" }),
  "POST /messages/flags/narrow": () => ({ anchor: "newest", num_before: "5", num_after: "0", narrow: '[{"operator":"channel","operand":"general"}]', op: "add", flag: "read" }),
  "POST /mark_stream_as_read": (f) => ({ stream_id: String(f.streamId) }),
  "POST /mark_topic_as_read": (f) => ({ stream_id: String(f.streamId), topic_name: "fuzz" }),
  "POST /messages": () => ({ type: "stream", to: "general", topic: "fuzz", content: "hello" }),
  "POST /users/me/presence": () => ({ status: "active" }),
  "POST /realm/profile_fields": () => ({ name: "fuzz field new", hint: "h", field_type: "1" }),
  "PATCH /realm/profile_fields": (f) => ({ order: `[${f.profileFieldId}]` }),
  "PATCH /realm/profile_fields/:field_id": () => ({ hint: "h2" }),
  "POST /messages/:message_id/reactions": () => ({ emoji_name: "octopus" }),
  "DELETE /messages/:message_id/reactions": () => ({ emoji_name: "octopus" }),
  "POST /submessage": (f) => ({ message_id: String(f.messageId), msg_type: "widget", content: '{"type":"vote","key":"canned,0","vote":1}' }),
  "PATCH /realm": () => ({ description: "fuzzed realm" }),
  "POST /messages/render": () => ({ content: "**bold** @**all**" }),
  "PATCH /settings": () => ({ full_name: "Fuzzed Name" }),
  "PATCH /settings/notifications": () => ({ enable_sounds: "true" }),
  "PATCH /settings/display": () => ({ dense_mode: "true" }),
  "POST /users/me/enter-sends": () => ({ enter_sends: "true" }),
  "GET /get_stream_id": () => ({ stream: "general" }),
  "GET /streams": () => ({ include_public: "true" }),
  "PATCH /streams/:stream_id": () => ({ description: "d" }),
  "GET /users/me/subscriptions": () => ({ include_subscribers: "true" }),
  "POST /users/me/subscriptions": () => ({ subscriptions: '[{"name":"fuzz extra"}]' }),
  "PATCH /users/me/subscriptions": () => ({ add: '[{"name":"general"}]' }),
  "DELETE /users/me/subscriptions": () => ({ subscriptions: '["fuzz extra"]' }),
  "POST /users/me/subscriptions/properties": (f) => ({ subscription_data: `[{"stream_id":${f.streamId},"property":"color","value":"#ffffff"}]` }),
  "PATCH /users/me/subscriptions/muted_topics": () => ({ stream: "general", topic: "fuzz", op: "add" }),
  "POST /user_topics": (f) => ({ stream_id: String(f.streamId), topic: "fuzz", visibility_policy: "3" }),
  "POST /drafts": () => ({ drafts: '[{"type":"","to":[],"topic":"","content":"fuzz"}]' }),
  "PATCH /drafts/:draft_id": () => ({ draft: '{"type":"","to":[],"topic":"","content":"fuzz"}' }),
  "POST /saved_snippets": () => ({ title: "fuzz", content: "fuzz snippet" }),
  "PATCH /saved_snippets/:saved_snippet_id": () => ({ title: "fuzz 2" }),
  "POST /messages/:message_id/report": () => ({ report_type: "spam" }),
  "PATCH /users/me/profile_data": (f) => ({ data: `[{"id":${f.profileFieldId},"value":"fuzz"}]` }),
  "POST /scheduled_messages": (f) => ({ type: "stream", to: String(f.streamId), topic: "fuzz", content: "fuzz", scheduled_delivery_timestamp: String(Math.floor(Date.now() / 1000) + 86_400) }),
  "PATCH /scheduled_messages/:scheduled_message_id": () => ({ content: "fuzz" }),
  "POST /typing": (f) => ({ op: "start", to: `[${f.memberId}]` }),
  "POST /messages/:message_id/typing": () => ({ op: "start" }),
  "POST /message_edit_typing": (f) => ({ message_id: String(f.messageId), op: "stop" }),
  "POST /user_groups/create": (f) => ({ name: "fuzz group new", description: "d", members: `[${f.memberId}]` }),
  "PATCH /user_groups/:group_id": () => ({ description: "d2" }),
  "POST /user_groups/:group_id/members": (f) => ({ add: `[${f.victimId}]` }),
  "POST /user_groups/:group_id/subgroups": () => ({ delete: "[]", add: "[]" }),
  "POST /users/me/status": () => ({ status_text: "busy" }),
  "GET /users": () => ({ client_gravatar: "true" }),
  "POST /bots": () => {
    const n = Math.random().toString(36).slice(2, 8);
    return { full_name: `Fuzz Bot ${n}`, short_name: `fuzz${n}` };
  },
  "PATCH /bots/:bot_id": () => ({ full_name: `Fuzz Bot ${Math.random().toString(36).slice(2, 8)}` }),
  "POST /users": () => ({ email: "fuzz-new@example.com", password: "member-pass", full_name: "Fuzz New" }),
  "GET /users/:user_id": () => ({ include_custom_profile_fields: "true" }),
  "GET /users/:email": () => ({ include_custom_profile_fields: "true" }),
  "PATCH /users/:email": () => ({ full_name: "Fuzz Member" }),
  "PATCH /users/:user_id": () => ({ full_name: "Victim Renamed" }),
  "POST /register": () => ({ event_types: '["message"]' }),
  "GET /events": (f) => ({ queue_id: f.queueId, last_event_id: "-1" }),
  "DELETE /events": (f) => ({ queue_id: f.queueId }),
};

const NOTIFICATION_PARAMS = [
  "enable_stream_desktop_notifications", "enable_stream_email_notifications", "enable_stream_push_notifications",
  "enable_stream_audible_notifications", "wildcard_mentions_notify", "notification_sound", "enable_desktop_notifications",
  "enable_sounds", "enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications",
  "enable_digest_emails", "enable_login_emails", "message_content_in_email_notifications", "pm_content_in_desktop_notifications",
  "desktop_icon_count_display", "realm_name_in_notifications", "presence_enabled",
];
const DISPLAY_PARAMS = [
  "twenty_four_hour_time", "dense_mode", "starred_message_counts", "fluid_layout_width", "high_contrast_mode", "color_scheme",
  "translate_emoticons", "default_language", "default_view", "left_side_userlist", "emojiset", "demote_inactive_streams", "timezone",
];
const REALM_PARAMS = [
  "name", "description", "invite_required", "create_stream_policy", "invite_to_stream_policy", "user_group_edit_policy",
  "private_message_policy", "wildcard_mention_policy", "bot_creation_policy", "email_address_visibility", "waiting_period_threshold",
  "allow_message_editing", "message_content_edit_limit_seconds", "allow_community_topic_editing", "allow_message_deleting",
  "message_content_delete_limit_seconds", "allow_edit_history", "mandatory_topics", "default_language", "default_twenty_four_hour_time",
  "inline_image_preview", "inline_url_embed_preview", "send_welcome_emails", "digest_emails_enabled", "message_retention_days",
  "name_changes_disabled", "email_changes_disabled", "avatar_changes_disabled", "add_emoji_by_admins_only", "notifications_stream_id", "signup_notifications_stream_id",
  "edit_topic_policy", "move_messages_between_streams_policy", "delete_own_message_policy", "add_custom_emoji_policy",
  "move_messages_within_stream_limit_seconds", "move_messages_between_streams_limit_seconds",
  "enable_read_receipts",
  // Zulip 9.0's (realm-settings-9.test.ts); require_unique_names is left out, which would refuse later tests' users.
  "new_stream_announcements_stream_id", "signup_announcements_stream_id", "zulip_update_announcements_stream_id",
  "digest_weekday", "message_content_allowed_in_email_notifications", "video_chat_provider", "org_type",
  "want_advertise_in_communities_directory", "jitsi_server_url", "enable_guest_user_indicator", "giphy_rating", "default_code_block_language",
  // Zulip 10.0's (message-reports.test.ts, settings-10.test.ts).
  "moderation_request_channel_id", "enable_guest_user_dm_warning",
  // Feature level 358 (messages-10.test.ts).
  "message_edit_history_visibility_policy",
];
const REACTION_PARAMS = ["emoji_name", "emoji_code", "reaction_type"];
/** "forged": hostile Authorization and Host headers (a wrong key, bad base64, unicode, no colon…). */
const EVERYONE: Actor[] = ["member", "admin", "guest", "anonymous", "forged"];
/**
 * The /bots routes refuse a bot whatever it sends (Zulip's require_member_or_admin), an
 * administrator bot included: every answer to it is Zulip's error, and it changes nothing.
 */
const BOT_REFUSAL = "This endpoint does not accept bot requests.";

/** Every route of apps/api/src/routes/*.ts and apps/events/src/routes.ts (the guard test below keeps it whole). */
const ROUTES: RouteCase[] = [
  // drafts.ts (no draft exists under a message's id: the lookup refuses, after the parameters are read)
  { method: "GET", path: "/drafts", params: [], actors: EVERYONE },
  { method: "POST", path: "/drafts", params: ["drafts"], actors: EVERYONE },
  { method: "PATCH", path: "/drafts/:draft_id", params: ["draft"], pathFixtures: ["message"], actors: EVERYONE },
  { method: "DELETE", path: "/drafts/:draft_id", params: [], pathFixtures: ["message"], actors: EVERYONE },
  // saved-snippets.ts (no snippet exists under a message's id: the lookup refuses, after the parameters are read)
  { method: "GET", path: "/saved_snippets", params: [], actors: EVERYONE },
  { method: "POST", path: "/saved_snippets", params: ["title", "content"], actors: EVERYONE },
  { method: "PATCH", path: "/saved_snippets/:saved_snippet_id", params: ["title", "content"], pathFixtures: ["message"], actors: EVERYONE },
  { method: "DELETE", path: "/saved_snippets/:saved_snippet_id", params: [], pathFixtures: ["message"], actors: EVERYONE },
  // message-reports.ts (the organization has no moderation channel: refused after the parameters are read)
  { method: "POST", path: "/messages/:message_id/report", params: ["report_type", "description"], pathFixtures: ["message"], actors: EVERYONE },
  // scheduled-messages.ts
  { method: "GET", path: "/scheduled_messages", params: [], actors: EVERYONE },
  { method: "POST", path: "/scheduled_messages", params: ["type", "to", "topic", "subject", "content", "scheduled_delivery_timestamp", "read_by_sender"], actors: EVERYONE },
  { method: "PATCH", path: "/scheduled_messages/:scheduled_message_id", params: ["type", "to", "topic", "subject", "content", "scheduled_delivery_timestamp"], pathFixtures: ["message"], actors: EVERYONE },
  { method: "DELETE", path: "/scheduled_messages/:scheduled_message_id", params: [], pathFixtures: ["message"], actors: EVERYONE },
  // alert-words.ts
  { method: "GET", path: "/users/me/alert_words", params: [], actors: EVERYONE },
  { method: "POST", path: "/users/me/alert_words", params: ["alert_words"], actors: EVERYONE },
  { method: "DELETE", path: "/users/me/alert_words", params: ["alert_words"] },
  // muted-users.ts
  { method: "POST", path: "/users/me/muted_users/:muted_user_id", params: [], pathFixtures: ["victim"], actors: EVERYONE },
  { method: "DELETE", path: "/users/me/muted_users/:muted_user_id", params: [], pathFixtures: ["victim"], actors: EVERYONE },
  // auth.ts: no credentials needed
  { method: "POST", path: "/fetch_api_key", params: ["username", "password"], actors: ["anonymous", "member", "forged"] },
  { method: "POST", path: "/dev_fetch_api_key", params: ["username"], actors: ["anonymous", "member", "forged"] },
  // bot-storage.ts
  { method: "GET", path: "/bot_storage", params: ["keys"] },
  { method: "PUT", path: "/bot_storage", params: ["storage"] },
  { method: "DELETE", path: "/bot_storage", params: ["keys"] },
  // default-streams.ts
  { method: "POST", path: "/default_streams", params: ["stream_id"] },
  { method: "DELETE", path: "/default_streams", params: ["stream_id"] },
  { method: "POST", path: "/default_stream_groups/create", params: ["group_name", "description", "stream_names"] },
  { method: "PATCH", path: "/default_stream_groups/:group_id", params: ["new_group_name", "new_description"], pathFixtures: ["defaultStreamGroup"] },
  { method: "POST", path: "/default_stream_groups/:group_id/streams", params: ["op", "stream_names"], pathFixtures: ["defaultStreamGroup"] },
  { method: "DELETE", path: "/default_stream_groups/:group_id", params: [], pathFixtures: ["defaultStreamGroup"] },
  // linkifiers.ts
  { method: "GET", path: "/realm/filters", params: [], actors: EVERYONE },
  { method: "POST", path: "/realm/filters", params: ["pattern", "url_format_string", "url_template"] },
  { method: "PATCH", path: "/realm/filters/:filter_id", params: ["pattern", "url_format_string", "url_template"], pathFixtures: ["filter"] },
  { method: "DELETE", path: "/realm/filters/:filter_id", params: [], pathFixtures: ["filter"] },
  { method: "GET", path: "/realm/linkifiers", params: [], actors: EVERYONE },
  { method: "PATCH", path: "/realm/linkifiers", params: ["ordered_linkifier_ids"] },
  // realm-export.ts (a refused or repeated request starts no second export: five a week at most)
  { method: "POST", path: "/export/realm", params: ["export_type"] },
  { method: "GET", path: "/export/realm", params: [] },
  { method: "GET", path: "/export/realm/consents", params: [] },
  { method: "DELETE", path: "/export/realm/:export_id", params: [], pathFixtures: ["stream"] },
  { method: "GET", path: "/realm_exports/:realm_id/:token/:filename", params: [], pathFixtures: ["realm", "stream", "stream"], actors: EVERYONE, root: true },
  // realm-playgrounds.ts, realm-user-defaults.ts, topic-delete.ts
  { method: "POST", path: "/realm/playgrounds", params: ["name", "pygments_language", "url_template"] },
  { method: "DELETE", path: "/realm/playgrounds/:playground_id", params: [], pathFixtures: ["stream"] },
  { method: "PATCH", path: "/realm/user_settings_defaults", params: ["color_scheme", "web_home_view", "enter_sends", "notification_sound", "email_notifications_batching_period_seconds", "twenty_four_hour_time", "email_address_visibility"] },
  { method: "POST", path: "/users/me/onboarding_steps", params: ["onboarding_step"], actors: EVERYONE },
  { method: "POST", path: "/streams/:stream_id/delete_topic", params: ["topic_name"], pathFixtures: ["stream"] },
  // message-delete.ts
  { method: "DELETE", path: "/messages/:message_id", params: [], pathFixtures: ["message"] },
  // message-edit.ts
  { method: "GET", path: "/messages/:message_id", params: ["apply_markdown", "allow_empty_topic_name"], pathFixtures: ["message"], actors: EVERYONE },
  { method: "GET", path: "/messages/:message_id/history", params: ["allow_empty_topic_name"], pathFixtures: ["message"], actors: EVERYONE },
  // read-receipts.ts
  { method: "GET", path: "/messages/:message_id/read_receipts", params: [], pathFixtures: ["message"], actors: EVERYONE },
  // push-devices.ts: accepted, not kept
  { method: "POST", path: "/users/me/android_gcm_reg_id", params: ["token"], actors: [...EVERYONE, "bot"] },
  { method: "DELETE", path: "/users/me/android_gcm_reg_id", params: ["token"], actors: EVERYONE },
  { method: "POST", path: "/users/me/apns_device_token", params: ["token", "appid"], actors: [...EVERYONE, "bot"] },
  { method: "DELETE", path: "/users/me/apns_device_token", params: ["token"], actors: EVERYONE },
  { method: "PATCH", path: "/messages/:message_id", params: ["content", "propagate_mode", "stream_id", "topic", "subject"], pathFixtures: ["message"], actors: EVERYONE },
  // message-fetch.ts (and its hot route)
  {
    method: "GET",
    path: "/messages",
    params: ["anchor", "include_anchor", "num_before", "num_after", "message_ids", "narrow", "client_gravatar", "apply_markdown", "use_first_unread_anchor", "allow_empty_topic_name"],
    actors: EVERYONE,
  },
  // message-flags.ts
  { method: "POST", path: "/messages/flags", params: ["messages", "op", "flag"], actors: EVERYONE },
  { method: "POST", path: "/messages/flags/narrow", params: ["anchor", "include_anchor", "num_before", "num_after", "narrow", "op", "flag"], actors: EVERYONE },
  { method: "POST", path: "/mark_all_as_read", params: [] },
  { method: "POST", path: "/mark_stream_as_read", params: ["stream_id"] },
  { method: "POST", path: "/mark_topic_as_read", params: ["stream_id", "topic_name"] },
  // messages.ts (and its hot route)
  { method: "POST", path: "/messages", params: ["type", "to", "content", "topic", "subject", "queue_id", "local_id", "read_by_sender"], actors: EVERYONE },
  // presence.ts
  { method: "POST", path: "/users/me/presence", params: ["status", "ping_only", "new_user_input", "slim_presence", "history_limit_days"], actors: EVERYONE },
  { method: "GET", path: "/realm/presence", params: [] },
  { method: "GET", path: "/users/:user_id_or_email/presence", params: [], pathFixtures: ["email"], actors: EVERYONE },
  // profile-fields.ts
  { method: "GET", path: "/realm/profile_fields", params: [] },
  { method: "POST", path: "/realm/profile_fields", params: ["name", "hint", "field_type", "field_data", "display_in_profile_summary", "required", "editable_by_user"] },
  { method: "PATCH", path: "/realm/profile_fields", params: ["order"] },
  { method: "PATCH", path: "/realm/profile_fields/:field_id", params: ["name", "hint", "field_data", "display_in_profile_summary", "required", "editable_by_user"], pathFixtures: ["profileField"] },
  { method: "PATCH", path: "/users/me/profile_data", params: ["data"], actors: EVERYONE },
  { method: "DELETE", path: "/realm/profile_fields/:field_id", params: [], pathFixtures: ["profileField"] },
  // reactions.ts
  { method: "POST", path: "/messages/:message_id/reactions", params: REACTION_PARAMS, pathFixtures: ["message"], actors: EVERYONE },
  { method: "DELETE", path: "/messages/:message_id/reactions", params: REACTION_PARAMS, pathFixtures: ["message"] },
  // submessages.ts
  { method: "POST", path: "/submessage", params: ["message_id", "msg_type", "content"], actors: EVERYONE },
  // avatars.ts: a multipart file body (the fuzzed bodies hold no file part)
  { method: "POST", path: "/users/me/avatar", params: [], actors: EVERYONE },
  // public-files.ts: no credentials, outside /api/v1
  { method: "GET", path: "/user_avatars/:realm_id/:file", params: [], pathFixtures: ["realm", "avatarFile"], actors: EVERYONE, root: true },
  { method: "GET", path: "/user_avatars/:realm_id/emoji/images/:file", params: [], pathFixtures: ["realm", "emojiFile"], actors: EVERYONE, root: true },
  { method: "GET", path: "/static/images/logo/zulip-icon-128x128.png", params: [], actors: EVERYONE, root: true },
  { method: "GET", path: "/static/images/unknown-user-avatar.png", params: [], actors: EVERYONE, root: true },
  { method: "GET", path: "/static/generated/emoji/emoji_api.json", params: [], actors: EVERYONE, root: true },
  // password-reset.ts: pages outside /api/v1, no credentials (an unknown token is a page too)
  { method: "GET", path: "/accounts/password/reset/", params: [], actors: ["anonymous", "member", "forged"], root: true, page: true },
  { method: "POST", path: "/accounts/password/reset/", params: ["email"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  { method: "GET", path: "/accounts/password/reset/:token/", params: [], pathFixtures: ["stream"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  { method: "POST", path: "/accounts/password/reset/:token/", params: ["new_password", "new_password_confirm"], pathFixtures: ["stream"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  // browser-login.ts: the login page, logging in (no form token here: 403) and out (no session: to /login)
  { method: "GET", path: "/login", params: ["next"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  { method: "POST", path: "/accounts/login/", params: ["username", "password", "csrfmiddlewaretoken", "next"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  { method: "POST", path: "/accounts/logout/", params: ["csrfmiddlewaretoken"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  // invites.ts (the path ids name no invitation: "No such invitation")
  {
    method: "POST",
    path: "/invites",
    params: ["invitee_emails", "invite_expires_in_minutes", "invite_as", "stream_ids", "include_realm_default_subscriptions", "notify_referrer_on_join", "group_ids"],
    actors: EVERYONE,
  },
  { method: "GET", path: "/invites", params: [], actors: EVERYONE },
  { method: "DELETE", path: "/invites/:invite_id", params: [], pathFixtures: ["stream"], actors: EVERYONE },
  { method: "POST", path: "/invites/:invite_id/resend", params: [], pathFixtures: ["stream"], actors: EVERYONE },
  { method: "POST", path: "/invites/multiuse", params: ["invite_expires_in_minutes", "invite_as", "stream_ids", "include_realm_default_subscriptions", "group_ids"], actors: EVERYONE },
  { method: "DELETE", path: "/invites/multiuse/:invite_id", params: [], pathFixtures: ["stream"], actors: EVERYONE },
  // invite-registration.ts: no credentials; the key names no invitation (JSON, then the pages)
  { method: "GET", path: "/invitations/:key", params: [], pathFixtures: ["stream"], actors: ["anonymous", "member", "forged"] },
  { method: "POST", path: "/invitations/:key/accept", params: ["full_name", "password", "email"], pathFixtures: ["stream"], actors: ["anonymous", "member", "forged"] },
  { method: "GET", path: "/join/:key/", params: [], pathFixtures: ["stream"], actors: ["anonymous", "member", "forged"], root: true, page: true },
  {
    method: "POST",
    path: "/join/:key/",
    params: ["full_name", "password", "email", "password_confirm", "csrfmiddlewaretoken"],
    pathFixtures: ["stream"],
    actors: ["anonymous", "member", "forged"],
    root: true,
    page: true,
  },
  // web-client.ts: the page (no session here: to /login) and the build's files
  { method: "GET", path: "/", params: [], actors: ["anonymous", "member", "forged"], root: true, page: true },
  { method: "GET", path: "/static/web/*path", params: [], actors: ["anonymous", "member", "forged"], root: true },
  // realm-emoji.ts
  { method: "GET", path: "/realm/emoji", params: [] },
  { method: "POST", path: "/realm/emoji/:emoji_name", params: [], pathFixtures: ["emoji"], actors: EVERYONE },
  { method: "DELETE", path: "/realm/emoji/:emoji_name", params: [], pathFixtures: ["emoji"], actors: EVERYONE },
  // realm.ts
  { method: "PATCH", path: "/realm", params: REALM_PARAMS },
  // Owners only, and nobody here is one: the organization stays active for the other routes.
  { method: "POST", path: "/realm/deactivate", params: ["deletion_delay_days"], actors: EVERYONE },
  // realm-domains.ts (owners only: an administrator is refused too)
  { method: "GET", path: "/realm/domains", params: [], actors: EVERYONE },
  { method: "POST", path: "/realm/domains", params: ["domain", "allow_subdomains"], actors: EVERYONE },
  { method: "PATCH", path: "/realm/domains/:domain", params: ["allow_subdomains"], pathFixtures: ["email"], actors: EVERYONE },
  { method: "DELETE", path: "/realm/domains/:domain", params: [], pathFixtures: ["email"], actors: EVERYONE },
  // message-matches.ts, stream-members.ts
  { method: "GET", path: "/messages/matches_narrow", params: ["msg_ids", "narrow"], actors: EVERYONE },
  { method: "GET", path: "/streams/:stream_id/members", params: [], pathFixtures: ["stream"], actors: EVERYONE },
  // external-services.ts (services not offered: each answers Zulip's refusal)
  { method: "POST", path: "/calls/zoom/create", params: ["is_video_call"], actors: EVERYONE },
  { method: "GET", path: "/calls/bigbluebutton/create", params: ["meeting_name", "voice_only"], actors: EVERYONE },
  { method: "POST", path: "/mobile_push/test_notification", params: ["token"], actors: [...EVERYONE, "bot"] },
  { method: "POST", path: "/jwt/fetch_api_key", params: ["token", "include_profile"], actors: ["anonymous", "member", "forged"] },
  // render.ts
  { method: "POST", path: "/messages/render", params: ["content"] },
  // server-settings.ts
  { method: "GET", path: "/server_settings", params: [], actors: ["anonymous", "member", "forged"] },
  // settings.ts (the bot refusal comes before anything is read)
  {
    method: "PATCH",
    path: "/settings",
    params: [
      "full_name", "email", "old_password", "new_password",
      // Zulip 9.0's personal settings, one of each kind.
      "send_read_receipts", "user_list_style", "web_home_view", "web_font_size_px", "email_notifications_batching_period_seconds",
      "email_address_visibility", "timezone", "notification_sound", "default_language",
    ],
    actors: [...EVERYONE, "bot"],
  },
  { method: "PATCH", path: "/settings/notifications", params: NOTIFICATION_PARAMS },
  { method: "PATCH", path: "/settings/display", params: DISPLAY_PARAMS },
  { method: "POST", path: "/users/me/enter-sends", params: ["enter_sends"] },
  // streams.ts
  { method: "GET", path: "/get_stream_id", params: ["stream"], actors: EVERYONE },
  {
    method: "GET",
    path: "/streams",
    params: ["include_public", "include_web_public", "include_subscribed", "include_all_active", "include_default", "include_owner_subscribed"],
    actors: EVERYONE,
  },
  {
    method: "PATCH",
    path: "/streams/:stream_id",
    params: [
      "description", "new_name", "is_private", "is_announcement_only", "stream_post_policy", "history_public_to_subscribers",
      // Zulip 10.0's channel settings ({new, old} group-setting values).
      "can_send_message_group", "can_administer_channel_group", "can_add_subscribers_group", "can_subscribe_group", "can_remove_subscribers_group",
    ],
    pathFixtures: ["stream"],
  },
  { method: "DELETE", path: "/streams/:stream_id", params: [], pathFixtures: ["stream"] },
  { method: "GET", path: "/users/me/:stream_id/topics", params: ["allow_empty_topic_name"], pathFixtures: ["stream"], actors: EVERYONE },
  { method: "GET", path: "/streams/:stream_id", params: [], pathFixtures: ["stream"], actors: EVERYONE },
  { method: "GET", path: "/streams/:stream_id/email_address", params: ["sender_id"], pathFixtures: ["stream"], actors: EVERYONE },
  // subscriptions.ts
  { method: "GET", path: "/users/me/subscriptions", params: ["include_subscribers"], actors: EVERYONE },
  {
    method: "POST",
    path: "/users/me/subscriptions",
    params: [
      "subscriptions", "principals", "invite_only", "history_public_to_subscribers", "stream_post_policy", "authorization_errors_fatal", "announce",
      "can_send_message_group", "can_administer_channel_group", "can_subscribe_group",
    ],
    actors: EVERYONE,
  },
  { method: "PATCH", path: "/users/me/subscriptions", params: ["add", "delete"] },
  { method: "DELETE", path: "/users/me/subscriptions", params: ["subscriptions", "principals"] },
  { method: "POST", path: "/users/me/subscriptions/properties", params: ["subscription_data"] },
  { method: "PATCH", path: "/users/me/subscriptions/muted_topics", params: ["stream", "stream_id", "topic", "op"] },
  { method: "GET", path: "/users/:user_id/subscriptions/:stream_id", params: [], pathFixtures: ["victim", "stream"], actors: EVERYONE },
  // user-topics.ts
  { method: "POST", path: "/user_topics", params: ["stream_id", "topic", "visibility_policy"] },
  // typing.ts
  { method: "POST", path: "/typing", params: ["op", "type", "to", "stream_id", "topic"], actors: EVERYONE },
  { method: "POST", path: "/messages/:message_id/typing", params: ["op"], pathFixtures: ["message"], actors: EVERYONE },
  { method: "POST", path: "/message_edit_typing", params: ["message_id", "op"], actors: EVERYONE },
  // user-groups.ts
  { method: "GET", path: "/user_groups", params: ["include_deactivated_groups", "allow_deactivated"] },
  {
    method: "POST",
    path: "/user_groups/create",
    params: ["name", "description", "members", "subgroups", "can_add_members_group", "can_join_group", "can_leave_group", "can_manage_group", "can_mention_group", "can_remove_members_group"],
    actors: EVERYONE,
  },
  {
    method: "PATCH",
    path: "/user_groups/:group_id",
    params: ["name", "description", "can_add_members_group", "can_join_group", "can_leave_group", "can_manage_group", "can_mention_group", "can_remove_members_group"],
    pathFixtures: ["userGroup"],
  },
  { method: "DELETE", path: "/user_groups/:group_id", params: [], pathFixtures: ["userGroup"] },
  { method: "POST", path: "/user_groups/:group_id/deactivate", params: [], pathFixtures: ["userGroup"] },
  { method: "POST", path: "/user_groups/:group_id/members", params: ["add", "delete", "add_subgroups", "delete_subgroups"], pathFixtures: ["userGroup"] },
  { method: "POST", path: "/user_groups/:group_id/subgroups", params: ["add", "delete"], pathFixtures: ["userGroup"] },
  { method: "GET", path: "/user_groups/:group_id/members", params: ["direct_member_only"], pathFixtures: ["userGroup"] },
  { method: "GET", path: "/user_groups/:group_id/members/:user_id", params: ["direct_member_only"], pathFixtures: ["userGroup", "victim"] },
  { method: "GET", path: "/user_groups/:group_id/subgroups", params: ["direct_subgroup_only"], pathFixtures: ["userGroup"] },
  // user-status.ts
  { method: "POST", path: "/users/me/status", params: ["away", "status_text", "emoji_name", "emoji_code", "reaction_type"] },
  { method: "GET", path: "/users/:user_id/status", params: [], pathFixtures: ["victim"], actors: EVERYONE },
  // uploads.ts: the upload, and the downloads (the API's temporary-URL route shares its template with the root's; the root one is fuzzed)
  { method: "POST", path: "/user_uploads", params: [], actors: EVERYONE },
  { method: "GET", path: "/user_uploads/:realm_id/*path", params: ["api_key"], pathFixtures: ["stream"], actors: EVERYONE, root: true },
  { method: "GET", path: "/user_uploads/temporary/:token", params: [], pathFixtures: ["stream"], actors: EVERYONE, root: true },
  { method: "GET", path: "/user_uploads/temporary/:token/:filename", params: [], pathFixtures: ["stream", "stream"], actors: EVERYONE, root: true },
  // attachments.ts
  { method: "GET", path: "/attachments", params: [], actors: EVERYONE },
  { method: "DELETE", path: "/attachments/:attachment_id", params: [], pathFixtures: ["message"], actors: EVERYONE },
  // users.ts
  { method: "GET", path: "/users", params: ["client_gravatar", "include_custom_profile_fields"], actors: EVERYONE },
  { method: "POST", path: "/users", params: ["email", "password", "full_name", "short_name"] },
  { method: "GET", path: "/users/me", params: [] },
  // Deactivates whoever sends it: a throwaway user, made again after each success.
  { method: "DELETE", path: "/users/me", params: [], actors: ["throwaway", "anonymous"] },
  { method: "DELETE", path: "/users/me/avatar", params: [] },
  { method: "GET", path: "/users/:user_id", params: ["client_gravatar", "include_custom_profile_fields"], pathFixtures: ["victim"], actors: EVERYONE },
  { method: "GET", path: "/users/:email", params: ["client_gravatar", "include_custom_profile_fields"], pathFixtures: ["email"], actors: EVERYONE },
  { method: "PATCH", path: "/users/:user_id", params: ["full_name", "is_admin", "is_guest", "role", "profile_data", "new_email"], pathFixtures: ["victim"] },
  // The member by address (feature level 313): only what cannot change their role is fuzzed.
  { method: "PATCH", path: "/users/:email", params: ["full_name", "new_email"], pathFixtures: ["email"] },
  { method: "DELETE", path: "/users/:user_id", params: [], pathFixtures: ["victim"] },
  // Regenerates whoever sends it: a throwaway user, made again after each success.
  { method: "POST", path: "/users/me/api_key/regenerate", params: [], actors: ["throwaway", "anonymous"] },
  { method: "POST", path: "/users/:user_id/reactivate", params: [], pathFixtures: ["deactivatedBot"] },
  // bots.ts: POST and PATCH read their own body, which may carry an avatar (the fuzzed bodies hold no file part)
  { method: "GET", path: "/bots", params: [], actors: [...EVERYONE, "bot"] },
  {
    method: "POST",
    path: "/bots",
    params: ["full_name", "short_name", "bot_type", "payload_url", "service_name", "config_data", "interface_type", "default_sending_stream", "default_events_register_stream", "default_all_public_streams"],
    actors: [...EVERYONE, "bot"],
  },
  {
    method: "PATCH",
    path: "/bots/:bot_id",
    params: ["full_name", "bot_owner_id", "config_data", "service_payload_url", "service_interface", "default_sending_stream", "default_events_register_stream", "default_all_public_streams"],
    pathFixtures: ["bot"],
    actors: ["member", "admin", "guest", "bot"],
  },
  { method: "DELETE", path: "/bots/:bot_id", params: [], pathFixtures: ["bot"], actors: ["member", "admin", "bot"] },
  { method: "POST", path: "/bots/:bot_id/api_key/regenerate", params: [], pathFixtures: ["bot"], actors: ["member", "admin", "bot"] },
  // apps/events/src/routes.ts
  {
    method: "POST",
    path: "/register",
    params: ["apply_markdown", "client_gravatar", "slim_presence", "all_public_streams", "include_subscribers", "event_types", "fetch_event_types", "narrow", "client_capabilities", "queue_lifespan_secs", "presence_history_limit_days"],
    actors: EVERYONE,
  },
  // A long poll: dont_block is always sent "true" (EVENT_HEARTBEAT_SECONDS bounds the rest anyway).
  { method: "GET", path: "/events", params: ["queue_id", "last_event_id"], actors: EVERYONE },
  { method: "DELETE", path: "/events", params: ["queue_id"] },
];

// ---------------------------------------------------------------------------------------------
// Values. Every parameter is a string on the wire; `Wire` is either a string the client encodes
// (lone surrogates as WTF-8 bytes, which no encoder makes) or raw bytes already percent-encoded.

type Wire = string | { raw: string };

/** Percent-encodes a string as a hostile client would send it, lone surrogates included. */
function encodeWire(value: Wire): string {
  if (typeof value !== "string") return value.raw;
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const isHigh = unit >= 0xd800 && unit <= 0xdbff;
    const next = value.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      // WTF-8: the three bytes UTF-8 would give the surrogate were it a code point.
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");
    } else {
      out += encodeURIComponent(value[i]);
    }
  }
  return out;
}

const INT_EDGES = [
  "0", "-0", "1", "-1", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296", "9007199254740991", "9007199254740992",
  "9007199254740993", "-9007199254740993", "99999999999", "9".repeat(30), "1e3", "1e308", "0x10", " 5", "5 ", "+5", "00012", "1.5", "-1.5",
  "NaN", "Infinity", "-Infinity", "", "null", "true", "false", "[]", "{}", '""', '"x"', "[1]", "[null]", "[[]]", "{\"a\":1}",
];

/** Values that mean something to some route, so a random rest reaches past the first check. */
function plausible(f: Fixtures): string[] {
  return [
    "general", "fuzz stream", "stream", "private", "add", "remove", "delete", "start", "stop", "starred", "read", "mentioned", "change_one",
    "change_later", "change_all", "unicode_emoji", "realm_emoji", "zulip_extra_emoji", "thumbs_up", "1f44d", "octopus", "active", "idle",
    "newest", "oldest", "first_unread", "message", "subscription", "realm_user", "update_message_flags", f.memberEmail, f.victimEmail,
    String(f.memberId), String(f.victimId), String(f.streamId), String(f.messageId), String(f.userGroupId), JSON.stringify([f.memberId]),
    JSON.stringify([f.victimId, f.memberId]), JSON.stringify([f.memberEmail]), JSON.stringify([f.messageId]), JSON.stringify(["general"]),
    JSON.stringify(["fuzz stream"]), JSON.stringify([{ name: "fuzz stream" }]), JSON.stringify([{ name: "general", description: "d" }]),
    JSON.stringify([["stream", "general"]]), JSON.stringify([{ operator: "stream", operand: "fuzz stream" }]), JSON.stringify([["pm-with", f.memberEmail]]),
    JSON.stringify([{ stream_id: f.streamId, property: "color", value: "#ff0000" }]), JSON.stringify([{ stream_id: f.streamId, property: "in_home_view", value: 1e20 }]),
    JSON.stringify({ key: "value" }), JSON.stringify(["key"]), JSON.stringify([{ id: f.profileFieldId, value: "v" }]), f.queueId, "100", "200", "400", "600",
  ];
}

/** Hostile JSON leaves, to put where a route's schema expects something ordinary. */
function leafArb(f: Fixtures): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom<unknown>(2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, -1, 0, 1.5, 1e308, "", "\u0000", "a\u0000", "x".repeat(10_001), "😀".repeat(3000), null, [], {}),
    fc.constantFrom<unknown>(f.memberId, f.victimId, f.streamId, f.messageId, f.memberEmail, "general", "fuzz stream"),
    fc.string({ unit: "binary", maxLength: 30 }),
  );
}

/** JSON shaped as the routes' schemas expect (subscriptions, narrows, property changes…), with hostile leaves. */
function shapedJsonArb(f: Fixtures): fc.Arbitrary<string> {
  const leaf = leafArb(f);
  const operator = fc.constantFrom("stream", "topic", "subject", "is", "sender", "pm-with", "pm_with", "group-pm-with", "id", "near", "search", "has", "streams", "in");
  const property = fc.constantFrom("color", "in_home_view", "is_muted", "pin_to_top", "desktop_notifications", "audible_notifications", "push_notifications", "email_notifications", "wildcard_mentions_notify", "name");
  const shapes: Array<fc.Arbitrary<unknown>> = [
    fc.array(leaf, { maxLength: 4 }),
    fc.array(fc.record({ name: leaf, description: fc.option(leaf, { nil: undefined }) }, { requiredKeys: ["name"] }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(operator, leaf), { minLength: 1, maxLength: 3 }),
    fc.array(fc.record({ operator, operand: leaf, negated: fc.option(leaf, { nil: undefined }) }, { requiredKeys: ["operator", "operand"] }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.record({ stream_id: fc.oneof(fc.constant(f.streamId), leaf), property, value: leaf }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.record({ id: fc.oneof(fc.constant(f.profileFieldId), leaf), value: leaf }), { minLength: 1, maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 10 }), leaf, { maxKeys: 3 }),
    fc.dictionary(fc.constantFrom("notification_settings_null", "bulk_message_deletion", "__proto__", "x"), leaf, { maxKeys: 2 }),
  ];
  return fc.oneof(...shapes).map((v) => JSON.stringify(v));
}

function valueArb(f: Fixtures): fc.Arbitrary<Wire> {
  const withNul = fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`);
  const loneSurrogates = fc.constantFrom("\ud800", "a\udc00b", "\udfff\ud800", '["\ud83d"]', '{"\udc00": 1}');
  const rawBytes = fc.constantFrom<Wire>({ raw: "%" }, { raw: "%zz" }, { raw: "%FF%FE" }, { raw: "%C0%80" }, { raw: "%00" }, { raw: "%ED%A0%80" }, { raw: "a%2" });
  const long = fc.tuple(fc.integer({ min: 10_000, max: 200_000 }), fc.constantFrom("x", "é", "😀", "[", "1", ",")).map(([n, c]) => c.repeat(Math.ceil(n / c.length)));
  const deepArray = fc.integer({ min: 10, max: 3000 }).map((d) => "[".repeat(d) + "]".repeat(d));
  const deepObject = fc.integer({ min: 10, max: 500 }).map((d) => '{"a":'.repeat(d) + "1" + "}".repeat(d));
  const hugeArray = fc.tuple(fc.integer({ min: 2000, max: 20_000 }), fc.constantFrom<unknown>(1, "general", f.memberId, 2 ** 31, ["a", "b"], { name: "x" }, null))
    .map(([n, item]) => JSON.stringify(Array(n).fill(item)));
  const bigNumbers = fc.oneof(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), fc.double().map(String), fc.integer().map(String));
  const numberLists = fc.array(fc.oneof(fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e300, -0.5, f.memberId), fc.double()), { maxLength: 5 }).map(JSON.stringify);
  return fc.oneof(
    { arbitrary: fc.string(), weight: 3 },
    { arbitrary: fc.string({ unit: "binary" }), weight: 3 },
    { arbitrary: fc.string({ unit: "grapheme" }), weight: 1 },
    { arbitrary: withNul, weight: 2 },
    { arbitrary: loneSurrogates, weight: 1 },
    { arbitrary: rawBytes, weight: 1 },
    { arbitrary: long, weight: 1 },
    { arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)), weight: 3 },
    { arbitrary: fc.jsonValue().map((v) => JSON.stringify([v])), weight: 1 },
    { arbitrary: deepArray, weight: 1 },
    { arbitrary: deepObject, weight: 1 },
    { arbitrary: hugeArray, weight: 1 },
    { arbitrary: fc.constantFrom(...INT_EDGES), weight: 3 },
    { arbitrary: bigNumbers, weight: 2 },
    { arbitrary: numberLists, weight: 1 },
    { arbitrary: fc.constantFrom(...plausible(f)), weight: 6 },
    { arbitrary: shapedJsonArb(f), weight: 4 },
  );
}

type Segment = { fixture: true } | Wire;

function segmentArb(): fc.Arbitrary<Segment> {
  return fc.oneof(
    { arbitrary: fc.constant<Segment>({ fixture: true }), weight: 6 },
    {
      arbitrary: fc.constantFrom<Segment>(
        "0", "-1", "1.5", "2147483647", "2147483648", "4294967296", "99999999999", "9".repeat(30), "1".repeat(5000), "1e3", "0x10", "abc", "me",
        "ü", "😀", "..", { raw: "%2e%2e" }, { raw: "%2F" }, { raw: "%00" }, { raw: "a%00b" }, { raw: "%ED%A0%80" }, { raw: "%FF" }, { raw: "%" }, "null", "NaN",
      ),
      weight: 4,
    },
    // Numbers past any fixture's id, so a random one never names (and destroys) a real row.
    { arbitrary: fc.integer({ min: 1_000_000, max: 2_147_483_647 }).map(String), weight: 1 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 30 }), weight: 2 },
    { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 30 }), weight: 1 },
  );
}

function forgedHeadersArb(f: Fixtures): fc.Arbitrary<{ auth: string | null; host: string }> {
  const b64 = (text: string | Uint8Array) => Buffer.from(text).toString("base64");
  const auth = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }).map((key) => `Basic ${b64(`${f.memberEmail}:${key}`)}`),
    fc.tuple(fc.string({ unit: "binary", maxLength: 60 }), fc.string({ maxLength: 40 })).map(([email, key]) => `Basic ${b64(`${email}:${key}`)}`),
    fc.uint8Array({ maxLength: 80 }).map((bytes) => `Basic ${b64(bytes)}`),
    fc.integer({ min: 1000, max: 12_000 }).map((n) => `Basic ${b64(`${"a".repeat(n)}@x.test:key`)}`),
    fc.constantFrom(
      "Basic", "Basic ", "basic !!!!", "Bearer abc", "Basic ===", "Basic Og==", `Basic ${b64(`${f.memberEmail}\u0000:k`)}`, `Basic ${b64(`${f.memberEmail}:`)}`,
      `Basic ${b64(`:${f.memberEmail}`)}`, `Basic ${b64(f.memberEmail)}`, `Basic ${b64(`${f.memberEmail.toUpperCase()}:x`)}`, "Basic \u00ff\u00fe", "Digest x",
    ),
    fc.constant(null),
  );
  const host = fc.oneof(
    { arbitrary: fc.constant("chat.test"), weight: 3 },
    {
      arbitrary: fc.constantFrom("zulip.chat.test", "nope.chat.test", "\u00fc.chat.test", `${"a".repeat(300)}.chat.test`, ".chat.test", "chat.test:99999", "[::1]", "127.0.0.1", "a..chat.test", "%00.chat.test"),
      weight: 2,
    },
  );
  return fc.record({ auth, host });
}

const EXTRA_NAMES = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom("__proto__", "constructor", "hasOwnProperty", "to[]", "a[b]", "api_key", "queue_id"));

// ---------------------------------------------------------------------------------------------
// Requests, over raw HTTP: no client library normalises the path or refuses the bytes we send.

interface RawResponse {
  status: number;
  text: string;
  contentType: string;
}

interface RawBody {
  type: string;
  data: Buffer;
}

const MULTIPART_BOUNDARY = "fuzz-boundary-7f3a";

/** A multipart/form-data body as zulip-js sends one; raw values go as their bytes, undecoded. */
function multipartBody(values: Array<[string, Wire]>): RawBody {
  const parts = values.map(([name, value]) => {
    const text = typeof value === "string" ? value : value.raw;
    return Buffer.concat([
      Buffer.from(`--${MULTIPART_BOUNDARY}\r\nContent-Disposition: form-data; name="${name.replace(/["\r\n]/g, "_")}"\r\n\r\n`),
      Buffer.from(text, "utf8"),
      Buffer.from("\r\n"),
    ]);
  });
  return { type: `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`, data: Buffer.concat([...parts, Buffer.from(`--${MULTIPART_BOUNDARY}--\r\n`)]) };
}

interface RawRequest {
  auth?: string | null;
  body?: RawBody | null;
  /** The Host header to send instead of the URL's; null sends none. */
  host?: string | null;
  headers?: Record<string, string>;
}

/** Sends one request as it is, and checks its answer against the API document. */
function sendRaw(baseUrl: string, method: Method, target: string, request: RawRequest = {}): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const { auth, body, host } = request;
  return new Promise<RawResponse>((resolve, reject) => {
    const headers: Record<string, string> = { ...request.headers };
    if (auth) headers.authorization = auth;
    if (typeof host === "string") headers.host = host;
    if (body) {
      headers["content-type"] = body.type;
      headers["content-length"] = String(body.data.length);
    }
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers, setHost: host !== null }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), contentType: String(res.headers["content-type"] ?? "") }));
      res.on("error", reject);
    });
    // Never hang: a stuck request is a failure of its own.
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${target.slice(0, 200)} timed out`)));
    req.on("error", reject);
    req.end(body?.data);
  }).then((res) => {
    checkAgainstDocument(method, target, res);
    return res;
  });
}

/** A ContractViolation unless the API document declares this status for the endpoint, with this body. */
function checkAgainstDocument(method: Method, target: string, res: RawResponse): void {
  let body: unknown;
  try {
    body = res.contentType.includes("json") ? JSON.parse(res.text) : undefined;
  } catch {
    // checkAnswer names a body that is not JSON; the document's schema rejects it here as undefined.
  }
  checkResponse(method, target, res.status, body, res.contentType || undefined);
}

const STACK_MARKERS = [/ {4}at /, /\.ts:\d/, /node_modules/];

/**
 * What every answer must be: no 5xx, JSON with a result, an error's msg a string, no stack trace;
 * a public file's success is the file itself, an image.
 */
function checkAnswer(res: RawResponse, label: string, options: { fileSuccess?: boolean; page?: boolean } = {}): void {
  if (res.status >= 500) throw new Error(`${label}: ${res.status} ${res.text.slice(0, 500)}`);
  if (options.fileSuccess && !options.page && res.status === 200) {
    // Images, and the emoji names document (server_emoji_data_url).
    if (!/^(image\/|application\/json)/.test(res.contentType)) throw new Error(`${label}: a file served as ${res.contentType}`);
    return;
  }
  for (const marker of STACK_MARKERS) {
    if (marker.test(res.text)) throw new Error(`${label}: stack trace in body ${res.text.slice(0, 1000)}`);
  }
  // A page's redirect (a browser without a session, to the login page) has no body.
  if (options.page && res.status >= 300 && res.status < 400 && res.text === "") return;
  // A page answers HTML (the API document says which statuses may be); never a script in it.
  if (options.page && res.contentType.startsWith("text/html")) {
    if (/<script/i.test(res.text)) throw new Error(`${label}: a script in a page ${res.text.slice(0, 300)}`);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new Error(`${label}: ${res.status} body is not JSON: ${JSON.stringify(res.text.slice(0, 300))}`);
  }
  if (typeof body !== "object" || body === null) throw new Error(`${label}: body is not an object`);
  const { result, msg } = body as { result?: unknown; msg?: unknown };
  if (res.status >= 400) {
    if (result !== "error" || typeof msg !== "string") throw new Error(`${label}: ${res.status} without an error body: ${res.text.slice(0, 300)}`);
  } else if (result !== "success") {
    throw new Error(`${label}: ${res.status} without result success: ${res.text.slice(0, 300)}`);
  }
}

// ---------------------------------------------------------------------------------------------

interface Fixtures {
  realmId: number;
  memberId: number;
  memberEmail: string;
  victimId: number;
  victimEmail: string;
  streamId: number;
  messageId: number;
  userGroupId: number;
  defaultStreamGroupId: number;
  filterId: number;
  profileFieldId: number;
  queueId: string;
  /** A custom emoji whose image is stored (the public file routes serve it). */
  emojiId: number;
  /** A bot the member owns, and a deactivated one. */
  botId: number;
  deactivatedBotId: number;
}

/** Tables a refused request could write to; event_outbox is left out, as the worker drains it meanwhile. */
const FINGERPRINT_TABLES = [
  "realm", "recipient", "user_profile", "service", "stream", "huddle", "subscription", "message", "user_message", "reaction", "message_edit",
  "submessage", "attachment", "realm_emoji", "realm_filter", "user_group", "user_group_membership", "user_topic", "user_presence",
  "user_status", "alert_word", "bot_storage_data", "custom_profile_field", "custom_profile_field_value", "default_stream",
  "default_stream_group", "default_stream_group_stream", "user_hotspot", "bot_config_data", "muted_user", "draft", "scheduled_message",
  "realm_user_default", "onboarding_step", "realm_playground", "realm_domain",
];
const FINGERPRINT_SQL = `SELECT ${FINGERPRINT_TABLES.map((t) => `(SELECT count(*) || ':' || coalesce(sum(hashtext(x::text)), 0) FROM "${t}" x) AS "${t}"`).join(", ")}`;

function routeKey(method: string, template: string): string {
  return `${method} ${template}`;
}

/** Every endpoint of the API and event tiers and every file path, from the contracts routes register with. */
function declaredRoutes(): string[] {
  return [...apiEndpoints, ...Object.values(eventEndpoints), ...fileEndpoints].map((contract) => routeKey(contract.method.toUpperCase(), expressPath(contract)));
}

test("the route table names every route the server declares", () => {
  const declared = declaredRoutes();
  // A sanity floor: the pattern still matches how routes are written.
  expect(declared.length).toBeGreaterThan(70);
  const table = ROUTES.map((r) => routeKey(r.method, r.path));
  expect(declared.filter((key) => !table.includes(key))).toEqual([]);
  expect(table.filter((key) => !declared.includes(key))).toEqual([]);
  expect(new Set(table).size).toBe(table.length);
});

describe.each(MODES)("property-based hostile input (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;
  let admin: TestUser;
  let guest: TestUser;
  let throwaway: TestUser;
  /** A bot (the owner's, made an administrator) that the /bots routes must refuse. */
  let botActor: { email: string; apiKey: string };
  let fixtures: Fixtures;
  let throwawayCount = 0;
  const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`;
  const authOf = (user: TestUser) => basic(user.email, user.client.credentials!.apiKey);

  async function fingerprint(): Promise<Record<string, string>> {
    const [row] = await server.running.services.db.prisma.$queryRawUnsafe<Array<Record<string, string>>>(FINGERPRINT_SQL);
    return row;
  }

  async function ok(res: Promise<{ body: Record<string, unknown> }>, what: string): Promise<Record<string, unknown>> {
    const { body } = await res;
    if (body.result !== "success") throw new Error(`${what}: ${JSON.stringify(body)}`);
    return body;
  }

  // Rows the destructive routes may remove; each made again (with a new id) once gone.
  async function makeVictim(): Promise<void> {
    const victim = await createTestUser(server, `Victim ${Date.now()} ${Math.random().toString(36).slice(2, 8)}`);
    fixtures.victimId = victim.id;
    fixtures.victimEmail = victim.email;
  }
  async function makeStream(): Promise<void> {
    const name = `fuzz stream ${Math.random().toString(36).slice(2, 8)}`;
    await ok(server.owner.post("/users/me/subscriptions", { subscriptions: [{ name }], principals: [member.id, admin.id] }), "stream");
    fixtures.streamId = (await ok(server.owner.get("/get_stream_id", { stream: name }), "stream id")).stream_id as number;
  }
  async function makeMessage(): Promise<void> {
    fixtures.messageId = (await ok(member.client.post("/messages", { type: "stream", to: "general", topic: "fuzz", content: "fuzz me" }), "message")).id as number;
  }
  async function makeUserGroup(): Promise<void> {
    const name = `fuzz group ${Math.random().toString(36).slice(2, 8)}`;
    await ok(server.owner.post("/user_groups/create", { name, description: "d", members: [member.id] }), "group");
    const groups = (await ok(server.owner.get("/user_groups"), "groups")).user_groups as Array<{ id: number; name: string }>;
    fixtures.userGroupId = groups.find((g) => g.name === name)!.id;
  }
  async function makeDefaultStreamGroup(): Promise<void> {
    const name = `fuzz dsg ${Math.random().toString(36).slice(2, 8)}`;
    await ok(server.owner.post("/default_stream_groups/create", { group_name: name, description: "d", stream_names: ["general"] }), "default stream group");
    const state = await ok(server.owner.post("/register", { event_types: ["default_stream_groups"] }), "register");
    fixtures.defaultStreamGroupId = (state.realm_default_stream_groups as Array<{ id: number; name: string }>).find((g) => g.name === name)!.id;
  }
  async function makeFilter(): Promise<void> {
    const n = Math.random().toString(36).slice(2, 8);
    fixtures.filterId = (await ok(server.owner.post("/realm/filters", { pattern: `#fz${n}(?P<id>[0-9]+)`, url_format_string: "https://x.test/%(id)s" }), "filter")).id as number;
  }
  async function makeProfileField(): Promise<void> {
    fixtures.profileFieldId = (await ok(server.owner.post("/realm/profile_fields", { name: `fuzz ${Math.random().toString(36).slice(2, 8)}`, hint: "", field_type: 1 }), "field")).id as number;
  }
  async function makeQueue(): Promise<void> {
    fixtures.queueId = (await ok(member.client.post("/register", { event_types: ["message"] }), "queue")).queue_id as string;
  }
  async function makeThrowaway(): Promise<void> {
    throwaway = await createTestUser(server, `Throwaway ${++throwawayCount}`);
  }
  // Made by the owner, whom no bot_creation_policy (which PATCH /realm fuzzes) stops, then given to the member.
  async function ownersBot(): Promise<number> {
    const n = Math.random().toString(36).slice(2, 8);
    const id = (await ok(server.owner.post("/bots", { full_name: `Fuzz Fixture ${n}`, short_name: `fixture${n}` }), "bot")).user_id as number;
    await ok(server.owner.patch(`/bots/${id}`, { bot_owner_id: member.id }), "bot owner");
    return id;
  }
  async function makeBot(): Promise<void> {
    fixtures.botId = await ownersBot();
  }
  async function makeDeactivatedBot(): Promise<void> {
    const id = await ownersBot();
    await ok(server.owner.delete(`/bots/${id}`), "deactivated bot");
    fixtures.deactivatedBotId = id;
  }

  /**
   * An export the worker writes after the request tells its requester in a direct message: waited
   * for, so that it is not taken for a change a later, refused request made.
   */
  async function settleExports(): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [row] = await server.running.services.db.prisma.$queryRaw<Array<{ pending: bigint }>>`
        SELECT count(*) AS pending FROM realm_export WHERE export_path IS NULL AND failed_timestamp IS NULL AND deleted_timestamp IS NULL`;
      if (Number(row.pending) === 0) return;
      if (Date.now() > deadline) throw new Error("an export was still pending after 60 s");
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** After a route succeeded, what it may have destroyed is made again. */
  const REMAKE: Record<string, () => Promise<void>> = {
    "POST /export/realm": settleExports,
    "DELETE /users/me": makeThrowaway,
    "DELETE /users/:user_id": makeVictim,
    "PATCH /users/:user_id": makeVictim,
    "DELETE /streams/:stream_id": makeStream,
    "DELETE /messages/:message_id": makeMessage,
    "DELETE /user_groups/:group_id": makeUserGroup,
    "POST /user_groups/:group_id/deactivate": makeUserGroup,
    "DELETE /default_stream_groups/:group_id": makeDefaultStreamGroup,
    "DELETE /realm/filters/:filter_id": makeFilter,
    "POST /streams/:stream_id/delete_topic": makeMessage,
    "DELETE /realm/profile_fields/:field_id": makeProfileField,
    "DELETE /events": makeQueue,
    "POST /users/me/api_key/regenerate": makeThrowaway,
    // A new owner may leave the member without the bot.
    "PATCH /bots/:bot_id": makeBot,
    "DELETE /bots/:bot_id": makeBot,
    "POST /users/:user_id/reactivate": makeDeactivatedBot,
  };

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Fuzz Member");
    admin = await createTestUser(server, "Fuzz Admin", "admin");
    guest = await createTestUser(server, "Fuzz Guest", "guest");
    const realmId = (await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: member.id } })).realm_id;
    fixtures = { realmId, memberId: member.id, memberEmail: member.email } as Fixtures;
    // Files the public routes serve, so hostile paths meet real ones.
    const image = await makePng(40, 40);
    await ok(uploadFiles(member.client, "/users/me/avatar", [imagePart(image)]).then((r) => ({ body: r.json })), "avatar");
    await ok(uploadFiles(member.client, "/realm/emoji/fuzz_emoji", [imagePart(image)]).then((r) => ({ body: r.json })), "emoji");
    fixtures.emojiId = (await server.running.services.db.prisma.realmEmoji.findFirstOrThrow({ where: { name: "fuzz_emoji" } })).id;
    await makeThrowaway();
    await makeVictim();
    await makeStream();
    await makeMessage();
    await makeUserGroup();
    await makeDefaultStreamGroup();
    await makeFilter();
    await makeProfileField();
    await makeQueue();
    await makeBot();
    await makeDeactivatedBot();
    const n = Math.random().toString(36).slice(2, 8);
    const made = await ok(server.owner.post("/bots", { full_name: `Fuzz Actor ${n}`, short_name: `actor${n}` }), "bot actor");
    await ok(server.owner.patch(`/users/${made.user_id as number}`, { role: 200 }), "bot actor role");
    botActor = { email: `actor${n}-bot@chat.test`, apiKey: made.api_key as string };
  }, 120_000);
  afterAll(() => server?.stop(), 60_000);
  /** Answers by status per route; FUZZ_STATS=1 prints them, to see how far past refusals a run got. */
  const statusCounts: Record<string, Record<number, number>> = {};
  afterAll(() => {
    if (process.env.FUZZ_STATS) process.stdout.write(`${JSON.stringify(statusCounts, null, 1)}\n`);
  });

  function fixtureSegment(kind: Fixture): string {
    switch (kind) {
      case "message": return String(fixtures.messageId);
      case "stream": return String(fixtures.streamId);
      case "userGroup": return String(fixtures.userGroupId);
      case "defaultStreamGroup": return String(fixtures.defaultStreamGroupId);
      case "filter": return String(fixtures.filterId);
      case "profileField": return String(fixtures.profileFieldId);
      case "victim": return String(fixtures.victimId);
      case "emoji": return "green_tick";
      case "email": return fixtures.memberEmail;
      case "realm": return String(fixtures.realmId);
      case "avatarFile": return `${fixtures.memberId}.png`;
      case "emojiFile": return `${fixtures.emojiId}.png`;
      case "bot": return String(fixtures.botId);
      case "deactivatedBot": return String(fixtures.deactivatedBotId);
    }
  }

  function authFor(actor: Actor): string | null {
    switch (actor) {
      case "member": return authOf(member);
      case "admin": return authOf(admin);
      case "guest": return authOf(guest);
      case "throwaway": return authOf(throwaway);
      case "bot": return basic(botActor.email, botActor.apiKey);
      case "anonymous": return null;
      case "forged": return null; // the attempt's own header
    }
  }

  interface Attempt {
    actor: Actor;
    transport: "query" | "form" | "multipart";
    /** Start from VALID and make `mutated` hostile, or send `values` alone; `extras` either way. */
    fromValid: boolean;
    forged: { auth: string | null; host: string };
    values: Array<[string, Wire]>;
    mutated: Array<[string, Wire]>;
    extras: Array<[string, Wire]>;
    segments: Segment[];
  }

  function attemptArb(route: RouteCase): fc.Arbitrary<Attempt> {
    const value = valueArb(fixtures);
    const named = route.params.map((name) => fc.option(value, { nil: undefined, freq: 3 }).map((v): [string, Wire] | null => (v === undefined ? null : [name, v])));
    // Extra names include the route's own: a repeated parameter is a list to the body parser.
    const extraName = route.params.length > 0 ? fc.oneof(EXTRA_NAMES, fc.constantFrom(...route.params)) : EXTRA_NAMES;
    const extras = fc.array(fc.tuple(extraName, value), { maxLength: 2 });
    return fc.record({
      actor: fc.constantFrom(...(route.actors ?? (["member", "admin"] as Actor[]))),
      transport: fc.constantFrom("query", "form", "form", "multipart"),
      fromValid: VALID[routeKey(route.method, route.path)] ? fc.boolean() : fc.constant(false),
      forged: forgedHeadersArb(fixtures),
      values: fc.tuple(...named).map((fixed) => fixed.filter((v): v is [string, Wire] => v !== null)),
      mutated:
        route.params.length === 0
          ? fc.constant<Array<[string, Wire]>>([])
          : fc.shuffledSubarray(route.params, { minLength: 1, maxLength: Math.min(2, route.params.length) }).chain((names) => fc.tuple(...names.map((name) => value.map((v): [string, Wire] => [name, v])))),
      extras,
      segments: fc.tuple(...(route.pathFixtures ?? []).map(() => segmentArb())),
    });
  }

  /** Sends one attempt and checks its answer; a refusal must leave every table as it was. */
  async function run(route: RouteCase, attempt: Attempt): Promise<void> {
    let i = 0;
    const target = route.path.replace(/:[a-z_]+/g, () => {
      const segment = attempt.segments[i];
      const kind = route.pathFixtures![i++];
      return typeof segment === "object" && "fixture" in segment ? encodeWire(fixtureSegment(kind)) : encodeWire(segment);
    });
    const valid = attempt.fromValid ? VALID[routeKey(route.method, route.path)](fixtures) : {};
    const hostile = attempt.fromValid ? attempt.mutated : attempt.values;
    const values: Array<[string, Wire]> = [...Object.entries(valid).filter(([name]) => !hostile.some(([h]) => h === name)), ...hostile, ...attempt.extras];
    if (route.method === "GET" && route.path === "/events") values.push(["dont_block", "true"]);
    const encoded = values.map(([name, value]) => `${encodeWire(name)}=${encodeWire(value)}`).join("&");
    const inQuery = attempt.transport === "query";
    const url = `${route.root ? "" : "/api/v1"}${target}${inQuery && encoded ? `?${encoded}` : ""}`;
    const body: RawBody | null =
      attempt.transport === "form" ? { type: "application/x-www-form-urlencoded", data: Buffer.from(encoded) } : attempt.transport === "multipart" ? multipartBody(values) : null;
    const forged = attempt.actor === "forged";
    const auth = forged ? attempt.forged.auth : authFor(attempt.actor);
    const before = await fingerprint();
    const res = await sendRaw(server.baseUrl, route.method, url, { auth, body, host: forged ? attempt.forged.host : undefined });
    const sent = attempt.transport === "form" ? ` body ${encoded.slice(0, 300)}` : attempt.transport === "multipart" ? ` multipart ${JSON.stringify(values).slice(0, 300)}` : "";
    const label = `${route.method} ${url.slice(0, 300)} as ${attempt.actor}${forged ? ` ${JSON.stringify(attempt.forged).slice(0, 200)}` : ""}${sent}`;
    checkAnswer(res, label, { fileSuccess: route.root, page: route.page });
    if (attempt.actor === "bot") {
      if (res.status < 400) throw new Error(`${label}: a bot was answered ${res.status}: ${res.text.slice(0, 200)}`);
      // A request the HTTP layer refuses (431, 413, 415) never reaches a route, and a hostile id is
      // the path's own 400 or 404; past those, the refusal is Zulip's.
      const pathIsFixtures = attempt.segments.every((segment) => typeof segment === "object" && "fixture" in segment);
      const msg = (JSON.parse(res.text) as { msg: string }).msg;
      if (pathIsFixtures && ![413, 415, 431].includes(res.status) && msg !== BOT_REFUSAL) throw new Error(`${label}: a bot was refused with ${res.status} ${JSON.stringify(msg)}, not ${JSON.stringify(BOT_REFUSAL)}`);
    }
    const counts = (statusCounts[routeKey(route.method, route.path)] ??= {});
    counts[res.status] = (counts[res.status] ?? 0) + 1;
    if (res.status >= 400) {
      const after = await fingerprint();
      const changed = Object.keys(before).filter((table) => before[table] !== after[table]);
      if (changed.length > 0) throw new Error(`${label}: refused with ${res.status} ${res.text.slice(0, 200)} but changed ${changed.join(", ")}`);
    } else {
      await REMAKE[routeKey(route.method, route.path)]?.();
    }
  }

  const form = (text: string, type = "application/x-www-form-urlencoded"): RawBody => ({ type, data: Buffer.from(text) });
  const SEND = "type=stream&to=general&topic=t&content=x";

  // What the fuzzing and the API document's check found, kept as fixed cases: each was a 5xx, a
  // non-JSON answer (Node's own, before any route), or a status the document did not declare.
  const REGRESSIONS: Array<{ name: string; method: Method; target: string; actor: Actor; status: number; msg: string; request?: Omit<RawRequest, "auth"> }> = [
    {
      name: "NUL in an email path segment reached Postgres (500)",
      method: "GET",
      target: "/api/v1/users/a%00b/presence?3DRL(=%F1%A4%B0%96%F2%A1%B3%B0&L%3CMBl%3Co%409Nfs=oldest",
      actor: "member",
      status: 400,
      msg: "user_id_or_email contains NULL (0x00) characters.",
    },
    { name: "NUL in an emoji name path segment", method: "DELETE", target: "/api/v1/realm/emoji/a%00b", actor: "admin", status: 400, msg: "emoji_name contains NULL (0x00) characters." },
    {
      name: "a query string past Node's 16 KiB header limit got an empty 431",
      method: "GET",
      target: `/api/v1/server_settings?x=${"%C3%A9".repeat(4000)}`,
      actor: "anonymous",
      status: 431,
      msg: "Request line or headers too large",
    },
    {
      name: "the same for an authenticated write",
      method: "POST",
      target: `/api/v1/messages?type=stream&to=general&topic=t&content=${"x".repeat(20_000)}`,
      actor: "member",
      status: 431,
      msg: "Request line or headers too large",
    },
    { name: "an HTTP/1.1 request without Host got Node's empty 400", method: "GET", target: "/api/v1/server_settings", actor: "anonymous", status: 400, msg: "Missing Host header", request: { host: null } },
    {
      name: "an Expect header other than 100-continue got Node's empty 417",
      method: "POST",
      target: "/api/v1/messages",
      actor: "member",
      status: 417,
      msg: "Expectation failed: only 100-continue is supported",
      request: { headers: { expect: "x-fuzz" }, body: form(SEND) },
    },
    {
      name: "a form in another charset got an undeclared 415 called a malformed body",
      method: "POST",
      target: "/api/v1/messages",
      actor: "member",
      status: 415,
      msg: "Unsupported charset: a form body is UTF-8 or ISO-8859-1",
      request: { body: form(SEND, "application/x-www-form-urlencoded; charset=latin1") },
    },
    {
      name: "a Content-Encoding the server does not decode got the same",
      method: "PATCH",
      target: "/api/v1/settings/display",
      actor: "member",
      status: 415,
      msg: "Unsupported Content-Encoding",
      request: { headers: { "content-encoding": "compress" }, body: form("dense_mode=true") },
    },
    {
      name: "more parameters than the body parser reads got a 413 called a malformed body",
      method: "POST",
      target: "/api/v1/messages",
      actor: "member",
      status: 413,
      msg: "Too many parameters",
      request: { body: form(`${SEND}${"&a=1".repeat(10_000)}`) },
    },
  ];
  test.each(REGRESSIONS)("regression: $name", async ({ method, target, actor, status, msg, request }) => {
    const before = await fingerprint();
    const res = await sendRaw(server.baseUrl, method, target, { ...request, auth: authFor(actor) });
    checkAnswer(res, `${method} ${target.slice(0, 100)}`);
    expect(res.status).toBe(status);
    expect(JSON.parse(res.text)).toMatchObject({ result: "error", msg, code: "BAD_REQUEST" });
    expect(await fingerprint()).toEqual(before);
  });

  test.each(ROUTES.map((route, index) => [routeKey(route.method, route.path), route, index] as const))(
    "%s answers hostile input with a clean JSON refusal or success",
    async (_key, route, index) => {
      await fc.assert(fc.asyncProperty(attemptArb(route), (attempt) => run(route, attempt)), {
        seed: SEED + index,
        numRuns: NUM_RUNS,
        // A live server's state moves on between runs; the first failure, unshrunk, is the report.
        endOnFailure: true,
      });
    },
    120_000,
  );
});
