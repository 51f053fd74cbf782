import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest, OwnerRequiredError } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { isLanguageCode } from "../lib/languages.ts";
import { isAdmin, isOwner } from "../lib/roles.ts";
import { activeUserIds } from "../queries/users.ts";
import { INTEGER_POLICY_VALUES } from "../lib/permissions.ts";
import { checkPolicyChanges, type RealmPolicyChanges } from "./realm-policies.ts";
import { MODERN_REALM_LIMITS } from "../lib/modern-realm-settings.ts";
import { applyEmailAddressVisibility } from "./email-visibility.ts";
import { updateRealmGroupSettings, type RealmGroupSettingsChanges } from "./realm-group-settings.ts";
import { EDIT_HISTORY_POLICY, editHistoryPolicyAfter, editHistoryPolicyName, type EditHistoryPolicyName } from "../lib/edit-history-policy.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";

export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** Valid values of each policy setting (Zulip's Realm.*_POLICY_TYPES of the same era). */
export const REALM_POLICY_VALUES: Record<string, number[]> = {
  // create_stream_policy, invite_to_stream_policy, user_group_edit_policy, wildcard_mention_policy,
  // bot_creation_policy and 9.0's integer policies (lib/permissions.ts).
  ...INTEGER_POLICY_VALUES,
  invite_to_realm_policy: [1, 2, 3, 4, 6],
  private_message_policy: [1, 2],
  email_address_visibility: [1, 2, 3, 4],
};

export interface RealmSettingsChanges extends RealmPolicyChanges, RealmGroupSettingsChanges {
  name?: string;
  description?: string;
  invite_required?: boolean;
  create_stream_policy?: number;
  invite_to_stream_policy?: number;
  invite_to_realm_policy?: number;
  user_group_edit_policy?: number;
  private_message_policy?: number;
  wildcard_mention_policy?: number;
  bot_creation_policy?: number;
  email_address_visibility?: number;
  waiting_period_threshold?: number;
  allow_message_editing?: boolean;
  message_content_edit_limit_seconds?: number;
  allow_community_topic_editing?: boolean;
  allow_message_deleting?: boolean;
  /** Seconds, or null for no limit. */
  message_content_delete_limit_seconds?: number | null;
  /** Zulip 3.x's switch for message_edit_history_visibility_policy: false is "none", true "all" (or the policy kept if not "none"). */
  allow_edit_history?: boolean;
  /** Feature level 358; wins over allow_edit_history when both are sent. */
  message_edit_history_visibility_policy?: EditHistoryPolicyName;
  mandatory_topics?: boolean;
  default_language?: string;
  default_twenty_four_hour_time?: boolean;
  inline_image_preview?: boolean;
  inline_url_embed_preview?: boolean;
  send_welcome_emails?: boolean;
  digest_emails_enabled?: boolean;
  /** A number of days, or null for "forever". */
  message_retention_days?: number | null;
  name_changes_disabled?: boolean;
  email_changes_disabled?: boolean;
  avatar_changes_disabled?: boolean;
  add_emoji_by_admins_only?: boolean;
  /** A stream id, or -1 for none. */
  notifications_stream_id?: number;
  signup_notifications_stream_id?: number;
  enable_read_receipts?: boolean;
  /** Spectators may read the web-public streams (feature level 109). */
  enable_spectator_access?: boolean;
  // Zulip 9.0's settings that are not permissions (0035).
  emails_restricted_to_domains?: boolean;
  disallow_disposable_email_addresses?: boolean;
  digest_weekday?: number;
  message_content_allowed_in_email_notifications?: boolean;
  org_type?: number;
  want_advertise_in_communities_directory?: boolean;
  /** A URL, or null for the server's Jitsi. */
  jitsi_server_url?: string | null;
  enable_guest_user_indicator?: boolean;
  require_unique_names?: boolean;
  giphy_rating?: number;
  default_code_block_language?: string;
  video_chat_provider?: number;
  /** A stream id, or -1 for none. */
  zulip_update_announcements_stream_id?: number;
  /** The private stream message reports go to (feature level 331), or -1 for none. */
  moderation_request_channel_id?: number;
  /** Feature level 348. */
  enable_guest_user_dm_warning?: boolean;
}

/** Zulip's Realm.ORG_TYPES ids (feature level 128). */
export const ORG_TYPE_IDS = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];
/** Zulip's Realm.GIPHY_RATING_OPTIONS ids (feature level 55): 0 disabled, then Y, G, PG, PG-13, R. */
export const GIPHY_RATING_IDS = [0, 1, 2, 3, 4, 5];
/** Zulip's video chat providers without an outside account: 0 none, 1 Jitsi Meet (Zoom and BigBlueButton need one). */
export const VIDEO_CHAT_PROVIDER_IDS = [0, 1];
export const MAX_JITSI_SERVER_URL_LENGTH = 200;
export const MAX_CODE_BLOCK_LANGUAGE_LENGTH = 80;
/** Settings only owners change (Zulip's feature level 143). */
const OWNER_ONLY_PROPERTIES = ["invite_required", "invite_to_realm_policy", "emails_restricted_to_domains", "disallow_disposable_email_addresses", "waiting_period_threshold"] as const;

