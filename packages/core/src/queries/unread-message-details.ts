// What a client needs to file messages marked unread again in its unread counts: the
// `message_details` of an update_message_flags event removing `read` (Zulip's
// format_unread_message_details, feature level 121).
import type { Tx } from "@chat/db";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { RECIPIENT_HUDDLE, RECIPIENT_PERSONAL, RECIPIENT_STREAM } from "../lib/recipients.ts";
import { VisibilityPolicy } from "./user-topics.ts";

export type UnreadMessageDetail =
  | { type: "stream"; stream_id: number; topic: string; unmuted_stream_msg: boolean; mentioned?: true }
  | { type: "private"; user_ids: number[]; mentioned?: true };

interface DetailRow {
  id: number;
  flags: number;
  sender_id: number;
  recipient_type: number;
  type_id: number;
  topic: string;
  /** A stream message the user's muting does not hide (Zulip's is_row_muted, negated). */
  unmuted: boolean | null;
  /** A group conversation's members other than the user. */
  others: number[] | null;
}

/** Details of `messageIds` (messages the user has rows for), keyed by message id as JSON keys are. */
export async function unreadMessageDetails(tx: Tx, userId: number, messageIds: number[]): Promise<Record<string, UnreadMessageDetail>> {
  if (messageIds.length === 0) return {};
  // A topic the user unmuted or follows shows in a muted stream; one they muted hides anywhere.
  const rows = await tx.$queryRaw<DetailRow[]>`
    SELECT m.id, um.flags, m.sender_id, r.type AS recipient_type, r.type_id, m.subject AS topic,
      CASE WHEN r.type = ${RECIPIENT_STREAM} THEN (
        SELECT CASE WHEN COALESCE(sub.is_muted, false) THEN COALESCE(t.visibility_policy IN (${VisibilityPolicy.UNMUTED}, ${VisibilityPolicy.FOLLOWED}), false)
                    ELSE COALESCE(t.visibility_policy <> ${VisibilityPolicy.MUTED}, true) END
        FROM (SELECT 1) one
        LEFT JOIN subscription sub ON sub.user_id = ${userId} AND sub.recipient_id = m.recipient_id AND sub.active
        LEFT JOIN user_topic t ON t.user_id = ${userId} AND t.stream_id = r.type_id AND lower(t.topic_name) = lower(m.subject)
      ) END AS unmuted,
      CASE WHEN r.type = ${RECIPIENT_HUDDLE} THEN (
        SELECT array_agg(s.user_id ORDER BY s.user_id) FROM subscription s WHERE s.recipient_id = m.recipient_id AND s.user_id <> ${userId}
      ) END AS others
    FROM user_message um
    JOIN message m ON m.id = um.message_id
    JOIN recipient r ON r.id = m.recipient_id
    WHERE um.user_id = ${userId} AND um.message_id = ANY(${messageIds}::int[])`;
  const details: Record<string, UnreadMessageDetail> = {};
  for (const row of rows) {
    const mentioned = (row.flags & FLAG_BITS.mentioned) !== 0;
    const wildcard = (row.flags & FLAG_BITS.wildcard_mentioned) !== 0;
    let detail: UnreadMessageDetail;
    if (row.recipient_type === RECIPIENT_STREAM) {
      const unmuted = row.unmuted === true;
      detail = { type: "stream", stream_id: row.type_id, topic: row.topic, unmuted_stream_msg: unmuted };
      // A wildcard mention counts only where the user's muting lets the message show (as /register's).
      if (mentioned || (wildcard && unmuted)) detail.mentioned = true;
    } else {
      // The other party of a 1:1 conversation; none for a message to oneself.
      const other = row.recipient_type === RECIPIENT_PERSONAL ? (row.sender_id === userId ? row.type_id : row.sender_id) : null;
      const userIds = row.recipient_type === RECIPIENT_PERSONAL ? (other === userId ? [] : [other!]) : (row.others ?? []);
      detail = { type: "private", user_ids: userIds };
      if (mentioned || wildcard) detail.mentioned = true;
    }
    details[String(row.id)] = detail;
  }
  return details;
}
