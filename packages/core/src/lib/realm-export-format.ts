// Zulip's organization export format (zerver/lib/export.py), as this server writes and reads it:
// `realm.json` holds the organization's tables by Zulip's table names (`zerver_userprofile`, ...),
// `messages-000001.json` and on hold `zerver_message` and `zerver_usermessage` in batches,
// `attachment.json` the uploads' rows, and `uploads/`, `avatars/`, `emoji/` the files, each with a
// `records.json`. Rows are Django's model_to_dict: a foreign key is the field's name without `_id`
// and holds the id, times are seconds since the epoch (floats).
//
// Each table of ours is described once here, for both directions: its Zulip name, the fields whose
// names differ from our columns, and which columns hold ids of which table (so an import can give
// every row a new id and follow the references).

/** A table of the export: one of our tables under its Zulip name. */
export interface ExportTable {
  /** Our table. */
  table: string;
  /** Zulip's name for it (the key in realm.json). */
  key: string;
  /** Whether the table has a serial `id` (given anew on import). */
  hasId: boolean;
  /** Our column → Zulip's field, where they differ (a reference's field otherwise drops `_id`). */
  fields?: Record<string, string>;
  /** Our column → the Zulip key of the table whose id it holds. */
  refs?: Record<string, string>;
  /** Our columns never exported (secrets, caches, counters). */
  omit?: string[];
  /** Other names Zulip has used for a field (older or newer versions), → our column. */
  aliases?: Record<string, string>;
  /** References set after every table of realm.json is in (they point forward or in circles). */
  deferred?: string[];
  /** The rows of the organization: a condition on `t` with `$1` the realm's id. */
  where: string;
}

const REALM_USERS = "t.user_id IN (SELECT id FROM user_profile WHERE realm_id = $1)";

/** realm.json's tables, in the order an import inserts them. */
export const REALM_TABLES: ExportTable[] = [
  {
    table: "realm",
    key: "zerver_realm",
    hasId: true,
    // Zulip 9.0's names (feature level 241); the older ones are read too.
    fields: { notifications_stream_id: "new_stream_announcements_stream", signup_notifications_stream_id: "signup_announcements_stream" },
    aliases: { notifications_stream: "notifications_stream_id", signup_notifications_stream: "signup_notifications_stream_id" },
    refs: { notifications_stream_id: "zerver_stream", signup_notifications_stream_id: "zerver_stream" },
    deferred: ["notifications_stream_id", "signup_notifications_stream_id"],
    omit: ["stream_generation", "user_generation", "linkifier_generation", "realm_users_generation", "realm_config_generation"],
    where: "t.id = $1",
  },
  {
    table: "user_profile",
    key: "zerver_userprofile",
    hasId: true,
    refs: {
      realm_id: "zerver_realm",
      bot_owner_id: "zerver_userprofile",
      recipient_id: "zerver_recipient",
      default_sending_stream_id: "zerver_stream",
      default_events_register_stream_id: "zerver_stream",
    },
    deferred: ["bot_owner_id", "recipient_id", "default_sending_stream_id", "default_events_register_stream_id"],
    // Zulip's export leaves out passwords and API keys: imported users set a password, get a new key.
    omit: ["password_hash", "api_key", "last_active_message_id", "pointer"],
    where: "t.realm_id = $1",
  },
  {
    table: "stream",
    key: "zerver_stream",
    hasId: true,
    refs: { realm_id: "zerver_realm", recipient_id: "zerver_recipient" },
    deferred: ["recipient_id"],
    // first_message_id is set from the imported messages. The email token lets anyone who has it
    // post by email: a secret, as Zulip's channel email addresses, which it never exports; an
    // import makes a new one.
    omit: ["first_message_id", "email_token"],
    where: "t.realm_id = $1",
  },
  {
    table: "huddle",
    key: "zerver_huddle",
    hasId: true,
    refs: { realm_id: "zerver_realm", recipient_id: "zerver_recipient" },
    deferred: ["recipient_id"],
    where: "t.realm_id = $1",
  },
  {
    table: "recipient",
    key: "zerver_recipient",
    hasId: true,
    // type_id follows type: 1 a user, 2 a stream, 3 a huddle (realm-import.ts).
    where:
      "(t.type = 1 AND t.type_id IN (SELECT id FROM user_profile WHERE realm_id = $1)) OR (t.type = 2 AND t.type_id IN (SELECT id FROM stream WHERE realm_id = $1)) OR (t.type = 3 AND t.type_id IN (SELECT id FROM huddle WHERE realm_id = $1))",
  },
  {
    table: "subscription",
    key: "zerver_subscription",
    hasId: true,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", recipient_id: "zerver_recipient" },
    where: REALM_USERS,
  },
  {
    table: "realm_emoji",
    key: "zerver_realmemoji",
    hasId: true,
    refs: { realm_id: "zerver_realm", author_id: "zerver_userprofile" },
    where: "t.realm_id = $1",
  },
  {
    table: "realm_filter",
    key: "zerver_realmfilter",
    hasId: true,
    // Zulip 7.0's url_template (feature level 176) beside 3.x's url_format_string: an import
    // makes whichever of our columns the export lacks from the other (realm-import.ts).
    refs: { realm_id: "zerver_realm" },
    where: "t.realm_id = $1",
  },
  { table: "user_group", key: "zerver_usergroup", hasId: true, refs: { realm_id: "zerver_realm" }, where: "t.realm_id = $1" },
  {
    table: "user_group_membership",
    key: "zerver_usergroupmembership",
    hasId: false,
    fields: { user_id: "user_profile" },
    refs: { user_group_id: "zerver_usergroup", user_id: "zerver_userprofile" },
    where: "t.user_group_id IN (SELECT id FROM user_group WHERE realm_id = $1)",
  },
  {
    table: "custom_profile_field",
    key: "zerver_customprofilefield",
    hasId: true,
    fields: { type: "field_type" },
    refs: { realm_id: "zerver_realm" },
    where: "t.realm_id = $1",
  },
  {
    table: "custom_profile_field_value",
    key: "zerver_customprofilefieldvalue",
    hasId: true,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", field_id: "zerver_customprofilefield" },
    where: REALM_USERS,
  },
  { table: "default_stream", key: "zerver_defaultstream", hasId: false, refs: { realm_id: "zerver_realm", stream_id: "zerver_stream" }, where: "t.realm_id = $1" },
  // Its streams are a list in the row, as Django writes a many-to-many field (realm-import.ts).
  { table: "default_stream_group", key: "zerver_defaultstreamgroup", hasId: true, refs: { realm_id: "zerver_realm" }, where: "t.realm_id = $1" },
  {
    table: "user_topic",
    key: "zerver_usertopic",
    hasId: true,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", stream_id: "zerver_stream", recipient_id: "zerver_recipient" },
    where: REALM_USERS,
  },
  {
    table: "user_status",
    key: "zerver_userstatus",
    hasId: false,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", realm_id: "zerver_realm" },
    where: "t.realm_id = $1",
  },
  {
    table: "alert_word",
    key: "zerver_alertword",
    hasId: true,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", realm_id: "zerver_realm" },
    where: "t.realm_id = $1",
  },
  { table: "service", key: "zerver_service", hasId: true, fields: { user_id: "user_profile" }, refs: { user_id: "zerver_userprofile" }, where: REALM_USERS },
  {
    table: "bot_config_data",
    key: "zerver_botconfigdata",
    hasId: false,
    refs: { bot_profile_id: "zerver_userprofile" },
    where: "t.bot_profile_id IN (SELECT id FROM user_profile WHERE realm_id = $1)",
  },
  {
    table: "bot_storage_data",
    key: "zerver_botstoragedata",
    hasId: false,
    fields: { user_id: "bot_profile" },
    refs: { user_id: "zerver_userprofile" },
    where: REALM_USERS,
  },
  {
    table: "muted_user",
    key: "zerver_muteduser",
    hasId: true,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", muted_user_id: "zerver_userprofile" },
    where: REALM_USERS,
  },
  { table: "realm_playground", key: "zerver_realmplayground", hasId: true, refs: { realm_id: "zerver_realm" }, where: "t.realm_id = $1" },
  // The settings new users start with (one row, keyed by the realm).
  { table: "realm_user_default", key: "zerver_realmuserdefault", hasId: false, refs: { realm_id: "zerver_realm" }, where: "t.realm_id = $1" },
];

