// Applies prisma/migrations/NNNN_name/migration.sql in order and records each in Prisma's own
// `_prisma_migrations` table, so `prisma migrate status|deploy` agree wherever the engine exists.
// The Prisma CLI's schema engine cannot be downloaded on our machines (see ARCHITECTURE.md).
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { logger } from "@chat/logger";
import { Prisma } from "./generated/client.ts";
import type { LeanSql } from "./lean-sql.ts";
import type { SqlExecutor } from "./sql-executor.ts";

/** prisma/migrations of the checkout this code runs from (sources or a bundle under dist/). */
function findMigrationsDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "prisma", "migrations");
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`no prisma/migrations above ${__dirname}`);
  }
}

export const MIGRATIONS_DIR = findMigrationsDir();

// Any constant works; it only has to be the same for every process running migrations.
const MIGRATION_LOCK_KEY = 72_011_001;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id" VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum" VARCHAR(64) NOT NULL,
    "finished_at" TIMESTAMPTZ,
    "migration_name" VARCHAR(255) NOT NULL,
    "logs" TEXT,
    "rolled_back_at" TIMESTAMPTZ,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {}

/** Applies every pending migration; returns the names applied. Safe to run from several processes at once. */
export async function applyMigrations(db: SqlExecutor, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = listMigrations(dir);
  await db.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  try {
    await db.exec(CREATE_MIGRATIONS_TABLE);
    const rows = await db.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((row) => [row.migration_name, row]));
    const done: string[] = [];
    for (const migration of migrations) {
      const previous = applied.get(migration.name);
      if (previous) {
        if (!previous.finished_at) throw new MigrationError(`migration ${migration.name} failed earlier and needs attention`);
        if (previous.checksum !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was changed after it was applied`);
        }
        continue;
      }
      // Each migration and its record commit together, so a failure leaves nothing half-applied.
      const started = Date.now();
      await db.exec("BEGIN");
      try {
        await db.exec(migration.sql);
        await db.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await db.exec("COMMIT");
      } catch (error) {
        await db.exec("ROLLBACK");
        throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`);
      }
      logger.info("migration applied", { migration: migration.name, ms: Date.now() - started });
      done.push(migration.name);
    }
    return done;
  } finally {
    await db.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  }
}

/** The migrations a database records as applied, by name (what a backup's manifest lists). */
export async function appliedMigrations(sql: LeanSql): Promise<string[]> {
  const rows = await sql.query<{ migration_name: string }>(
    Prisma.sql`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
  return rows.map((row) => row.migration_name);
}

/** The bundled migrations' names, read once: readiness checks compare against them. */
let bundledNames: string[] | null = null;

/**
 * The migrations this code has that the database has not applied (readiness: a process on a
 * database restored from an older backup, or not yet migrated, must not take traffic).
 */
export async function pendingMigrations(sql: LeanSql): Promise<string[]> {
  bundledNames ??= listMigrations().map((migration) => migration.name);
  const rows = await sql.query<{ migration_name: string }>(
    Prisma.sql`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    { prepare: true },
  );
  const applied = new Set(rows.map((row) => row.migration_name));
  return bundledNames.filter((name) => !applied.has(name));
}
