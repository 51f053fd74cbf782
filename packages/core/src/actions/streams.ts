import { randomBytes } from "node:crypto";
import type { StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { unprintablePosition } from "../lib/validation.ts";
import { badRequest, OwnerRequiredError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isOwner } from "../lib/roles.ts";
import type { ServerContext } from "../context.ts";
import { formatStream, streamEmailAddress } from "../lib/stream-format.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { STREAM_POST_POLICIES } from "../lib/permissions.ts";
import { mutedTopicsOf, usersMutingTopicsIn } from "../queries/user-topics.ts";
import { subscriberIds, usersWhoCanSeeStream } from "./subscriptions.ts";
import { checkGroupForSetting, STREAM_PERMISSION_GROUP_SETTINGS, SYSTEM_GROUPS } from "../lib/group-permissions.ts";
import { systemGroupIds } from "./system-groups.ts";

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
  /** A group the caller checked (checkGroupForSetting); the realm's administrators by default. */
  canRemoveSubscribersGroupId?: number;
  /** parseStreamRetentionDays's value; null (the organization's) by default. */
  messageRetentionDays?: number | null;
}

/** Creates a stream with its recipient and records `stream create` for those who can see it. */
export async function createStream(tx: Tx, events: EventRecorder, realmId: number, settings: StreamSettings): Promise<StreamModel> {
  const inviteOnly = settings.inviteOnly ?? false;
  // Zulip's rule: a web-public stream is public, with public history.
  if (settings.isWebPublic && inviteOnly) throw badRequest("Invalid parameters");
  const created = await tx.stream.create({
    data: {
      realm_id: realmId,
      name: checkStreamName(settings.name),
      description: settings.description ?? "",
      rendered_description: settings.renderedDescription ?? "",
      invite_only: inviteOnly,
      is_web_public: settings.isWebPublic ?? false,
      stream_post_policy: settings.streamPostPolicy ?? 1,
      // Public streams always have public history, as in Zulip.
      history_public_to_subscribers: inviteOnly ? (settings.historyPublicToSubscribers ?? false) : true,
      email_token: randomBytes(16).toString("hex"),
      creator_id: settings.creatorId ?? null,
      message_retention_days: settings.messageRetentionDays ?? null,
      // Zulip's default for can_remove_subscribers_group: the realm's administrators.
      can_remove_subscribers_group_id: settings.canRemoveSubscribersGroupId ?? (await systemGroupIds(tx, realmId)).get(SYSTEM_GROUPS.ADMINISTRATORS) ?? null,
    },
  });
  const recipient = await tx.recipient.create({ data: { type: RECIPIENT_STREAM, type_id: created.id } });
  const stream = await tx.stream.update({ where: { id: created.id }, data: { recipient_id: recipient.id } });
  const viewers = await usersWhoCanSeeStream(tx, stream);
  events.send({ type: "stream", op: "create", streams: [formatStream(stream)] }, viewers);
  return stream;
}

export async function getStreamByName(tx: Pick<Tx, "$queryRaw" | "stream">, realmId: number, name: string): Promise<StreamModel | null> {
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM stream WHERE realm_id = ${realmId} AND lower(name) = lower(${name.trim()}) AND NOT deactivated`;
  return rows.length === 0 ? null : tx.stream.findUnique({ where: { id: rows[0].id } });
}

export interface StreamChanges {
  description?: string;
  newName?: string;
  isPrivate?: boolean;
  /** The caller checks who may make a stream web-public (lib/web-public.ts). */
  isWebPublic?: boolean;
  streamPostPolicy?: number;
  historyPublicToSubscribers?: boolean;
  /** A group id, checked here as Zulip's access_user_group_for_setting. */
  canRemoveSubscribersGroup?: number;
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
      const taken = await getStreamByName(tx, stream.realm_id, name);
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
  if (changes.streamPostPolicy !== undefined) {
    if (!STREAM_POST_POLICIES.includes(changes.streamPostPolicy)) throw badRequest("Invalid stream_post_policy");
    if (changes.streamPostPolicy !== stream.stream_post_policy) {
      data.stream_post_policy = changes.streamPostPolicy;
      updates.push({ property: "stream_post_policy", value: changes.streamPostPolicy });
      updates.push({ property: "is_announcement_only", value: changes.streamPostPolicy === 2 });
    }
  }
  if (changes.canRemoveSubscribersGroup !== undefined) {
    const config = STREAM_PERMISSION_GROUP_SETTINGS.can_remove_subscribers_group;
    const group = await checkGroupForSetting(tx, stream.realm_id, changes.canRemoveSubscribersGroup, "can_remove_subscribers_group", config);
    if (group.id !== stream.can_remove_subscribers_group_id) {
      data.can_remove_subscribers_group_id = group.id;
      updates.push({ property: "can_remove_subscribers_group", value: group.id });
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
  const gained = data.is_web_public === undefined ? [] : after.filter((id) => !before.includes(id));
  const lost = data.is_web_public === undefined ? [] : before.filter((id) => !after.includes(id));
  const audience = [...new Set([...before, ...after])].filter((id) => !gained.includes(id) && !lost.includes(id));
  for (const update of updates) {
    events.send({ type: "stream", op: "update", stream_id: stream.id, name: updated.name, property: update.property, value: update.value, ...update.extra }, audience);
  }
  if (gained.length > 0 && (await subscriberIds(tx, updated)).length > 0) events.send({ type: "stream", op: "create", streams: [formatStream(updated)] }, gained);
  if (lost.length > 0) events.send({ type: "stream", op: "delete", streams: [formatStream(updated)] }, lost);
  if (data.name !== undefined) {
    // Muted topics are named by stream name; those who muted topics here get their renamed list.
    for (const user_id of await usersMutingTopicsIn(tx, stream.id)) events.send({ type: "muted_topics", muted_topics: await mutedTopicsOf(tx, user_id) }, [user_id]);
  }
}

/**
 * DELETE /streams/{id} (administrators): Zulip's do_deactivate_stream. The stream is kept for its
 * history but renamed so the name is free again, everyone is unsubscribed, and those who could
 * see it get `stream delete` (with `alsoNotify`: those who saw it until just before).
 */
export async function deactivateStream(tx: Tx, events: EventRecorder, stream: StreamModel, alsoNotify: number[] = []): Promise<void> {
  const viewers = [...new Set([...(await usersWhoCanSeeStream(tx, stream)), ...alsoNotify])];
  await tx.stream.update({
    where: { id: stream.id },
    data: { deactivated: true, invite_only: true, is_web_public: false, name: `!DEACTIVATED:${stream.id}:${stream.name}`.slice(0, 200) },
  });
  await tx.subscription.updateMany({ where: { recipient_id: stream.recipient_id! }, data: { active: false } });
  await tx.defaultStream.deleteMany({ where: { stream_id: stream.id } });
  await tx.defaultStreamGroupStream.deleteMany({ where: { stream_id: stream.id } });
  events.send({ type: "stream", op: "delete", streams: [formatStream(stream)] }, viewers);
}
