// `npm run db:migrate`: apply pending SQL migrations to DATABASE_URL (or the embedded database).
import { ConfigError, loadConfig } from "@chat/config";
import { applyMigrations, connectPostgresExecutor, openDatabase } from "@chat/db";

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
  } else {
    const db = await openDatabase({ databaseUrl: null, dataDir: config.dataDir, migrate: true });
    await db.close();
    process.stdout.write(`embedded database under ${config.dataDir} is up to date\n`);
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? "Configuration error" : "Migration failed"}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
