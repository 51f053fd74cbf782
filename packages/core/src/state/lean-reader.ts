// /register runs a score of small statements, most of them `$queryRaw`; through Prisma each costs
// about 0.45 ms of CPU on top of the driver (lean-sql.ts), a third of what a registration cost once
// the realm's copies were kept (realm-state-cache.ts). This is the Prisma client with `$queryRaw`
// run on the driver itself; everything else goes to Prisma unchanged. The statements it runs must
// not return int8 or numeric columns (the driver gives strings where Prisma gives bigint).
//
// Where the driver can (pg), the statements asked for in one turn of the event loop go to Postgres
// in one round trip: a registration's sections ask for theirs all at once, and each round trip
// cost the events process more than the statement itself (lean-sql.ts, queryMany).
import { inlinable, leanSql, Prisma, type LeanSql, type PrismaClient } from "@chat/db";

/** Statements sent together at most; more wait for the next round trip. */
const MAX_BATCH = 64;

interface Pending {
  statement: Prisma.Sql;
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
}

/** Gathers the statements asked for in one turn of the event loop and sends them together. */
class StatementBatcher {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(private readonly lean: LeanSql & Required<Pick<LeanSql, "queryMany">>) {}

  query<Row>(statement: Prisma.Sql): Promise<Row[]> {
    return new Promise<Row[]>((resolve, reject) => {
      this.pending.push({ statement, resolve: resolve as (rows: unknown[]) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the microtasks of this turn: a section that awaited a kept copy first asks then.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = [];
    for (let start = 0; start < pending.length; start += MAX_BATCH) this.send(pending.slice(start, start + MAX_BATCH));
  }

  private send(batch: Pending[]): void {
    // One alone is sent prepared, as it was: its plan is kept.
    const sent = batch.length === 1 ? this.lean.query(batch[0].statement, { prepare: true }).then((rows) => [rows]) : this.lean.queryMany(batch.map((each) => each.statement));
    sent.then(
      (results) => batch.forEach((each, i) => each.resolve(results[i])),
      (error: unknown) => batch.forEach((each) => each.reject(error)),
    );
  }
}

export function withLeanRawQueries(prisma: PrismaClient): PrismaClient {
  const lean = leanSql(prisma);
  const batcher = lean.queryMany ? new StatementBatcher(lean as LeanSql & Required<Pick<LeanSql, "queryMany">>) : null;
  // Prepared when sent alone: /register's statements are a fixed set of texts, and planning was a
  // good part of what each cost Postgres (lean-sql.ts caps the number of prepared texts).
  const $queryRaw = (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
    const statement = query instanceof Prisma.Sql ? query : Prisma.sql(query, ...(values as Prisma.Sql[]));
    return batcher && inlinable(statement) ? batcher.query(statement) : lean.query(statement, { prepare: true });
  };
  return new Proxy(prisma, {
    get(target, key) {
      if (key === "$queryRaw") return $queryRaw;
      // The client's own methods run on the client itself: it keeps private state.
      const value: unknown = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
