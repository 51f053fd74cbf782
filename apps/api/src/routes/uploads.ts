// Uploaded files: POST /user_uploads, the API's temporary URL for one, and the download paths
// outside /api/v1 that message links name (/user_uploads/<realm>/<...>, authenticated by HTTP
// Basic or the `api_key` parameter, and /user_uploads/temporary/<token>/<name>, by its signature).
import { Router, type Request, type RequestHandler, type Response } from "express";
import rangeParser from "range-parser";
import {
  accessAttachment,
  attachmentByPathId,
  RateLimitedError,
  spectatorsAllowed,
  webPublicAttachmentVisible,
  contentDisposition,
  contentTypeFor,
  discardUploadedFile,
  fileNameOfPathId,
  isInlineType,
  isValidPathId,
  JsonableError,
  recordUploadedFile,
  serverSecret,
  signTemporaryToken,
  storeUploadedFile,
  TEMPORARY_URL_SECONDS,
  uploadLimit,
  uploadStorageKey,
  verifyTemporaryToken,
  type Actor,
  type AttachmentFile,
} from "@chat/core";
import {
  actorOf,
  clientIp,
  endpoint,
  isSpectatorRequest,
  receiveSingleFile,
  requestIdOf,
  requestSubdomain,
  requireUser,
  route,
  schema,
  serve,
  sessionTokenOf,
  success,
  successBody,
} from "@chat/http";
import type { ByteRange } from "@chat/storage";
import type { ApiServices } from "../services.ts";
import { checkBeforeFileBody } from "./file-bodies.ts";
import { fileNotFound, streamStoredBody } from "./stored-files.ts";

const notAuthorized = () => new JsonableError("You are not authorized to view this file.", { status: 403 });

/** The path id a download URL names (`/user_uploads/<realm>/<rest>`), or a 404 for anything malformed. */
function pathIdOf(req: Request): string {
  const realm = String(req.params.realm_id ?? "");
  const rest = req.params.path;
  const segments = Array.isArray(rest) ? rest : [String(rest ?? "")];
  const pathId = `${realm}/${segments.join("/")}`;
  if (!/^\d{1,10}$/.test(realm) || !isValidPathId(pathId)) throw fileNotFound();
  return pathId;
}

async function accessibleFile(services: ApiServices, actor: Actor, pathId: string): Promise<AttachmentFile> {
  const access = await accessAttachment(services.prisma, actor, pathId);
  if (access.allowed) return access.attachment;
  throw access.reason === "missing" ? fileNotFound() : notAuthorized();
}

/**
 * Sends a stored upload: its type, inline only for types that cannot script the origin, never
 * sniffed, sandboxed; single byte ranges (players and resumed downloads ask for them).
 */
async function sendFile(services: ApiServices, req: Request, res: Response, file: AttachmentFile): Promise<void> {
  let range: ByteRange | undefined;
  const header = req.headers.range;
  if (header !== undefined && file.size > 0) {
    const ranges = rangeParser(file.size, header, { combine: true });
    if (ranges === -1) {
      res.status(416).set("Content-Range", `bytes */${file.size}`).json({ result: "error", msg: "Requested range not satisfiable", code: "BAD_REQUEST" });
      return;
    }
    // Malformed or several ranges: the whole file, as a server may answer.
    if (ranges !== -2 && ranges.type === "bytes" && ranges.length === 1) range = { start: ranges[0]!.start, end: ranges[0]!.end };
  }
  const object = await services.storage.get(uploadStorageKey(file.path_id), range);
  if (!object) throw fileNotFound();
  const fileName = fileNameOfPathId(file.path_id);
  // The name served decides where it says anything, for files stored before their type was
  // taken from that name too.
  const contentType = contentTypeFor(fileName, file.content_type ?? "application/octet-stream");
  res.set({
    "Content-Type": contentType,
    "Content-Disposition": contentDisposition(isInlineType(contentType), fileName),
    "X-Content-Type-Options": "nosniff",
    // Whatever the bytes are, they never run as a page of this origin.
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox",
    // Per user (credentials decide), but a path id never names other bytes.
    "Cache-Control": "private, max-age=86400, immutable",
    "Accept-Ranges": "bytes",
  });
  if (object.range) {
    res.status(206).set("Content-Range", `bytes ${object.range.start}-${object.range.end}/${object.size}`);
    res.set("Content-Length", String(object.range.end - object.range.start + 1));
  } else {
    res.set("Content-Length", String(object.size));
  }
  await streamStoredBody(req, res, object, uploadStorageKey(file.path_id));
}

