// /register runs a score of small statements, most of them `$queryRaw`; through Prisma each costs
// about 0.45 ms of CPU on top of the driver (lean-sql.ts), a third of what a registration cost once
// the realm's copies were kept (realm-state-cache.ts). This is the Prisma client with `$queryRaw`
// run on the driver itself; everything else goes to Prisma unchanged. The statements it runs must
// not return int8 or numeric columns (the driver gives strings where Prisma gives bigint).
import { leanSql, Prisma, type PrismaClient } from "@chat/db";

export function withLeanRawQueries(prisma: PrismaClient): PrismaClient {
  const lean = leanSql(prisma);
  // Prepared: /register's statements are a fixed set of texts, and planning was a good part of
  // what each cost Postgres (lean-sql.ts caps the number of prepared texts).
  const $queryRaw = (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
    lean.query(query instanceof Prisma.Sql ? query : Prisma.sql(query, ...(values as Prisma.Sql[])), { prepare: true });
  return new Proxy(prisma, {
    get(target, key) {
      if (key === "$queryRaw") return $queryRaw;
      // The client's own methods run on the client itself: it keeps private state.
      const value: unknown = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
