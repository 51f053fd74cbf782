// Backup and restore (apps/server/src/backup.ts) with real processes: a server started through the
// real entry point on a data folder of the test's own, `npm run cli -- backup FILE` while it runs
// (carried out by the server, through its operators' channel), changes after the backup,
// `restore FILE` refused while the server runs and carried out once it is stopped, and a new
// server that serves the backed-up organization: its messages, an uploaded file, the
// organization's and a user's settings. In both modes: the embedded database, and Postgres (a
// database created for the test). Then, in the test process, what a restore refuses (each refusal
// leaving the data as it was), and a backup from before the newest migration, which restores and
// which the next start brings up to date.
import { createReadStream, createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import { loadConfig, type Config } from "@chat/config";
import { applyMigrations, listMigrations, openDatabase, pgliteExecutor, type Database } from "@chat/db";
import { LocalFileStorage } from "@chat/storage";
import { Client } from "pg";
import request from "supertest";
import { tarChunks, tarEntries, type EntrySource } from "../../apps/server/src/backup-archive.ts";
import { BackupError, createBackup, readBackupManifest, restoreBackup, type BackupManifest, type BackupSource } from "../../apps/server/src/backup.ts";
import { runCliProcess } from "../support/cli-process.ts";
import { ApiClient } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { MODES } from "../support/server.ts";
import { createTestDatabase, type TestDatabase } from "../support/services.ts";

jest.setTimeout(180_000);

const OWNER = "owner@example.com";

/** `npm run cli -- <args>` as an operator runs it, with the server's settings. */
const cli = (args: string[], env: Record<string, string>) => runCliProcess(args, env);

async function tempDir(label: string): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), `backup-test-${label}-`));
}

/** Every path under `dir` with its kind and size: what a refused restore must leave as it was. */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(current: string): Promise<void> {
    for (const entry of await fs.readdir(current, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(current, entry.name);
      const stat = await fs.stat(full);
      out.push(`${path.relative(dir, full)} ${entry.isDirectory() ? "dir" : stat.size} ${stat.ino}`);
      if (entry.isDirectory()) await walk(full);
    }
  }
  await walk(dir);
  return out.sort();
}

async function ownerClient(server: ServerProcess): Promise<ApiClient> {
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const key = await new ApiClient(baseUrl, null).post("/dev_fetch_api_key", { username: OWNER });
  expect(key.body.result).toBe("success");
  return new ApiClient(baseUrl, { email: OWNER, apiKey: key.body.api_key });
}

async function upload(client: ApiClient, content: string, name: string): Promise<string> {
  const res = await client.raw("post", "/user_uploads").attach("file", Buffer.from(content), name);
  expect(res.body.result).toBe("success");
  return res.body.uri as string;
}

function download(client: ApiClient, uri: string) {
  return request(client.baseUrl).get(uri).auth(OWNER, client.credentials!.apiKey);
}

async function send(client: ApiClient, content: string): Promise<number> {
  const res = await client.post("/messages", { type: "stream", to: "general", topic: "backups", content });
  expect(res.body.result).toBe("success");
  return res.body.id as number;
}

async function topicContents(client: ApiClient): Promise<string[]> {
  const res = await client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: [["stream", "general"], ["topic", "backups"]], apply_markdown: false });
  expect(res.body.result).toBe("success");
  return (res.body.messages as Array<{ content: string }>).map((m) => m.content);
}

/** What the test reads back: the organization's name, a user's name and display setting. */
async function settings(client: ApiClient): Promise<{ realmName: string; fullName: string; twentyFourHour: boolean }> {
  const registered = await client.post("/register", { fetch_event_types: ["realm", "update_display_settings"] });
  expect(registered.body.result).toBe("success");
  const me = await client.get("/users/me");
  return { realmName: registered.body.realm_name, fullName: me.body.full_name, twentyFourHour: registered.body.twenty_four_hour_time };
}

// TEST_MODES narrows a local run to one mode, as in the other server tests.
const describeEmbedded = MODES.includes("embedded") ? describe : describe.skip;
const describeOnPostgres = MODES.includes("postgres") ? describe : describe.skip;

