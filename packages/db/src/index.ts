export { PrismaClient, Prisma } from "./generated/client.ts";
export type * from "./generated/models.ts";
export { openDatabase, type Database, type OpenDatabaseOptions } from "./client.ts";
export type { NotificationHandlers, NotificationListener } from "./notification-listener.ts";
export { applyMigrations, appliedMigrations, listMigrations, MigrationError, MIGRATIONS_DIR, pendingMigrations } from "./migrations.ts";
export { loadPgliteDump, type LoadedDump } from "./pglite-dump.ts";
export { connectPostgresExecutor, pgliteExecutor, type SqlExecutor } from "./sql-executor.ts";
export type { Tx } from "./tx.ts";
export { inlinable, leanSql, type LeanSql } from "./lean-sql.ts";
