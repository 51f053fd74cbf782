// Resumable uploads (feature level 295): Zulip serves the tus protocol 1.0.0 at /api/v1/tus by
// fronting tusd, whose hooks (zerver/views/tusd.py) check the user and size when an upload is
// created and make the attachment when it finishes. Here the protocol's state is a `tus_upload`
// row and its bytes are file storage objects, one a PATCH (`tus/<id>/<n>`), so any API node
// continues an upload another began; when the last byte arrives they are joined into the upload's
// own object and recorded as POST /user_uploads records a file, with the same answer.
//
// Bounded: an upload is at most the server's file limit (and the organization's quota); a user has
// at most MAX_INCOMPLETE_UPLOADS_PER_USER unfinished ones; one upload at most MAX_PARTS pieces; an
// upload nobody continued for STALE_UPLOAD_HOURS is removed, rows and bytes (sweepStaleTusUploads,
// and on each new upload of its user).
import { randomBytes } from "node:crypto";
import { PassThrough, type Readable } from "node:stream";
import type { PrismaClient } from "@chat/db";
import { FileTooLargeError, type FileStorage } from "@chat/storage";
import { JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { deleteFilesQuietly } from "../lib/stored-files.ts";
import { contentTypeFor, fileNameOfPathId, newPathId, uploadStorageKey } from "../lib/uploads.ts";
import { discardUploadedFile, recordUploadedFile, storedImageDimensions, uploadLimit, type FileServices } from "./file-uploads.ts";

export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = "creation,termination,expiration";
/** Unfinished uploads one user may have at once. */
export const MAX_INCOMPLETE_UPLOADS_PER_USER = 10;
/** Pieces (PATCH requests that wrote bytes) one upload may take. */
export const MAX_PARTS = 1000;
/** An upload nobody continued for this long is gone. */
export const STALE_UPLOAD_HOURS = 24;
/** How long a PATCH holds its upload: another PATCH of it meanwhile is refused (423). */
const PATCH_HOLD_SECONDS = 15 * 60;
/** The longest Upload-Metadata header taken. */
export const MAX_METADATA_LENGTH = 4096;

const ID = /^[A-Za-z0-9_-]{32}$/;

interface TusRow {
  id: string;
  realm_id: number;
  user_id: number;
  length: bigint;
  offset: bigint;
  parts: number;
  filename: string;
  filetype: string | null;
  metadata: string;
  updated_at: Date;
}

/** A refusal in the protocol's statuses, as a Zulip error; `message` is what tusd's hook rejections carry (Zulip's web client reads it). */
export function tusError(msg: string, status: number): JsonableError {
  return new JsonableError(msg, { status, extra: { message: msg } });
}

const notFound = () => tusError("Upload not found", 404);

/** The state a HEAD shows, and what POST and PATCH answer with. */
export interface TusUploadState {
  id: string;
  length: number;
  offset: number;
  metadata: string;
  expires: Date;
}

function stateOf(row: TusRow): TusUploadState {
  return { id: row.id, length: Number(row.length), offset: Number(row.offset), metadata: row.metadata, expires: expiryOf(row.updated_at) };
}

function expiryOf(updated: Date): Date {
  return new Date(updated.getTime() + STALE_UPLOAD_HOURS * 3600_000);
}

function partKey(id: string, index: number): string {
  return `tus/${id}/${index}`;
}

/** The stored pieces of an unfinished upload (its `parts` of them). */
export function tusPartKeys(id: string, parts: number): string[] {
  return Array.from({ length: parts }, (_, i) => partKey(id, i));
}

/**
 * Upload-Metadata: `key base64value` pairs separated by commas (the value may be absent). Keys are
 * unique ASCII without spaces or commas; anything else is a 400.
 */
export function parseUploadMetadata(header: string | undefined): Map<string, string> {
  const metadata = new Map<string, string>();
  if (header === undefined || header.trim() === "") return metadata;
  if (header.length > MAX_METADATA_LENGTH) throw tusError("Upload-Metadata is too long", 400);
  for (const pair of header.split(",")) {
    const parts = pair.trim().split(" ");
    const key = parts[0] ?? "";
    if (parts.length > 2 || !/^[\x21-\x7e]+$/.test(key) || metadata.has(key)) throw tusError("Invalid Upload-Metadata", 400);
    const encoded = parts[1] ?? "";
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) throw tusError("Invalid Upload-Metadata", 400);
    metadata.set(key, Buffer.from(encoded, "base64").toString("utf8"));
  }
  return metadata;
}

/** A non-negative integer header (Upload-Length, Upload-Offset), or a 400. */
export function parseByteCount(value: string | undefined, name: string): number {
  if (value === undefined || !/^\d{1,16}$/.test(value.trim())) throw tusError(`Invalid ${name}`, 400);
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n)) throw tusError(`Invalid ${name}`, 400);
  return n;
}

