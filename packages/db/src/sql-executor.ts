// The migration runner and test helpers need a connection that runs multi-statement SQL files,
// which Prisma's raw queries (prepared, one statement) cannot. This is that connection.
import { PGlite } from "@electric-sql/pglite";
import { Client } from "pg";

export interface SqlExecutor {
  /** Runs one or more statements, no parameters (the simple query protocol). */
  exec(sql: string): Promise<void>;
  query<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

export async function connectPostgresExecutor(url: string): Promise<SqlExecutor> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return {
    async exec(sql) {
      await client.query(sql);
    },
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await client.query(sql, params);
      return result.rows as Row[];
    },
    close: () => client.end(),
  };
}

/** Wraps an open PGlite instance; closing the executor leaves the instance open for Prisma. */
export function pgliteExecutor(db: PGlite): SqlExecutor {
  return {
    async exec(sql) {
      await db.exec(sql);
    },
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await db.query<Row>(sql, params);
      return result.rows;
    },
    close: async () => {},
  };
}
