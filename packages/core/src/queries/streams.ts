// Which streams a user may see and use. Zulip's rules: a public stream is visible to every
// non-guest; a private stream, and for guests any stream, only to its subscribers. Administrators
// may manage (but not read) private streams they are not in.
import { leanSql, Prisma, type PrismaClient, type StreamModel, type Tx } from "@chat/db";
import { badRequest, JsonableError, StreamDoesNotExistError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin, isGuest } from "../lib/roles.ts";
import { cachedStream } from "./stream-cache.ts";
import { hasGroupSettingPermission, STREAM_PERMISSION_GROUP_SETTINGS } from "../lib/group-permissions.ts";

type Reader = Pick<Tx, "stream" | "subscription" | "$queryRaw">;

export async function isSubscribed(db: Reader, userId: number, stream: StreamModel): Promise<boolean> {
  const sub = await db.subscription.findFirst({ where: { user_id: userId, recipient_id: stream.recipient_id!, active: true }, select: { id: true } });
  return sub !== null;
}

/** Lookups that may find an archived stream (feature level 315); by default they do not. */
export interface ArchivedOption {
  includeArchived?: boolean;
}

/**
 * An active stream of the realm by id or (case-insensitive) name, and whether any of `userIds` is
 * subscribed to it, in one round trip: sending and fetching do this on every request. An archived
 * one only with `includeArchived` (the caller then decides what may be done in it).
 */