/** Unfinished uploads nobody continued for STALE_UPLOAD_HOURS (of one user, or all): rows and bytes removed. Returns how many. */
export async function sweepStaleTusUploads(prisma: PrismaClient, storage: FileStorage, userId?: number, batch = 200): Promise<number> {
  const olderThan = new Date(Date.now() - STALE_UPLOAD_HOURS * 3600_000);
  const rows = await prisma.$queryRawUnsafe<Array<{ id: string; parts: number }>>(
    `DELETE FROM tus_upload WHERE id IN (SELECT id FROM tus_upload WHERE updated_at < $1 AND (busy_until IS NULL OR busy_until < now())${userId === undefined ? "" : " AND user_id = $3"} LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id, parts`,
    ...(userId === undefined ? [olderThan, batch] : [olderThan, batch, userId]),
  );
  const keys = rows.flatMap((row) => tusPartKeys(row.id, row.parts));
  if (keys.length > 0) await deleteFilesQuietly(storage, keys);
  return rows.length;
}

/**
 * POST /api/v1/tus (the protocol's creation, with Zulip's pre-create hook): the length must be
 * given (a deferred length is refused, 411), within the file limit and the organization's quota
 * (413); the file's name and type come from Upload-Metadata's `filename` and `filetype`.
 */
export async function createTusUpload(services: FileServices, actor: Actor, request: { length: number; metadata: string | undefined }): Promise<TusUploadState> {
  const metadata = parseUploadMetadata(request.metadata);
  let limit;
  try {
    limit = await uploadLimit(services, actor);
  } catch (error) {
    if (error instanceof JsonableError) throw tusError(error.message, 413);
    throw error;
  }
  if (request.length > limit.maxBytes) throw tusError(limit.tooLarge().message, 413);
  await sweepStaleTusUploads(services.prisma, services.storage, actor.id);
  const raw = metadata.get("filename") ?? "";
  const filename = raw === "" || raw === "." || raw === ".." ? "uploaded-file" : raw.slice(0, 1000);
  const filetype = (metadata.get("filetype") ?? "").slice(0, 255) || null;
  const id = randomBytes(24).toString("base64url");
  // The count and the insert under the user's lock: concurrent creations cannot pass the bound together.
  return services.prisma.$transaction(async (tx) => {
    await tx.$queryRawUnsafe("SELECT id FROM user_profile WHERE id = $1 FOR UPDATE", actor.id);
    const [{ count }] = await tx.$queryRawUnsafe<Array<{ count: bigint }>>("SELECT count(*) AS count FROM tus_upload WHERE user_id = $1", actor.id);
    if (Number(count) >= MAX_INCOMPLETE_UPLOADS_PER_USER) {
      throw tusError(`You have ${MAX_INCOMPLETE_UPLOADS_PER_USER} unfinished uploads; finish or cancel one first.`, 429);
    }
    const rows = await tx.$queryRawUnsafe<TusRow[]>(
      "INSERT INTO tus_upload (id, realm_id, user_id, length, filename, filetype, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *",
      id,
      actor.realm_id,
      actor.id,
      BigInt(request.length),
      filename,
      filetype,
      request.metadata ?? "",
    );
    return stateOf(rows[0]!);
  });
}

async function ownUpload(db: Pick<PrismaClient, "$queryRawUnsafe">, actor: Actor, id: string): Promise<TusRow> {
  if (!ID.test(id)) throw notFound();
  const rows = await db.$queryRawUnsafe<TusRow[]>("SELECT * FROM tus_upload WHERE id = $1", id);
  const row = rows[0];
  // Another user's upload is as unknown as a missing one.
  if (!row || row.user_id !== actor.id) throw notFound();
  if (expiryOf(row.updated_at).getTime() <= Date.now()) throw tusError("Upload expired", 410);
  return row;
}

/** HEAD /api/v1/tus/{id}: how much of the upload the server has. */
export async function tusUploadState(prisma: PrismaClient, actor: Actor, id: string): Promise<TusUploadState> {
  return stateOf(await ownUpload(prisma, actor, id));
}

export interface TusPatchResult {
  state: TusUploadState;
  /** The finished upload, as POST /user_uploads answers (Zulip's pre-finish hook): set by the PATCH that wrote the last byte. */
  done?: { url: string; filename: string };
}

/**
 * PATCH /api/v1/tus/{id}: the body's bytes continue the upload at `offset`, which must be what the
 * server has (409 otherwise). One PATCH of an upload at a time (423 meanwhile). A body cut short
 * keeps nothing of it: the client asks HEAD where to resume. The PATCH that completes it makes the
 * attachment.
 */
