import { randomBytes } from "node:crypto";
import type { StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { unprintablePosition } from "../lib/validation.ts";
import { badRequest } from "../errors.ts";
import type { ServerContext } from "../context.ts";
import { formatStream, streamEmailAddress } from "../lib/stream-format.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { mutedTopicsOf, usersMutingTopicsIn } from "../queries/user-topics.ts";
import { usersWhoCanSeeStream } from "./subscriptions.ts";

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
  streamPostPolicy?: number;
  historyPublicToSubscribers?: boolean;
}

/** Creates a stream with its recipient and records `stream create` for those who can see it. */
export async function createStream(tx: Tx, events: EventRecorder, realmId: number, settings: StreamSettings): Promise<StreamModel> {
  const inviteOnly = settings.inviteOnly ?? false;
  const created = await tx.stream.create({
    data: {
      realm_id: realmId,
      name: checkStreamName(settings.name),
      description: settings.description ?? "",
      rendered_description: settings.renderedDescription ?? "",
      invite_only: inviteOnly,
      stream_post_policy: settings.streamPostPolicy ?? 1,
      // Public streams always have public history, as in Zulip.
      history_public_to_subscribers: inviteOnly ? (settings.historyPublicToSubscribers ?? false) : true,
      email_token: randomBytes(16).toString("hex"),
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
  streamPostPolicy?: number;
  historyPublicToSubscribers?: boolean;
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
  if (changes.streamPostPolicy !== undefined) {
    if (![1, 2, 3].includes(changes.streamPostPolicy)) throw badRequest("Invalid stream_post_policy");
    if (changes.streamPostPolicy !== stream.stream_post_policy) {
      data.stream_post_policy = changes.streamPostPolicy;
      updates.push({ property: "stream_post_policy", value: changes.streamPostPolicy });
      updates.push({ property: "is_announcement_only", value: changes.streamPostPolicy === 2 });
    }
  }
  const inviteOnly = changes.isPrivate ?? stream.invite_only;
  let history = changes.historyPublicToSubscribers ?? (changes.isPrivate === false ? true : stream.history_public_to_subscribers);
  // Public streams always have public history: Zulip quietly keeps it so, whatever was asked.
  if (!inviteOnly) history = true;
  if (changes.isPrivate !== undefined && inviteOnly !== stream.invite_only) {
    data.invite_only = inviteOnly;
    updates.push({ property: "invite_only", value: inviteOnly, extra: { history_public_to_subscribers: history } });
  }
  if (history !== stream.history_public_to_subscribers) {
    data.history_public_to_subscribers = history;
    updates.push({ property: "history_public_to_subscribers", value: history });
  }

  if (updates.length === 0) return;
  const updated = await tx.stream.update({ where: { id: stream.id }, data });
  const after = await usersWhoCanSeeStream(tx, updated);
  const audience = [...new Set([...before, ...after])];
  for (const update of updates) {
    events.send({ type: "stream", op: "update", stream_id: stream.id, name: updated.name, property: update.property, value: update.value, ...update.extra }, audience);
  }
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
    data: { deactivated: true, invite_only: true, name: `!DEACTIVATED:${stream.id}:${stream.name}`.slice(0, 200) },
  });
  await tx.subscription.updateMany({ where: { recipient_id: stream.recipient_id! }, data: { active: false } });
  await tx.defaultStream.deleteMany({ where: { stream_id: stream.id } });
  await tx.defaultStreamGroupStream.deleteMany({ where: { stream_id: stream.id } });
  events.send({ type: "stream", op: "delete", streams: [formatStream(stream)] }, viewers);
}
