// multipart/form-data bodies (Zulip clients send uploads and sometimes plain fields this way):
// fields go to req.body like a urlencoded form, files to req.files, in memory up to a limit.
import Busboy from "busboy";
import type { NextFunction, Request, Response } from "express";
import { JsonableError } from "@chat/core";

export interface UploadedFile {
  fieldName: string;
  fileName: string;
  mimeType: string;
  data: Buffer;
}

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

export function multipartBody(req: Request, res: Response, next: NextFunction): void {
  if (!req.is("multipart/form-data")) return next();
  let busboy: Busboy.Busboy;
  try {
    busboy = Busboy({ headers: req.headers, limits: { fileSize: MAX_UPLOAD_BYTES, files: 10, fields: 200 } });
  } catch {
    return next(new JsonableError("Malformed multipart body"));
  }
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  let failure: JsonableError | null = null;

  busboy.on("field", (name, value) => {
    fields[name] = value;
  });
  busboy.on("file", (fieldName, stream, info) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("limit", () => {
      failure = new JsonableError(`Uploaded file is larger than the allowed limit of ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB`, { status: 413 });
    });
    stream.on("end", () => {
      files.push({ fieldName, fileName: info.filename ?? "", mimeType: info.mimeType, data: Buffer.concat(chunks) });
    });
  });
  busboy.on("error", () => {
    failure ??= new JsonableError("Malformed multipart body");
    next(failure);
  });
  busboy.on("close", () => {
    if (failure) return next(failure);
    req.body = fields;
    res.locals.files = files;
    next();
  });
  req.pipe(busboy);
}

export function uploadedFiles(res: Response): UploadedFile[] {
  return (res.locals.files as UploadedFile[] | undefined) ?? [];
}
