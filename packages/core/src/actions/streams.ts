import { randomBytes } from "node:crypto";
import type { StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import { formatStream } from "../lib/stream-format.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { usersWhoCanSeeStream } from "./subscriptions.ts";

export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;

/** Zulip's check_stream_name. */
export function checkStreamName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Stream name can't be empty!");
  if (name.length > MAX_STREAM_NAME_LENGTH) throw badRequest(`Stream name too long (limit: ${MAX_STREAM_NAME_LENGTH} characters).`);
  if (/[\u0000-\u001f]/.test(name)) throw badRequest(`Invalid characters in stream name (disallowed characters: ${JSON.stringify(name)}).`);
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
