// The events GET /events delivers (and /register's queue applies): one schema per type, and per
// op where a type has several, in the API document's components.schemas. `Event` is any one of
// them, chosen by `type` then `op` (if/then rather than oneOf, so a wrong event is told what is
// wrong with it, not only that it matches no branch). Every event has an `id`.
import { schema as s } from "./endpoints.ts";
import type { JsonSchema } from "./params.ts";

const string = s.string();
const integer = s.integer();
const boolean = s.boolean();
const nullableInteger = s.nullable(integer);
const nullableString = s.nullable(string);
const integerList = s.array(integer);
const stringList = s.array(string);
const ref = s.ref;

/** A group-setting value (/api/group-setting-values): a named group's id, or an anonymous group. */
const GROUP_SETTING_VALUE = s.anyOf(integer, s.object({ direct_members: integerList, direct_subgroups: integerList }));

/** A property's value in an update event: settings are booleans, integers, strings or null. */
const SCALAR = s.anyOf(boolean, integer, string, s.null());

/** An event of `type` with these fields (`id` and `type` are every event's). */
function event(type: string, required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return s.object({ id: integer, type: s.const(type), ...required }, optional);
}

/** An event of `type` and `op`. */
function opEvent(type: string, op: string, required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return event(type, { op: s.const(op), ...required }, optional);
}

const STREAMS = { streams: s.array(ref("Stream")) };
const USER_REF = s.object({ user_id: integer, email: string });
const TYPING_EDIT_RECIPIENT = s.anyOf(
  s.object({ type: s.const("channel"), channel_id: integer, topic: string }),
  s.object({ type: s.const("direct"), user_ids: integerList }),
);
const TYPING_FIELDS = { message_type: s.enum("direct", "stream"), recipients: s.array(USER_REF), stream_id: integer, topic: string };

/** realm_user update: the user's id and what changed. */
const PERSON_UPDATE = {
  type: "object",
  required: ["user_id"],
  minProperties: 2,
  properties: {
    user_id: integer,
    full_name: string,
    avatar_url: nullableString,
    avatar_url_medium: nullableString,
    avatar_source: string,
    avatar_version: integer,
    timezone: string,
    email: string,
    new_email: string,
    // null: access to the address taken back (feature level 163).
    delivery_email: nullableString,
    bot_owner_id: nullableInteger,
    role: s.enum(100, 200, 300, 400, 600),
    // (De)activation, for clients newer than Zulip 3.x (feature level 222); others get remove / add.
    is_active: boolean,
    custom_profile_field: s.object({ id: integer, value: s.nullable(string) }, { rendered_value: nullableString }),
  },
  additionalProperties: false,
};

/** realm_bot update: the bot's email and id, and what changed. */
const BOT_UPDATE = {
  type: "object",
  required: ["email", "user_id"],
  minProperties: 3,
  properties: {
    email: string,
    user_id: integer,
    full_name: string,
    api_key: string,
    avatar_url: string,
    owner_id: integer,
    default_sending_stream: nullableString,
    default_events_register_stream: nullableString,
    default_all_public_streams: boolean,
    services: s.array(ref("BotService")),
  },
  additionalProperties: false,
};