describe.each(MODES)("a round trip (%s)", (mode) => {
  let work: string;
  let dataDir: string;
  let database: TestDatabase | null = null;
  let env: Record<string, string>;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    work = await tempDir(mode);
    dataDir = path.join(work, "data");
    if (mode === "postgres") database = await createTestDatabase();
    env = { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) };
  });
  afterAll(async () => {
    await Promise.all(running.map((server) => server.kill()));
    await database?.drop();
    await fs.rm(work, { recursive: true, force: true });
  });

  async function start(): Promise<ServerProcess> {
    const server = await startProcess({
      ROLE: "all",
      PORT: "0",
      BIND_ADDRESS: "127.0.0.1",
      DEV_MODE: "true",
      BOOTSTRAP_OWNER_EMAIL: OWNER,
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
      ...env,
    });
    running.push(server);
    return server;
  }

  test("backup while the server runs; restore refused while it runs, then restores messages, files and settings", async () => {
    const file = path.join(work, "backup.tar.gz");
    let server = await start();
    // A new database: every migration applied at start, each logged by name.
    for (const { name } of listMigrations()) expect(server.output()).toMatch(new RegExp(`"message":"migration applied","migration":"${name}"`));
    let owner = await ownerClient(server);

    // What the backup holds.
    expect((await owner.patch("/realm", { name: "Before the backup" })).body.result).toBe("success");
    expect((await owner.patch("/settings", { full_name: "Owner Before" })).body.result).toBe("success");
    expect((await owner.patch("/settings/display", { twenty_four_hour_time: true })).body.result).toBe("success");
    expect(await settings(owner)).toEqual({ realmName: "Before the backup", fullName: "Owner Before", twentyFourHour: true });
    const kept = await upload(owner, "a file the backup keeps\n", "kept.txt");
    await send(owner, "first, before the backup");
    await send(owner, `the file: [kept.txt](${kept})`);
    const apiKey = owner.credentials!.apiKey;

    const backup = await cli(["backup", file], env);
    expect(backup).toMatchObject({ code: 0, stderr: "" });
    expect(backup.stdout).toContain(`wrote ${file}`);
    const manifest = await readBackupManifest(file);
    expect(manifest).toMatchObject({ database: { kind: mode === "embedded" ? "pglite" : "postgres" }, uploads: { included: true, storage: "local" } });
    expect(manifest.migrations).toEqual(listMigrations().map((m) => m.name));

    // What comes after it, and must be gone after the restore.
    expect((await owner.patch("/realm", { name: "After the backup" })).body.result).toBe("success");
    expect((await owner.patch("/settings", { full_name: "Owner After" })).body.result).toBe("success");
    expect((await owner.patch("/settings/display", { twenty_four_hour_time: false })).body.result).toBe("success");
    const later = await upload(owner, "a file from after the backup\n", "later.txt");
    await send(owner, `after the backup: [later.txt](${later})`);

    const refused = await cli(["restore", file], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/stop/i);
    expect(await topicContents(owner)).toContain(`after the backup: [later.txt](${later})`);

    await server.stop();
    const restored = await cli(["restore", file], env);
    expect(restored).toMatchObject({ code: 0, stderr: "" });
    expect(restored.stdout).toMatch(/restored the backup made/);

    server = await start();
    owner = new ApiClient(`http://127.0.0.1:${server.port}`, { email: OWNER, apiKey });
    expect(await topicContents(owner)).toEqual(["first, before the backup", `the file: [kept.txt](${kept})`]);
    expect(await settings(owner)).toEqual({ realmName: "Before the backup", fullName: "Owner Before", twentyFourHour: true });
    const keptFile = await download(owner, kept);
    expect([keptFile.status, keptFile.text]).toEqual([200, "a file the backup keeps\n"]);
    expect((await download(owner, later)).status).toBe(404);
    // Still a working server: it takes new messages on the restored data.
    await send(owner, "after the restore");
    expect(await topicContents(owner)).toHaveLength(3);
    await server.stop();
  });
});

// ---------------------------------------------------------------------------------------------

