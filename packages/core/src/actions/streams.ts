import { randomBytes } from "node:crypto";
import type { StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { unprintablePosition } from "../lib/validation.ts";
import { badRequest, OwnerRequiredError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isOwner } from "../lib/roles.ts";
import type { ServerContext } from "../context.ts";
import { formatStreams, STREAM_GROUP_SETTING_NAMES, streamEmailAddress, streamSettingGroupId, type StreamGroupSettingName } from "../lib/stream-format.ts";
import { applyGroupSettingChange, createCreatorGroup, resolveGroupSettingValue, type GroupSettingChange, type GroupSettingValue } from "../lib/group-setting-values.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { STREAM_POST_POLICIES, STREAM_POST_POLICY } from "../lib/permissions.ts";
import { mutedTopicsOf, usersMutingTopicsIn } from "../queries/user-topics.ts";
import { subscriberIds, usersWhoCanSeeStream } from "./subscriptions.ts";
import { STREAM_PERMISSION_GROUP_SETTINGS, SYSTEM_GROUPS, type SystemGroupName } from "../lib/group-permissions.ts";
import { systemGroupIds } from "./system-groups.ts";
import { dropFromDefaultStreams } from "./default-streams.ts";
import { activeUserIds } from "../queries/users.ts";

export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;

/** Zulip's check_stream_name. */
export function checkStreamName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Stream name can't be empty!");
  if (name.length > MAX_STREAM_NAME_LENGTH) throw badRequest(`Stream name too long (limit: ${MAX_STREAM_NAME_LENGTH} characters).`);
  const position = unprintablePosition(name);
  if (position !== null) throw badRequest(`Invalid character in stream name, at position ${position}.`);
  return name;
}

export interface StreamSettings {
  name: string;
  description?: string;
  renderedDescription?: string;
  inviteOnly?: boolean;
  /** Readable by spectators (feature level 98); the caller checks who may ask (lib/web-public.ts). */
  isWebPublic?: boolean;
  streamPostPolicy?: number;
  historyPublicToSubscribers?: boolean;
  /** Who creates it (feature level 254); none for streams made with the organization. */
  creatorId?: number | null;
  /**
   * The permission settings as a client sent them (checked here, as Zulip's
   * access_user_group_for_setting); Zulip's defaults for the rest: can_send_message_group from
   * streamPostPolicy (role:everyone), can_administer_channel_group the creator (as an anonymous
   * group; role:nobody without one), can_remove_subscribers_group role:administrators, the others
   * role:nobody.
   */
  groupSettings?: Partial<Record<StreamGroupSettingName, GroupSettingValue>>;
  /** parseStreamRetentionDays's value; null (the organization's) by default. */
  messageRetentionDays?: number | null;
}

