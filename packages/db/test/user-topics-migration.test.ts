// Migration 0024 on a database that already has muted topics: each becomes a UserTopic row with
// policy 1 (muted) and its date as last_updated, the per-user key still holds without case, and a
// policy outside 1..3 is refused; on Postgres and on PGlite.
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { applyMigrations, connectPostgresExecutor, MIGRATIONS_DIR, pgliteExecutor, type SqlExecutor } from "@chat/db";
import { createTestDatabase, type TestDatabase } from "../../../test/support/services.ts";

const TARGET = "0024_user_topics";

/** A folder with the migrations before 0024, and a function that adds 0024 to it. */
function migrationsBefore(): { dir: string; addTarget: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-0024-"));
  for (const name of readdirSync(MIGRATIONS_DIR)) {
    if (/^\d{4}_/.test(name) && name < TARGET) cpSync(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
  }
  return { dir, addTarget: () => cpSync(path.join(MIGRATIONS_DIR, TARGET), path.join(dir, TARGET), { recursive: true }) };
}

describe.each(["postgres", "pglite"] as const)("migration 0024, muted topics to user topics (%s)", (kind) => {
  let testDb: TestDatabase | null = null;
  let sql: SqlExecutor;
  let closePglite: (() => Promise<void>) | null = null;
  let dir: string;

  beforeAll(async () => {
    if (kind === "postgres") {
      testDb = await createTestDatabase();
      sql = await connectPostgresExecutor(testDb.url);
    } else {
      const { PGlite } = await import("@electric-sql/pglite");
      const pg = await PGlite.create();
      sql = pgliteExecutor(pg);
      closePglite = () => pg.close();
    }
  });
  afterAll(async () => {
    await sql.close();
    await closePglite?.();
    await testDb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("existing mutes become muted (1), keep their date, and the table takes every policy but 0", async () => {
    const folder = migrationsBefore();
    dir = folder.dir;
    await applyMigrations(sql, dir);
    await sql.exec(`
      INSERT INTO realm (id, string_id, name) VALUES (900, 'mig', 'Mig');
      INSERT INTO recipient (id, type, type_id) VALUES (900, 1, 900), (901, 2, 900);
      INSERT INTO user_profile (id, realm_id, email, delivery_email, full_name, api_key, recipient_id)
        VALUES (900, 900, 'm@x.io', 'm@x.io', 'M', '${"k".repeat(32)}', 900);
      INSERT INTO stream (id, realm_id, name, email_token, recipient_id) VALUES (900, 900, 's', 'e', 901);
      INSERT INTO muted_topic (user_id, stream_id, recipient_id, topic_name, date_muted)
        VALUES (900, 900, 901, 'lunch', '2020-01-02T03:04:05Z'), (900, 900, 901, 'Noise', '2021-01-01T00:00:00Z');`);

    folder.addTarget();
    expect(await applyMigrations(sql, dir)).toEqual([TARGET]);

    const rows = await sql.query<{ topic_name: string; visibility_policy: number; last_updated: Date }>(
      "SELECT topic_name, visibility_policy, last_updated FROM user_topic ORDER BY id",
    );
    expect(rows.map((r) => [r.topic_name, r.visibility_policy, new Date(r.last_updated).toISOString()])).toEqual([
      ["lunch", 1, "2020-01-02T03:04:05.000Z"],
      ["Noise", 1, "2021-01-01T00:00:00.000Z"],
    ]);
    const muted = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'muted_topic'");
    expect(muted[0].n).toBe(0);

    // New rows take their ids from the renamed sequence; followed and unmuted are storable, inherit (0) is no row.
    await sql.exec("INSERT INTO user_topic (user_id, stream_id, recipient_id, topic_name, visibility_policy) VALUES (900, 900, 901, 'plans', 3), (900, 900, 901, 'misc', 2)");
    await expect(sql.exec("INSERT INTO user_topic (user_id, stream_id, recipient_id, topic_name, visibility_policy) VALUES (900, 900, 901, 'zero', 0)")).rejects.toThrow(/visibility_policy/);
    await expect(sql.exec("INSERT INTO user_topic (user_id, stream_id, recipient_id, topic_name) VALUES (900, 900, 901, 'unset')")).rejects.toThrow(/visibility_policy/);
    // One row per user, stream and topic without case.
    await expect(sql.exec("INSERT INTO user_topic (user_id, stream_id, recipient_id, topic_name, visibility_policy) VALUES (900, 900, 901, 'LUNCH', 3)")).rejects.toThrow(/user_topic_user_id_stream_id_lower_topic_name_key/);
    const count = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM user_topic");
    expect(count[0].n).toBe(4);
  });
});
