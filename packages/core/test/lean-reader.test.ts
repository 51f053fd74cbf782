// The /register reader (lean-reader.ts): the statements its sections ask for in one turn of the
// event loop reach Postgres in one round trip and each gets its own rows; one failing fails them
// all, and the next turn's statements go on.
import { leanSql, openDatabase, Prisma, type Database } from "@chat/db";
import { withLeanRawQueries } from "@chat/core";
import { createTestDatabase, type TestDatabase } from "../../../test/support/services.ts";

describe.each(["postgres", "pglite"] as const)("withLeanRawQueries (%s)", (kind) => {
  let database: TestDatabase | null = null;
  let db: Database;

  beforeAll(async () => {
    database = kind === "postgres" ? await createTestDatabase() : null;
    db = await openDatabase({ databaseUrl: database?.url ?? null, dataDir: database ? "" : "memory://", migrate: true });
    await db.prisma.realm.create({ data: { string_id: "reader", name: "Reader" } });
  });
  afterAll(async () => {
    await db.close();
    await database?.drop();
  });
  afterEach(() => jest.restoreAllMocks());

  test("statements asked for in one turn each get their own rows, in one call to the driver", async () => {
    const lean = leanSql(db.prisma);
    const many = lean.queryMany ? jest.spyOn(lean as Required<typeof lean>, "queryMany") : null;
    const one = jest.spyOn(lean, "query");
    const reader = withLeanRawQueries(db.prisma);
    const answers = await Promise.all([
      reader.$queryRaw<{ string_id: string }[]>`SELECT string_id FROM realm WHERE string_id = ${"reader"}`,
      reader.$queryRaw<{ n: number }[]>`SELECT n FROM unnest(${[1, 2]}::int[]) AS n ORDER BY n`,
      // Asked for after awaiting something already settled: still in the same turn.
      Promise.resolve().then(() => reader.$queryRaw<{ yes: boolean }[]>`SELECT ${true} AND true AS yes`),
    ]);
    expect(answers).toEqual([[{ string_id: "reader" }], [{ n: 1 }, { n: 2 }], [{ yes: true }]]);
    if (many) {
      expect(many).toHaveBeenCalledTimes(1);
      expect(many.mock.calls[0][0]).toHaveLength(3);
      expect(one).not.toHaveBeenCalled();
    } else {
      expect(one).toHaveBeenCalledTimes(3);
    }
  });

  test("a failing statement fails the statements sent with it, and the next ones answer", async () => {
    const reader = withLeanRawQueries(db.prisma);
    const results = await Promise.allSettled([reader.$queryRaw`SELECT 1 / ${0}::int AS never`, reader.$queryRaw`SELECT ${1}::int AS one`]);
    expect(results[0]).toMatchObject({ status: "rejected", reason: expect.objectContaining({ message: expect.stringMatching(/division by zero/) }) });
    expect(results[1].status).toBe("rejected");
    expect(await reader.$queryRaw`SELECT ${2}::int AS two`).toEqual([{ two: 2 }]);
  });

  test("a value that cannot be written as a literal goes alone, as a parameter", async () => {
    const reader = withLeanRawQueries(db.prisma);
    const when = new Date("2026-11-27T00:00:00Z");
    const [rows] = await Promise.all([reader.$queryRaw<{ when: Date }[]>`SELECT ${when}::timestamptz AS when`, reader.$queryRaw`SELECT ${1}::int AS one`]);
    expect(rows[0].when.getTime()).toBe(when.getTime());
  });
});
