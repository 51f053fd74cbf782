// Uploads as rows (Zulip's zerver/actions/uploads.py and attachments.py): recording one within the
// realm's quota, linking it to the messages that reference it, unlinking on edit, removing it. The
// bytes live in storage; the caller writes them before and deletes them after the transaction.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { referencedPathIds } from "../lib/uploads.ts";
import { accessAttachments, attachmentDictsWithOwners, usedUploadSpace, type AttachmentDict } from "../queries/attachments.ts";

export interface NewUpload {
  pathId: string;
  fileName: string;
  contentType: string;
  size: number;
  /** An image's size in pixels, when its header gave one (previews carry it). */
  dimensions?: { width: number; height: number } | null;
}

export const quotaExceeded = () => new JsonableError("Upload would exceed your organization's upload quota.");

/** Longest file name kept for display (the path id has its own, shorter, sanitized one). */
const MAX_DISPLAY_NAME = 255;

/** Returns the rows it read, with their owners. */
async function notifyAttachment(tx: Tx, events: EventRecorder, op: "add" | "update", attachmentIds: number[], realmId: number): Promise<Array<{ ownerId: number; attachment: AttachmentDict }>> {
  if (attachmentIds.length === 0) return [];
  const [rows, used] = await Promise.all([attachmentDictsWithOwners(tx, { ids: attachmentIds }), usedUploadSpace(tx, realmId)]);
  for (const { ownerId, attachment } of rows) events.send({ type: "attachment", op, attachment, upload_space_used: used }, [ownerId]);
  return rows;
}

/**
 * Records an upload already in storage, within the realm's quota (`quotaBytes`, 0 for none). The
 * realm's row is locked while the space is summed, so concurrent uploads cannot all squeeze under it.
 */
export async function recordUpload(tx: Tx, events: EventRecorder, actor: Actor, upload: NewUpload, quotaBytes: number): Promise<void> {
  if (quotaBytes > 0) {
    await tx.$queryRaw`SELECT id FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
    if ((await usedUploadSpace(tx, actor.realm_id)) + upload.size > quotaBytes) throw quotaExceeded();
  }
  const name = upload.fileName.replaceAll("\0", "").slice(0, MAX_DISPLAY_NAME) || "uploaded-file";
  const row = await tx.attachment.create({
    data: { realm_id: actor.realm_id, owner_id: actor.id, file_name: name, path_id: upload.pathId, content_type: upload.contentType, size: upload.size, original_width: upload.dimensions?.width ?? null, original_height: upload.dimensions?.height ?? null },
  });
  await notifyAttachment(tx, events, "add", [row.id], actor.realm_id);
}

export interface LinkedMessage {
  id: number;
  content: string;
  /** Sent to a public stream: its uploads become readable by the whole organization (Zulip's is_realm_public). */
  realmPublic: boolean;
}

/**
 * Links a message to the uploads its content references (Zulip's do_claim_attachments): those the
 * sender may read themselves; a link to anything else (another's private file, a made-up path)
 * stays a plain link. Returns whether the message has an attachment.
 */
export async function claimAttachments(tx: Tx, events: EventRecorder, sender: Actor, message: LinkedMessage): Promise<boolean> {
  const pathIds = referencedPathIds(message.content);
  if (pathIds.length === 0) return false;
  const claimed = [...(await accessAttachments(tx, sender, pathIds)).values()].flatMap((access) => (access.allowed ? [access.attachment.id] : []));
  if (claimed.length === 0) return false;
  await tx.$executeRaw`
    INSERT INTO attachment_message (attachment_id, message_id)
    SELECT unnest(${claimed}::int[]), ${message.id} ON CONFLICT DO NOTHING`;
  if (message.realmPublic) await tx.attachment.updateMany({ where: { id: { in: claimed } }, data: { is_realm_public: true } });
  await tx.message.update({ where: { id: message.id }, data: { has_attachment: true } });
  await notifyAttachment(tx, events, "update", claimed, sender.realm_id);
  return true;
}

/**
 * After an edit of a message's content: uploads it no longer references are unlinked, new ones
 * linked (Zulip's check_attachment_reference_change). Returns has_attachment for the message, and
 * the editor's uploads it let go that no message links any more (detached_uploads, feature level 285).
 */
export async function relinkAttachments(tx: Tx, events: EventRecorder, editor: Actor, message: LinkedMessage): Promise<{ has: boolean; detached: AttachmentDict[] }> {
  const current = await tx.$queryRaw<{ id: number; path_id: string }[]>`
    SELECT a.id, a.path_id FROM attachment_message am JOIN attachment a ON a.id = am.attachment_id WHERE am.message_id = ${message.id}`;
  const wanted = new Set(referencedPathIds(message.content));
  const dropped = current.filter((row) => !wanted.has(row.path_id)).map((row) => row.id);
  let detached: AttachmentDict[] = [];
  if (dropped.length > 0) {
    await tx.attachmentMessage.deleteMany({ where: { message_id: message.id, attachment_id: { in: dropped } } });
    // The update events' rows are read after the unlinking; the content names none of them, so
    // claiming below links none of them again.
    detached = (await notifyAttachment(tx, events, "update", dropped, editor.realm_id))
      .filter((row) => row.ownerId === editor.id && row.attachment.messages.length === 0)
      .map((row) => row.attachment);
  }
  const kept = current.length - dropped.length;
  const claimedNew = await claimAttachments(tx, events, editor, message);
  const has = kept > 0 || claimedNew;
  if (!has) await tx.message.update({ where: { id: message.id }, data: { has_attachment: false } });
  return { has, detached };
}

/** Attachment update events for uploads that lost messages (deleted), to their owners. */
export async function notifyAttachmentsChanged(tx: Tx, events: EventRecorder, realmId: number, attachmentIds: number[]): Promise<void> {
  await notifyAttachment(tx, events, "update", [...new Set(attachmentIds)], realmId);
}

/**
 * DELETE /attachments/{id}: the uploader removes their file (Zulip's remove). Messages that link
 * it keep the link, which then answers 404. Returns the path id whose bytes to delete after commit.
 */
export async function removeAttachment(tx: Tx, events: EventRecorder, actor: Actor, attachmentId: number): Promise<string> {
  const attachment = await tx.attachment.findFirst({ where: { id: attachmentId, owner_id: actor.id } });
  if (!attachment) throw new JsonableError("Invalid attachment");
  await tx.attachment.delete({ where: { id: attachment.id } });
  events.send({ type: "attachment", op: "remove", attachment: { id: attachment.id }, upload_space_used: await usedUploadSpace(tx, actor.realm_id) }, [actor.id]);
  return attachment.path_id;
}

/** Uploads no message links, older than `olderThan` (the worker deletes them, rows and bytes). */
export async function takeUnclaimedUploads(tx: Tx, olderThan: Date, limit: number): Promise<{ id: number; path_id: string }[]> {
  return tx.$queryRaw<{ id: number; path_id: string }[]>`
    DELETE FROM attachment WHERE id IN (
      SELECT a.id FROM attachment a
      WHERE a.create_time < ${olderThan} AND NOT EXISTS (SELECT 1 FROM attachment_message am WHERE am.attachment_id = a.id)
      ORDER BY a.create_time LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING id, path_id`;
}
