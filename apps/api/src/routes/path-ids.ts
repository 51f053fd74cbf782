import type { Request } from "express";
import { JsonableError } from "@chat/core";

/** A numeric path segment (`/user_groups/{group_id}`); anything else is no such endpoint, as in Zulip. */
export function pathId(req: Request, name: string): number {
  const raw = String(req.params[name]);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new JsonableError("Endpoint not found", { status: 404 });
  return Number(raw);
}
