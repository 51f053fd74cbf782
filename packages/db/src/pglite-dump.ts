// Loading a PGlite dump (Database.dumpDataDir) into a data directory of its own: the embedded
// database's restore. The caller moves the directory into place once this has succeeded.
import { existsSync, readdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";

export interface LoadedDump {
  /** Postgres' version inside PGlite that now runs the loaded directory. */
  serverVersion: string;
  /** The migrations the loaded database records as applied. */
  migrations: string[];
}

/**
 * Writes `tarball` (an uncompressed tar of a PGlite data directory) into `dataDir`, which must be
 * missing or empty, starts it once (recovering it to its last commit) and reads which migrations
 * it has. Throws if it is not a database PGlite can run.
 */
export async function loadPgliteDump(dataDir: string, tarball: Uint8Array): Promise<LoadedDump> {
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) throw new Error(`${dataDir} is not empty`);
  // PGlite takes anything that is not a tar for gzip, and its failure to unzip escapes as an
  // uncaught exception: refuse it here.
  if (tarball.length < 1024 || Buffer.from(tarball.subarray(257, 262)).toString("latin1") !== "ustar") {
    throw new Error("not a tar archive of a PGlite data directory");
  }
  const pglite = await PGlite.create({ dataDir, loadDataDir: new Blob([tarball], { type: "application/x-tar" }) });
  try {
    const [{ server_version: serverVersion }] = (await pglite.query<{ server_version: string }>("SHOW server_version")).rows;
    const hasTable = (await pglite.query<{ found: string | null }>(`SELECT to_regclass('public._prisma_migrations')::text AS found`)).rows[0].found !== null;
    const migrations = hasTable
      ? (
          await pglite.query<{ migration_name: string }>(
            `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
          )
        ).rows.map((row) => row.migration_name)
      : [];
    // Written back, so that the server's first start replays nothing.
    await pglite.exec("CHECKPOINT");
    return { serverVersion, migrations };
  } finally {
    await pglite.close();
  }
}