/** A copy of a backup with its manifest changed (or replaced by `firstEntry`). */
async function rewrite(source: string, target: string, edit: { manifest?: (m: BackupManifest) => unknown; firstEntry?: EntrySource }): Promise<void> {
  async function* entries(): AsyncGenerator<EntrySource> {
    const gunzip = createGunzip();
    createReadStream(source).pipe(gunzip);
    for await (const { entry, body } of tarEntries(gunzip)) {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk);
      let data: Uint8Array = Buffer.concat(chunks);
      if (entry.path === "manifest.json") {
        if (edit.firstEntry) {
          yield edit.firstEntry;
          continue;
        }
        if (edit.manifest) data = Buffer.from(JSON.stringify(edit.manifest(JSON.parse(Buffer.from(data).toString("utf8")) as BackupManifest)));
      }
      yield { path: entry.path, data };
    }
  }
  await pipeline(Readable.from(tarChunks(entries())), createGzip(), createWriteStream(target));
}

describeEmbedded("a backup of an embedded database from before the newest migration (in-process)", () => {
  const all = listMigrations();
  const newest = all[all.length - 1];
  let work: string;
  let db: Database;
  let source: BackupSource;
  let backupFile: string;
  let target: string;
  let config: Config;
  let before: string[];

  beforeAll(async () => {
    work = await tempDir("embedded");
    // A database made by the code before the newest migration.
    const olderMigrations = path.join(work, "migrations");
    for (const migration of all.slice(0, -1)) {
      await fs.mkdir(path.join(olderMigrations, migration.name), { recursive: true });
      await fs.writeFile(path.join(olderMigrations, migration.name, "migration.sql"), migration.sql);
    }
    const sourceDir = path.join(work, "source");
    await fs.mkdir(path.join(sourceDir, "pglite"), { recursive: true });
    const pglite = await PGlite.create(path.join(sourceDir, "pglite"));
    await applyMigrations(pgliteExecutor(pglite), olderMigrations);
    await pglite.close();
    db = await openDatabase({ databaseUrl: null, dataDir: sourceDir, migrate: false });
    const storage = new LocalFileStorage(path.join(sourceDir, "uploads"));
    await storage.put("uploads/2/ab/x/notes.txt", Buffer.from("stored"), { contentType: "text/plain" });
    source = { config: loadConfig({ DATA_DIR: sourceDir }), db, storage };
    backupFile = path.join(work, "backup.tar.gz");
    const backup = await createBackup(source, backupFile);
    expect(backup.manifest.migrations).toEqual(all.slice(0, -1).map((m) => m.name));
    expect(backup.uploadFiles).toBe(1);

    // The data a refused restore must not touch.
    target = path.join(work, "target");
    await fs.mkdir(path.join(target, "pglite"), { recursive: true });
    await fs.writeFile(path.join(target, "pglite", "PG_VERSION"), "the old database\n");
    await fs.mkdir(path.join(target, "uploads", "objects"), { recursive: true });
    await fs.writeFile(path.join(target, "uploads", "objects", "old"), "an old file");
    config = loadConfig({ DATA_DIR: target });
    before = await listing(target);
  }, 90_000);
  afterAll(async () => {
    await db?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  async function refused(file: string, message: RegExp, configured: Config = config): Promise<void> {
    const error = await restoreBackup(configured, file).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BackupError);
    expect((error as Error).message).toMatch(message);
    expect(await listing(target)).toEqual(before);
  }

  test("restore refuses a missing file, a folder, a file that is not gzip, gzip that is not tar, a tar without a manifest", async () => {
    await refused(path.join(work, "nothing-here.tar.gz"), /^there is no backup file at .*nothing-here\.tar\.gz$/);
    await refused(work, /is a folder, not a backup file/);
    await fs.writeFile(path.join(work, "plain.txt"), "just text\n");
    await refused(path.join(work, "plain.txt"), /plain\.txt is not a backup this server can read: it is not gzip-compressed/);
    await pipeline(Readable.from([Buffer.from("just text\n")]), createGzip(), createWriteStream(path.join(work, "text.gz")));
    await refused(path.join(work, "text.gz"), /not a backup this server can read: it holds no tar archive/);
    await rewrite(backupFile, path.join(work, "other.tar.gz"), { firstEntry: { path: "README", data: Buffer.from("hello") } });
    await refused(path.join(work, "other.tar.gz"), /it does not start with manifest\.json/);
  });

  test("restore refuses a truncated file, and one whose database does not match its manifest's checksum, staging nothing", async () => {
    const whole = await fs.readFile(backupFile);
    await fs.writeFile(path.join(work, "truncated.tar.gz"), whole.subarray(0, Math.floor(whole.length / 2)));
    await refused(path.join(work, "truncated.tar.gz"), /is not a backup this server can read: it is truncated/);
    await rewrite(backupFile, path.join(work, "damaged.tar.gz"), { manifest: (m) => ({ ...m, database: { ...m.database, sha256: "0".repeat(64) } }) });
    await refused(path.join(work, "damaged.tar.gz"), /does not match the checksum its manifest records/);
    // No staging folder is left beside the data or the uploads either.
    expect((await fs.readdir(target)).filter((name) => name.includes("restore"))).toEqual([]);
  });

  test("restore refuses a backup from a newer version: a newer format, or migrations this code does not know", async () => {
    await rewrite(backupFile, path.join(work, "newer-format.tar.gz"), { manifest: (m) => ({ ...m, format_version: 99, app_version: "99.0.0" }) });
    await refused(path.join(work, "newer-format.tar.gz"), /was made by a newer version of this server \(99\.0\.0, backup format 99; .* reads format 1\): upgrade this server first/);
    await rewrite(backupFile, path.join(work, "newer-schema.tar.gz"), { manifest: (m) => ({ ...m, app_version: "99.0.0", migrations: [...m.migrations, "9999_from_the_future"] }) });
    await refused(path.join(work, "newer-schema.tar.gz"), /has migrations this version does not know \(9999_from_the_future\)\. Restore it with version 99\.0\.0 or newer/);
  });

  test("restore refuses an embedded backup into Postgres, into memory://, or into a DATA_DIR it cannot use", async () => {
    await refused(backupFile, /holds an embedded \(PGlite\) database, and this configuration uses Postgres/, loadConfig({ DATA_DIR: target, DATABASE_URL: "postgres://postgres@127.0.0.1:5432/none" }));
    await refused(backupFile, /DATA_DIR=memory:\/\/ keeps nothing to restore into/, loadConfig({ DATA_DIR: "memory://" }));
    const blocked = path.join(work, "a-file");
    await fs.writeFile(blocked, "in the way");
    await refused(backupFile, /^DATA_DIR .*a-file\/data cannot be used \(ENOTDIR\)/, loadConfig({ DATA_DIR: path.join(blocked, "data") }));
  });

  test("a backup is not written into a folder that does not exist, nor over a folder", async () => {
    await expect(createBackup(source, path.join(work, "missing", "b.tar.gz"))).rejects.toThrow(/cannot write the backup to .*: the folder .*missing does not exist/);
    await expect(createBackup(source, work)).rejects.toThrow(/is a folder: name the backup file to write/);
  });

  test("it restores, moving what it replaced aside; the next start applies the newest migration and serves it", async () => {
    const copy = path.join(work, "copy");
    await fs.cp(target, copy, { recursive: true });
    const result = await restoreBackup(loadConfig({ DATA_DIR: copy }), backupFile);
    expect(result).toMatchObject({ uploadFiles: 1, pendingMigrations: [newest.name], warnings: [] });
    expect(result.keptAside).toHaveLength(2);
    expect(result.keptAside).toEqual(expect.arrayContaining([expect.stringMatching(/copy\/uploads\.before-restore-/), expect.stringMatching(/copy\/pglite\.before-restore-/)]));
    const aside = result.keptAside.find((p) => p.includes("pglite"))!;
    expect(await fs.readFile(path.join(aside, "PG_VERSION"), "utf8")).toBe("the old database\n");
    expect(await fs.readFile(path.join(copy, "uploads", "objects", "uploads", "2", "ab", "x", "notes.txt"), "utf8")).toBe("stored");

    const server = await startProcess({ ROLE: "all", PORT: "0", BIND_ADDRESS: "127.0.0.1", DEV_MODE: "true", BOOTSTRAP_OWNER_EMAIL: OWNER, DATA_DIR: copy });
    try {
      const applied = server.output().match(/"message":"migration applied","migration":"[^"]+"/g) ?? [];
      expect(applied).toEqual([`"message":"migration applied","migration":"${newest.name}"`]);
      const owner = await ownerClient(server);
      expect((await owner.get("/users/me")).body.email).toBe(OWNER);
    } finally {
      await server.stop();
    }
  });
});

describeOnPostgres("Postgres: what a backup and a restore refuse", () => {
  let database: TestDatabase;
  let work: string;
  let backupFile: string;
  let config: Config;

  beforeAll(async () => {
    database = await createTestDatabase();
    work = await tempDir("pg-refusals");
    config = loadConfig({ DATA_DIR: work, DATABASE_URL: database.url });
    const db = await openDatabase({ databaseUrl: database.url, dataDir: work, migrate: true });
    try {
      backupFile = path.join(work, "backup.tar.gz");
      await createBackup({ config, db, storage: new LocalFileStorage(path.join(work, "uploads")) }, backupFile);
    } finally {
      await db.close();
    }
  }, 60_000);
  afterAll(async () => {
    await database.drop();
    await fs.rm(work, { recursive: true, force: true });
  });

  /** Runs `fn` with PATH naming only a folder of fake PostgreSQL tools (shell scripts answering --version), or nothing. */
  async function withFakeTools<T>(versions: Record<string, string>, fn: () => Promise<T>): Promise<T> {
    const bin = await fs.mkdtemp(path.join(work, "bin-"));
    for (const [tool, version] of Object.entries(versions)) {
      await fs.writeFile(path.join(bin, tool), `#!/bin/sh\necho "${tool} (PostgreSQL) ${version}"\n`, { mode: 0o755 });
    }
    const saved = process.env.PATH;
    process.env.PATH = bin;
    try {
      return await fn();
    } finally {
      process.env.PATH = saved;
    }
  }

  test("pg_dump or pg_restore missing, or older than the server or the dump: the error says what to install", async () => {
    const db = await openDatabase({ databaseUrl: database.url, dataDir: work, migrate: false });
    try {
      const source = { config, db, storage: new LocalFileStorage(path.join(work, "uploads")) };
      const target = path.join(work, "not-written.tar.gz");
      await expect(withFakeTools({}, () => createBackup(source, target))).rejects.toThrow(/^pg_dump was not found on PATH; backups of a Postgres database need it: install PostgreSQL's client tools of version \d+ or newer/);
      await expect(withFakeTools({ pg_dump: "9.6.24" }, () => createBackup(source, target))).rejects.toThrow(
        /^pg_dump is version 9\.6 but the database runs Postgres \d+\.\d+.*; pg_dump cannot dump a newer server: install PostgreSQL's client tools/,
      );
      expect(await fs.readdir(work)).not.toContain("not-written.tar.gz");
    } finally {
      await db.close();
    }
    await expect(withFakeTools({ pg_restore: "9.6.24" }, () => restoreBackup(config, backupFile))).rejects.toThrow(/^pg_restore is version 9\.6 but the backup was written by pg_dump \d+/);
  });

  test("while another session is connected to the database, and while an earlier restore's leftover schema is there", async () => {
    const other = new Client({ connectionString: database.url, application_name: "someone else" });
    await other.connect();
    try {
      await expect(restoreBackup(config, backupFile)).rejects.toThrow(/1 other session\(s\) are connected to the database \(pid \d+ "someone else".*\): stop every server process that uses it/);
      await other.query("CREATE SCHEMA public_before_restore");
      await expect(restoreBackup(config, backupFile, { force: true })).rejects.toThrow(/the schema public_before_restore exists: an earlier restore stopped before it finished/);
      await other.query("DROP SCHEMA public_before_restore");
      // Forced, it restores beside the other session; the tables are the backup's.
      await other.query(`UPDATE realm SET name = 'changed after the backup'`);
      await restoreBackup(config, backupFile, { force: true });
      const { rows } = await other.query<{ name: string }>("SELECT name FROM realm");
      expect(rows.map((r) => r.name)).not.toContain("changed after the backup");
      const schemas = await other.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'public%' ORDER BY 1`);
      expect(schemas.rows.map((r) => r.nspname)).toEqual(["public"]);
    } finally {
      await other.end();
    }
  });
});
