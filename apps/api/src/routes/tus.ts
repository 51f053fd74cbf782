// The tus protocol 1.0.0 for resumable uploads at /api/v1/tus (feature level 295; Zulip fronts
// tusd there): OPTIONS (what the server supports), POST (creation), HEAD (how much the server
// has), PATCH (more bytes), DELETE (termination). Authenticated as POST /user_uploads is (HTTP
// Basic), or by the browser's session cookie, as Zulip's; every request but OPTIONS must say
// `Tus-Resumable: 1.0.0`, a header no cross-site form can send without a CORS preflight this
// server never grants, so the cookie alone cannot be used from another site.
//
// The protocol's answers are not the JSON API's (HEAD and 204s have no body, statuses 409, 412,
// 423...), so these routes are mounted before the API's OPTIONS answers and body parsing
// (createHttpApp's `early`) and are not API contracts; refusals are still Zulip's JSON errors,
// with `message` besides, as tusd's hook rejections carry.
import { Router, type Request, type RequestHandler, type Response } from "express";
import {
  appendTusUpload,
  createTusUpload,
  deleteTusUpload,
  parseByteCount,
  TUS_EXTENSIONS,
  TUS_VERSION,
  tusError,
  tusUploadState,
  type TusUploadState,
} from "@chat/core";
import { actorOf, requestIdOf, requireUser, route } from "@chat/http";
import type { ApiServices } from "../services.ts";

const BASE = "/api/v1/tus";

/** Every answer names the protocol's version; a request must speak it (412 otherwise). */
const speaksTus: RequestHandler = (req, res, next) => {
  res.setHeader("Tus-Resumable", TUS_VERSION);
  // Never cached: HEAD's offset changes with every PATCH.
  res.setHeader("Cache-Control", "no-store");
  if (req.method === "OPTIONS") return next();
  const version = req.headers["tus-resumable"];
  if (version !== TUS_VERSION) {
    res.setHeader("Tus-Version", TUS_VERSION);
    return next(tusError(version === undefined ? "Missing Tus-Resumable header" : "Unsupported Tus-Resumable version", 412));
  }
  next();
};

function stateHeaders(res: Response, state: TusUploadState): void {
  res.setHeader("Upload-Offset", String(state.offset));
  res.setHeader("Upload-Length", String(state.length));
  res.setHeader("Upload-Expires", state.expires.toUTCString());
  if (state.metadata !== "") res.setHeader("Upload-Metadata", state.metadata);
}

/** A header sent once (Node joins most repeated headers; a list is refused). */
function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  if (Array.isArray(value)) throw tusError(`Invalid ${name}`, 400);
  return value;
}

/** The upload's id from the path; ids are made by the server (anything else is unknown). */
const idOf = (req: Request) => String(req.params.upload_id ?? "");

export function tusRoutes(services: ApiServices): Router {
  const router = Router();
  const authenticate = requireUser({ prisma: services.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits, sessionCookie: true });

  router.use([BASE, `${BASE}/:upload_id`], speaksTus);

  const options = (_req: Request, res: Response) => {
    res.setHeader("Tus-Version", TUS_VERSION);
    res.setHeader("Tus-Extension", TUS_EXTENSIONS);
    res.setHeader("Tus-Max-Size", String(services.uploads.maxFileBytes));
    res.status(204).end();
  };
  router.options(BASE, options);
  router.options(`${BASE}/:upload_id`, options);

  router.post(
    BASE,
    authenticate,
    route(async (req, res) => {
      // Neither the creation-with-upload nor the concatenation extension: the bytes come by PATCH.
      if (req.headers["upload-defer-length"] !== undefined || req.headers["upload-length"] === undefined) {
        throw tusError("SizeIsDeferred is not supported", 411);
      }
      if (req.headers["upload-concat"] !== undefined) throw tusError("Concatenation is not supported", 400);
      const length = parseByteCount(header(req, "upload-length"), "Upload-Length");
      const state = await createTusUpload(services, actorOf(res), { length, metadata: header(req, "upload-metadata") });
      res.setHeader("Location", `${BASE}/${state.id}`);
      res.setHeader("Upload-Expires", state.expires.toUTCString());
      res.status(201).end();
    }),
  );

  router.head(
    `${BASE}/:upload_id`,
    authenticate,
    route(async (req, res) => {
      stateHeaders(res, await tusUploadState(services.prisma, actorOf(res), idOf(req)));
      res.status(200).end();
    }),
  );

  router.patch(
    `${BASE}/:upload_id`,
    authenticate,
    route(async (req, res) => {
      const type = String(req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
      let result;
      try {
        if (type !== "application/offset+octet-stream") throw tusError("Content-Type must be application/offset+octet-stream", 415);
        const offset = parseByteCount(header(req, "upload-offset"), "Upload-Offset");
        result = await appendTusUpload(services, actorOf(res), idOf(req), offset, req, requestIdOf(req));
      } catch (error) {
        // A refused body is not read: the connection closes after the answer.
        if (!req.complete) res.setHeader("Connection", "close");
        throw error;
      }
      const { state, done } = result;
      stateHeaders(res, state);
      // The last piece: the file as POST /user_uploads gives it (Zulip's pre-finish hook answers so).
      if (done) {
        res.status(200).json({ result: "success", msg: "", url: done.url, uri: done.url, filename: done.filename });
        return;
      }
      res.status(204).end();
    }),
  );

  router.delete(
    `${BASE}/:upload_id`,
    authenticate,
    route(async (req, res) => {
      await deleteTusUpload(services, actorOf(res), idOf(req));
      res.status(204).end();
    }),
  );

  // Any other method here is the protocol's 405, not the API's 404.
  router.all([BASE, `${BASE}/:upload_id`], (_req, _res, next) => next(tusError("Method not allowed", 405)));
  return router;
}
