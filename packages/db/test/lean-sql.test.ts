// leanSql runs the hot paths' statements on the driver under Prisma. It must give the rows Prisma
// would (for the column types hot paths return), reuse prepared statements safely, and inside an
// interactive transaction join that transaction rather than run beside it.
import { leanSql, openDatabase, Prisma, type Database } from "@chat/db";
import { createTestDatabase, type TestDatabase } from "../../../test/support/services.ts";

describe.each(["postgres", "pglite"] as const)("leanSql (%s)", (kind) => {
  let database: TestDatabase | null = null;
  let db: Database;

  beforeAll(async () => {
    if (kind === "postgres") {
      database = await createTestDatabase();
      db = await openDatabase({ databaseUrl: database.url, dataDir: "", migrate: true });
    } else {
      db = await openDatabase({ databaseUrl: null, dataDir: "memory://", migrate: true });
    }
    await db.prisma.realm.create({ data: { string_id: "lean", name: "Lean" } });
  });
  afterAll(async () => {
    await db.close();
    await database?.drop();
  });

  const realmNamed = (name: string) => Prisma.sql`SELECT id, string_id, date_created, deactivated FROM realm WHERE string_id = ${name}`;

  test("returns the rows $queryRaw returns, for ints, text, booleans and timestamps", async () => {
    const lean = await leanSql(db.prisma).query<Record<string, unknown>>(realmNamed("lean"));
    const viaPrisma = await db.prisma.$queryRaw<Record<string, unknown>[]>(realmNamed("lean"));
    expect(lean).toHaveLength(1);
    expect(lean).toEqual(viaPrisma);
    expect(lean[0].date_created).toBeInstanceOf(Date);
  });

  if (kind === "postgres") {
    test("the pool's connections run prepared statements on their cached generic plan", async () => {
      const rows = await Promise.all(Array.from({ length: 3 }, () => leanSql(db.prisma).query<{ plan_cache_mode: string }>(Prisma.sql`SHOW plan_cache_mode`)));
      expect(rows.flat().map((row) => row.plan_cache_mode)).toEqual(["force_generic_plan", "force_generic_plan", "force_generic_plan"]);
    });
  }

  test("a prepared statement answers for each set of values", async () => {
    const sql = leanSql(db.prisma);
    const first = await sql.query<{ string_id: string }>(realmNamed("lean"), { prepare: true });
    const missing = await sql.query(realmNamed("nowhere"), { prepare: true });
    const again = await sql.query<{ string_id: string }>(realmNamed("lean"), { prepare: true });
    expect(first.map((r) => r.string_id)).toEqual(["lean"]);
    expect(missing).toEqual([]);
    expect(again).toEqual(first);
  });

  test("inside a transaction it sees the transaction's writes, and a rollback undoes its own", async () => {
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.realm.create({ data: { string_id: "in-tx", name: "In transaction" } });
        expect(await leanSql(tx).query(realmNamed("in-tx"))).toHaveLength(1);
        await leanSql(tx).query(Prisma.sql`INSERT INTO realm (string_id, name) VALUES ('lean-write', 'Lean write') RETURNING id`);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await leanSql(db.prisma).query(Prisma.sql`SELECT id FROM realm WHERE string_id IN ('in-tx', 'lean-write')`)).toEqual([]);
  });

  test("outside a transaction it never sees another request's uncommitted writes", async () => {
    // PGlite has one connection: a lean statement issued while a transaction is open must wait for
    // it, not run inside it (and read rows a rollback then removes).
    let inserted!: () => void;
    const insertedNow = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = db.prisma.$transaction(async (tx) => {
      await tx.realm.create({ data: { string_id: "uncommitted", name: "Uncommitted" } });
      inserted();
      await new Promise((resolve) => setTimeout(resolve, 200));
      throw new Error("roll back");
    });
    await insertedNow;
    const seen = await leanSql(db.prisma).query(realmNamed("uncommitted"));
    await expect(transaction).rejects.toThrow("roll back");
    expect(seen).toEqual([]);
  });

  test("an SQL error rejects with the driver's error and leaves the connection usable", async () => {
    await expect(leanSql(db.prisma).query(Prisma.sql`SELECT no_such_column FROM realm`)).rejects.toThrow(/no_such_column/);
    expect(await leanSql(db.prisma).query(realmNamed("lean"))).toHaveLength(1);
  });
});

