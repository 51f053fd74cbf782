import { leanSql, Prisma } from "@chat/db";
import type { Linkifier } from "../lib/linkifiers.ts";

/** The realm's linkifiers, oldest first. Lean SQL: every send and fetch reads them. */
export function realmLinkifiers(db: Parameters<typeof leanSql>[0], realmId: number): Promise<Linkifier[]> {
  return leanSql(db).query<Linkifier>(Prisma.sql`SELECT id, pattern, url_format_string FROM realm_filter WHERE realm_id = ${realmId} ORDER BY id`, { prepare: true });
}
