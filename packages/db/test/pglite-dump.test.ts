// The embedded database's dump (Database.dumpDataDir) is taken from the open database while it
// serves requests, and loadPgliteDump brings it back: the loaded copy has what was committed, and
// nothing of a transaction still open when the dump was asked for.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadPgliteDump, openDatabase, type Database } from "@chat/db";

describe("PGlite dump and load", () => {
  let db: Database;
  let work: string;

  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: null, dataDir: "memory://", migrate: true });
    work = await fs.mkdtemp(path.join(os.tmpdir(), "pglite-dump-"));
  });
  afterAll(async () => {
    await db.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  test("a dump asked for during an open transaction holds the commits before it, not that transaction", async () => {
    await db.prisma.realm.create({ data: { string_id: "committed", name: "Committed" } });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const open = db.prisma
      .$transaction(async (tx) => {
        await tx.realm.create({ data: { string_id: "rolled-back", name: "Rolled back" } });
        inside();
        await gate;
        throw new Error("roll back");
      })
      .catch((error: Error) => error.message);
    await entered;
    const dumped = db.dumpDataDir!();
    setTimeout(release, 100);
    const [tarball, outcome] = await Promise.all([dumped, open]);
    expect(outcome).toBe("roll back");

    // openDatabase keeps PGlite's files in <dataDir>/pglite.
    const loaded = await loadPgliteDump(path.join(work, "pglite"), tarball);
    expect(loaded.migrations.length).toBeGreaterThan(0);
    expect(loaded.serverVersion).toMatch(/^\d+\.\d+/);
    const reopened = await openDatabase({ databaseUrl: null, dataDir: work, migrate: false });
    try {
      const names = (await reopened.prisma.realm.findMany({ select: { string_id: true } })).map((r) => r.string_id);
      expect(names).toContain("committed");
      expect(names).not.toContain("rolled-back");
    } finally {
      await reopened.close();
    }
  });

  test("loading refuses a directory that is not empty, and a tarball that is not a database", async () => {
    await fs.mkdir(path.join(work, "full"), { recursive: true });
    await fs.writeFile(path.join(work, "full", "something"), "x");
    await expect(loadPgliteDump(path.join(work, "full"), new Uint8Array(1024))).rejects.toThrow(/is not empty/);
    await expect(loadPgliteDump(path.join(work, "empty"), new Uint8Array(4096))).rejects.toThrow("not a tar archive of a PGlite data directory");
  });
});
