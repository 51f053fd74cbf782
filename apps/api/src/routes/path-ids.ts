import type { Request } from "express";
import { fitsPostgresInteger, InvalidArgumentError, JsonableError } from "@chat/core";

/**
 * A numeric path segment (`/user_groups/{group_id}`); anything else is no such endpoint, as in
 * Zulip. Ids are Postgres `integer`s: a larger one names nothing, and must not reach a query.
 */
export function pathId(req: Request, name: string): number {
  const raw = String(req.params[name]);
  if (!/^\d+$/.test(raw)) throw new JsonableError("Endpoint not found", { status: 404 });
  if (!fitsPostgresInteger(raw)) throw new InvalidArgumentError(`${name} is out of range`, name);
  return Number(raw);
}