const secrets = new WeakMap<object, Promise<string>>();

/** The key temporary URLs are signed with: one for the cluster, read once per process. */
function signingSecret(services: ApiServices): Promise<string> {
  let secret = secrets.get(services.prisma);
  if (!secret) {
    secret = serverSecret(services.prisma, "temporary-file-urls");
    secret.catch(() => secrets.delete(services.prisma));
    secrets.set(services.prisma, secret);
  }
  return secret;
}

/** `/user_uploads/{realm_id}/{path}`: the realm's id, then the file's path id's rest. */
const FILE_PATH = {
  realm_id: { schema: { type: "string", pattern: "^[0-9]{1,10}$" }, description: "The organization's id." },
  path: { schema: { type: "string" }, description: "The rest of the file's path (it has slashes).", rest: true },
};
const FILE_TYPES = ["application/octet-stream", "*/*"];
const TEMPORARY_PATH = {
  token: { schema: { type: "string" }, description: "The signed token." },
  filename: { schema: { type: "string" }, description: "The file's name (any; the token names the file)." },
};

export const uploadEndpoints = {
  upload: endpoint({
    method: "post",
    path: "/user_uploads",
    tag: "messages",
    auth: "basic",
    summary: "Upload a file to link in a message",
    description:
      "Large files may instead be uploaded in pieces, resumably, with the tus protocol 1.0.0 at `/api/v1/tus` (feature level 295; creation, termination and expiration extensions): the same credentials (or the browser session), the same size limit and quota; the last PATCH answers with this endpoint's `url` and `filename`. An upload nobody continues for a day is removed; a user has at most 10 unfinished ones.",
    params: {},
    file: { name: "file", description: "One file (any field name).", required: true },
    response: successBody({
      url: schema.string({ description: "The file's path on the server, to link in a message." }),
      uri: schema.string({ description: "`url`'s name before feature level 272, which clients still read." }),
      filename: schema.string({ description: "The file's name as kept (feature level 286)." }),
    }),
  }),
  // Zulip's serve_file_url_backend: a URL that works without credentials, for a minute.
  temporaryUrl: endpoint({
    method: "get",
    path: "/user_uploads/{realm_id}/{path}",
    pathParams: FILE_PATH,
    tag: "messages",
    auth: "basic",
    summary: "A URL for an uploaded file that works without credentials, for a minute",
    params: {},
    response: successBody({ url: schema.string() }),
    errorStatuses: [403],
  }),
};

/** A file by the temporary URL the API gave, with or without its name after the token. */
function temporaryDownload(path: string, pathParams: Partial<typeof TEMPORARY_PATH>) {
  return endpoint({
    method: "get",
    root: true,
    path,
    pathParams,
    tag: "files",
    auth: "signed-url",
    summary: "An uploaded file, by the temporary URL the API gave",
    params: {},
    response: { binary: FILE_TYPES },
    errorStatuses: [416],
  });
}

/** Downloads, outside /api/v1. */
export const uploadFileEndpoints = {
  temporary: temporaryDownload("/user_uploads/temporary/{token}", { token: TEMPORARY_PATH.token }),
  temporaryNamed: temporaryDownload("/user_uploads/temporary/{token}/{filename}", TEMPORARY_PATH),
  download: endpoint({
    method: "get",
    root: true,
    path: "/user_uploads/{realm_id}/{path}",
    pathParams: FILE_PATH,
    tag: "files",
    auth: "basic-or-api-key",
    summary: "An uploaded file (a single byte range may be asked for)",
    params: {},
    response: { binary: FILE_TYPES },
    errorStatuses: [403, 416],
  }),
};