/** Settings sent as one `realm update` each, in this order (Zulip's do_set_realm_property). */
const SIMPLE_PROPERTIES = [
  "name",
  "description",
  "invite_required",
  "email_address_visibility",
  "waiting_period_threshold",
  "mandatory_topics",
  "default_language",
  "default_twenty_four_hour_time",
  "inline_image_preview",
  "inline_url_embed_preview",
  "send_welcome_emails",
  "digest_emails_enabled",
  "message_retention_days",
  "name_changes_disabled",
  "email_changes_disabled",
  "avatar_changes_disabled",
  "enable_read_receipts",
  "enable_spectator_access",
  "emails_restricted_to_domains",
  "disallow_disposable_email_addresses",
  "digest_weekday",
  "message_content_allowed_in_email_notifications",
  "org_type",
  "want_advertise_in_communities_directory",
  "jitsi_server_url",
  "enable_guest_user_indicator",
  "require_unique_names",
  "giphy_rating",
  "default_code_block_language",
  "video_chat_provider",
  "enable_guest_user_dm_warning",
] as const;

/** Announced as `realm update_dict`, as their history has it (Zulip's do_set_realm_property), each on its own since feature level 150. */
const EDITING_PROPERTIES = ["allow_message_editing", "message_content_edit_limit_seconds"] as const;

function checkChanges(actor: Actor, changes: RealmSettingsChanges): void {
  if (changes.name !== undefined) {
    if (changes.name.trim() === "") throw badRequest("Organization name can't be empty.");
    if (changes.name.length > MAX_REALM_NAME_LENGTH) throw badRequest("Organization name is too long.");
  }
  if (changes.description !== undefined && changes.description.length > MAX_REALM_DESCRIPTION_LENGTH) {
    throw badRequest("Organization description is too long.");
  }
  for (const [property, values] of Object.entries(REALM_POLICY_VALUES)) {
    const value = changes[property as keyof RealmSettingsChanges];
    if (value !== undefined && !values.includes(value as number)) throw badRequest(`Invalid ${property}`);
  }
  for (const property of ["waiting_period_threshold", "message_content_edit_limit_seconds", "message_content_delete_limit_seconds"] as const) {
    const value = changes[property];
    if (value !== undefined && value !== null && value < 0) throw badRequest(`Bad value for '${property}': ${value}`);
  }
  if (changes.message_retention_days !== undefined) {
    if (!isOwner(actor)) throw new OwnerRequiredError();
    const days = changes.message_retention_days;
    if (days !== null && days <= 0) throw badRequest("Bad value for 'message_retention_days': " + days);
    // Nothing here deletes old messages, so a limit would be advertised and never kept: only
    // "forever" is taken (as Zulip refuses one where its plan has no retention).
    if (days !== null) throw badRequest("Message retention is not available on this server.");
  }
  if (changes.default_language !== undefined && !isLanguageCode(changes.default_language)) {
    throw badRequest(`Invalid language '${changes.default_language}'`);
  }
  for (const property of OWNER_ONLY_PROPERTIES) {
    if (changes[property] !== undefined && !isOwner(actor)) throw new OwnerRequiredError();
  }
  checkZulip9Changes(changes);
}

