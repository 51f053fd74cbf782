// The multipart bodies that are not plain forms: a route that takes a file (an upload, an avatar,
// a custom emoji, a bot with its avatar) reads its own body after authentication and hands the
// file part, as a stream, to storage (or, for an image, to a bounded buffer). The global parser
// (multipart.ts) leaves these routes alone.
import type { Readable } from "node:stream";
import Busboy from "busboy";
import type { Request, Response } from "express";
import { JsonableError, readBoundedBuffer } from "@chat/core";
import { FileTooLargeError } from "@chat/storage";
import { MAX_FORM_BYTES, MAX_FORM_FIELDS } from "./multipart.ts";

export interface IncomingFile {
  /** The name the client gave the file part ("" when it gave none). */
  filename: string;
  /** The part's Content-Type as the client sent it. */
  mimeType: string;
}

export interface ReceiveFileOptions<T> {
  /** The most bytes the file may hold; `store` is expected to enforce it (FileTooLargeError). */
  maxBytes: number;
  /** The refusal for a file past maxBytes. */
  tooLarge: () => JsonableError;
  /** Reads the file part to its end (or fails); its result is the request's. */
  store: (file: Readable, info: IncomingFile) => Promise<T>;
  /** Undoes a stored file when the request fails after it (a second file part, a broken body). */
  discard: (stored: T) => Promise<void>;
  /**
   * The refusal for a body with no file part, or more than one, where the route has its own words
   * for both (an avatar: "You must upload exactly one avatar."); by default, the upload route's two.
   */
  wrongFileCount?: () => JsonableError;
}

/** A multipart part header or field is small; the file is the body. */
const PART_LIMITS = { fields: 100, fieldSize: 10_000, parts: 110, headerPairs: 100 };
/** A body announced as bigger than the file limit plus this can only be refused. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

const noFileDefault = () => new JsonableError("You must specify a file to upload");
const oneFileOnlyDefault = () => new JsonableError("You may only upload one file at a time");
const malformed = () => new JsonableError("Malformed multipart body");

/**
 * Streams the request's single file part into `options.store`. Refusals (no file, two files, too
 * large, a body cut off) reject with a JsonableError once whatever was stored is discarded; the
 * rest of a refused body is not read, and the connection closes after the answer.
 */
export function receiveSingleFile<T>(req: Request, res: Response, options: ReceiveFileOptions<T>): Promise<T> {
  const noFile = options.wrongFileCount ?? noFileDefault;
  const oneFileOnly = options.wrongFileCount ?? oneFileOnlyDefault;
  return new Promise<T>((resolve, reject) => {
    if (!req.is("multipart/form-data")) return reject(noFile());
    const announced = Number(req.headers["content-length"]);
    if (Number.isFinite(announced) && announced > options.maxBytes + MULTIPART_OVERHEAD_BYTES) {
      res.setHeader("Connection", "close");
      return reject(options.tooLarge());
    }
    let busboy: Busboy.Busboy;
    try {
      // Browsers and python-requests send a file name as raw UTF-8; busboy reads it as Latin-1 by default.
      busboy = Busboy({ headers: req.headers, defParamCharset: "utf8", limits: { ...PART_LIMITS, files: 2 } });
    } catch {
      return reject(malformed());
    }

    let file: Readable | null = null;
    let stored: Promise<T> | null = null;
    let storedValue: { value: T } | null = null;
    let parsed = false;
    let settled = false;

    const stopReading = () => {
      req.unpipe(busboy);
      // The rest of the body is not worth receiving; the connection ends after the answer.
      res.setHeader("Connection", "close");
      req.resume();
    };
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      stopReading();
      // With an error: a stream destroyed without one only closes, and a store may wait for its end.
      file?.destroy(new Error("upload refused"));
      if (!stored) return reject(error);
      // Whatever the store made of it is undone before the answer, so a refusal leaves nothing.
      stored.then(
        (result) => options.discard(result).then(() => reject(error), () => reject(error)),
        () => reject(error),
      );
    };
    // Resolved only once the whole body is parsed: a second file part refuses the first.
    const succeed = () => {
      if (settled || !parsed || !storedValue) return;
      settled = true;
      resolve(storedValue.value);
    };
    // After a refusal the store fails too (its stream was destroyed); fail() has settled by then.
    const storeFailed = (error: unknown) => fail(error instanceof FileTooLargeError ? options.tooLarge() : error);

    busboy.on("file", (_name, stream, info) => {
      if (file) {
        stream.resume();
        return fail(oneFileOnly());
      }
      file = stream;
      // The store reports the stream's failures; once it is done with the stream, destroying the
      // stream with an error (a later refusal) must not be an unhandled 'error' event.
      stream.on("error", () => undefined);
      stored = options.store(stream, { filename: info.filename ?? "", mimeType: info.mimeType ?? "" });
      stored.then((value) => {
        storedValue = { value };
        succeed();
      }, storeFailed);
    });
    busboy.on("filesLimit", () => fail(oneFileOnly()));
    busboy.on("partsLimit", () => fail(malformed()));
    busboy.on("fieldsLimit", () => fail(malformed()));
    busboy.on("error", () => fail(malformed()));
    busboy.on("close", () => {
      parsed = true;
      if (!stored) return fail(noFile());
      succeed();
    });
    // A client that goes away mid-file: the part would never end, and the store would wait forever.
    req.on("close", () => {
      if (!req.complete) fail(new JsonableError("Upload interrupted"));
    });
    req.pipe(busboy);
  });
}

