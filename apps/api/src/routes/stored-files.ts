// What every route that serves a stored file shares: its 404, and streaming the body once the
// route has set the headers.
import { pipeline } from "node:stream/promises";
import type { Request, Response } from "express";
import { JsonableError } from "@chat/core";
import { logger } from "@chat/logger";
import type { ObjectRead } from "@chat/storage";

export const fileNotFound = () => new JsonableError("File not found.", { status: 404 });

/** Sends `object`'s body (none for HEAD). Headers are out by then: a failure can only cut the body off. */
export async function streamStoredBody(req: Request, res: Response, object: ObjectRead, key: string): Promise<void> {
  if (req.method === "HEAD") {
    object.body.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(object.body, res);
  } catch (error) {
    // A client that went away is no failure of ours; storage failing mid-file is worth a line.
    const code = (error as { code?: unknown }).code;
    if (code !== "ERR_STREAM_PREMATURE_CLOSE") logger.warn("serving a stored file failed", { key, error: error instanceof Error ? error.message : String(error) });
    object.body.destroy();
    res.destroy();
  }
}
