// Which streams a user may see and use. Zulip's rules: a public stream is visible to every
// non-guest; a private stream, and for guests any stream, only to its subscribers. Administrators
// may manage (but not read) private streams they are not in.
import { leanSql, Prisma, type PrismaClient, type StreamModel, type Tx } from "@chat/db";
import { badRequest, StreamDoesNotExistError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin, isGuest } from "../lib/roles.ts";
import { cachedStream } from "./stream-cache.ts";

type Reader = Pick<Tx, "stream" | "subscription" | "$queryRaw">;

export async function isSubscribed(db: Reader, userId: number, stream: StreamModel): Promise<boolean> {
  const sub = await db.subscription.findFirst({ where: { user_id: userId, recipient_id: stream.recipient_id!, active: true }, select: { id: true } });
  return sub !== null;
}

/**
 * An active stream of the realm by id or (case-insensitive) name, and whether any of `userIds` is
 * subscribed to it, in one round trip: sending and fetching do this on every request.
 */
export async function findStreamWithSubscription(
  db: Parameters<typeof leanSql>[0],
  realmId: number,
  indicator: string | number,
  userIds: number[],
): Promise<{ stream: StreamModel; subscribed: boolean } | null> {
  const match = typeof indicator === "number" ? Prisma.sql`st.id = ${indicator}` : Prisma.sql`lower(st.name) = lower(${indicator.trim()})`;
  const rows = await leanSql(db).query<StreamModel & { subscribed: boolean }>(Prisma.sql`
    SELECT st.*, EXISTS (
      SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.active AND s.user_id = ANY(${userIds}::int[])
    ) AS subscribed
    FROM stream st WHERE st.realm_id = ${realmId} AND NOT st.deactivated AND ${match}`, { prepare: true });
  if (rows.length === 0) return null;
  const { subscribed, ...stream } = rows[0];
  return { stream, subscribed };
}

/**
 * findStreamWithSubscription for the hot paths, outside transactions: a public stream looked up
 * by a non-guest comes from this node's copy of the realm's streams without a query, since no rule
 * then depends on the subscription (`subscribed` is null: not read). Anything else asks the database.
 */
export async function findStreamForHotPath(
  db: PrismaClient,
  actor: Actor,
  indicator: string | number,
  userIds: number[],
): Promise<{ stream: StreamModel; subscribed: boolean | null } | null> {
  if (!isGuest(actor)) {
    const stream = await cachedStream(db, actor.realm, indicator);
    if (stream && !stream.invite_only) return { stream, subscribed: null };
  }
  return findStreamWithSubscription(db, actor.realm_id, indicator, userIds);
}

/**
 * Whether more than `count` active users are subscribed to the stream (Zulip's
 * num_subscribers_for_stream_id, compared with a threshold): reads at most count + 1 rows.
 */
export async function hasMoreSubscribersThan(db: Parameters<typeof leanSql>[0], recipientId: number, count: number): Promise<boolean> {
  const [row] = await leanSql(db).query<{ n: number }>(Prisma.sql`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM subscription WHERE recipient_id = ${recipientId} AND active AND is_user_active LIMIT ${count + 1}
    ) AS subscribers`, { prepare: true });
  return row.n > count;
}

/** May the user see that the stream exists and read its metadata? */
export function canSeeStream(actor: Actor, stream: StreamModel, subscribed: boolean): boolean {
  if (subscribed) return true;
  if (stream.invite_only) return isAdmin(actor);
  // Guests see the web-public streams too (Zulip's can_access_stream_metadata).
  return !isGuest(actor) || stream.is_web_public;
}

/** A stream of the actor's realm by id that the actor may see, or `Invalid stream id`. */
export async function accessStreamById(db: Reader, actor: Actor, streamId: number, options: { requireAdmin?: boolean } = {}): Promise<StreamModel> {
  const found = await findStreamWithSubscription(db, actor.realm_id, streamId, [actor.id]);
  if (!found) throw badRequest("Invalid stream id");
  const { stream, subscribed } = found;
  if (!canSeeStream(actor, stream, subscribed) || (options.requireAdmin && !isAdmin(actor) && !subscribed)) throw badRequest("Invalid stream id");
  return stream;
}

/**
 * A stream of the actor's realm by id as one without administrator rights may read it (Zulip 9.0's
 * access_stream_by_id without allow_realm_admin: GET /streams/{id}, its email address): one the
 * actor is subscribed to, a web-public one, or a public one for a non-guest; else `Invalid stream id`.
 */
export async function accessStreamByIdAsMember(db: Reader, actor: Actor, streamId: number): Promise<StreamModel> {
  const found = await findStreamWithSubscription(db, actor.realm_id, streamId, [actor.id]);
  if (!found) throw badRequest("Invalid stream id");
  const { stream, subscribed } = found;
  if (!subscribed && !stream.is_web_public && (stream.invite_only || isGuest(actor))) throw badRequest("Invalid stream id");
  return stream;
}

/** A stream of the actor's realm by name that the actor may see, or STREAM_DOES_NOT_EXIST. */
export async function accessStreamByName(db: Reader, actor: Actor, name: string): Promise<StreamModel> {
  const found = await findStreamWithSubscription(db, actor.realm_id, name, [actor.id]);
  if (!found || !canSeeStream(actor, found.stream, found.subscribed)) throw new StreamDoesNotExistError(name);
  return found.stream;
}

/**
 * The realm's active streams that have a subscriber (Zulip's get_occupied_streams): the streams
 * GET /streams and /register's `streams` list. A public stream leaves the list with `stream vacate`
 * and comes back with `stream occupy`; a private one is deactivated when its last subscriber goes.
 */
export async function occupiedStreams(db: Pick<Tx, "$queryRaw">, realmId: number): Promise<StreamModel[]> {
  return db.$queryRaw<StreamModel[]>`SELECT st.* FROM stream st WHERE ${occupiedStreamsOf(realmId)} ORDER BY st.id`;
}

/** The condition on `stream st` that makes it one of the realm's occupied streams. */
export function occupiedStreamsOf(realmId: number): Prisma.Sql {
  return Prisma.sql`st.realm_id = ${realmId} AND NOT st.deactivated
    AND EXISTS (SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.active AND s.is_user_active)`;
}

/**
 * The streams /register's `streams` section lists for a user of this role (initial-state.ts): the
 * occupied streams that are public (for a guest, web-public) or that the user is subscribed to.
 * A role change compares this list before and after (actions/users.ts).
 */
export async function listedStreamsFor(db: Pick<Tx, "$queryRaw">, user: { id: number; realm_id: number; role: number }): Promise<StreamModel[]> {
  const guest = isGuest(user);
  return db.$queryRaw<StreamModel[]>`
    SELECT st.* FROM stream st WHERE ${occupiedStreamsOf(user.realm_id)}
      AND ((NOT st.invite_only AND (NOT ${guest} OR st.is_web_public))
        OR EXISTS (SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.user_id = ${user.id} AND s.active))
    ORDER BY st.id`;
}
