import type { Tx } from "@chat/db";
import type { Linkifier } from "../lib/linkifiers.ts";

/** The realm's linkifiers, oldest first. Raw SQL: every send and fetch reads them. */
export function realmLinkifiers(db: Pick<Tx, "$queryRaw">, realmId: number): Promise<Linkifier[]> {
  return db.$queryRaw<Linkifier[]>`SELECT id, pattern, url_format_string FROM realm_filter WHERE realm_id = ${realmId} ORDER BY id`;
}