/** The API's upload endpoints (under /api/v1, after HTTP Basic). */
export function uploadRoutes(services: ApiServices): Router {
  const router = Router();

  serve(
    router,
    uploadEndpoints.upload,
    route(async (req, res) => {
      const actor = actorOf(res);
      const limit = await checkBeforeFileBody(res, () => uploadLimit(services, actor));
      const upload = await receiveSingleFile(req, res, {
        maxBytes: limit.maxBytes,
        tooLarge: limit.tooLarge,
        store: (file, info) => storeUploadedFile(services, actor, file, info, limit.maxBytes),
        discard: (stored) => discardUploadedFile(services, stored),
      });
      const url = await recordUploadedFile(services, actor, upload, requestIdOf(req));
      success(res, { url, uri: url, filename: upload.fileName });
    }),
  );

  serve(
    router,
    uploadEndpoints.temporaryUrl,
    route(async (req, res) => {
      const file = await accessibleFile(services, actorOf(res), pathIdOf(req));
      const expiresAt = Math.floor(Date.now() / 1000) + TEMPORARY_URL_SECONDS;
      const token = signTemporaryToken(await signingSecret(services), file.path_id, expiresAt);
      const name = fileNameOfPathId(file.path_id);
      success(res, { url: `/user_uploads/temporary/${token}/${encodeURIComponent(name)}` });
    }),
  );
  return router;
}

/**
 * A download without any credentials (Zulip's validate_attachment_request_for_spectator_access):
 * served when the organization lets spectators in and a web-public stream's message links the
 * file. Anything else goes on to authentication, whose 401 says nothing of whether the file exists.
 * Downloads are not rate limited, but these run queries for anyone: each counts for its address.
 */
function spectatorDownload(services: ApiServices): RequestHandler {
  return (req, res, next) => {
    if (!isSpectatorRequest(req) || sessionTokenOf(req)) return next();
    (async () => {
      if (services.rateLimits.enabled) {
        const wait = await services.rateLimits.countIp(clientIp(req));
        if (wait !== null) throw new RateLimitedError(wait);
      }
      const pathId = pathIdOf(req);
      const realm = await services.prisma.realm.findUnique({ where: { string_id: requestSubdomain(req, services.ctx.externalHost) } });
      if (realm === null || !(await spectatorsAllowed(services.prisma, realm, services.ctx)) || !(await webPublicAttachmentVisible(services.prisma, realm, pathId))) return next();
      const file = await attachmentByPathId(services.prisma, pathId);
      if (file === null || file.realm_id !== realm.id) return next();
      await sendFile(services, req, res, file);
    })().catch(next);
  };
}

/** Downloads at the paths message links name, outside /api/v1. */
export function uploadFileRoutes(services: ApiServices): Router {
  const router = Router();

  const temporary = route(async (req, res) => {
    const pathId = verifyTemporaryToken(await signingSecret(services), String(req.params.token), Math.floor(Date.now() / 1000));
    if (!pathId) throw fileNotFound();
    const file = await attachmentByPathId(services.prisma, pathId);
    if (!file) throw fileNotFound();
    await sendFile(services, req, res, file);
  });
  serve(router, uploadFileEndpoints.temporary, temporary);
  serve(router, uploadFileEndpoints.temporaryNamed, temporary);

  // HTTP Basic, or Zulip's `api_key` parameter for clients that cannot set headers on a link, or
  // the web client's session cookie (its images and links).
  const authenticate = requireUser({ prisma: services.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits, apiKeyParameter: true, sessionCookie: true });
  serve(
    router,
    uploadFileEndpoints.download,
    spectatorDownload(services),
    authenticate,
    route(async (req, res) => {
      const file = await accessibleFile(services, actorOf(res), pathIdOf(req));
      await sendFile(services, req, res, file);
    }),
  );
  return router;
}
