import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest, OwnerRequiredError } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { isLanguageCode } from "../lib/languages.ts";
import { isAdmin, isOwner } from "../lib/roles.ts";
import { activeUserIds } from "../queries/users.ts";
import { applyEmailAddressVisibility } from "./email-visibility.ts";

export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** Valid values of each policy setting (Zulip's Realm.*_POLICY_TYPES of the same era). */
export const REALM_POLICY_VALUES: Record<string, number[]> = {
  create_stream_policy: [1, 2, 3],
  invite_to_stream_policy: [1, 2, 3],
  user_group_edit_policy: [1, 2],
  private_message_policy: [1, 2],
  wildcard_mention_policy: [1, 2, 3, 4, 5, 6],
  bot_creation_policy: [1, 2, 3],
  email_address_visibility: [1, 2, 3, 4],
};

export interface RealmSettingsChanges {
  name?: string;
  description?: string;
  invite_required?: boolean;
  create_stream_policy?: number;
  invite_to_stream_policy?: number;
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
  message_content_delete_limit_seconds?: number;
  allow_edit_history?: boolean;
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
}

/** Settings sent as one `realm update` each, in this order (Zulip's do_set_realm_property). */
const SIMPLE_PROPERTIES = [
  "name",
  "description",
  "invite_required",
  "create_stream_policy",
  "invite_to_stream_policy",
  "user_group_edit_policy",
  "private_message_policy",
  "wildcard_mention_policy",
  "bot_creation_policy",
  "email_address_visibility",
  "waiting_period_threshold",
  "allow_message_deleting",
  "allow_edit_history",
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
  "add_emoji_by_admins_only",
  "enable_read_receipts",
] as const;

/** Changed together and announced as one `realm update_dict` (Zulip's do_set_realm_message_editing). */
const EDITING_PROPERTIES = ["allow_message_editing", "message_content_edit_limit_seconds", "allow_community_topic_editing"] as const;

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
    if (value !== undefined && value < 0) throw badRequest(`Bad value for '${property}': ${value}`);
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
  for (const property of ["notifications_stream_id", "signup_notifications_stream_id"] as const) {
    if (changes[property] !== undefined) await checkNotificationStream(tx, actor, changes[property]!);
  }

  // Lock and re-read the realm: the actor's copy may be stale.
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
  const everyone = await activeUserIds(tx, realm.id);
  const data: Record<string, unknown> = {};
  const write: Partial<Realm> = {};

  for (const property of SIMPLE_PROPERTIES) {
    const value = changes[property];
    if (value === undefined || realm[property] === value) continue;
    (write as Record<string, unknown>)[property] = value;
    data[property] = typeof value === "string" ? "updated" : value;
    events.send({ type: "realm", op: "update", property, value }, everyone);
  }

  if (EDITING_PROPERTIES.some((p) => changes[p] !== undefined && changes[p] !== realm[p])) {
    const editing = {
      allow_message_editing: changes.allow_message_editing ?? realm.allow_message_editing,
      message_content_edit_limit_seconds: changes.message_content_edit_limit_seconds ?? realm.message_content_edit_limit_seconds,
      allow_community_topic_editing: changes.allow_community_topic_editing ?? realm.allow_community_topic_editing,
    };
    Object.assign(write, editing);
    Object.assign(data, editing);
    events.send({ type: "realm", op: "update_dict", property: "default", data: editing }, everyone);
  }

  const deleteLimit = changes.message_content_delete_limit_seconds;
  if (deleteLimit !== undefined && deleteLimit !== realm.message_content_delete_limit_seconds) {
    write.message_content_delete_limit_seconds = deleteLimit;
    data.message_content_delete_limit_seconds = deleteLimit;
    events.send({ type: "realm", op: "update_dict", property: "default", data: { message_content_delete_limit_seconds: deleteLimit } }, everyone);
  }

  for (const property of ["notifications_stream_id", "signup_notifications_stream_id"] as const) {
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
  return data;
}
