// Topic visibility policies (Zulip's zerver/actions/user_topics.py and views/user_topics.py): a user
// mutes a topic, unmutes it in a muted stream, follows it, or goes back to the stream's default.
// Each change sends the legacy `muted_topics` list and a `user_topic` event, as Zulip sends both; a
// request that changes nothing sends neither.
import type { StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError, StreamDoesNotExistError } from "../errors.ts";
import { isGuest } from "../lib/roles.ts";
import type { Actor } from "../models.ts";
import { findStreamWithSubscription } from "../queries/streams.ts";
import { mutedTopicsOf, mutedTopicsOfUsers, unixSeconds, VisibilityPolicy, type VisibilityPolicyValue } from "../queries/user-topics.ts";

/** Zulip's MAX_TOPIC_NAME_LENGTH, which POST /user_topics caps its topic at. */
export const MAX_USER_TOPIC_LENGTH = 60;

/** A stream as the request names it. */
export type StreamRef = { id: number } | { name: string };

const INVALID_CHANNEL_ID = "Invalid channel ID";

/**
 * A stream whose topics the actor may give a policy (Zulip's access_stream_by_id / _by_name): active,
 * and subscribed or public to a non-guest. Administrators get no exception for private streams here:
 * a policy is about reading the topic.
 */
async function accessStreamForPolicy(tx: Tx, actor: Actor, ref: StreamRef, invalid: () => JsonableError): Promise<StreamModel> {
  const found = await findStreamWithSubscription(tx, actor.realm_id, "id" in ref ? ref.id : ref.name, [actor.id]);
  if (!found) throw invalid();
  const { stream, subscribed } = found;
  if (!subscribed && (stream.invite_only || isGuest(actor))) throw invalid();
  return stream;
}

/**
 * The stream a policy is removed from (Zulip's access_stream_to_remove_visibility_policy_*): any
 * stream of the realm, even one the user can no longer read or that was deactivated, so that a
 * policy set while it could be read can always be dropped.
 */
async function streamToDropPolicy(tx: Tx, actor: Actor, ref: StreamRef): Promise<StreamModel | null> {
  const rows =
    "id" in ref
      ? await tx.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE id = ${ref.id} AND realm_id = ${actor.realm_id}`
      : await tx.$queryRaw<StreamModel[]>`SELECT * FROM stream WHERE lower(name) = lower(${ref.name.trim()}) AND realm_id = ${actor.realm_id} ORDER BY deactivated, id LIMIT 1`;
  return rows[0] ?? null;
}

interface UserTopicRow {
  id: number;
  topic_name: string;
  visibility_policy: number;
}

/**
 * Sets the user's policy for the topic (Zulip's do_set_user_topic_visibility_policy): INHERIT
 * deletes the row. Topics match without case; an existing row keeps its spelling, which the event
 * carries so that it names the row clients hold. Returns the policy the topic had. Message moves
 * use it too, so that a moved policy sends what POST /user_topics sends.
 */
export async function setTopicPolicyFor(
  tx: Tx,
  events: EventRecorder,
  userId: number,
  stream: Pick<StreamModel, "id" | "recipient_id">,
  topic: string,
  policy: VisibilityPolicyValue,
): Promise<number> {
  // One change at a time per user: the (user, stream, lower(topic)) key is read, then written.
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${userId} FOR UPDATE`;
  const [row] = await tx.$queryRaw<UserTopicRow[]>`
    SELECT id, topic_name, visibility_policy FROM user_topic
    WHERE user_id = ${userId} AND stream_id = ${stream.id} AND lower(topic_name) = lower(${topic})`;
  const before = row?.visibility_policy ?? VisibilityPolicy.INHERIT;
  if (before === policy) return before;

  const now = new Date();
  if (policy === VisibilityPolicy.INHERIT) {
    await tx.$executeRaw`DELETE FROM user_topic WHERE id = ${row!.id}`;
  } else if (row) {
    await tx.$executeRaw`UPDATE user_topic SET visibility_policy = ${policy}, last_updated = ${now} WHERE id = ${row.id}`;
  } else {
    await tx.$executeRaw`
      INSERT INTO user_topic (user_id, stream_id, recipient_id, topic_name, last_updated, visibility_policy)
      VALUES (${userId}, ${stream.id}, ${stream.recipient_id!}, ${topic}, ${now}, ${policy})`;
  }
  events.send({ type: "muted_topics", muted_topics: await mutedTopicsOf(tx, userId) }, [userId]);
  events.send(
    { type: "user_topic", stream_id: stream.id, topic_name: row?.topic_name ?? topic, last_updated: unixSeconds(now), visibility_policy: policy },
    [userId],
  );
  return before;
}

