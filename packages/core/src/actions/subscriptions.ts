import type { StreamModel, Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { formatStreams, formatSubscription, streamGroupValues, inheritedNotificationSettings, pickStreamColor } from "../lib/stream-format.ts";
import { ROLE_GUEST } from "../lib/roles.ts";
import { archiveStream } from "./streams.ts";
import { sendGuestAccessChanges, snapshotGuestAccess } from "./user-access-events.ts";
import type { Realm } from "../models.ts";

export const INHERITED_NOTIFICATION_SETTINGS_KEY = "__inherited_notification_settings";

/** Who can see a stream, and so receives its stream and peer events: for a public stream every
 * active non-guest user plus its subscribers, for a private stream its subscribers. */
/** Guests see a web-public stream too (Zulip sends its creation to every active user). */
/**
 * A private stream's are also the non-guests its can_administer_channel_group,
 * can_add_subscribers_group and can_subscribe_group hold (Zulip 10.0's metadata access through
 * groups, feature level 349), as the given row has them.
 */
export async function usersWhoCanSeeStream(tx: Tx, stream: StreamModel): Promise<number[]> {
  const groupIds = [stream.can_administer_channel_group_id, stream.can_add_subscribers_group_id, stream.can_subscribe_group_id].filter((id): id is number => id !== null);
  const rows = stream.invite_only
    ? await tx.$queryRaw<{ user_id: number }[]>`
        SELECT user_id FROM subscription WHERE recipient_id = ${stream.recipient_id} AND active AND is_user_active
        UNION
        (WITH RECURSIVE g(id) AS (
           SELECT id FROM user_group WHERE id = ANY(${groupIds}::int[]) AND realm_id = ${stream.realm_id}
           UNION SELECT m.subgroup_id FROM group_group_membership m JOIN g ON m.supergroup_id = g.id)
         SELECT um.user_id FROM user_group_membership um JOIN g ON um.user_group_id = g.id
           JOIN user_profile u ON u.id = um.user_id AND u.is_active AND u.role <> ${ROLE_GUEST})`
    : await tx.$queryRaw<{ user_id: number }[]>`
        SELECT id AS user_id FROM user_profile WHERE realm_id = ${stream.realm_id} AND is_active AND (role <> ${ROLE_GUEST} OR ${stream.is_web_public})
        UNION
        SELECT user_id FROM subscription WHERE recipient_id = ${stream.recipient_id} AND active AND is_user_active`;
  return rows.map((row) => row.user_id);
}

export async function subscriberIds(tx: Tx, stream: StreamModel): Promise<number[]> {
  const rows = await tx.$queryRaw<{ user_id: number }[]>`
    SELECT user_id FROM subscription WHERE recipient_id = ${stream.recipient_id} AND active AND is_user_active ORDER BY user_id`;
  return rows.map((row) => row.user_id);
}

/**
 * Subscribes users to streams (Zulip's bulk_add_subscriptions). Returns the pairs that were newly
 * subscribed; existing active subscriptions are left alone. Records `subscription add` for each
 * user, one `peer_add` per stream for those who can see it, and `stream occupy` for a public stream that
 * had no subscribers (a stream created in the same action was announced by `stream create`).
 */
export async function bulkAddSubscriptions(
  tx: Tx,
  events: EventRecorder,
  ctx: ServerContext,
  streams: StreamModel[],
  userIds: number[],
  options: { createdStreamIds?: ReadonlySet<number>; colors?: ReadonlyMap<number, string>; realm?: Realm } = {},
): Promise<Array<{ streamId: number; userId: number }>> {
  const added: Array<{ streamId: number; userId: number }> = [];
  // Restricted guests who come to know of users (nothing read while guests see everyone).
  const accessBefore = streams.length > 0 ? await snapshotGuestAccess(tx, options.realm ?? { id: streams[0]!.realm_id }, streams, userIds) : null;
  for (const stream of streams) {
    const recipientId = stream.recipient_id!;
    const before = await subscriberIds(tx, stream);
    const existing = new Set(before);
    const newUsers = userIds.filter((id) => !existing.has(id));
    if (newUsers.length === 0) continue;
    // Zulip's send_stream_creation_events_for_previously_inaccessible_streams: who could not see the
    // stream (a private one; a public one, for guests: feature level 192) learns of it first.
    const viewersBefore = new Set(await usersWhoCanSeeStream(tx, stream));
    const newViewers = newUsers.filter((id) => !viewersBefore.has(id));
    if (newViewers.length > 0) events.send({ type: "stream", op: "create", streams: await formatStreams(tx, [stream]) }, newViewers);

    for (const userId of newUsers) {
      const used = await tx.subscription.findMany({ where: { user_id: userId, active: true }, select: { color: true } });
      await tx.subscription.upsert({
        where: { user_id_recipient_id: { user_id: userId, recipient_id: recipientId } },
        create: { user_id: userId, recipient_id: recipientId, color: options.colors?.get(stream.id) ?? pickStreamColor(used.map((s) => s.color)) },
        update: { active: true },
      });
      added.push({ streamId: stream.id, userId });
    }

    const subscribers = [...before, ...newUsers].sort((a, b) => a - b);
    const subscriptions = await tx.subscription.findMany({ where: { recipient_id: recipientId, user_id: { in: newUsers } }, include: { user: true } });
    const groupValues = await streamGroupValues(tx, [stream]);
    for (const { user, ...subscription } of subscriptions) {
      events.send(
        {
          type: "subscription",
          op: "add",
          subscriptions: [formatSubscription(subscription, stream, { emailDomain: ctx.externalHost, subscribers, groupValues })],
          // Stripped by the event tier; it resolves nulls for clients without notification_settings_null.
          [INHERITED_NOTIFICATION_SETTINGS_KEY]: inheritedNotificationSettings(user),
        },
        [subscription.user_id],
      );
    }

    const viewers = await usersWhoCanSeeStream(tx, stream);
    // An archived stream is listed whether or not anyone is subscribed: it neither vacates nor occupies.
    if (before.length === 0 && !stream.invite_only && !stream.deactivated && !options.createdStreamIds?.has(stream.id)) {
      events.send({ type: "stream", op: "occupy", streams: await formatStreams(tx, [stream]) }, viewers.filter((id) => !newViewers.includes(id)));
    }
    const newSet = new Set(newUsers);
    // The new subscribers learn the full list from their own add event. One event for the stream
    // (feature level 35's lists; the event tier makes one per user for 3.x clients).
    const peers = { stream_ids: [stream.id], user_ids: [...newUsers].sort((a, b) => a - b) };
    events.send({ type: "subscription", op: "peer_add", ...peers }, viewers.filter((id) => !newSet.has(id)));
  }
  if (added.length > 0) await sendGuestAccessChanges(tx, events, options.realm ?? { id: streams[0]!.realm_id }, accessBefore);
  return added;
}

/**
 * Unsubscribes users (Zulip's bulk_remove_subscriptions). Records `subscription remove` for each
 * user and `peer_remove` for the others who can see the stream. When the last subscriber leaves, a
 * public stream "vacates" (`stream vacate`; it leaves the occupied streams clients list) and a
 * private one, which nobody could reach again, is deactivated. Returns the pairs that were
 * subscribed and are not any more.
 */
export async function bulkRemoveSubscriptions(
  tx: Tx,
  events: EventRecorder,
  streams: StreamModel[],
  userIds: number[],
  realm?: Realm,
): Promise<{ removed: Array<{ streamId: number; userId: number }>; notRemoved: Array<{ streamId: number; userId: number }> }> {
  const removed: Array<{ streamId: number; userId: number }> = [];
  // Restricted guests who stop knowing of users (nothing read while guests see everyone).
  const accessBefore = streams.length > 0 ? await snapshotGuestAccess(tx, realm ?? { id: streams[0]!.realm_id }, streams, userIds) : null;
  const notRemoved: Array<{ streamId: number; userId: number }> = [];
  for (const stream of streams) {
    const before = await subscriberIds(tx, stream);
    const current = new Set(before);
    const leaving = userIds.filter((id) => current.has(id));
    for (const id of userIds) if (!current.has(id)) notRemoved.push({ streamId: stream.id, userId: id });
    if (leaving.length === 0) continue;
    const viewersBefore = await usersWhoCanSeeStream(tx, stream);
    await tx.subscription.updateMany({ where: { recipient_id: stream.recipient_id!, user_id: { in: leaving } }, data: { active: false } });
    for (const userId of leaving) {
      removed.push({ streamId: stream.id, userId });
      events.send({ type: "subscription", op: "remove", subscriptions: [{ stream_id: stream.id, name: stream.name }] }, [userId]);
    }
    const viewersAfter = new Set(await usersWhoCanSeeStream(tx, stream));
    const leavingSet = new Set(leaving);
    const peers = { stream_ids: [stream.id], user_ids: [...leaving].sort((a, b) => a - b) };
    events.send({ type: "subscription", op: "peer_remove", ...peers }, [...viewersAfter].filter((id) => !leavingSet.has(id)));
    if (before.length === leaving.length) {
      if (stream.invite_only && !stream.deactivated) await archiveStream(tx, events, stream, viewersBefore);
      else if (!stream.deactivated) events.send({ type: "stream", op: "vacate", streams: await formatStreams(tx, [stream]) }, viewersBefore);
    }
  }
  if (removed.length > 0) await sendGuestAccessChanges(tx, events, realm ?? { id: streams[0]!.realm_id }, accessBefore);
  return { removed, notRemoved };
}
