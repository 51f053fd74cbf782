// A user's topic visibility policies (Zulip's UserTopic, zerver/lib/user_topics.py): what /register's
// `user_topics` and legacy `muted_topics` carry, and what unread counts and `is:followed` read.
import type { Tx } from "@chat/db";

/** Zulip's UserTopic.VisibilityPolicy. INHERIT (follow the stream) is stored as no row. */
export const VisibilityPolicy = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;
export type VisibilityPolicyValue = (typeof VisibilityPolicy)[keyof typeof VisibilityPolicy];
export const VISIBILITY_POLICIES: readonly VisibilityPolicyValue[] = Object.values(VisibilityPolicy);

/** An item of /register's `user_topics` and the fields of a `user_topic` event. */
export interface UserTopicItem {
  stream_id: number;
  topic_name: string;
  last_updated: number;
  visibility_policy: number;
}

type Reader = Pick<Tx, "$queryRaw">;

/** Zulip's datetime_to_timestamp: whole seconds. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** The user's policies for topics of active streams (Zulip's get_user_topics), oldest row first. */
export async function userTopicsOf(db: Reader, userId: number): Promise<UserTopicItem[]> {
  const rows = await db.$queryRaw<Array<{ stream_id: number; topic_name: string; last_updated: Date; visibility_policy: number }>>`
    SELECT t.stream_id, t.topic_name, t.last_updated, t.visibility_policy FROM user_topic t JOIN stream s ON s.id = t.stream_id
    WHERE t.user_id = ${userId} AND NOT s.deactivated ORDER BY t.id`;
  return rows.map((row) => ({ stream_id: row.stream_id, topic_name: row.topic_name, last_updated: unixSeconds(row.last_updated), visibility_policy: row.visibility_policy }));
}

/** The user's muted topics as the legacy `muted_topics` carries them: [stream name, topic, when muted] (Zulip's get_topic_mutes). */
export async function mutedTopicsOf(db: Reader, userId: number): Promise<Array<[string, string, number]>> {
  const rows = await db.$queryRaw<{ stream_name: string; topic_name: string; last_updated: Date }[]>`
    SELECT s.name AS stream_name, t.topic_name, t.last_updated FROM user_topic t JOIN stream s ON s.id = t.stream_id
    WHERE t.user_id = ${userId} AND t.visibility_policy = ${VisibilityPolicy.MUTED} AND NOT s.deactivated ORDER BY t.id`;
  return rows.map((row) => [row.stream_name, row.topic_name, unixSeconds(row.last_updated)]);
}

/** Several users' `muted_topics` at once, by user (each as mutedTopicsOf gives it). */
export async function mutedTopicsOfUsers(db: Reader, userIds: number[]): Promise<Map<number, Array<[string, string, number]>>> {
  const byUser = new Map<number, Array<[string, string, number]>>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return byUser;
  const rows = await db.$queryRaw<{ user_id: number; stream_name: string; topic_name: string; last_updated: Date }[]>`
    SELECT t.user_id, s.name AS stream_name, t.topic_name, t.last_updated FROM user_topic t JOIN stream s ON s.id = t.stream_id
    WHERE t.user_id = ANY(${userIds}::int[]) AND t.visibility_policy = ${VisibilityPolicy.MUTED} AND NOT s.deactivated ORDER BY t.id`;
  for (const row of rows) byUser.get(row.user_id)?.push([row.stream_name, row.topic_name, unixSeconds(row.last_updated)]);
  return byUser;
}

/** The users with a muted topic in the stream: their `muted_topics` name it. */
export async function usersMutingTopicsIn(db: Reader, streamId: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ user_id: number }[]>`
    SELECT DISTINCT user_id FROM user_topic WHERE stream_id = ${streamId} AND visibility_policy = ${VisibilityPolicy.MUTED} ORDER BY user_id`;
  return rows.map((row) => row.user_id);
}

/** Each user's policy for a topic (Zulip's get_users_with_user_topic_visibility_policy), topics matched without case. */
export async function policiesForTopic(db: Reader, streamId: number, topic: string): Promise<Map<number, number>> {
  const rows = await db.$queryRaw<{ user_id: number; visibility_policy: number }[]>`
    SELECT user_id, visibility_policy FROM user_topic WHERE stream_id = ${streamId} AND lower(topic_name) = lower(${topic}) ORDER BY user_id`;
  return new Map(rows.map((row) => [row.user_id, row.visibility_policy]));
}