/**
 * Sets one topic's policy for several users at once (Zulip's bulk_do_set_user_topic_visibility_policy),
 * for each user whose current policy `applies` accepts; each user it changes gets the two events
 * setTopicPolicyFor sends. The users are locked in id order. Returns the users changed.
 */
export async function setTopicPolicyForUsers(
  tx: Tx,
  events: EventRecorder,
  userIds: number[],
  stream: Pick<StreamModel, "id" | "recipient_id">,
  topic: string,
  policy: VisibilityPolicyValue,
  applies: (before: number) => boolean = () => true,
): Promise<number[]> {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  if (ids.length === 0) return [];
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ANY(${ids}::int[]) ORDER BY id FOR UPDATE`;
  const rows = await tx.$queryRaw<Array<UserTopicRow & { user_id: number }>>`
    SELECT id, user_id, topic_name, visibility_policy FROM user_topic
    WHERE user_id = ANY(${ids}::int[]) AND stream_id = ${stream.id} AND lower(topic_name) = lower(${topic})`;
  const rowOf = new Map(rows.map((row) => [row.user_id, row]));
  const changed = ids.filter((id) => {
    const before = rowOf.get(id)?.visibility_policy ?? VisibilityPolicy.INHERIT;
    return before !== policy && applies(before);
  });
  if (changed.length === 0) return [];

  const now = new Date();
  const existing = changed.filter((id) => rowOf.has(id)).map((id) => rowOf.get(id)!.id);
  const fresh = changed.filter((id) => !rowOf.has(id));
  if (policy === VisibilityPolicy.INHERIT) {
    await tx.$executeRaw`DELETE FROM user_topic WHERE id = ANY(${existing}::int[])`;
  } else {
    if (existing.length > 0) {
      await tx.$executeRaw`UPDATE user_topic SET visibility_policy = ${policy}, last_updated = ${now} WHERE id = ANY(${existing}::int[])`;
    }
    if (fresh.length > 0) {
      await tx.$executeRaw`
        INSERT INTO user_topic (user_id, stream_id, recipient_id, topic_name, last_updated, visibility_policy)
        SELECT user_id, ${stream.id}, ${stream.recipient_id!}, ${topic}, ${now}, ${policy} FROM unnest(${fresh}::int[]) AS user_id`;
    }
  }
  const mutedTopics = await mutedTopicsOfUsers(tx, changed);
  for (const userId of changed) {
    events.send({ type: "muted_topics", muted_topics: mutedTopics.get(userId) ?? [] }, [userId]);
    events.send(
      { type: "user_topic", stream_id: stream.id, topic_name: rowOf.get(userId)?.topic_name ?? topic, last_updated: unixSeconds(now), visibility_policy: policy },
      [userId],
    );
  }
  return changed;
}

/**
 * POST /user_topics (Zulip's update_user_topic). Setting a policy needs access to the stream;
 * removing one does not. Setting the policy the topic has is a success that changes nothing.
 */
export async function setUserTopicPolicy(tx: Tx, events: EventRecorder, actor: Actor, streamId: number, topic: string, policy: VisibilityPolicyValue): Promise<void> {
  let stream: StreamModel;
  if (policy === VisibilityPolicy.INHERIT) {
    const found = await streamToDropPolicy(tx, actor, { id: streamId });
    if (!found) throw badRequest(INVALID_CHANNEL_ID);
    stream = found;
  } else {
    stream = await accessStreamForPolicy(tx, actor, { id: streamId }, () => badRequest(INVALID_CHANNEL_ID));
  }
  await setTopicPolicyFor(tx, events, actor.id, stream, topic, policy);
}

/**
 * PATCH /users/me/subscriptions/muted_topics, the legacy form (Zulip's update_muted_topic) on the
 * same rows: `add` mutes, `remove` drops whatever policy the topic has. Zulip 3.x's errors for a
 * topic already muted and for one with no policy stay, as clients of that era expect them.
 */
export async function setTopicMuted(tx: Tx, events: EventRecorder, actor: Actor, ref: StreamRef, topic: string, op: "add" | "remove"): Promise<void> {
  if (op === "add") {
    const invalid = () => ("id" in ref ? badRequest("Invalid stream id") : new StreamDoesNotExistError(ref.name));
    const stream = await accessStreamForPolicy(tx, actor, ref, invalid);
    const before = await setTopicPolicyFor(tx, events, actor.id, stream, topic, VisibilityPolicy.MUTED);
    if (before === VisibilityPolicy.MUTED) throw badRequest("Topic already muted");
  } else {
    const stream = await streamToDropPolicy(tx, actor, ref);
    if (!stream) throw badRequest("Topic is not muted");
    const before = await setTopicPolicyFor(tx, events, actor.id, stream, topic, VisibilityPolicy.INHERIT);
    if (before === VisibilityPolicy.INHERIT) throw badRequest("Topic is not muted");
  }
}