/** Each event's schema, by `type` (a schema of its own) or by `type` and `op`. */
const BY_TYPE: Record<string, JsonSchema | Record<string, JsonSchema>> = {
  heartbeat: event("heartbeat", {}),
  // Register again: the server now speaks another API version (feature levels 59, 88, 240 shape).
  restart: event("restart", { zulip_version: string, zulip_feature_level: integer, zulip_merge_base: string, server_generation: integer }),
  message: event(
    "message",
    { message: ref("Message"), flags: stringList },
    // Deprecated: what the server did (or would have done) about notifying. local_message_id: to
    // the queue that sent it with queue_id and local_id.
    {
      email_notified: boolean,
      push_notified: boolean,
      stream_push_notify: boolean,
      stream_email_notify: boolean,
      wildcard_mention_notify: boolean,
      local_message_id: string,
    },
  ),
  // user_id is null for an update of the rendering only (rendering_only, feature level 114);
  // propagate_mode only with a move for clients newer than Zulip 3.x, with every edit for others.
  update_message: event(
    "update_message",
    { user_id: nullableInteger, rendering_only: boolean, edit_timestamp: integer, message_id: integer, message_ids: integerList, flags: stringList },
    {
      propagate_mode: s.enum("change_one", "change_later", "change_all"),
      stream_name: string,
      stream_id: integer,
      new_stream_id: integer,
      orig_content: string,
      orig_rendered_content: nullableString,
      // Only 3.x clients still get it (gone at feature level 284).
      prev_rendered_content_version: nullableInteger,
      content: string,
      rendered_content: string,
      is_me_message: boolean,
      orig_subject: string,
      subject: string,
      topic_links: s.array(string),
    },
  ),
  // message_ids for clients with bulk_message_deletion; message_id (one event each) for others.
  delete_message: event(
    "delete_message",
    { message_type: s.enum("stream", "private") },
    { message_ids: integerList, message_id: integer, stream_id: integer, topic: string, recipient_id: integer, sender_id: integer },
  ),
  update_message_flags: {
    add: opEvent("update_message_flags", "add", { operation: s.const("add"), flag: string, messages: integerList, all: boolean }),
    // message_details when `read` is removed (feature level 121): each message by id, for unread counts.
    remove: opEvent(
      "update_message_flags",
      "remove",
      { operation: s.const("remove"), flag: string, messages: integerList, all: boolean },
      {
        message_details: s.dict(
          s.object({ type: s.enum("stream", "private") }, { mentioned: s.const(true), user_ids: integerList, stream_id: integer, topic: string, unmuted_stream_msg: boolean }),
        ),
      },
    ),
  },
  reaction: {
    add: opEvent("reaction", "add", { message_id: integer, emoji_name: string, emoji_code: string, reaction_type: string, user_id: integer, user: s.object({ user_id: integer, email: string, full_name: string }) }),
    remove: opEvent("reaction", "remove", { message_id: integer, emoji_name: string, emoji_code: string, reaction_type: string, user_id: integer, user: s.object({ user_id: integer, email: string, full_name: string }) }),
  },
  // A submessage attached to a message (POST /submessage), to those who have the message.
  submessage: event("submessage", { msg_type: string, content: string, message_id: integer, sender_id: integer, submessage_id: integer }),
  // message_type for clients newer than Zulip 3.x; a stream's (stream_id and topic, no
  // recipients) only for those with stream_typing_notifications.
  typing: {
    start: opEvent("typing", "start", { sender: USER_REF }, TYPING_FIELDS),
    stop: opEvent("typing", "stop", { sender: USER_REF }, TYPING_FIELDS),
  },
  // Feature level 351: someone started or stopped editing a message, to a stream message's
  // subscribers or a direct message's participants.
  typing_edit_message: {
    start: opEvent("typing_edit_message", "start", { sender_id: integer, message_id: integer, recipient: TYPING_EDIT_RECIPIENT }),
    stop: opEvent("typing_edit_message", "stop", { sender_id: integer, message_id: integer, recipient: TYPING_EDIT_RECIPIENT }),
  },
  alert_words: event("alert_words", { alert_words: stringList }),
  // Feature level 87: the user's synchronised drafts.
  drafts: {
    add: opEvent("drafts", "add", { drafts: s.array(ref("Draft")) }),
    update: opEvent("drafts", "update", { draft: ref("Draft") }),
    remove: opEvent("drafts", "remove", { draft_id: integer }),
  },
  // Feature levels 297 and 368: the user's saved snippets.
  saved_snippets: {
    add: opEvent("saved_snippets", "add", { saved_snippet: ref("SavedSnippet") }),
    update: opEvent("saved_snippets", "update", { saved_snippet: ref("SavedSnippet") }),
    remove: opEvent("saved_snippets", "remove", { saved_snippet_id: integer }),
  },
  // Feature level 179: the user's scheduled messages (remove when sent or deleted; update when edited or failed).
  scheduled_messages: {
    add: opEvent("scheduled_messages", "add", { scheduled_messages: s.array(ref("ScheduledMessage")) }),
    update: opEvent("scheduled_messages", "update", { scheduled_message: ref("ScheduledMessage") }),
    remove: opEvent("scheduled_messages", "remove", { scheduled_message_id: integer }),
  },
  // The invitations one may see changed (no payload): to administrators, and to the sender (feature level 209).
  invites_changed: event("invites_changed", {}),
  // The user's whole list of muted users after a change (feature level 48).
  muted_users: event("muted_users", { muted_users: s.array(s.object({ id: integer, timestamp: integer })) }),
  muted_topics: event("muted_topics", { muted_topics: s.array({ type: "array", prefixItems: [string, string, integer], minItems: 2, maxItems: 3 }) }),
  // A topic's visibility policy changed (feature level 134): 0 none, 1 muted, 2 unmuted, 3 followed.
  user_topic: event("user_topic", { stream_id: integer, topic_name: string, last_updated: integer, visibility_policy: s.enum(0, 1, 2, 3) }),
  // No email for a slim_presence queue.
  presence: event("presence", { user_id: integer, server_timestamp: s.number(), presence: s.dict(ref("ClientPresence")) }, { email: string }),
  user_status: event("user_status", { user_id: integer }, { away: boolean, status_text: string, emoji_name: string, emoji_code: string, reaction_type: string }),
  update_display_settings: event("update_display_settings", { user: string, setting_name: string, setting: SCALAR }, { language_name: string }),
  update_global_notifications: event("update_global_notifications", { user: string, notification_name: string, setting: SCALAR }),
  // Zulip 5.0's settings event (feature level 89); default_language's carries the language's name.
  user_settings: {
    update: opEvent("user_settings", "update", { property: string, value: SCALAR }, { language_name: string }),
  },
  attachment: {
    add: opEvent("attachment", "add", { attachment: ref("Attachment"), upload_space_used: integer }),
    update: opEvent("attachment", "update", { attachment: ref("Attachment"), upload_space_used: integer }),
    remove: opEvent("attachment", "remove", { attachment: s.object({ id: integer }), upload_space_used: integer }),
  },
  stream: {
    create: opEvent("stream", "create", STREAMS),
    occupy: opEvent("stream", "occupy", STREAMS),
    vacate: opEvent("stream", "vacate", STREAMS),
    // `stream_ids` (feature level 343) beside the deprecated `streams`; archiving sends it too (315).
    delete: opEvent("stream", "delete", { ...STREAMS, stream_ids: integerList }),
    // A permission setting's value is a group-setting value (feature levels 320 to 357).
    update: opEvent("stream", "update", { stream_id: integer, name: string, property: string, value: s.anyOf(SCALAR, GROUP_SETTING_VALUE) }, { rendered_description: string, history_public_to_subscribers: boolean, is_web_public: boolean }),
  },
  subscription: {
    add: opEvent("subscription", "add", { subscriptions: s.array(ref("Subscription")) }),
    remove: opEvent("subscription", "remove", { subscriptions: s.array(s.object({ stream_id: integer, name: string })) }),
    // `name` and `email` only for 3.x clients (feature levels 40 and 41).
    update: opEvent("subscription", "update", { stream_id: integer, property: string, value: SCALAR }, { name: string, email: string }),
    // Lists (feature level 35) for clients newer than Zulip 3.x; one stream and user each for others.
    peer_add: s.oneOf(opEvent("subscription", "peer_add", { stream_ids: integerList, user_ids: integerList }), opEvent("subscription", "peer_add", { stream_id: integer, user_id: integer })),
    peer_remove: s.oneOf(
      opEvent("subscription", "peer_remove", { stream_ids: integerList, user_ids: integerList }),
      opEvent("subscription", "peer_remove", { stream_id: integer, user_id: integer }),
    ),
  },
  realm: {
    update: opEvent("realm", "update", { property: string, value: SCALAR }),
    // A group setting's value is a group-setting value (feature levels 280 to 367).
    update_dict: opEvent("realm", "update_dict", { property: string, data: s.dict(s.anyOf(SCALAR, GROUP_SETTING_VALUE)) }),
    // POST /realm/deactivate, to every user of the organization.
    deactivated: opEvent("realm", "deactivated", { realm_id: integer }),
  },
  realm_user: {
    add: opEvent("realm_user", "add", { person: ref("User") }),
    remove: opEvent("realm_user", "remove", { person: s.object({ user_id: integer, full_name: string }) }),
    update: opEvent("realm_user", "update", { person: PERSON_UPDATE }),
  },
  realm_bot: {
    add: opEvent("realm_bot", "add", { bot: ref("OwnedBot") }),
    update: opEvent("realm_bot", "update", { bot: BOT_UPDATE }),
    remove: opEvent("realm_bot", "remove", { bot: s.object({ email: string, user_id: integer, full_name: string }) }),
    delete: opEvent("realm_bot", "delete", { bot: s.object({ email: string, user_id: integer }) }),
  },
  realm_emoji: { update: opEvent("realm_emoji", "update", { realm_emoji: s.dict(ref("RealmEmoji")) }) },
  realm_filters: event("realm_filters", { realm_filters: s.array(ref("Linkifier")) }),
  // Every export of the organization, to its administrators (feature level 182's shape).
  realm_export: event("realm_export", {
    exports: s.array(
      s.object({
        id: integer,
        acting_user_id: nullableInteger,
        export_time: s.number(),
        deleted_timestamp: s.nullable(s.number()),
        failed_timestamp: s.nullable(s.number()),
        export_url: nullableString,
        pending: boolean,
        // Feature level 304: 1 public data, 2 full with members' consent.
        export_type: s.enum(1, 2),
      }),
    ),
  }),
  // Feature level 312: a user's consent to private data exports changed, to the administrators.
  realm_export_consent: event("realm_export_consent", { user_id: integer, consented: boolean }),
  realm_linkifiers: event("realm_linkifiers", { realm_linkifiers: s.array(s.object({ id: integer, pattern: string, url_template: string })) }),
  realm_playgrounds: event("realm_playgrounds", { realm_playgrounds: s.array(s.object({ id: integer, name: string, pygments_language: string, url_template: string })) }),
  onboarding_steps: event("onboarding_steps", { onboarding_steps: s.array(s.object({ type: string, name: string })) }),
  realm_user_settings_defaults: { update: opEvent("realm_user_settings_defaults", "update", { property: string, value: SCALAR }) },
  // `op` only for 3.x clients (feature level 45).
  custom_profile_fields: event("custom_profile_fields", { fields: s.array(ref("CustomProfileField")) }, { op: s.enum("add", "update", "delete") }),
  realm_domains: {
    add: opEvent("realm_domains", "add", { realm_domain: s.object({ domain: string, allow_subdomains: boolean }) }),
    change: opEvent("realm_domains", "change", { realm_domain: s.object({ domain: string, allow_subdomains: boolean }) }),
    remove: opEvent("realm_domains", "remove", { domain: string }),
  },
  // Ids for today's clients (feature level 330), whole streams for 3.x-era ones.
  default_streams: event("default_streams", { default_streams: s.anyOf(s.array(ref("Stream")), s.array(integer)) }),
  default_stream_groups: event("default_stream_groups", { default_stream_groups: s.array(ref("DefaultStreamGroup")) }),
  user_group: {
    add: opEvent("user_group", "add", { group: ref("UserGroup") }),
    update: opEvent("user_group", "update", {
      group_id: integer,
      data: s.object(
        {},
        {
          name: string,
          description: string,
          deactivated: boolean,
          can_add_members_group: GROUP_SETTING_VALUE,
          can_join_group: GROUP_SETTING_VALUE,
          can_leave_group: GROUP_SETTING_VALUE,
          can_manage_group: GROUP_SETTING_VALUE,
          can_mention_group: GROUP_SETTING_VALUE,
          can_remove_members_group: GROUP_SETTING_VALUE,
        },
      ),
    }),
    remove: opEvent("user_group", "remove", { group_id: integer }),
    add_members: opEvent("user_group", "add_members", { group_id: integer, user_ids: integerList }),
    remove_members: opEvent("user_group", "remove_members", { group_id: integer, user_ids: integerList }),
    // Feature level 311's nesting changes.
    add_subgroups: opEvent("user_group", "add_subgroups", { group_id: integer, direct_subgroup_ids: integerList }),
    remove_subgroups: opEvent("user_group", "remove_subgroups", { group_id: integer, direct_subgroup_ids: integerList }),
  },
};

