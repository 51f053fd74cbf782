// POST /user_uploads (Zulip's upload_file_backend): the file streams to storage under a new path
// id, then its row is recorded; a refusal at either step leaves neither the bytes nor the row.
import type { Readable } from "node:stream";
import type { UploadConfig } from "@chat/config";
import type { PrismaClient } from "@chat/db";
import type { FileStorage } from "@chat/storage";
import { JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { deleteFilesQuietly, type FileActionServices } from "../lib/stored-files.ts";
import { contentTypeFor, fileNameOfPathId, newPathId, uploadStorageKey } from "../lib/uploads.ts";
import { usedUploadSpace } from "../queries/attachments.ts";
import { IMAGE_HEADER_BYTES, imageDimensions, readBoundedBuffer } from "../lib/images.ts";
import { quotaExceeded, recordUpload, removeAttachment, takeUnclaimedUploads, type NewUpload } from "./attachments.ts";

export interface FileServices extends FileActionServices {
  uploads: UploadConfig;
}

const MIB = 1024 * 1024;

/** The realm's own quota (realm.upload_quota_bytes) when set, else the server's; 0 is none. */
export function realmUploadQuota(actor: Actor, uploads: UploadConfig): number {
  const own = actor.realm.upload_quota_bytes;
  return own === null || own === undefined ? uploads.realmQuotaBytes : Number(own);
}

export interface UploadLimit {
  maxBytes: number;
  tooLarge: () => JsonableError;
}

/**
 * How big this user's next upload may be: the server's file limit, or less when the realm's quota
 * has less room (refused at once when it has none).
 */
export async function uploadLimit(services: FileServices, actor: Actor): Promise<UploadLimit> {
  const { maxFileBytes } = services.uploads;
  const sizeError = () => new JsonableError(`Uploaded file is larger than the allowed limit of ${Math.floor(maxFileBytes / MIB)} MiB`);
  const quota = realmUploadQuota(actor, services.uploads);
  if (quota === 0) return { maxBytes: maxFileBytes, tooLarge: sizeError };
  const room = quota - (await usedUploadSpace(services.prisma, actor.realm_id));
  if (room <= 0) throw quotaExceeded();
  return room < maxFileBytes ? { maxBytes: room, tooLarge: quotaExceeded } : { maxBytes: maxFileBytes, tooLarge: sizeError };
}

/** Streams one file to storage (the `store` of receiveSingleFile). */
export async function storeUploadedFile(services: FileServices, actor: Actor, file: Readable, info: { filename: string; mimeType: string }, maxBytes: number): Promise<NewUpload> {
  const fileName = info.filename.trim() === "" ? "uploaded-file" : info.filename;
  const pathId = newPathId(actor.realm_id, fileName);
  // From the name it is served under (its path id's end), not the name as sent: "x.html" and a
  // zero-width space says nothing as sent, the part's "image/png" would win, and the file would
  // be shown inline as an image yet saved as x.html.
  const contentType = contentTypeFor(fileNameOfPathId(pathId), info.mimeType);
  const stored = await services.storage.put(uploadStorageKey(pathId), file, { contentType, maxBytes });
  const dimensions = await storedImageDimensions(services.storage, actor, pathId, contentType, stored.size);
  return { pathId, fileName, contentType, size: stored.size, dimensions };
}

/** An uploaded image's size in pixels, for the types that get previews; null for others. */
export async function storedImageDimensions(storage: FileStorage, actor: Actor, pathId: string, contentType: string, size: number): Promise<{ width: number; height: number } | null> {
  return MEASURED_TYPES.has(contentType) && size > 0 ? measureStoredImage(storage, uploadStorageKey(pathId), `${actor.realm_id}:${actor.id}`) : null;
}

/** The types of the uploads that get image previews (markdown's PREVIEW_EXTENSIONS); others are not read back. */
const MEASURED_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"]);

/**
 * A stored image's size (Zulip's original_width_px / original_height_px): only the start of its
 * bytes is read back, for sharp to read the header. Unknown (null) when that fails; the upload
 * stands either way.
 */
async function measureStoredImage(storage: FileStorage, key: string, requester: string): Promise<{ width: number; height: number } | null> {
  try {
    const read = await storage.get(key, { start: 0, end: IMAGE_HEADER_BYTES - 1 });
    if (!read) return null;
    const head = await readBoundedBuffer(read.body, IMAGE_HEADER_BYTES);
    return await imageDimensions(head, requester);
  } catch {
    return null;
  }
}

export async function discardUploadedFile(services: FileActionServices, upload: NewUpload): Promise<void> {
  await deleteFilesQuietly(services.storage, [uploadStorageKey(upload.pathId)]);
}

/** Records a stored file (within the quota, checked again under lock); the bytes go if that fails. */
export async function recordUploadedFile(services: FileServices, actor: Actor, upload: NewUpload, requestId?: string): Promise<string> {
  try {
    await services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => recordUpload(tx, events, actor, upload, realmUploadQuota(actor, services.uploads)));
  } catch (error) {
    await discardUploadedFile(services, upload);
    throw error;
  }
  return `/user_uploads/${upload.pathId}`;
}

/** DELETE /attachments/{id}: the row (and its event) first, then the bytes. */
export async function deleteUploadedFile(services: FileActionServices, actor: Actor, attachmentId: number, requestId?: string): Promise<void> {
  const pathId = await services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => removeAttachment(tx, events, actor, attachmentId));
  await deleteFilesQuietly(services.storage, [uploadStorageKey(pathId)]);
}

/**
 * Deletes uploads no message links that are older than the grace period (Zulip's
 * delete_old_unclaimed_attachments), rows and bytes together: the bytes go inside the transaction
 * that deletes the rows, so a storage failure keeps the rows for the next run. Safe on several
 * workers at once (SKIP LOCKED). Returns how many went.
 */
export async function sweepUnclaimedUploads(prisma: PrismaClient, storage: FileStorage, graceHours: number, batch = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const olderThan = new Date(Date.now() - graceHours * 3600_000);
    const count = await prisma.$transaction(async (tx) => {
      const rows = await takeUnclaimedUploads(tx, olderThan, batch);
      if (rows.length > 0) await storage.delete(rows.map((row) => uploadStorageKey(row.path_id)));
      return rows.length;
    });
    total += count;
    if (count < batch) return total;
  }
}
