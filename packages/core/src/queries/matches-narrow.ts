// GET /messages/matches_narrow (Zulip's messages_in_narrow_backend): which of a few messages the
// user received match a narrow, with the search highlighting GET /messages gives them. The
// narrow is compiled as GET /messages compiles it (message-fetch.ts); only the user's own rows
// (user_message) are read, as in Zulip, so a message the user did not receive never matches.
import { leanSql, Prisma, type PrismaClient } from "@chat/db";
import type { Actor } from "../models.ts";
import type { NarrowTerm } from "../lib/narrow.ts";
import { fitsPostgresInteger } from "../lib/validation.ts";
import { compileNarrow, highlightColumns, resolveWithOperator } from "./message-fetch.ts";

/** How many ids one request may ask about (the web app asks about a few new messages at a time). */
export const MAX_MATCHES_NARROW_IDS = 5000;

export interface NarrowMatch {
  match_content: string;
  match_subject: string;
}

/** The matching messages by id: their rendered content and topic, highlighted for a search. */
export async function messagesMatchingNarrow(prisma: PrismaClient, actor: Actor, messageIds: number[], narrow: NarrowTerm[]): Promise<Record<string, NarrowMatch>> {
  const ids = [...new Set(messageIds.filter((id) => id > 0 && fitsPostgresInteger(String(id))))];
  const resolved = await resolveWithOperator(prisma, actor, narrow);
  const compiled = await compileNarrow(prisma, actor, resolved);
  if (ids.length === 0) return {};
  const where = Prisma.join([Prisma.sql`um.user_id = ${actor.id}`, Prisma.sql`um.message_id = ANY(${ids}::int[])`, ...compiled.conditions], " AND ");
  const rows = await leanSql(prisma).query<{ id: number; content: string; subject: string; match_content?: string; match_subject?: string }>(Prisma.sql`
    SELECT m.id, coalesce(m.rendered_content, '') AS content,
           replace(replace(replace(m.subject, '&', '&amp;'), '<', '&lt;'), '>', '&gt;') AS subject
           ${highlightColumns(compiled.search)}
    FROM user_message um JOIN message m ON m.id = um.message_id
    WHERE ${where} ORDER BY m.id`);
  const matches: Record<string, NarrowMatch> = {};
  for (const row of rows) matches[String(row.id)] = { match_content: row.match_content ?? row.content, match_subject: row.match_subject ?? row.subject };
  return matches;
}