export async function appendTusUpload(services: FileServices, actor: Actor, id: string, offset: number, body: Readable, requestId?: string): Promise<TusPatchResult> {
  const row = await ownUpload(services.prisma, actor, id);
  if (Number(row.offset) !== offset) throw tusError("Upload-Offset does not match the upload's offset", 409);
  const claimed = await services.prisma.$queryRawUnsafe<TusRow[]>(
    `UPDATE tus_upload SET busy_until = now() + interval '${PATCH_HOLD_SECONDS} seconds' WHERE id = $1 AND "offset" = $2 AND (busy_until IS NULL OR busy_until < now()) RETURNING *`,
    id,
    BigInt(offset),
  );
  if (claimed.length === 0) {
    const current = await ownUpload(services.prisma, actor, id);
    if (Number(current.offset) !== offset) throw tusError("Upload-Offset does not match the upload's offset", 409);
    throw tusError("The upload is being written by another request", 423);
  }
  const upload = claimed[0]!;
  const remaining = Number(upload.length) - offset;
  let written = 0;
  try {
    if (remaining > 0) {
      if (upload.parts >= MAX_PARTS) throw tusError(`An upload may come in at most ${MAX_PARTS} pieces`, 400);
      try {
        const stored = await services.storage.put(partKey(id, upload.parts), body, { contentType: "application/octet-stream", maxBytes: remaining });
        written = stored.size;
      } catch (error) {
        if (error instanceof FileTooLargeError) throw tusError("The body goes past Upload-Length", 413);
        throw error;
      }
    }
    const rows = await services.prisma.$queryRawUnsafe<TusRow[]>(
      `UPDATE tus_upload SET "offset" = "offset" + $2, parts = parts + $3, updated_at = now(), busy_until = CASE WHEN "offset" + $2 = length THEN busy_until ELSE NULL END WHERE id = $1 RETURNING *`,
      id,
      BigInt(written),
      written > 0 ? 1 : 0,
    );
    const after = rows[0];
    if (!after) throw notFound();
    if (after.offset !== after.length) return { state: stateOf(after) };
    const done = await finishTusUpload(services, actor, after, requestId);
    return { state: stateOf(after), done };
  } catch (error) {
    await services.prisma.$executeRawUnsafe("UPDATE tus_upload SET busy_until = NULL WHERE id = $1 AND \"offset\" <> length", id).catch(() => undefined);
    throw error;
  }
}

/** The pieces, in order, as one stream (each read when the one before is done). */
function joinedParts(storage: FileStorage, id: string, parts: number): Readable {
  const out = new PassThrough();
  (async () => {
    for (let i = 0; i < parts; i++) {
      const piece = await storage.get(partKey(id, i));
      if (!piece) throw new Error(`a piece of upload ${id} is missing`);
      for await (const chunk of piece.body) if (!out.write(chunk)) await new Promise((resolve) => out.once("drain", resolve));
    }
    out.end();
  })().catch((error: unknown) => out.destroy(error instanceof Error ? error : new Error(String(error))));
  return out;
}

/**
 * The last byte arrived (Zulip's pre-finish hook): the pieces become the upload's object under a
 * new path id and its attachment is recorded; the row and pieces go. The file's type is
 * Upload-Metadata's `filetype` where the name says nothing (as POST /user_uploads' part type).
 */
async function finishTusUpload(services: FileServices, actor: Actor, row: TusRow, requestId?: string): Promise<{ url: string; filename: string }> {
  const pathId = newPathId(actor.realm_id, row.filename);
  const contentType = contentTypeFor(fileNameOfPathId(pathId), row.filetype ?? "application/octet-stream");
  const size = Number(row.length);
  const pieces = tusPartKeys(row.id, row.parts);
  try {
    const stored = await services.storage.put(uploadStorageKey(pathId), joinedParts(services.storage, row.id, row.parts), { contentType, maxBytes: size });
    const dimensions = await storedImageDimensions(services.storage, actor, pathId, contentType, stored.size);
    const upload = { pathId, fileName: row.filename, contentType, size: stored.size, dimensions };
    let url: string;
    try {
      url = await recordUploadedFile(services, actor, upload, requestId);
    } catch (error) {
      if (error instanceof JsonableError) throw tusError(error.message, 413);
      throw error;
    }
    await services.prisma.$executeRawUnsafe("DELETE FROM tus_upload WHERE id = $1", row.id);
    await deleteFilesQuietly(services.storage, pieces);
    return { url, filename: row.filename };
  } catch (error) {
    // Nothing of it is kept: the client starts again.
    await discardUploadedFile(services, { pathId, fileName: row.filename, contentType, size }).catch(() => undefined);
    await services.prisma.$executeRawUnsafe("DELETE FROM tus_upload WHERE id = $1", row.id).catch(() => undefined);
    await deleteFilesQuietly(services.storage, pieces);
    throw error;
  }
}

/** DELETE /api/v1/tus/{id} (termination): the unfinished upload and its bytes go. */
export async function deleteTusUpload(services: FileServices, actor: Actor, id: string): Promise<void> {
  await ownUpload(services.prisma, actor, id);
  const rows = await services.prisma.$queryRawUnsafe<Array<{ parts: number }>>(
    "DELETE FROM tus_upload WHERE id = $1 AND user_id = $2 AND (busy_until IS NULL OR busy_until < now()) RETURNING parts",
    id,
    actor.id,
  );
  if (rows.length === 0) throw tusError("The upload is being written by another request", 423);
  await deleteFilesQuietly(services.storage, tusPartKeys(id, rows[0]!.parts));
}