export interface FormWithFileOptions {
  /** The most bytes the one file may hold; it is read into memory (an image for sharp). */
  maxFileBytes: number;
  /** The refusal for a file past maxFileBytes. */
  tooLarge: () => JsonableError;
}

/**
 * A form that may carry one file (POST /bots and PATCH /bots/{id}: the bot's fields and its
 * avatar). A multipart body is read here, after authentication: its fields become `req.body`
 * within the form parser's bounds (multipart.ts), and its file part, if any, is read into a buffer
 * of at most `maxFileBytes`. Any other body was parsed as a form already and has no file. Two
 * files, or a broken body, are refused.
 */
export function receiveFormWithFile(req: Request, res: Response, options: FormWithFileOptions): Promise<Buffer | null> {
  if (!req.is("multipart/form-data")) return Promise.resolve(null);
  return new Promise<Buffer | null>((resolve, reject) => {
    const maxBodyBytes = MAX_FORM_BYTES + options.maxFileBytes + MULTIPART_OVERHEAD_BYTES;
    const announced = Number(req.headers["content-length"]);
    if (Number.isFinite(announced) && announced > maxBodyBytes) {
      res.setHeader("Connection", "close");
      return reject(options.tooLarge());
    }
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({ headers: req.headers, defParamCharset: "utf8", limits: { fields: MAX_FORM_FIELDS, fieldSize: MAX_FORM_BYTES, files: 1, parts: MAX_FORM_FIELDS + 1 } });
    } catch {
      return reject(malformed());
    }
    // No prototype: a field named __proto__ is a field like any other.
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    let fieldBytes = 0;
    let received = 0;
    let file: Readable | null = null;
    let read: Promise<Buffer> | null = null;
    let settled = false;

    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(busboy);
      // The rest of the body is not worth receiving; the connection ends after the answer.
      res.setHeader("Connection", "close");
      req.resume();
      file?.destroy(new Error("upload refused"));
      reject(error);
    };
    const bodyTooLarge = () => new JsonableError("Request body too large", { status: 413 });

    req.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBodyBytes) fail(options.tooLarge());
    });
    busboy.on("field", (name, value, info) => {
      fieldBytes += name.length + value.length;
      if (info.valueTruncated || fieldBytes > MAX_FORM_BYTES) return fail(bodyTooLarge());
      fields[name] = value;
    });
    busboy.on("file", (_name, stream) => {
      file = stream;
      stream.on("error", () => undefined);
      read = readBoundedBuffer(stream, options.maxFileBytes);
      read.catch((error: unknown) => fail(error instanceof FileTooLargeError ? options.tooLarge() : error));
    });
    busboy.on("filesLimit", () => fail(oneFileOnlyDefault()));
    busboy.on("partsLimit", () => fail(malformed()));
    busboy.on("fieldsLimit", () => fail(bodyTooLarge()));
    busboy.on("error", () => fail(malformed()));
    busboy.on("close", () => {
      if (settled) return;
      const done = (buffer: Buffer | null) => {
        if (settled) return;
        settled = true;
        req.body = fields;
        resolve(buffer);
      };
      if (read) read.then(done, () => undefined);
      else done(null);
    });
    // A client that goes away mid-body: the file part would never end.
    req.on("close", () => {
      if (!req.complete) fail(new JsonableError("Upload interrupted"));
    });
    req.pipe(busboy);
  });
}