export async function findStreamWithSubscription(
  db: Parameters<typeof leanSql>[0],
  realmId: number,
  indicator: string | number,
  userIds: number[],
  options: ArchivedOption = {},
): Promise<{ stream: StreamModel; subscribed: boolean } | null> {
  const match = typeof indicator === "number" ? Prisma.sql`st.id = ${indicator}` : Prisma.sql`lower(st.name) = lower(${indicator.trim()})`;
  const rows = await leanSql(db).query<StreamModel & { subscribed: boolean }>(Prisma.sql`
    SELECT st.*, EXISTS (
      SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.active AND s.user_id = ANY(${userIds}::int[])
    ) AS subscribed
    FROM stream st WHERE st.realm_id = ${realmId} AND (NOT st.deactivated OR ${options.includeArchived === true}) AND ${match}`, { prepare: true });
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
  options: ArchivedOption = {},
): Promise<{ stream: StreamModel; subscribed: boolean | null } | null> {
  if (!isGuest(actor)) {
    const stream = await cachedStream(db, actor.realm, indicator);
    if (stream && !stream.invite_only) return { stream, subscribed: null };
  }
  return findStreamWithSubscription(db, actor.realm_id, indicator, userIds, options);
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
export async function accessStreamById(
  db: Reader,
  actor: Actor,
  streamId: number,
  options: { requireAdmin?: boolean } & ArchivedOption = {},
): Promise<StreamModel> {
  const found = await findStreamWithSubscription(db, actor.realm_id, streamId, [actor.id], options);
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
export async function accessStreamByIdAsMember(db: Reader, actor: Actor, streamId: number, options: ArchivedOption = {}): Promise<StreamModel> {
  const found = await findStreamWithSubscription(db, actor.realm_id, streamId, [actor.id], options);
  if (!found) throw badRequest("Invalid stream id");
  const { stream, subscribed } = found;
  if (!subscribed && !stream.is_web_public && (stream.invite_only || isGuest(actor))) {
    // Zulip 10.0's metadata access: a private stream's groups let their members see it (feature level 349).
    if (isGuest(actor) || !(await channelAccess(db, actor, stream, false)).metadataViaGroups) throw badRequest("Invalid stream id");
  }
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
export async function listedStreamsFor(db: Pick<Tx, "$queryRaw">, user: { id: number; realm_id: number; role: number }, options: ArchivedOption = {}): Promise<StreamModel[]> {
  const guest = isGuest(user);
  return db.$queryRaw<StreamModel[]>`
    SELECT st.* FROM stream st WHERE (${occupiedStreamsOf(user.realm_id)} OR (${options.includeArchived === true} AND ${archivedStreamsOf(user.realm_id)}))
      AND ((NOT st.invite_only AND (NOT ${guest} OR st.is_web_public))
        OR EXISTS (SELECT 1 FROM subscription s WHERE s.recipient_id = st.recipient_id AND s.user_id = ${user.id} AND s.active))
    ORDER BY st.id`;
}

/**
 * The condition on `stream st` that makes it one of the realm's archived streams (feature level
 * 315). They are listed (to clients that ask for them) whether or not anyone is subscribed: they
 * are kept for reference, and the occupied/vacated distinction is about active streams.
 */
export function archivedStreamsOf(realmId: number): Prisma.Sql {
  return Prisma.sql`(st.realm_id = ${realmId} AND st.deactivated)`;
}

/** The realm's archived streams, by id (GET /streams with exclude_archived=false). */
export async function archivedStreams(db: Pick<Tx, "$queryRaw">, realmId: number): Promise<StreamModel[]> {
  return db.$queryRaw<StreamModel[]>`SELECT st.* FROM stream st WHERE ${archivedStreamsOf(realmId)} ORDER BY st.id`;
}

/**
 * SQL: the ids of the groups the user is in, directly or through subgroups (Zulip's
 * get_recursive_membership_groups), as an array; not correlated, so read once per statement.
 */
export function userRecursiveGroupIdsSql(userId: number): Prisma.Sql {
  return Prisma.sql`ARRAY(WITH RECURSIVE ug(id) AS (
      SELECT user_group_id FROM user_group_membership WHERE user_id = ${userId}
      UNION SELECT gm.supergroup_id FROM group_group_membership gm JOIN ug ON gm.subgroup_id = ug.id)
    SELECT id FROM ug)`;
}

/**
 * SQL boolean on the stream `alias`: the user is in a group of its that grants reading it without
 * being subscribed, can_add_subscribers_group or can_subscribe_group (Zulip 10.0's
 * is_user_in_groups_granting_content_access, feature level 354). Never a guest's: neither setting
 * may be role:everyone. Whether the history is shared is the caller's to add.
 */
export function contentAccessViaGroupsSql(user: { id: number; role: number }, alias = "st"): Prisma.Sql {
  if (isGuest(user)) return Prisma.sql`false`;
  const a = Prisma.raw(alias);
  return Prisma.sql`(ARRAY[${a}.can_add_subscribers_group_id, ${a}.can_subscribe_group_id] && ${userRecursiveGroupIdsSql(user.id)})`;
}

/** The same for metadata (Zulip's has_metadata_access_to_channel_via_groups): can_administer_channel_group too. */
export function metadataAccessViaGroupsSql(user: { id: number; role: number }, alias = "st"): Prisma.Sql {
  if (isGuest(user)) return Prisma.sql`false`;
  const a = Prisma.raw(alias);
  return Prisma.sql`(ARRAY[${a}.can_administer_channel_group_id, ${a}.can_add_subscribers_group_id, ${a}.can_subscribe_group_id] && ${userRecursiveGroupIdsSql(user.id)})`;
}

/** The groups the user is in, recursively. */
export async function userRecursiveGroupIds(db: Pick<Tx, "$queryRaw">, userId: number): Promise<Set<number>> {
  const [row] = await db.$queryRaw<{ ids: number[] }[]>`SELECT ${userRecursiveGroupIdsSql(userId)} AS ids`;
  return new Set(row?.ids ?? []);
}

/** What a user may do with a channel beyond its public face (Zulip 10.0's metadata and content access, feature level 349). */
export interface ChannelAccess {
  subscribed: boolean;
  /** Sees it, its settings and subscribers (user_has_metadata_access). */
  metadata: boolean;
  /** Reads it as a subscriber would (user_has_content_access). */
  content: boolean;
  /** Is an organization administrator or in its can_administer_channel_group (can_administer_accessible_channel). */
  administer: boolean;
  /** Is in its can_add_subscribers_group. */
  addSubscribers: boolean;
  /** Is in its can_subscribe_group. */
  subscribe: boolean;
  /** Sees it through one of its groups (not as an organization administrator). */
  metadataViaGroups: boolean;
}

/**
 * The user's access to the channel (one query for their groups, none for a guest): guests have
 * only what web-public and subscribing give, as none of these settings may be role:everyone.
 */
export async function channelAccess(db: Pick<Tx, "$queryRaw">, actor: Pick<Actor, "id" | "role">, stream: StreamModel, subscribed: boolean): Promise<ChannelAccess> {
  const guest = isGuest(actor);
  const groups = guest ? new Set<number>() : await userRecursiveGroupIds(db, actor.id);
  const inGroup = (id: number | null) => id !== null && groups.has(id);
  const administer = !guest && (isAdmin(actor) || inGroup(stream.can_administer_channel_group_id));
  const addSubscribers = !guest && inGroup(stream.can_add_subscribers_group_id);
  const subscribe = !guest && inGroup(stream.can_subscribe_group_id);
  const content = stream.is_web_public || subscribed || (!guest && (!stream.invite_only || addSubscribers || subscribe));
  const metadata = content || administer;
  const metadataViaGroups = addSubscribers || subscribe || (!guest && inGroup(stream.can_administer_channel_group_id));
  return { subscribed, metadata, content, administer, addSubscribers, subscribe, metadataViaGroups };
}

/**
 * A channel of the actor's realm whose content they may read (Zulip 10.0's access_stream_by_id with
 * require_content_access): subscribed, public to a non-guest, web-public, or through its groups;
 * a channel administrator with metadata access only is refused as anyone else, `Invalid stream id`.
 */
export async function accessStreamForContent(db: Reader, actor: Actor, streamId: number, options: ArchivedOption = {}): Promise<StreamModel> {
  const found = await findStreamWithSubscription(db, actor.realm_id, streamId, [actor.id], options);
  if (!found || !(await channelAccess(db, actor, found.stream, found.subscribed)).content) throw badRequest("Invalid stream id");
  return found.stream;
}

/**
 * Zulip's CannotAdministerChannelError, with the code clients saw for this refusal before channel
 * administrators existed ("Must be an organization administrator").
 */
export function cannotAdministerChannel(): JsonableError {
  return new JsonableError("You do not have permission to administer this channel.", { code: "UNAUTHORIZED_PRINCIPAL" });
}

/**
 * A channel of the actor's realm that they may administer (PATCH and DELETE /streams/{id}):
 * organization administrators and its can_administer_channel_group (feature level 325), for changes
 * that need only metadata access (Zulip's access_stream_for_delete_or_update_requiring_metadata_access).
 * Others who can read it are told they may not administer it; anyone else, that it does not exist.
 */
export async function accessStreamForAdministration(db: Reader, actor: Actor, streamId: number, options: ArchivedOption = {}): Promise<{ stream: StreamModel; access: ChannelAccess }> {
  const found = await findStreamWithSubscription(db, actor.realm_id, streamId, [actor.id], options);
  if (!found) throw badRequest("Invalid stream id");
  const access = await channelAccess(db, actor, found.stream, found.subscribed);
  if (access.administer) return { stream: found.stream, access };
  if (access.content) throw cannotAdministerChannel();
  throw badRequest("Invalid stream id");
}

/** Whether the user reads this stream through its groups (contentAccessViaGroupsSql), for one stream. */
export async function hasContentAccessViaGroups(db: Pick<Tx, "$queryRaw">, user: { id: number; role: number }, streamId: number): Promise<boolean> {
  if (isGuest(user)) return false;
  const [row] = await db.$queryRaw<{ ok: boolean }[]>`SELECT ${contentAccessViaGroupsSql(user)} AS ok FROM stream st WHERE st.id = ${streamId}`;
  return row?.ok === true;
}

/**
 * Zulip 10.0's check_stream_access_based_on_can_send_message_group (feature level 333): the
 * sender must be in the stream's can_send_message_group (role:nobody: nobody; administrators are
 * not exempt); a bot whose owner is may post too.
 */
export async function checkCanSendMessageGroup(db: Pick<Tx, "$queryRaw">, sender: Pick<Actor, "id" | "realm_id" | "role" | "is_bot" | "bot_owner_id">, stream: StreamModel): Promise<void> {
  const config = STREAM_PERMISSION_GROUP_SETTINGS.can_send_message_group;
  const groupId = stream.can_send_message_group_id;
  if (await hasGroupSettingPermission(db, sender, groupId, config)) return;
  if (sender.is_bot && sender.bot_owner_id !== null) {
    const [owner] = await db.$queryRaw<{ id: number; realm_id: number; role: number }[]>`
      SELECT id, realm_id, role FROM user_profile WHERE id = ${sender.bot_owner_id} AND realm_id = ${sender.realm_id} AND is_active`;
    if (owner && (await hasGroupSettingPermission(db, owner, groupId, config))) return;
  }
  throw badRequest("You do not have permission to post in this channel.");
}

/**
 * The realm's private streams the user sees through their groups (metadata: can_administer_channel_group,
 * can_add_subscribers_group, can_subscribe_group) and of those, the ones they read (content: the
 * last two); none for a guest (feature levels 349, 354).
 */
export async function privateStreamIdsViaGroups(db: Pick<Tx, "$queryRaw">, actor: Pick<Actor, "id" | "role" | "realm_id">): Promise<{ metadata: Set<number>; content: Set<number> }> {
  if (isGuest(actor)) return { metadata: new Set(), content: new Set() };
  const rows = await db.$queryRaw<{ id: number; content: boolean }[]>`
    SELECT st.id, ${contentAccessViaGroupsSql(actor)} AS content FROM stream st
    WHERE st.realm_id = ${actor.realm_id} AND st.invite_only AND ${metadataAccessViaGroupsSql(actor)}`;
  return { metadata: new Set(rows.map((row) => row.id)), content: new Set(rows.filter((row) => row.content).map((row) => row.id)) };
}
