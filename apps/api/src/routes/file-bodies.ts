import type { Request, Response } from "express";
import { imageTooLargeError, readBoundedBuffer, type JsonableError } from "@chat/core";
import { receiveFormWithFile, receiveSingleFile } from "@chat/http";

/**
 * Runs what a file route checks before it reads its body (who may, which name). A refusal closes
 * the connection after its answer, so the unread file is not received only to be thrown away.
 */
export async function checkBeforeFileBody<T>(res: Response, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    res.setHeader("Connection", "close");
    throw error;
  }
}

/**
 * The one image file of an avatar or emoji upload, read into a buffer of at most `maxBytes`
 * (images are small, and sharp wants them whole); `wrongFileCount` is the route's refusal for
 * none or several.
 */
export function receiveImage(req: Request, res: Response, maxBytes: number, wrongFileCount: () => JsonableError): Promise<Buffer> {
  return receiveSingleFile(req, res, {
    maxBytes,
    tooLarge: () => imageTooLargeError(maxBytes),
    wrongFileCount,
    store: (file) => readBoundedBuffer(file, maxBytes),
    // Nothing was stored: the buffer is simply dropped.
    discard: async () => undefined,
  });
}

/**
 * A form with at most one image file (a bot and its avatar): the fields become `req.body`, the
 * image, if any, a buffer of at most `maxBytes`. A body that is no multipart form has no file.
 */
export function receiveFormWithImage(req: Request, res: Response, maxBytes: number): Promise<Buffer | null> {
  return receiveFormWithFile(req, res, { maxFileBytes: maxBytes, tooLarge: () => imageTooLargeError(maxBytes) });
}
