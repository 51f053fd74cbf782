// A user's synchronised drafts (Zulip's Draft.to_dict): where each goes as the API shows it, and
// its last edit as whole seconds.
import { leanSql, Prisma } from "@chat/db";

export interface DraftDict {
  id: number;
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE; this server also keeps no more than this a user. */
export const MAX_DRAFTS = 1000;

type Db = Parameters<typeof leanSql>[0];

const COLUMNS = Prisma.sql`id, type, coalesce(to_ids, '{}') AS "to", topic, content, floor(extract(epoch FROM last_edit_time))::float8 AS timestamp`;

/**
 * GET /drafts: oldest edit first, as Zulip. /register (`newestFirst`): the newest MAX_DRAFTS,
 * newest first, ties by id, so that events applied to a state (state/apply-events.ts) order it
 * the same way.
 */
export async function getDrafts(db: Db, userId: number, options: { newestFirst?: boolean } = {}): Promise<DraftDict[]> {
  const order = options.newestFirst
    ? Prisma.sql`ORDER BY floor(extract(epoch FROM last_edit_time)) DESC, id DESC LIMIT ${MAX_DRAFTS}`
    : Prisma.sql`ORDER BY last_edit_time, id`;
  const rows = await leanSql(db).query<DraftDict>(Prisma.sql`SELECT ${COLUMNS} FROM draft WHERE user_id = ${userId} ${order}`);
  return rows.map(toDict);
}

export async function getDraft(db: Db, userId: number, draftId: number): Promise<DraftDict | null> {
  const rows = await leanSql(db).query<DraftDict>(Prisma.sql`SELECT ${COLUMNS} FROM draft WHERE user_id = ${userId} AND id = ${draftId}`);
  return rows[0] ? toDict(rows[0]) : null;
}

function toDict(row: DraftDict): DraftDict {
  return { id: row.id, type: row.type, to: row.to ?? [], topic: row.topic, content: row.content, timestamp: Number(row.timestamp) };
}
