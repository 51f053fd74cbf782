// The hot paths' way to the database: statements built with Prisma.sql, run on the driver that
// Prisma's adapter itself uses (the same pg pool, or the same PGlite instance).
//
// Why: measured here, Prisma's $queryRaw spends about 0.45 ms of CPU per statement on top of the
// driver (a `SELECT 1`: 0.67 ms against 0.19 ms with pg), and every request authenticates, every
// fetch reads a page and every send writes one. Everything else keeps using Prisma.
//
// Results come back with the driver's types, not Prisma's: statements run here must not return
// int8 or numeric columns (pg gives strings, Prisma bigint/Decimal). Cast them (::int, ::float8).
import { createHash } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import type { Pool } from "pg";
import type { Prisma } from "./generated/client.ts";

export interface QueryOptions {
  /**
   * Prepare the statement once per connection and reuse its plan: planning is most of a small
   * query's cost. Only for statements whose text comes from a small fixed set (values vary, the
   * SQL does not), since each prepared text stays on every connection.
   */
  prepare?: boolean;
}

export interface LeanSql {
  query<Row>(statement: Prisma.Sql, options?: QueryOptions): Promise<Row[]>;
}

/** Past this many distinct prepared texts, statements run unprepared (a guard, not an expectation). */
const MAX_PREPARED_TEXTS = 500;

type RawQueryable = { $queryRaw<T>(query: Prisma.Sql): Prisma.PrismaPromise<T> };

const registered = new WeakMap<object, LeanSql>();

export function poolLeanSql(pool: Pool): LeanSql {
  const names = new Map<string, string>();
  const nameFor = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_TEXTS) {
      name = `lean_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    async query<Row>(statement: Prisma.Sql, options: QueryOptions = {}) {
      const name = options.prepare ? nameFor(statement.text) : undefined;
      const result = await pool.query({ text: statement.text, values: statement.values, ...(name ? { name } : {}) });
      return result.rows as Row[];
    },
  };
}

export function pgliteLeanSql(pglite: PGlite): LeanSql {
  return {
    async query<Row>(statement: Prisma.Sql) {
      // PGlite runs one statement at a time and waits for any open transaction to finish.
      const result = await pglite.query<Row>(statement.text, statement.values);
      return result.rows;
    },
  };
}

/** Makes `leanSql(prisma)` use the driver under this client. */
export function registerLeanSql(prisma: object, sql: LeanSql): void {
  registered.set(prisma, sql);
}

/**
 * The driver under a Prisma client opened by openDatabase. Inside an interactive transaction (or
 * for any other client) statements go through $queryRaw, so they join the transaction.
 */
export function leanSql(db: RawQueryable): LeanSql {
  return registered.get(db) ?? { query: <Row>(statement: Prisma.Sql) => db.$queryRaw<Row[]>(statement) };
}
