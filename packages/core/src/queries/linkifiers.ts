import { leanSql, Prisma } from "@chat/db";
import type { Linkifier } from "../lib/linkifiers.ts";

/** The realm's linkifiers in their order (feature level 202), then oldest first. Lean SQL: every send and fetch reads them. */
export function realmLinkifiers(db: Parameters<typeof leanSql>[0], realmId: number): Promise<Linkifier[]> {
  return leanSql(db).query<Linkifier>(Prisma.sql`SELECT id, pattern, url_format_string, url_template FROM realm_filter WHERE realm_id = ${realmId} ORDER BY "order", id`, { prepare: true });
}
