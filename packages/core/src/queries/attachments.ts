// Uploaded files' rows (Zulip's Attachment): who may read one, the uploader's list, and a realm's
// upload space.
import { Prisma, type PrismaClient, type Tx } from "@chat/db";
import type { Actor } from "../models.ts";
import { isGuest } from "../lib/roles.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";

type Db = PrismaClient | Tx;

/** Zulip's Attachment.to_dict: times in milliseconds, each message as its id and send time. */
export interface AttachmentDict {
  id: number;
  name: string;
  path_id: string;
  size: number;
  create_time: number;
  messages: { id: number; name: number }[];
}

export interface AttachmentFile {
  id: number;
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  content_type: string | null;
  size: number;
}

export type AttachmentAccess = { allowed: true; attachment: AttachmentFile } | { allowed: false; reason: "missing" | "forbidden" };

/**
 * Whether `actor` may read each upload of `pathIds` (Zulip's validate_attachment_request): its
 * uploader; anyone who received a message linking it; anyone who may read such a message without
 * having received it (a stream whose history is public to subscribers: a public one for members,
 * or one they are subscribed to). An upload of another organization is missing, not forbidden.
 */
export async function accessAttachments(db: Db, actor: Actor, pathIds: string[]): Promise<Map<string, AttachmentAccess>> {
  const rows =
    pathIds.length === 0
      ? []
      : await db.$queryRaw<(AttachmentFile & { via_message: boolean })[]>`
    SELECT a.id, a.realm_id, a.owner_id, a.path_id, a.file_name, a.content_type, a.size,
           EXISTS (
             SELECT 1 FROM attachment_message am
             JOIN message m ON m.id = am.message_id
             JOIN recipient r ON r.id = m.recipient_id
             LEFT JOIN stream s ON r.type = ${RECIPIENT_STREAM} AND s.id = r.type_id
             WHERE am.attachment_id = a.id AND (
               EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = m.id AND um.user_id = ${actor.id})
               OR (s.history_public_to_subscribers AND (
                 (NOT s.invite_only AND (${!isGuest(actor)} OR s.is_web_public))
                 OR EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_id = ${actor.id} AND sub.recipient_id = m.recipient_id AND sub.active))))
           ) AS via_message
    FROM attachment a WHERE a.path_id = ANY(${pathIds}::text[])`;
  const access = new Map<string, AttachmentAccess>(pathIds.map((pathId) => [pathId, { allowed: false, reason: "missing" }]));
  for (const { via_message: viaMessage, ...attachment } of rows) {
    if (attachment.realm_id !== actor.realm_id) continue;
    const allowed = attachment.owner_id === actor.id || viaMessage;
    access.set(attachment.path_id, allowed ? { allowed: true, attachment } : { allowed: false, reason: "forbidden" });
  }
  return access;
}

/** accessAttachments for one upload (a download). */
export async function accessAttachment(db: Db, actor: Actor, pathId: string): Promise<AttachmentAccess> {
  return (await accessAttachments(db, actor, [pathId])).get(pathId)!;
}

/** An upload by its path id, whoever asks (a temporary URL's signature stands for the access check). */
export async function attachmentByPathId(db: Db, pathId: string): Promise<AttachmentFile | null> {
  return db.attachment.findUnique({
    where: { path_id: pathId },
    select: { id: true, realm_id: true, owner_id: true, path_id: true, file_name: true, content_type: true, size: true },
  });
}

/** The bytes a realm's uploads use (Zulip's currently_used_upload_space_bytes). */
export async function usedUploadSpace(db: Db, realmId: number): Promise<number> {
  const [row] = await db.$queryRaw<{ used: bigint | null }[]>`SELECT sum(size)::bigint AS used FROM attachment WHERE realm_id = ${realmId}`;
  return Number(row?.used ?? 0);
}

/** Attachments as Zulip lists them, with the messages that link each, and (not in the dict) their owners. */
export async function attachmentDictsWithOwners(db: Db, where: { ownerId: number } | { ids: number[] }): Promise<Array<{ ownerId: number; attachment: AttachmentDict }>> {
  const condition = "ownerId" in where ? Prisma.sql`a.owner_id = ${where.ownerId}` : Prisma.sql`a.id = ANY(${where.ids}::int[])`;
  const rows = await db.$queryRaw<{ id: number; owner_id: number; file_name: string; path_id: string; size: number; create_time: Date; messages: { id: number; name: number }[] }[]>`
    SELECT a.id, a.owner_id, a.file_name, a.path_id, a.size, a.create_time,
           coalesce((SELECT json_agg(json_build_object('id', m.id, 'name', (extract(epoch FROM m.date_sent) * 1000)::bigint) ORDER BY m.id)
                     FROM attachment_message am JOIN message m ON m.id = am.message_id WHERE am.attachment_id = a.id), '[]') AS messages
    FROM attachment a WHERE ${condition} ORDER BY a.id`;
  return rows.map((row) => ({
    ownerId: row.owner_id,
    attachment: {
      id: row.id,
      name: row.file_name,
      path_id: row.path_id,
      size: row.size,
      create_time: row.create_time.getTime(),
      messages: row.messages.map((m) => ({ id: m.id, name: Number(m.name) })),
    },
  }));
}

/** GET /attachments: the user's uploads. */
export async function attachmentDicts(db: Db, ownerId: number): Promise<AttachmentDict[]> {
  return (await attachmentDictsWithOwners(db, { ownerId })).map((row) => row.attachment);
}

/** The owners of the uploads linked from these messages, by attachment id (for update events). */
export async function attachmentsOfMessages(db: Db, messageIds: number[]): Promise<{ id: number; owner_id: number }[]> {
  if (messageIds.length === 0) return [];
  return db.$queryRaw<{ id: number; owner_id: number }[]>`
    SELECT DISTINCT a.id, a.owner_id FROM attachment_message am JOIN attachment a ON a.id = am.attachment_id
    WHERE am.message_id = ANY(${messageIds}::int[])`;
}
