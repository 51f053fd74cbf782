// Uploaded files as Zulip names and serves them (zerver/lib/upload.py): a path id of the realm, a
// random part and the sanitized file name; the types a browser may show inline; and the links in
// a message that reference uploads (which attach them to it).
import { createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import mime from "mime-types";

/** Zulip's longest file name part; longer names keep their end (the extension). */
const MAX_NAME_LENGTH = 200;

/**
 * Zulip's sanitize_name: NFKC, only word characters, dots and hyphens, runs of spaces and hyphens
 * made one hyphen. A name with nothing left becomes "uploaded-file".
 */
export function sanitizeFileName(name: string): string {
  let value = name.normalize("NFKC").replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, "").trim();
  value = value.replace(/[-\s]+/gu, "-");
  if (value.length > MAX_NAME_LENGTH) value = value.slice(value.length - MAX_NAME_LENGTH);
  value = value.replace(/^\.+/, "");
  return value === "" ? "uploaded-file" : value;
}

/** `<realm>/<2 hex>/<24 random>/<name>`, Zulip's local layout (its example URIs have it). */
export function newPathId(realmId: number, fileName: string): string {
  const random = randomBytes(18).toString("base64url");
  return `${realmId}/${randomInt(256).toString(16)}/${random}/${sanitizeFileName(fileName)}`;
}

/** The file name a path id ends with (the sanitized name). */
export function fileNameOfPathId(pathId: string): string {
  return pathId.slice(pathId.lastIndexOf("/") + 1);
}

/** Where an upload's bytes live in storage. */
export function uploadStorageKey(pathId: string): string {
  return `uploads/${pathId}`;
}

const PATH_ID = /^(\d{1,10})\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\/[^/\\\0]{1,200}$/u;

/** A path id as newPathId makes them; anything else names no upload (and never reaches storage). */
export function isValidPathId(pathId: string): boolean {
  const match = PATH_ID.exec(pathId);
  return match !== null && !pathId.split("/").some((part) => part === "." || part === "..");
}

/**
 * The file's type, from its name as Zulip guesses it (the part's own Content-Type is the client's
 * say, used only when the name says nothing), as `type/subtype` without parameters.
 */
export function contentTypeFor(fileName: string, partType: string): string {
  const guessed = mime.lookup(fileName);
  if (guessed) return guessed;
  const declared = partType.split(";")[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(declared) ? declared : "application/octet-stream";
}

/**
 * Types a browser may show in place (Zulip's INLINE_MIME_TYPES, plus audio and video it plays):
 * none of them can run script in the server's origin. Everything else downloads.
 */
const INLINE_TYPES = new Set([
  "application/pdf",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/webp",
  "audio/mpeg",
  "audio/ogg",
  "audio/wav",
  "audio/webm",
  "video/mp4",
  "video/ogg",
  "video/webm",
]);

export function isInlineType(contentType: string | null): boolean {
  return contentType !== null && INLINE_TYPES.has(contentType);
}

/** Content-Disposition with the name both as ASCII and RFC 5987 UTF-8. */
export function contentDisposition(inline: boolean, fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${inline ? "inline" : "attachment"}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** The most upload links of one message that are looked up (content is 10,000 bytes at most). */
const MAX_REFERENCES = 100;
const UPLOAD_LINK = /\/user_uploads\/(\d{1,10}\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\/[^\s/\\)\]>"'?#]{1,200})/gu;

/**
 * The path ids a message's content links to (relative `/user_uploads/...` or the same on any host):
 * Zulip collects them from the rendered links; links are the only way a message names a file.
 */
export function referencedPathIds(content: string): string[] {
  if (!content.includes("/user_uploads/")) return [];
  const found = new Set<string>();
  for (const match of content.matchAll(UPLOAD_LINK)) {
    let pathId = match[1]!;
    try {
      pathId = decodeURIComponent(pathId);
    } catch {
      // A malformed escape names the file as written.
    }
    if (isValidPathId(pathId)) found.add(pathId);
    if (found.size >= MAX_REFERENCES) break;
  }
  return [...found];
}

/** How long a temporary file URL works (Zulip: 60 seconds). */
export const TEMPORARY_URL_SECONDS = 60;

function signature(secret: string, payload: string): string {
  return createHmac("sha256", secret).update(payload).digest("base64url");
}

/** A token naming a path id until `expiresAt` (seconds), signed with the cluster's shared secret. */
export function signTemporaryToken(secret: string, pathId: string, expiresAt: number): string {
  const payload = `${Buffer.from(pathId).toString("base64url")}.${expiresAt}`;
  return `${payload}.${signature(secret, payload)}`;
}

/** The path id a token names, or null when it is forged, malformed or expired. */
export function verifyTemporaryToken(secret: string, token: string, nowSeconds: number): string | null {
  const parts = token.split(".");
  if (parts.length !== 3 || token.length > 2000) return null;
  const [encodedPath, expires, given] = parts as [string, string, string];
  const expected = Buffer.from(signature(secret, `${encodedPath}.${expires}`));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  if (!/^\d{1,12}$/.test(expires) || Number(expires) < nowSeconds) return null;
  const pathId = Buffer.from(encodedPath, "base64url").toString("utf8");
  return isValidPathId(pathId) ? pathId : null;
}