/** Tables that refer to messages: in realm.json (as Zulip puts them), inserted after the messages. */
export const MESSAGE_CHILD_TABLES: ExportTable[] = [
  {
    table: "reaction",
    key: "zerver_reaction",
    hasId: true,
    fields: { user_id: "user_profile" },
    refs: { user_id: "zerver_userprofile", message_id: "zerver_message" },
    where: "t.message_id IN (SELECT id FROM message WHERE realm_id = $1)",
  },
  {
    table: "submessage",
    key: "zerver_submessage",
    hasId: true,
    refs: { sender_id: "zerver_userprofile", message_id: "zerver_message" },
    where: "t.message_id IN (SELECT id FROM message WHERE realm_id = $1)",
  },
];

export const MESSAGE_TABLE: ExportTable = {
  table: "message",
  key: "zerver_message",
  hasId: true,
  refs: { realm_id: "zerver_realm", sender_id: "zerver_userprofile", recipient_id: "zerver_recipient" },
  // sending_client is Zulip's id of a zerver_client row (realm-export.ts writes that table).
  omit: ["cache_version", "sending_client"],
  where: "t.realm_id = $1",
};

export const USER_MESSAGE_TABLE: ExportTable = {
  table: "user_message",
  key: "zerver_usermessage",
  hasId: false,
  fields: { user_id: "user_profile", flags: "flags_mask" },
  refs: { user_id: "zerver_userprofile", message_id: "zerver_message" },
  where: "true",
};

export const ATTACHMENT_TABLE: ExportTable = {
  table: "attachment",
  key: "zerver_attachment",
  hasId: true,
  refs: { realm_id: "zerver_realm", owner_id: "zerver_userprofile" },
  where: "t.realm_id = $1",
};

/** Messages per messages-NNNNNN.json file (Zulip's MESSAGE_BATCH_CHUNK_SIZE). */
export const MESSAGES_PER_FILE = 1000;

export function messageFileName(index: number): string {
  return `messages-${String(index).padStart(6, "0")}.json`;
}

/** The field a column is exported as. */
export function exportFieldName(spec: ExportTable, column: string): string {
  const named = spec.fields?.[column];
  if (named !== undefined) return named;
  // A group setting names its group as Zulip's does (can_mention_group).
  if ((spec.refs?.[column] !== undefined || column.endsWith("_group_id")) && column.endsWith("_id")) return column.slice(0, -3);
  return column;
}
