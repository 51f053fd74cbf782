// multipart/form-data bodies read as forms: zulip-js and python-requests send ordinary parameters
// this way, so every route reads them, as a urlencoded form, into req.body. Only fields are kept,
// and within the urlencoded parser's bounds; file parts are drained unread, never held in memory,
// since no request should cost a node a file's size before its route has checked the credentials.
// A route that takes files (uploads) reads its own body, after authentication, streamed to storage.
import Busboy from "busboy";
import type { NextFunction, Request, Response } from "express";
import { JsonableError } from "@chat/core";

/** The whole body, as express.urlencoded's limit. */
export const MAX_FORM_BYTES = 5 * 1024 * 1024;
/** Fields, as express.urlencoded's parameterLimit. */
export const MAX_FORM_FIELDS = 10_000;

const tooLarge = () => new JsonableError("Request body too large", { status: 413 });
const malformed = () => new JsonableError("Malformed multipart body");

/** Routes that read their own body, with a file, after authentication (file-upload.ts). */
const FILE_ROUTES: Array<{ method: string; path: RegExp }> = [
  { method: "POST", path: /^\/(?:api\/v1|json)\/user_uploads\/?$/ },
  { method: "POST", path: /^\/(?:api\/v1|json)\/users\/me\/avatar\/?$/ },
  { method: "POST", path: /^\/(?:api\/v1|json)\/realm\/emoji\/[^/]+\/?$/ },
  // A bot's fields and its avatar (receiveFormWithFile).
  { method: "POST", path: /^\/(?:api\/v1|json)\/bots\/?$/ },
  { method: "PATCH", path: /^\/(?:api\/v1|json)\/bots\/[^/]+\/?$/ },
];

export function takesFileBody(method: string, path: string): boolean {
  return FILE_ROUTES.some((route) => route.method === method && route.path.test(path));
}

export function multipartBody(req: Request, res: Response, next: NextFunction): void {
  if (!req.is("multipart/form-data") || takesFileBody(req.method, req.path)) return next();
  let busboy: Busboy.Busboy;
  try {
    busboy = Busboy({ headers: req.headers, limits: { fields: MAX_FORM_FIELDS, fieldSize: MAX_FORM_BYTES } });
  } catch {
    return next(malformed());
  }
  const fields: Record<string, string> = {};
  let received = 0;
  let finished = false;
  const finish = (error?: JsonableError) => {
    if (finished) return;
    finished = true;
    req.unpipe(busboy);
    if (error) {
      // Stop reading: the rest of an oversized body is not worth receiving.
      res.setHeader("Connection", "close");
      req.resume();
      return next(error);
    }
    req.body = fields;
    next();
  };

  req.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received > MAX_FORM_BYTES) finish(tooLarge());
  });
  busboy.on("field", (name, value, info) => {
    if (info.valueTruncated) return finish(tooLarge());
    fields[name] = value;
  });
  busboy.on("fieldsLimit", () => finish(tooLarge()));
  busboy.on("file", (_name, stream) => stream.resume());
  busboy.on("error", () => finish(malformed()));
  busboy.on("close", () => finish());
  req.pipe(busboy);
}
