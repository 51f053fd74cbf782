// `npm run db:migrate`: apply pending SQL migrations to DATABASE_URL (or the embedded database).
import { ConfigError, loadConfig } from "@chat/config";
import { applyMigrations, connectPostgresExecutor, openDatabase } from "@chat/db";
import { acquireDataDirLock, DataDirBusyError } from "./data-dir-lock.ts";
import { DataDirError, ensureDataDir } from "./data-dir.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  if (config.databaseUrl) {
    const executor = await connectPostgresExecutor(config.databaseUrl);
    try {
      const applied = await applyMigrations(executor);
      process.stdout.write(applied.length ? `applied: ${applied.join(", ")}\n` : "database is up to date\n");
    } finally {
      await executor.close();
    }
  } else if (config.dataDir === "memory://") {
    process.stdout.write("DATA_DIR=memory:// keeps nothing to migrate\n");
  } else {
    // The embedded database has one owner (data-dir-lock.ts); a running server applied its
    // migrations when it started.
    ensureDataDir(config.dataDir);
    const lock = acquireDataDirLock(config.dataDir, { kind: "cli" });
    try {
      const db = await openDatabase({ databaseUrl: null, dataDir: config.dataDir, migrate: true });
      await db.close();
    } finally {
      lock.release();
    }
    process.stdout.write(`embedded database under ${config.dataDir} is up to date\n`);
  }
}

main().catch((error) => {
  if (error instanceof DataDirBusyError || error instanceof DataDirError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`${error instanceof ConfigError ? "Configuration error" : "Migration failed"}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