describe.each(["postgres", "pglite"] as const)("leanSql queryMany (%s)", (kind) => {
  let database: TestDatabase | null = null;
  let db: Database;

  beforeAll(async () => {
    database = kind === "postgres" ? await createTestDatabase() : null;
    db = await openDatabase({ databaseUrl: database?.url ?? null, dataDir: database ? "" : "memory://", migrate: true, poolSize: 1 });
    await db.prisma.realm.create({ data: { string_id: "many", name: "Many" } });
  });
  afterAll(async () => {
    await db.close();
    await database?.drop();
  });

  const many = (statements: Prisma.Sql[]) => leanSql(db.prisma).queryMany!(statements);
  const prepared = () => leanSql(db.prisma).query<{ name: string }>(Prisma.sql`SELECT name FROM pg_prepared_statements WHERE name LIKE 'many_%' ORDER BY name`);

  test("answers each statement with its own rows, in order, with the driver's types", async () => {
    const [realm, numbers, nothing, flag] = await many([
      Prisma.sql`SELECT id, string_id, date_created FROM realm WHERE string_id = ${"many"}`,
      Prisma.sql`SELECT n FROM unnest(${[3, 1, 2]}::int[]) AS n ORDER BY n`,
      Prisma.sql`SELECT id FROM realm WHERE string_id = ${"nowhere"}`,
      Prisma.sql`SELECT ${true} OR false AS yes, ${-2.5}::float8 AS half, ${null}::int AS none`,
    ]);
    expect(realm).toEqual([expect.objectContaining({ string_id: "many", date_created: expect.any(Date) })]);
    expect(numbers).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(nothing).toEqual([]);
    expect(flag).toEqual([{ yes: true, half: -2.5, none: null }]);
  });

  test("a string value is a value, whatever quotes or backslashes it holds", async () => {
    const hostile = ["'); DROP TABLE realm; --", "back\\slash'", "$1", "\\'; SELECT 1; --", "ünïcode ☃"];
    const answers = await many(hostile.map((text) => Prisma.sql`SELECT ${text}::text AS text, (SELECT count(*)::int FROM realm) AS realms`));
    expect(answers.map((rows) => (rows[0] as { text: string }).text)).toEqual(hostile);
    expect(await leanSql(db.prisma).query(Prisma.sql`SELECT id FROM realm WHERE string_id = 'many'`)).toHaveLength(1);
  });

  test("prepares each text once per session, and after a failed batch runs every statement again", async () => {
    const statement = (id: number) => Prisma.sql`SELECT string_id FROM realm WHERE id = ${id} AND string_id <> ${"prepared-once"}`;
    const { id } = await db.prisma.realm.findFirstOrThrow({ where: { string_id: "many" } });
    await many([statement(id), statement(id)]);
    const before = await prepared();
    expect(await many([statement(id)])).toEqual([[{ string_id: "many" }]]);
    expect(await prepared()).toEqual(before);
    // Division by zero fails the batch. Postgres's pool replaces its one connection (which then
    // prepares afresh); PGlite's session keeps what it prepared and knows it.
    const fresh = Prisma.sql`SELECT string_id FROM realm WHERE id = ${id} AND string_id <> ${"prepared-before-a-failure"}`;
    await expect(many([fresh, Prisma.sql`SELECT 1 / ${0}::int AS never`])).rejects.toThrow(/division by zero/);
    if (kind === "postgres") expect(await prepared()).toEqual([]);
    expect(await many([statement(id), fresh, Prisma.sql`SELECT 1 / ${1}::int AS once`])).toEqual([[{ string_id: "many" }], [{ string_id: "many" }], [{ once: 1 }]]);
  });
});
