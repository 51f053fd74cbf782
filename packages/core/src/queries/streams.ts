// Which streams a user may see and use. Zulip's rules: a public stream is visible to every
// non-guest; a private stream, and for guests any stream, only to its subscribers. Administrators
// may manage (but not read) private streams they are not in.
import type { StreamModel, Tx } from "@chat/db";
import { badRequest, StreamDoesNotExistError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin, isGuest } from "../lib/roles.ts";

type Reader = Pick<Tx, "stream" | "subscription" | "$queryRaw">;

export async function isSubscribed(db: Reader, userId: number, stream: StreamModel): Promise<boolean> {
  const sub = await db.subscription.findFirst({ where: { user_id: userId, recipient_id: stream.recipient_id!, active: true }, select: { id: true } });
  return sub !== null;
}

/** May the user see that the stream exists and read its metadata? */
export function canSeeStream(actor: Actor, stream: StreamModel, subscribed: boolean): boolean {
  if (subscribed) return true;
  if (stream.invite_only) return isAdmin(actor);
  return !isGuest(actor);
}

/** A stream of the actor's realm by id that the actor may see, or `Invalid stream id`. */
export async function accessStreamById(db: Reader, actor: Actor, streamId: number, options: { requireAdmin?: boolean } = {}): Promise<StreamModel> {
  const stream = await db.stream.findFirst({ where: { id: streamId, realm_id: actor.realm_id, deactivated: false } });
  if (!stream) throw badRequest("Invalid stream id");
  const subscribed = await isSubscribed(db, actor.id, stream);
  if (!canSeeStream(actor, stream, subscribed) || (options.requireAdmin && !isAdmin(actor) && !subscribed)) throw badRequest("Invalid stream id");
  return stream;
}

/** A stream of the actor's realm by name that the actor may see, or STREAM_DOES_NOT_EXIST. */
export async function accessStreamByName(db: Reader, actor: Actor, name: string): Promise<StreamModel> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT id FROM stream WHERE realm_id = ${actor.realm_id} AND lower(name) = lower(${name.trim()}) AND NOT deactivated`;
  const stream = rows.length === 0 ? null : await db.stream.findUnique({ where: { id: rows[0].id } });
  if (!stream || !canSeeStream(actor, stream, await isSubscribed(db, actor.id, stream))) throw new StreamDoesNotExistError(name);
  return stream;
}