/** A type or op as a schema's name in the document: `update_message_flags` → `UpdateMessageFlags`. */
function pascal(text: string): string {
  return text
    .split("_")
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join("");
}

function buildSchemas(): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  const byType: JsonSchema[] = [];
  for (const [type, entry] of Object.entries(BY_TYPE)) {
    const when = { properties: { type: { const: type } }, required: ["type"] };
    if ("type" in entry && entry.type === "object") {
      const name = `${pascal(type)}Event`;
      schemas[name] = entry as JsonSchema;
      byType.push({ if: when, then: ref(name) });
      continue;
    }
    const ops = Object.keys(entry);
    const byOp: JsonSchema[] = [];
    for (const [op, opSchema] of Object.entries(entry as Record<string, JsonSchema>)) {
      const name = `${pascal(type)}${pascal(op)}Event`;
      schemas[name] = opSchema;
      byOp.push({ if: { properties: { op: { const: op } }, required: ["op"] }, then: ref(name) });
    }
    byType.push({ if: when, then: { required: ["op"], properties: { op: { enum: ops } }, allOf: byOp } });
  }
  schemas.Event = {
    description: "Any event: its schema is chosen by `type`, then `op` (one schema each in components.schemas, named `<Type><Op>Event`).",
    type: "object",
    required: ["id", "type"],
    properties: { id: integer, type: { enum: Object.keys(BY_TYPE) } },
    allOf: byType,
  };
  return schemas;
}

export const EVENT_SCHEMAS: Record<string, JsonSchema> = buildSchemas();
