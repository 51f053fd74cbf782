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
import pg, { type Pool, type PoolClient, type QueryResult } from "pg";
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
  /**
   * Several statements in one round trip, each one's rows in order; only where the driver is
   * across a network (pg). Every statement must be `inlinable`.
   */
  queryMany?(statements: Prisma.Sql[]): Promise<unknown[][]>;
}

/**
 * Whether a statement's values can be written into its text as literals (queryMany): numbers,
 * booleans, strings, null, and arrays of numbers, the values /register's reads pass.
 */
export function inlinable(statement: Prisma.Sql): boolean {
  return statement.values.every((value) => literal(value) !== undefined);
}

/**
 * A value as a quoted literal of type unknown, as Postgres types an untyped parameter from its
 * context: the text pg would send for it as a parameter, quoted by pg's escapeLiteral.
 */
function literal(value: unknown): string | undefined {
  if (value === null) return "NULL";
  if (typeof value === "number") return Number.isFinite(value) ? escapeLiteral(String(value)) : undefined;
  if (typeof value === "boolean" || typeof value === "string") return escapeLiteral(String(value));
  if (Array.isArray(value) && value.every((item) => typeof item === "number" && Number.isFinite(item))) return escapeLiteral(`{${value.join(",")}}`);
  return undefined;
}

function literalOf(value: unknown): string {
  const written = literal(value);
  if (written === undefined) throw new Error("a value that cannot be written as a literal");
  return written;
}

function inlined(statement: Prisma.Sql): string {
  let text = statement.strings[0];
  statement.values.forEach((value, i) => (text += literalOf(value) + statement.strings[i + 1]));
  return text;
}

const { escapeLiteral } = pg;

/** Past this many distinct prepared texts, statements run unprepared (a guard, not an expectation). */
const MAX_PREPARED_TEXTS = 500;

type RawQueryable = { $queryRaw<T>(query: Prisma.Sql): Prisma.PrismaPromise<T> };

const registered = new WeakMap<object, LeanSql>();

/** Names for statement texts, as prepared statements (a bounded number of them: MAX_PREPARED_TEXTS). */
function statementNames(): (text: string, prefix: string) => string | undefined {
  const names = new Map<string, string>();
  return (text, prefix) => {
    const key = `${prefix}:${text}`;
    let name = names.get(key);
    if (name === undefined && names.size < MAX_PREPARED_TEXTS) {
      name = `${prefix}_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
      names.set(key, name);
    }
    return name;
  };
}

/**
 * Several statements as one text for the simple query protocol, which takes them in one message
 * and answers them in one go. Its parameters are the extended protocol's, so each statement is
 * prepared with SQL's PREPARE, once per session (`prepared` says which are), and run with EXECUTE
 * and its values as literals. `answers` are the indexes of the statements' own results among the
 * text's; `preparing`, what it prepares.
 */
function manyStatements(statements: Prisma.Sql[], prepared: ReadonlySet<string>, nameFor: (text: string, prefix: string) => string | undefined) {
  const parts: string[] = [];
  const answers: number[] = [];
  const preparing = new Set<string>();
  for (const statement of statements) {
    const name = nameFor(statement.text, "many");
    if (name === undefined) {
      parts.push(inlined(statement));
    } else {
      if (!prepared.has(name) && !preparing.has(name)) {
        parts.push(`PREPARE ${name} AS ${statement.text}`);
        preparing.add(name);
      }
      parts.push(statement.values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${statement.values.map(literalOf).join(", ")})`);
    }
    answers.push(parts.length - 1);
  }
  return { text: parts.join(";\n"), answers, preparing };
}

export function poolLeanSql(pool: Pool): LeanSql {
  // The names of statements pg prepares (lean_) and of those queryMany prepares (many_) differ:
  // pg keeps its own list of what it prepared on a connection.
  const nameFor = statementNames();
  // The statements queryMany has prepared on each connection.
  const preparedOn = new WeakMap<PoolClient, Set<string>>();
  return {
    async query<Row>(statement: Prisma.Sql, options: QueryOptions = {}) {
      const name = options.prepare ? nameFor(statement.text, "lean") : undefined;
      const result = await pool.query({ text: statement.text, values: statement.values, ...(name ? { name } : {}) });
      return result.rows as Row[];
    },
    // On this machine a statement's round trip costs the Node process about 0.2 ms (a writev to
    // Postgres, its reply parsed, the pool taken and given back); planning each statement every
    // time instead of preparing it cost Postgres more than the round trips saved.
    async queryMany(statements: Prisma.Sql[]) {
      if (statements.length === 0) return [];
      const client = await pool.connect();
      let prepared = preparedOn.get(client);
      if (prepared === undefined) preparedOn.set(client, (prepared = new Set()));
      const { text, answers, preparing } = manyStatements(statements, prepared, nameFor);
      let results: QueryResult[];
      try {
        const result = (await client.query(text)) as QueryResult | QueryResult[];
        results = Array.isArray(result) ? result : [result];
      } catch (error) {
        // Which of its statements were prepared is not known: the connection is closed, not reused.
        client.release(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
      for (const name of preparing) prepared.add(name);
      client.release();
      return answers.map((index) => results[index].rows as unknown[]);
    },
  };
}

export function pgliteLeanSql(pglite: PGlite): LeanSql {
  const nameFor = statementNames();
  // PGlite is one session: what queryMany prepared there.
  const prepared = new Set<string>();
  return {
    async query<Row>(statement: Prisma.Sql) {
      // PGlite runs one statement at a time and waits for any open transaction to finish.
      const result = await pglite.query<Row>(statement.text, statement.values);
      return result.rows;
    },
    // In the process there is no round trip to save, but each call's turn (PGlite runs one at a
    // time) and each statement's planning: prepared once, its plan is kept.
    async queryMany(statements: Prisma.Sql[]) {
      if (statements.length === 0) return [];
      const { text, answers, preparing } = manyStatements(statements, prepared, nameFor);
      let results: Array<{ rows: unknown[] }>;
      try {
        results = await pglite.exec(text);
      } catch (error) {
        // The statements prepared before the one that failed stay prepared: ask which.
        const names = [...preparing];
        if (names.length > 0) {
          const found = await pglite.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name = ANY($1)", [names]);
          for (const { name } of found.rows) prepared.add(name);
        }
        throw error;
      }
      for (const name of preparing) prepared.add(name);
      return answers.map((index) => results[index].rows);
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
