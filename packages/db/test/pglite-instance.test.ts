// The embedded database starts lean (pglite-instance.ts): Postgres' settings are the ones chosen
// for memory, a new data directory is made by a child process and moved into place only once
// complete, and a directory that cannot be made fails with the folder named and nothing left behind.
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createPGlite, PGLITE_SETTINGS } from "../src/pglite-instance.ts";

describe("createPGlite", () => {
  let work: string;

  beforeAll(async () => {
    work = await fs.mkdtemp(path.join(os.tmpdir(), "pglite-instance-"));
  });
  afterAll(async () => {
    await fs.rm(work, { recursive: true, force: true });
  });

  test("a new directory is created (by a child process), runs with the lean settings, and keeps its data when reopened", async () => {
    const location = path.join(work, "new", "pglite");
    mkdirSync(location, { recursive: true });
    const first = await createPGlite(location);
    try {
      const { rows } = await first.query<{ shared_buffers: string }>("SHOW shared_buffers");
      expect(rows[0].shared_buffers).toBe(PGLITE_SETTINGS.shared_buffers);
      await first.exec("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('still here')");
    } finally {
      await first.close();
    }
    expect(existsSync(path.join(location, "PG_VERSION"))).toBe(true);
    // The staging directory the child wrote into is gone: moved into place.
    expect(readdirSync(path.dirname(location))).toEqual(["pglite"]);

    const again = await createPGlite(location);
    try {
      expect((await again.query<{ note: string }>("SELECT note FROM kept")).rows).toEqual([{ note: "still here" }]);
    } finally {
      await again.close();
    }
  });

  test("a directory the child process cannot create fails with its folder and the child's reason, leaving nothing", async () => {
    // Its parent folder is missing (the server makes it first, client.ts): PGlite's mkdir fails.
    const parent = path.join(work, "missing", "deeper");
    await expect(createPGlite(path.join(parent, "pglite"))).rejects.toThrow(new RegExp(`could not create the embedded database in ${parent}: .*ENOENT`));
    expect(existsSync(path.join(work, "missing"))).toBe(false);
  });

  test("memory:// runs in this process with the same settings", async () => {
    const db = await createPGlite("memory://");
    try {
      const { rows } = await db.query<{ shared_buffers: string }>("SHOW shared_buffers");
      expect(rows[0].shared_buffers).toBe(PGLITE_SETTINGS.shared_buffers);
    } finally {
      await db.close();
    }
  });
});