/** Creates a stream with its recipient and records `stream create` for those who can see it. */
export async function createStream(tx: Tx, events: EventRecorder, realmId: number, settings: StreamSettings): Promise<StreamModel> {
  const inviteOnly = settings.inviteOnly ?? false;
  // Zulip's rule: a web-public stream is public, with public history.
  if (settings.isWebPublic && inviteOnly) throw badRequest("Invalid parameters");
  const groups = await systemGroupIds(tx, realmId);
  const system = (name: SystemGroupName) => groups.get(name)!;
  const groupIds: Record<StreamGroupSettingName, number> = {
    can_add_subscribers_group: system(SYSTEM_GROUPS.NOBODY),
    can_administer_channel_group: system(SYSTEM_GROUPS.NOBODY),
    can_remove_subscribers_group: system(SYSTEM_GROUPS.ADMINISTRATORS),
    can_send_message_group: system(postPolicyGroupName(settings.streamPostPolicy ?? STREAM_POST_POLICY.EVERYONE)),
    can_subscribe_group: system(SYSTEM_GROUPS.NOBODY),
  };
  for (const name of STREAM_GROUP_SETTING_NAMES) {
    const value = settings.groupSettings?.[name];
    if (value !== undefined) groupIds[name] = await resolveGroupSettingValue(tx, realmId, value, name, STREAM_PERMISSION_GROUP_SETTINGS[name]);
    else if (name === "can_administer_channel_group" && settings.creatorId) groupIds[name] = await createCreatorGroup(tx, realmId, settings.creatorId);
  }
  const created = await tx.stream.create({
    data: {
      realm_id: realmId,
      name: checkStreamName(settings.name),
      description: settings.description ?? "",
      rendered_description: settings.renderedDescription ?? "",
      invite_only: inviteOnly,
      is_web_public: settings.isWebPublic ?? false,
      stream_post_policy: await postPolicyForGroup(tx, groupIds.can_send_message_group),
      // Public streams always have public history, as in Zulip.
      history_public_to_subscribers: inviteOnly ? (settings.historyPublicToSubscribers ?? false) : true,
      email_token: randomBytes(16).toString("hex"),
      creator_id: settings.creatorId ?? null,
      message_retention_days: settings.messageRetentionDays ?? null,
      can_add_subscribers_group_id: groupIds.can_add_subscribers_group,
      can_administer_channel_group_id: groupIds.can_administer_channel_group,
      can_remove_subscribers_group_id: groupIds.can_remove_subscribers_group,
      can_send_message_group_id: groupIds.can_send_message_group,
      can_subscribe_group_id: groupIds.can_subscribe_group,
    },
  });
  const recipient = await tx.recipient.create({ data: { type: RECIPIENT_STREAM, type_id: created.id } });
  const stream = await tx.stream.update({ where: { id: created.id }, data: { recipient_id: recipient.id } });
  const viewers = await usersWhoCanSeeStream(tx, stream);
  events.send({ type: "stream", op: "create", streams: await formatStreams(tx, [stream]) }, viewers);
  return stream;
}

/** The system group a stream_post_policy means (as migration 0041 backfilled can_send_message_group). */
export function postPolicyGroupName(policy: number): SystemGroupName {
  switch (policy) {
    case STREAM_POST_POLICY.ADMINS:
      return SYSTEM_GROUPS.ADMINISTRATORS;
    case STREAM_POST_POLICY.RESTRICT_NEW_MEMBERS:
      return SYSTEM_GROUPS.FULL_MEMBERS;
    case STREAM_POST_POLICY.MODERATORS:
      return SYSTEM_GROUPS.MODERATORS;
    default:
      return SYSTEM_GROUPS.EVERYONE;
  }
}

/**
 * The stream_post_policy that best approximates can_send_message_group while letting no fewer users
 * post (feature level 333): its system group's policy; role:owners and role:nobody are within
 * administrators; any other group (role:members, a group users made, an anonymous one) is
 * "everyone".
 */
export async function postPolicyForGroup(tx: Pick<Tx, "$queryRaw">, groupId: number): Promise<number> {
  const rows = await tx.$queryRaw<{ name: string | null; is_system_group: boolean }[]>`SELECT name, is_system_group FROM user_group WHERE id = ${groupId}`;
  const name = rows[0]?.is_system_group ? rows[0].name : null;
  switch (name) {
    case SYSTEM_GROUPS.NOBODY:
    case SYSTEM_GROUPS.OWNERS:
    case SYSTEM_GROUPS.ADMINISTRATORS:
      return STREAM_POST_POLICY.ADMINS;
    case SYSTEM_GROUPS.MODERATORS:
      return STREAM_POST_POLICY.MODERATORS;
    case SYSTEM_GROUPS.FULL_MEMBERS:
      return STREAM_POST_POLICY.RESTRICT_NEW_MEMBERS;
    default:
      return STREAM_POST_POLICY.EVERYONE;
  }
}

/**
 * A stream of the realm by (case-insensitive) name. An archived stream keeps its name, which no
 * other stream may then take (feature level 315): it is found only with `includeArchived`.
 */
