// A user's scheduled messages not yet sent (Zulip's get_undelivered_scheduled_messages and
// ScheduledMessage.to_dict): failed ones included, so that a failure does not vanish.
import { leanSql, Prisma } from "@chat/db";

export type ScheduledMessageDict =
  | { scheduled_message_id: number; type: "stream"; to: number; topic: string; content: string; rendered_content: string; scheduled_delivery_timestamp: number; failed: boolean }
  | { scheduled_message_id: number; type: "private"; to: number[]; content: string; rendered_content: string; scheduled_delivery_timestamp: number; failed: boolean };

export interface ScheduledMessageRow {
  id: number;
  realm_id: number;
  sender_id: number;
  stream_id: number | null;
  to_user_ids: number[] | null;
  subject: string;
  content: string;
  rendered_content: string;
  sending_client: string;
  /** Unix seconds (the API's unit; rows are written in whole seconds). */
  at: number;
  read_by_sender: boolean;
  delivered: boolean;
  failed: boolean;
  failure_message: string | null;
}

type Db = Parameters<typeof leanSql>[0];

export const SCHEDULED_MESSAGE_COLUMNS = Prisma.sql`id, realm_id, sender_id, stream_id, to_user_ids, subject, content, rendered_content, sending_client,
  extract(epoch FROM scheduled_timestamp)::float8 AS at, read_by_sender, delivered, failed, failure_message`;

/** Soonest first (ties by id), as /register and GET /scheduled_messages list them. */
export async function getScheduledMessages(db: Db, userId: number): Promise<ScheduledMessageDict[]> {
  const rows = await leanSql(db).query<ScheduledMessageRow>(Prisma.sql`
    SELECT ${SCHEDULED_MESSAGE_COLUMNS} FROM scheduled_message WHERE sender_id = ${userId} AND NOT delivered ORDER BY scheduled_timestamp, id`);
  return rows.map(scheduledMessageDict);
}

export function scheduledMessageDict(row: ScheduledMessageRow): ScheduledMessageDict {
  const common = { scheduled_message_id: row.id, content: row.content, rendered_content: row.rendered_content, scheduled_delivery_timestamp: Math.floor(Number(row.at)), failed: row.failed };
  if (row.stream_id !== null) return { ...common, type: "stream", to: row.stream_id, topic: row.subject };
  return { ...common, type: "private", to: row.to_user_ids ?? [] };
}

/**
 * Messages still to send whose time passed at least `graceSeconds` ago, soonest first: the
 * worker's sweep sends them when their job was lost (Redis lost its data, or the queue did not
 * answer when they were scheduled). Their jobs normally send them first.
 */
export async function overdueScheduledMessages(db: Db, graceSeconds: number, limit: number): Promise<Array<{ id: number; realm_id: number }>> {
  return leanSql(db).query<{ id: number; realm_id: number }>(Prisma.sql`
    SELECT id, realm_id FROM scheduled_message
    WHERE NOT delivered AND NOT failed AND scheduled_timestamp <= now() - make_interval(secs => ${graceSeconds}::float8)
    ORDER BY scheduled_timestamp, id LIMIT ${limit}`);
}

/**
 * Messages still to send, soonest first, with their times in whole seconds: a worker starting
 * queues their jobs again (the embedded mode's in-process queue lost them with the process; on
 * Redis the job ids make this a no-op).
 */
export async function pendingScheduledMessages(db: Db, limit: number): Promise<Array<{ id: number; realm_id: number; at: number }>> {
  const rows = await leanSql(db).query<{ id: number; realm_id: number; at: number }>(Prisma.sql`
    SELECT id, realm_id, floor(extract(epoch FROM scheduled_timestamp))::float8 AS at FROM scheduled_message
    WHERE NOT delivered AND NOT failed ORDER BY scheduled_timestamp, id LIMIT ${limit}`);
  return rows.map((row) => ({ id: row.id, realm_id: row.realm_id, at: Number(row.at) }));
}