function checkZulip9Changes(changes: RealmSettingsChanges): void {
  const among = (property: keyof RealmSettingsChanges, values: number[]) => {
    const value = changes[property];
    if (value !== undefined && !values.includes(value as number)) throw badRequest(`Invalid ${property}`);
  };
  among("org_type", ORG_TYPE_IDS);
  among("giphy_rating", GIPHY_RATING_IDS);
  // Zulip's words name the value: a provider this server does not run (Zoom, Zoom server to
  // server, BigBlueButton: feature level 353) is refused as any unknown one.
  const provider = changes.video_chat_provider;
  if (provider !== undefined && !VIDEO_CHAT_PROVIDER_IDS.includes(provider)) throw badRequest(`Invalid video_chat_provider ${provider}`);
  among("digest_weekday", [0, 1, 2, 3, 4, 5, 6]);
  const jitsi = changes.jitsi_server_url;
  if (typeof jitsi === "string" && (jitsi.length > MAX_JITSI_SERVER_URL_LENGTH || !isHttpUrl(jitsi))) {
    throw badRequest("jitsi_server_url is not an allowed_type");
  }
  const language = changes.default_code_block_language;
  if (language !== undefined && (language.length > MAX_CODE_BLOCK_LANGUAGE_LENGTH || /[\s<>"]/.test(language))) {
    throw badRequest("Invalid default_code_block_language");
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "";
  } catch {
    return false;
  }
}

async function checkNotificationStream(tx: Tx, actor: Actor, streamId: number): Promise<void> {
  if (streamId < 0) return;
  const stream = await tx.stream.findFirst({ where: { id: streamId, realm_id: actor.realm_id, deactivated: false } });
  if (!stream) throw badRequest("Invalid stream id");
  if (stream.invite_only) {
    // Zulip's access_stream_by_id: a private stream is reachable only by its subscribers.
    const subscribed = await tx.subscription.findFirst({ where: { user_id: actor.id, recipient_id: stream.recipient_id ?? -1, active: true } });
    if (!subscribed) throw badRequest("Invalid stream id");
  }
}

/**
 * PATCH /realm (Zulip's update_realm): administrators change organization settings; owners alone
 * change message retention. Every value is checked before anything is written. Returns, as Zulip
 * does, each changed setting (strings as "updated"). A new email_address_visibility rewrites the
 * address every user is shown under (actions/email-visibility.ts).
 */
export async function updateRealmSettings(tx: Tx, events: EventRecorder, ctx: ServerContext, actor: Actor, changes: RealmSettingsChanges): Promise<Record<string, unknown>> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  checkChanges(actor, changes);
  checkPolicyChanges(changes);
  for (const property of ["notifications_stream_id", "signup_notifications_stream_id", "zulip_update_announcements_stream_id", "moderation_request_channel_id"] as const) {
    if (changes[property] !== undefined) await checkNotificationStream(tx, actor, changes[property]!);
  }
  // Zulip's do_set_realm_moderation_request_channel: reports are for moderators' eyes only.
  const moderationChannel = changes.moderation_request_channel_id;
  if (moderationChannel !== undefined && moderationChannel >= 0) {
    const stream = await tx.stream.findFirst({ where: { id: moderationChannel, realm_id: actor.realm_id } });
    if (!stream?.invite_only) throw badRequest("Moderation request channel must be private.");
  }

  // Lock and re-read the realm: the actor's copy may be stale.
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
  const everyone = await activeUserIds(tx, realm.id);
  const data: Record<string, unknown> = {};
  const write: Partial<Realm> = {};
  // The integer permission policies and 3.x's booleans are shorthands for the group settings that
  // replaced them (feature levels 280 to 352): realm-group-settings.ts applies them with those.
  // Zulip 9.0's limits for moving messages (feature level 162), one `realm update` each.
  for (const property of MODERN_REALM_LIMITS) {
    const value = changes[property];
    if (value === undefined || realm[property] === value) continue;
    (write as Record<string, unknown>)[property] = value;
    data[property] = value;
    events.send({ type: "realm", op: "update", property, value }, everyone);
  }

  for (const property of SIMPLE_PROPERTIES) {
    const value = changes[property];
    if (value === undefined || realm[property] === value) continue;
    (write as Record<string, unknown>)[property] = value;
    data[property] = typeof value === "string" ? "updated" : value;
    events.send({ type: "realm", op: "update", property, value }, everyone);
    // It is also new users' twenty_four_hour_time (realm-user-defaults.ts).
    if (property === "default_twenty_four_hour_time") events.send({ type: "realm_user_settings_defaults", op: "update", property: "twenty_four_hour_time", value }, everyone);
  }

  // Feature level 150: one update_dict per setting that changed, and only those in the answer
  // (3.x's clients apply update_dict's data key by key, so a partial one suits them too).
  for (const property of EDITING_PROPERTIES) {
    const value = changes[property];
    if (value === undefined || value === realm[property]) continue;
    (write as Record<string, unknown>)[property] = value;
    data[property] = value;
    events.send({ type: "realm", op: "update_dict", property: "default", data: { [property]: value } }, everyone);
  }

  // Feature level 358: the policy and 3.x's boolean, kept in step; 3.x clients hear of the boolean.
  const historyPolicy = editHistoryPolicyAfter(realm.message_edit_history_visibility_policy, changes);
  if (historyPolicy !== undefined && historyPolicy !== realm.message_edit_history_visibility_policy) {
    const allow = historyPolicy !== EDIT_HISTORY_POLICY.none;
    write.message_edit_history_visibility_policy = historyPolicy;
    write.allow_edit_history = allow;
    // As Zulip's update_realm answers it: the stored integer.
    if (changes.message_edit_history_visibility_policy !== undefined) data.message_edit_history_visibility_policy = historyPolicy;
    if (changes.allow_edit_history !== undefined && allow !== realm.allow_edit_history) data.allow_edit_history = allow;
    const event = { type: "realm", op: "update", property: "message_edit_history_visibility_policy", value: editHistoryPolicyName(historyPolicy) };
    events.send(withLegacyShape(event, { property: "allow_edit_history", value: allow }), everyone);
  }

  const deleteLimit = changes.message_content_delete_limit_seconds;
  if (deleteLimit !== undefined && deleteLimit !== realm.message_content_delete_limit_seconds) {
    write.message_content_delete_limit_seconds = deleteLimit;
    data.message_content_delete_limit_seconds = deleteLimit;
    events.send({ type: "realm", op: "update_dict", property: "default", data: { message_content_delete_limit_seconds: deleteLimit } }, everyone);
  }

  for (const property of ["notifications_stream_id", "signup_notifications_stream_id", "zulip_update_announcements_stream_id", "moderation_request_channel_id"] as const) {
    const value = changes[property];
    if (value === undefined) continue;
    const stored = value < 0 ? null : value;
    if (stored === realm[property]) continue;
    write[property] = stored;
    data[property] = value < 0 ? -1 : value;
    events.send({ type: "realm", op: "update", property, value: value < 0 ? -1 : value }, everyone);
  }

  if (Object.keys(write).length > 0) await tx.realm.update({ where: { id: realm.id }, data: write });
  if (write.email_address_visibility !== undefined) {
    await applyEmailAddressVisibility(tx, events, ctx, realm.id, realm.email_address_visibility, write.email_address_visibility);
  }
  // The group-based settings (realm-group-settings.ts), last: an error there undoes the rest.
  Object.assign(data, await updateRealmGroupSettings(tx, events, actor, changes, everyone));
  return data;
}