export async function getStreamByName(tx: Pick<Tx, "$queryRaw" | "stream">, realmId: number, name: string, options: { includeArchived?: boolean } = {}): Promise<StreamModel | null> {
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM stream WHERE realm_id = ${realmId} AND lower(name) = lower(${name.trim()}) AND (NOT deactivated OR ${options.includeArchived === true})`;
  return rows.length === 0 ? null : tx.stream.findUnique({ where: { id: rows[0].id } });
}

export interface StreamChanges {
  description?: string;
  newName?: string;
  isPrivate?: boolean;
  /** The caller checks who may make a stream web-public (lib/web-public.ts). */
  isWebPublic?: boolean;
  /** 3.x's stream_post_policy (and is_announcement_only): shorthand for can_send_message_group's system group. */
  streamPostPolicy?: number;
  historyPublicToSubscribers?: boolean;
  /** `{new, old}` changes of the permission settings (feature levels 320 to 357), checked here. */
  groupSettings?: Partial<Record<StreamGroupSettingName, GroupSettingChange>>;
  /**
   * Whether the one asking may read the channel (Zulip's user_has_content_access): without it, a
   * channel administrator may change its metadata but not its privacy, its history's visibility,
   * or who may subscribe (feature level 349). True unless the caller says.
   */
  hasContentAccess?: boolean;
  /** Whether it is to be a default stream (feature level 200): only checked here; the caller sets it (default-streams.ts). */
  isDefaultStream?: boolean;
  /** The stream's own retention (feature level 17): null the organization's, -1 unlimited (parseStreamRetentionDays). */
  messageRetentionDays?: number | null;
}

/**
 * A stream's message_retention_days as a client sends it (feature levels 17 and 91):
 * "realm_default" (null), "unlimited" (-1, also 3.x's "forever"), or a number of days. Nothing
 * here deletes old messages yet, so a number is refused rather than advertised and not kept (as
 * PATCH /realm does). Owners only, as Zulip.
 */
export function parseStreamRetentionDays(actor: Actor, raw: string): number | null {
  if (!isOwner(actor)) throw new OwnerRequiredError();
  const value = raw.trim().replace(/^"(.*)"$/, "$1");
  if (value === "realm_default") return null;
  if (value === "unlimited" || value === "forever") return -1;
  if (!/^\d+$/.test(value) || Number(value) <= 0 || !Number.isSafeInteger(Number(value))) throw badRequest(`Bad value for 'message_retention_days': ${raw}`);
  throw badRequest("Message retention is not available on this server.");
}

/** The settings whose groups see a private channel (Zulip's stream_permission_group_settings_granting_metadata_access). */
const CHANNEL_METADATA_SETTINGS: readonly string[] = ["can_administer_channel_group", "can_add_subscribers_group", "can_subscribe_group"];

/**
 * PATCH /streams/{id} (administrators). Records one `stream update` per changed property, sent to
 * everyone who could see the stream before or can see it after the change.
 */
export async function updateStream(
  tx: Tx,
  events: EventRecorder,
  ctx: ServerContext,
  stream: StreamModel,
  changes: StreamChanges,
  renderDescription: (text: string) => string,
): Promise<void> {
  const before = await usersWhoCanSeeStream(tx, stream);
  const updates: Array<{ property: string; value: unknown; extra?: Record<string, unknown> }> = [];
  const data: Partial<StreamModel> = {};

  if (changes.description !== undefined) {
    const description = changes.description.replace(/\s+/g, " ").trim();
    if (description.length > MAX_STREAM_DESCRIPTION_LENGTH) throw badRequest(`Stream description too long (limit: ${MAX_STREAM_DESCRIPTION_LENGTH} characters).`);
    if (description !== stream.description) {
      data.description = description;
      data.rendered_description = renderDescription(description);
      updates.push({ property: "description", value: description, extra: { rendered_description: data.rendered_description } });
    }
  }
  if (changes.newName !== undefined) {
    const name = checkStreamName(changes.newName);
    if (name !== stream.name) {
      const taken = await getStreamByName(tx, stream.realm_id, name, { includeArchived: true });
      if (taken && taken.id !== stream.id) throw badRequest(`Stream name '${name}' is already taken.`);
      data.name = name;
      updates.push({ property: "name", value: name });
      // The stream's email address is built on its name; clients show it, so they learn it changed.
      updates.push({ property: "email_address", value: streamEmailAddress({ ...stream, name }, ctx.externalHost) });
    }
  }
  if (changes.messageRetentionDays !== undefined && changes.messageRetentionDays !== stream.message_retention_days) {
    data.message_retention_days = changes.messageRetentionDays;
    updates.push({ property: "message_retention_days", value: changes.messageRetentionDays });
  }
  const groupChanges = { ...changes.groupSettings };
  if (changes.hasContentAccess === false) {
    // Zulip 10.0's stream_permission_group_settings_requiring_content_access, and privacy (feature
    // level 349); the visibility of the history too, which would open it to subscribers.
    const needsContent = changes.isPrivate !== undefined || changes.historyPublicToSubscribers !== undefined || groupChanges.can_add_subscribers_group || groupChanges.can_subscribe_group;
    if (needsContent) throw badRequest("Channel content access is required.");
  }
  if (changes.streamPostPolicy !== undefined) {
    if (!STREAM_POST_POLICIES.includes(changes.streamPostPolicy)) throw badRequest("Invalid stream_post_policy");
    // A 3.x client's policy is a system group for can_send_message_group (unless that is given too).
    const groups = await systemGroupIds(tx, stream.realm_id);
    groupChanges.can_send_message_group ??= { new: groups.get(postPolicyGroupName(changes.streamPostPolicy))! };
  }
  for (const name of STREAM_GROUP_SETTING_NAMES) {
    const change = groupChanges[name];
    if (change === undefined) continue;
    const column = `${name}_id`;
    const value = await applyGroupSettingChange(tx, { realm_id: stream.realm_id }, {
      settingName: name,
      config: STREAM_PERMISSION_GROUP_SETTINGS[name],
      currentGroupId: streamSettingGroupId(stream, name),
      change,
      // The stream points at the new group at once: the old anonymous one is deleted next.
      store: async (groupId) => {
        await tx.stream.update({ where: { id: stream.id }, data: { [column]: groupId } });
      },
    });
    if (value === null) continue;
    updates.push({ property: name, value });
    if (name === "can_send_message_group") {
      const updated = await tx.stream.findUniqueOrThrow({ where: { id: stream.id }, select: { can_send_message_group_id: true } });
      const policy = await postPolicyForGroup(tx, updated.can_send_message_group_id!);
      if (policy !== stream.stream_post_policy) {
        data.stream_post_policy = policy;
        updates.push({ property: "stream_post_policy", value: policy });
        updates.push({ property: "is_announcement_only", value: policy === STREAM_POST_POLICY.ADMINS });
      }
    }
  }
  const inviteOnly = changes.isPrivate ?? stream.invite_only;
  const webPublic = changes.isWebPublic ?? stream.is_web_public;
  let history = changes.historyPublicToSubscribers ?? (changes.isPrivate === false ? true : stream.history_public_to_subscribers);
  // Zulip's update_stream_backend: a web-public stream is neither private nor with protected history.
  if (webPublic && (inviteOnly || !history)) throw badRequest("Invalid parameters");
  // Zulip's update_stream_backend: a default stream (as it is, or as asked) is never private.
  if (inviteOnly && (changes.isDefaultStream ?? (await tx.defaultStream.count({ where: { stream_id: stream.id } })) > 0)) {
    throw badRequest("A default channel cannot be private.");
  }
  // Public streams always have public history: Zulip quietly keeps it so, whatever was asked.
  if (!inviteOnly) history = true;
  if (webPublic !== stream.is_web_public) data.is_web_public = webPublic;
  // One event says the stream's whole permission (feature level 71: is_web_public beside invite_only).
  if ((changes.isPrivate !== undefined && inviteOnly !== stream.invite_only) || webPublic !== stream.is_web_public) {
    data.invite_only = inviteOnly;
    updates.push({ property: "invite_only", value: inviteOnly, extra: { history_public_to_subscribers: history, is_web_public: webPublic } });
  }
  if (history !== stream.history_public_to_subscribers) {
    data.history_public_to_subscribers = history;
    updates.push({ property: "history_public_to_subscribers", value: history });
  }

  if (updates.length === 0) return;
  const updated = await tx.stream.update({ where: { id: stream.id }, data });
  const after = await usersWhoCanSeeStream(tx, updated);
  // Guests gain or lose sight of a stream that becomes web-public or stops being so: to them it
  // is created (if it is in the stream list at all: occupied) or deleted.
  // So do those a private stream's groups let see it, or stop letting (feature level 349).
  const audienceChanged = data.is_web_public !== undefined || (updated.invite_only && stream.invite_only && updates.some((update) => CHANNEL_METADATA_SETTINGS.includes(update.property)));
  const gained = audienceChanged ? after.filter((id) => !before.includes(id)) : [];
  const lost = audienceChanged ? before.filter((id) => !after.includes(id)) : [];
  const audience = [...new Set([...before, ...after])].filter((id) => !gained.includes(id) && !lost.includes(id));
  for (const update of updates) {
    events.send({ type: "stream", op: "update", stream_id: stream.id, name: updated.name, property: update.property, value: update.value, ...update.extra }, audience);
  }
  if (gained.length > 0 && (await subscriberIds(tx, updated)).length > 0) events.send({ type: "stream", op: "create", streams: await formatStreams(tx, [updated]) }, gained);
  if (lost.length > 0) events.send({ type: "stream", op: "delete", streams: await formatStreams(tx, [updated]), stream_ids: [updated.id] }, lost);
  if (data.name !== undefined) {
    // Muted topics are named by stream name; those who muted topics here get their renamed list.
    for (const user_id of await usersMutingTopicsIn(tx, stream.id)) events.send({ type: "muted_topics", muted_topics: await mutedTopicsOf(tx, user_id) }, [user_id]);
  }
}

/** The realm's announcement channels, which an archived stream stops being (Zulip's maybe_set_moderation_or_announcement_channels_none). */
const ANNOUNCEMENT_STREAM_FIELDS = ["notifications_stream_id", "signup_notifications_stream_id", "zulip_update_announcements_stream_id", "moderation_request_channel_id"] as const;

/**
 * DELETE /streams/{id} (organization administrators; Zulip 10.0's channel administrators are the
 * channel group settings' business): Zulip 10.0's do_deactivate_stream, which archives (feature
 * level 315). The stream keeps its name, privacy, settings and subscriptions; it stops being a
 * default stream (in a group too) and an announcement channel, each with its event; those who
 * could see it (with `alsoNotify`: those who saw it until just before) get `stream delete` with
 * `stream_ids` (feature level 343) beside the deprecated `streams`.
 */
export async function archiveStream(tx: Tx, events: EventRecorder, stream: StreamModel, alsoNotify: number[] = []): Promise<void> {
  if (stream.deactivated) throw badRequest("Channel is already deactivated");
  const viewers = [...new Set([...(await usersWhoCanSeeStream(tx, stream)), ...alsoNotify])];
  const archived = await tx.stream.update({ where: { id: stream.id }, data: { deactivated: true } });
  await dropFromDefaultStreams(tx, events, stream.realm_id, stream.id);

  const realm = await tx.realm.findUniqueOrThrow({ where: { id: stream.realm_id }, select: { notifications_stream_id: true, signup_notifications_stream_id: true, zulip_update_announcements_stream_id: true, moderation_request_channel_id: true } });
  const unset = ANNOUNCEMENT_STREAM_FIELDS.filter((field) => realm[field] === stream.id);
  if (unset.length > 0) {
    await tx.realm.update({ where: { id: stream.realm_id }, data: Object.fromEntries(unset.map((field) => [field, null])) });
    const everyone = await activeUserIds(tx, stream.realm_id);
    for (const property of unset) events.send({ type: "realm", op: "update", property, value: -1 }, everyone);
  }
  events.send({ type: "stream", op: "delete", streams: await formatStreams(tx, [archived]), stream_ids: [stream.id] }, viewers);
}

/** @deprecated The name before Zulip 10.0's archiving: archiveStream. */
export const deactivateStream = archiveStream;
