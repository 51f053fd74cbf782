// `npm run cli -- backup FILE` and `restore FILE`: one server's data in one file, and back.
//
// The file is a gzip-compressed tar (backup-archive.ts):
//   manifest.json            what it holds (BackupManifest), always the first entry
//   database/pglite.tar      the embedded database: PGlite's own dump of its data directory
//   database/postgres.dump   or Postgres: pg_dump's custom format
//   uploads/objects/<key>    with local storage, every stored file (uploads, avatars, emoji)
//   uploads/meta/<key>       and its sidecar, as LocalFileStorage lays them out
//
// A restore reads the whole file into a staging area beside the live data before it changes
// anything, then swaps the staged data in; what it replaces is moved aside (embedded database,
// files) or kept until the restored copy has been checked (Postgres).
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { constants, createReadStream, createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { serverVersion, type Config } from "@chat/config";
import { appliedMigrations, connectPostgresExecutor, leanSql, listMigrations, loadPgliteDump, Prisma, type SqlExecutor } from "@chat/db";
import { assertSafeKey, LocalFileStorage } from "@chat/storage";
import { ArchiveError, tarChunks, tarEntries, type ArchiveEntry, type EntrySource } from "./backup-archive.ts";
import { dataDirOwner } from "./data-dir-lock.ts";
import type { Services } from "./services.ts";

export const BACKUP_FORMAT = "teamchat-backup";
/** Raised when the file's layout changes in a way an older reader would misread. */
export const BACKUP_FORMAT_VERSION = 1;

const MANIFEST_ENTRY = "manifest.json";
const DATABASE_ENTRY = { pglite: "database/pglite.tar", postgres: "database/postgres.dump" } as const;
const UPLOAD_TREES = ["objects", "meta"] as const;
/** A manifest is a few KiB; anything much larger is not one. */
const MANIFEST_MAX_BYTES = 1024 * 1024;
/** The Postgres schema the application's tables live in. */
const SCHEMA = "public";
/** Where a Postgres restore keeps the replaced tables until the restored ones have been checked. */
const SCHEMA_ASIDE = "public_before_restore";

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  created_at: string;
  /** The server's version (root package.json) that made the backup. */
  app_version: string;
  database: {
    kind: "pglite" | "postgres";
    /** The entry holding it, its size and SHA-256 (checked on restore). */
    entry: string;
    bytes: number;
    sha256: string;
    /** Postgres' version of the database backed up (PGlite runs one inside). */
    server_version: string;
    /** Postgres only: the pg_dump that wrote the entry (pg_restore must be as new). */
    pg_dump_version: string | null;
  };
  /** The migrations the database had applied, by name. */
  migrations: string[];
  uploads: { included: true; storage: "local" } | { included: false; storage: string };
}

/** Anything an operator did wrong or must know about a backup or restore: its message says what to do. */
export class BackupError extends Error {}

/** What a backup reads: open Services, those of a running server or of the CLI itself. */
export type BackupSource = Pick<Services, "config" | "db" | "storage">;

export interface BackupOptions {
  /** Progress lines for the operator. */
  log?: (line: string) => void;
}

export interface BackupResult {
  file: string;
  /** The backup file's size. */
  bytes: number;
  uploadFiles: number;
  manifest: BackupManifest;
}

export interface RestoreOptions {
  /**
   * Postgres: restore even though other sessions are connected to the database (a server on
   * another host, a psql). Without it a restore refuses while any is.
   */
  force?: boolean;
  log?: (line: string) => void;
}

export interface RestoreResult {
  manifest: BackupManifest;
  uploadFiles: number;
  /** The replaced data, moved aside rather than deleted: remove once the restored server is checked. */
  keptAside: string[];
  /** Migrations this code has that the backup's database lacks: the next start applies them. */
  pendingMigrations: string[];
  warnings: string[];
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The local uploads directory of open Services, or null when files live elsewhere (S3). */
function localUploadsDir(services: BackupSource): string | null {
  return services.storage instanceof LocalFileStorage ? services.storage.directory : null;
}

/** Every stored file under a LocalFileStorage root: its archive path and where it is. */
async function* walkUploads(root: string): AsyncGenerator<{ entry: string; file: string }> {
  async function* walk(dir: string, relative: string): AsyncGenerator<{ entry: string; file: string }> {
    let children;
    try {
      children = await fs.readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === "ENOENT") return;
      throw error;
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const child of children) {
      const childRelative = `${relative}/${child.name}`;
      if (child.isDirectory()) yield* walk(path.join(dir, child.name), childRelative);
      else if (child.isFile()) yield { entry: `uploads${childRelative}`, file: path.join(dir, child.name) };
    }
  }
  for (const tree of UPLOAD_TREES) yield* walk(path.join(root, tree), `/${tree}`);
}

/** Fails early, with a plain message, when the backup cannot be written where asked. */
async function checkWritableTarget(target: string): Promise<void> {
  const dir = path.dirname(target);
  const stat = await fs.stat(target).catch(() => null);
  if (stat?.isDirectory()) throw new BackupError(`${target} is a folder: name the backup file to write`);
  try {
    await fs.access(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const why = errorCode(error) === "ENOENT" ? "does not exist" : "is not writable by this user";
    throw new BackupError(`cannot write the backup to ${target}: the folder ${dir} ${why}`);
  }
}

// ---------------------------------------------------------------------------------------------
// pg_dump and pg_restore

interface PgTool {
  name: string;
  version: string;
  major: number;
}

/** The libpq environment that connects to `databaseUrl`: the password never on a command line. */
export function libpqEnvironment(databaseUrl: string): NodeJS.ProcessEnv {
  const url = new URL(databaseUrl);
  const params = url.searchParams;
  // Only our own PG* settings: an operator's PGSERVICE or PGHOST must not redirect the dump.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("PG")));
  const set = (key: string, value: string | null | undefined) => {
    if (value) env[key] = value;
  };
  set("PGHOST", params.get("host") ?? decodeURIComponent(url.hostname.replace(/^\[(.*)\]$/, "$1")));
  set("PGPORT", url.port || params.get("port"));
  set("PGUSER", decodeURIComponent(url.username) || params.get("user"));
  set("PGPASSWORD", decodeURIComponent(url.password) || params.get("password"));
  set("PGDATABASE", decodeURIComponent(url.pathname.replace(/^\//, "")) || params.get("dbname"));
  const ssl = params.get("ssl");
  set("PGSSLMODE", params.get("sslmode") ?? (ssl === "true" || ssl === "1" ? "require" : null));
  set("PGSSLROOTCERT", params.get("sslrootcert"));
  set("PGSSLCERT", params.get("sslcert"));
  set("PGSSLKEY", params.get("sslkey"));
  env.PGAPPNAME = "teamchat-backup";
  env.PGCONNECT_TIMEOUT = "10";
  return env;
}

/** Runs a program (no shell), resolving with its standard output; a failure carries its standard error. */
function runTool(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < 64 * 1024) stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new BackupError(`${path.basename(command)} failed (${signal ?? `exit ${code}`}): ${stderr.trim() || "no message"}`));
    });
  });
}

function clientToolsAdvice(major: number): string {
  return `install PostgreSQL's client tools of version ${major} or newer (Debian/Ubuntu: apt install postgresql-client-${major}; PGDG packages put them in /usr/lib/postgresql/${major}/bin) and put them first on PATH`;
}

/** The named client tool on PATH and its version; a missing one is an error saying what to install. */
async function pgTool(name: "pg_dump" | "pg_restore", neededMajor: number): Promise<PgTool> {
  let output: string;
  try {
    output = await runTool(name, ["--version"], process.env);
  } catch (error) {
    if (errorCode(error) === "ENOENT") throw new BackupError(`${name} was not found on PATH; backups of a Postgres database need it: ${clientToolsAdvice(neededMajor)}`);
    throw error;
  }
  const match = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(output);
  if (!match) throw new BackupError(`${name} --version answered ${JSON.stringify(output.trim())}, not a PostgreSQL version`);
  return { name, version: match[2] === undefined ? match[1] : `${match[1]}.${match[2]}`, major: Number(match[1]) };
}

function majorOf(version: string): number {
  return Number(/^(\d+)/.exec(version)?.[1] ?? NaN);
}

// ---------------------------------------------------------------------------------------------
// Backup

interface DatabaseDump {
  kind: "pglite" | "postgres";
  entry: EntrySource;
  bytes: number;
  sha256: string;
  serverVersion: string;
  pgDumpVersion: string | null;
}

async function serverVersionOf(services: BackupSource): Promise<{ version: string; major: number }> {
  const [row] = await leanSql(services.db.prisma).query<{ version: string; num: number }>(
    Prisma.sql`SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num`,
  );
  return { version: row.version, major: Math.floor(row.num / 10000) };
}

async function dumpDatabase(services: BackupSource, scratchFile: string, log: (line: string) => void): Promise<DatabaseDump> {
  const { db, config } = services;
  const server = await serverVersionOf(services);
  if (db.kind === "pglite") {
    if (!db.dumpDataDir) throw new Error("this database cannot dump its data directory");
    const data = await db.dumpDataDir();
    log(`embedded database: ${data.length} bytes (PGlite's dump, Postgres ${server.version})`);
    return { kind: "pglite", entry: { path: DATABASE_ENTRY.pglite, data }, bytes: data.length, sha256: sha256Hex(data), serverVersion: server.version, pgDumpVersion: null };
  }
  if (!config.databaseUrl) throw new Error("a Postgres database without DATABASE_URL");
  const tool = await pgTool("pg_dump", server.major);
  if (tool.major < server.major) {
    throw new BackupError(`pg_dump is version ${tool.version} but the database runs Postgres ${server.version}; pg_dump cannot dump a newer server: ${clientToolsAdvice(server.major)}`);
  }
  // The application's schema only: another schema in the database is not its data (and one a
  // restore left aside must never come back). Uncompressed: the backup is compressed as a whole.
  await runTool("pg_dump", ["--format=custom", "--compress=0", `--schema=${SCHEMA}`, "--no-password", `--file=${scratchFile}`], libpqEnvironment(config.databaseUrl));
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(scratchFile)) hash.update(chunk as Buffer);
  const file = await fs.open(scratchFile, "r");
  const { size } = await file.stat();
  log(`Postgres database: ${size} bytes (pg_dump ${tool.version}, server ${server.version})`);
  return { kind: "postgres", entry: { path: DATABASE_ENTRY.postgres, file, size }, bytes: size, sha256: hash.digest("hex"), serverVersion: server.version, pgDumpVersion: tool.version };
}

/**
 * Writes a backup of the database and (with local storage) the uploaded files of open Services to
 * `file`, replacing it if it exists. Works beside live traffic: the database is dumped first (a
 * consistent snapshot), then the files are copied. The file appears only once complete.
 */
export async function createBackup(services: BackupSource, file: string, options: BackupOptions = {}): Promise<BackupResult> {
  const log = options.log ?? (() => {});
  const target = path.resolve(file);
  await checkWritableTarget(target);
  const partial = `${target}.partial-${randomBytes(6).toString("hex")}`;
  const scratch = `${partial}.pgdump`;
  let dump: DatabaseDump | null = null;
  try {
    dump = await dumpDatabase(services, scratch, log);
    const uploadsDir = localUploadsDir(services);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      created_at: new Date().toISOString(),
      app_version: serverVersion(),
      database: {
        kind: dump.kind,
        entry: dump.entry.path,
        bytes: dump.bytes,
        sha256: dump.sha256,
        server_version: dump.serverVersion,
        pg_dump_version: dump.pgDumpVersion,
      },
      migrations: await appliedMigrations(leanSql(services.db.prisma)),
      uploads: uploadsDir ? { included: true, storage: "local" } : { included: false, storage: services.storage.kind },
    };
    let uploadFiles = 0;
    const databaseEntry = dump.entry;
    async function* entries(): AsyncGenerator<EntrySource> {
      yield { path: MANIFEST_ENTRY, data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) };
      yield databaseEntry;
      if (!uploadsDir) return;
      for await (const upload of walkUploads(uploadsDir)) {
        // A file deleted since the listing is simply not in the backup; an object is replaced by
        // a rename, so an open one keeps the bytes it had.
        const handle = await fs.open(upload.file, "r").catch((error: unknown) => {
          if (errorCode(error) === "ENOENT") return null;
          throw error;
        });
        if (!handle) continue;
        try {
          const stat = await handle.stat();
          yield { path: upload.entry, file: handle, size: stat.size, mtime: stat.mtime };
          if (upload.entry.startsWith("uploads/objects/")) uploadFiles++;
        } finally {
          await handle.close();
        }
      }
    }
    const out = createWriteStream(partial, { flags: "wx", mode: 0o600 });
    await pipeline(Readable.from(tarChunks(entries())), createGzip(), out);
    // On disk before it takes the final name, so a crash never leaves a partial file under it.
    const written = await fs.open(partial, "r+");
    try {
      await written.sync();
    } finally {
      await written.close();
    }
    await fs.rename(partial, target);
    const { size } = await fs.stat(target);
    log(`${uploadFiles} stored files; wrote ${target} (${size} bytes)`);
    return { file: target, bytes: size, uploadFiles, manifest };
  } catch (error) {
    await fs.rm(partial, { force: true });
    if (error instanceof BackupError) throw error;
    const code = errorCode(error);
    if (code === "ENOSPC") throw new BackupError(`no space left to write ${target}`);
    if (code === "EACCES" || code === "EPERM") throw new BackupError(`cannot write ${target}: permission denied`);
    throw error;
  } finally {
    if (dump && "file" in dump.entry) await dump.entry.file.close();
    await fs.rm(scratch, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Reading a backup

function notABackup(file: string, why: string): BackupError {
  return new BackupError(`${file} is not a backup this server can read: ${why}`);
}

/** A failure reading the archive, as the operator should hear it. */
function readFailure(file: string, error: unknown): unknown {
  if (error instanceof BackupError) return error;
  if (error instanceof ArchiveError) return notABackup(file, error.message);
  const code = errorCode(error);
  if (code === "Z_BUF_ERROR") return notABackup(file, "it is truncated (its compressed data ends early)");
  if (code?.startsWith("Z_")) return notABackup(file, `its compressed data is damaged (${(error as Error).message})`);
  return error;
}

async function* guarded(file: string, body: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  try {
    yield* body;
  } catch (error) {
    throw readFailure(file, error);
  }
}

/** The archive's entries, decompressed; gzip and tar damage, in headers or bodies, come out as BackupError. */
async function* backupEntries(file: string): AsyncGenerator<{ entry: ArchiveEntry; body: AsyncGenerator<Buffer> }> {
  const handle = await fs.open(file, "r").catch((error: unknown) => {
    const code = errorCode(error);
    if (code === "ENOENT") throw new BackupError(`there is no backup file at ${file}`);
    if (code === "EACCES" || code === "EPERM") throw new BackupError(`cannot read ${file}: permission denied`);
    throw error;
  });
  try {
    if ((await handle.stat()).isDirectory()) throw new BackupError(`${file} is a folder, not a backup file`);
    const magic = Buffer.alloc(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    if (bytesRead < 2 || magic[0] !== 0x1f || magic[1] !== 0x8b) throw notABackup(file, "it is not gzip-compressed");
    const gunzip = createGunzip();
    const source = handle.createReadStream({ start: 0, autoClose: false });
    source.on("error", (error) => gunzip.destroy(error));
    source.pipe(gunzip);
    try {
      for await (const { entry, body } of tarEntries(gunzip)) yield { entry, body: guarded(file, body) };
    } finally {
      source.unpipe(gunzip);
      source.destroy();
      gunzip.destroy();
    }
  } catch (error) {
    throw readFailure(file, error);
  } finally {
    await handle.close();
  }
}

async function readAll(body: AsyncIterable<Buffer>, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function validManifest(value: unknown): value is BackupManifest {
  const m = value as BackupManifest;
  return (
    typeof m === "object" &&
    m !== null &&
    m.format === BACKUP_FORMAT &&
    Number.isInteger(m.format_version) &&
    typeof m.created_at === "string" &&
    typeof m.database === "object" &&
    m.database !== null &&
    (m.database.kind === "pglite" || m.database.kind === "postgres") &&
    m.database.entry === DATABASE_ENTRY[m.database.kind] &&
    Number.isSafeInteger(m.database.bytes) &&
    typeof m.database.sha256 === "string" &&
    Array.isArray(m.migrations) &&
    m.migrations.every((name) => typeof name === "string") &&
    typeof m.uploads === "object" &&
    m.uploads !== null &&
    typeof m.uploads.included === "boolean"
  );
}

/** The manifest at the start of a backup file, checked to be one; reads no further. */
export async function readBackupManifest(file: string): Promise<BackupManifest> {
  const source = path.resolve(file);
  for await (const { entry, body } of backupEntries(source)) {
    if (entry.path !== MANIFEST_ENTRY) throw notABackup(source, `it does not start with ${MANIFEST_ENTRY}`);
    const text = await readAll(body, MANIFEST_MAX_BYTES);
    let parsed: unknown;
    try {
      parsed = text && JSON.parse(text.toString("utf8"));
    } catch {
      parsed = null;
    }
    if ((parsed as BackupManifest | null)?.format === BACKUP_FORMAT && (parsed as BackupManifest).format_version > BACKUP_FORMAT_VERSION) {
      const newer = parsed as BackupManifest;
      throw new BackupError(
        `${source} was made by a newer version of this server (${newer.app_version}, backup format ${newer.format_version}; this version ${serverVersion()} reads format ${BACKUP_FORMAT_VERSION}): upgrade this server first`,
      );
    }
    if (!validManifest(parsed)) throw notABackup(source, `its ${MANIFEST_ENTRY} is not a backup manifest`);
    return parsed;
  }
  throw notABackup(source, "it is empty");
}

function sameNames(a: string[], b: string[]): boolean {
  return [...a].sort().join("\n") === [...b].sort().join("\n");
}

/** Refuses a backup whose database is newer than this code; names the migrations an older one lacks. */
function checkMigrations(manifest: BackupManifest, file: string): string[] {
  const known = listMigrations().map((migration) => migration.name);
  const unknown = manifest.migrations.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new BackupError(
      `${file} holds a database of a newer version (${manifest.app_version}) than this one (${serverVersion()}): it has migrations this version does not know (${unknown.join(", ")}). Restore it with version ${manifest.app_version} or newer.`,
    );
  }
  return known.filter((name) => !manifest.migrations.includes(name));
}

// ---------------------------------------------------------------------------------------------
// Restore

/** Writes a body to a new file, returning its size and SHA-256. */
async function writeBody(body: AsyncIterable<Buffer>, file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const counted = async function* () {
    for await (const chunk of body) {
      hash.update(chunk);
      bytes += chunk.length;
      yield chunk;
    }
  };
  await pipeline(Readable.from(counted()), createWriteStream(file, { flags: "wx", mode: 0o600 }));
  return { bytes, sha256: hash.digest("hex") };
}

/** The storage key an uploads/ entry names, or null when the path is not one a backup writes. */
function uploadPath(entryPath: string): { tree: (typeof UPLOAD_TREES)[number]; key: string } | null {
  const match = /^uploads\/(objects|meta)\/(.+)$/.exec(entryPath);
  if (!match) return null;
  try {
    assertSafeKey(match[2]);
  } catch {
    return null;
  }
  return { tree: match[1] as (typeof UPLOAD_TREES)[number], key: match[2] };
}

interface Staged {
  databaseFile: string;
  uploadFiles: number;
}

/** Reads the whole backup into the staging places, checking every entry and the database's checksum. */
async function stageBackup(file: string, manifest: BackupManifest, databaseFile: string, uploadsStaging: string | null): Promise<Staged> {
  let database: { bytes: number; sha256: string } | null = null;
  let uploadFiles = 0;
  let first = true;
  for await (const { entry, body } of backupEntries(file)) {
    if (first) {
      first = false;
      if (entry.path === MANIFEST_ENTRY) continue;
    }
    if (entry.type === "directory") continue;
    if (entry.type === "file" && entry.path === manifest.database.entry && database === null) {
      database = await writeBody(body, databaseFile);
      continue;
    }
    const upload = entry.type === "file" ? uploadPath(entry.path) : null;
    if (!upload) throw notABackup(file, `it holds an entry this version does not know: ${JSON.stringify(entry.path)}`);
    if (!uploadsStaging) continue;
    const target = path.join(uploadsStaging, upload.tree, ...upload.key.split("/"));
    await fs.mkdir(path.dirname(target), { recursive: true });
    await writeBody(body, target);
    if (upload.tree === "objects") uploadFiles++;
  }
  if (database === null) throw notABackup(file, `it has no ${manifest.database.entry}`);
  if (database.bytes !== manifest.database.bytes || database.sha256 !== manifest.database.sha256) {
    throw notABackup(file, `its ${manifest.database.entry} does not match the checksum its manifest records (damaged)`);
  }
  return { databaseFile, uploadFiles };
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    (error: unknown) => {
      if (errorCode(error) === "ENOENT") return false;
      throw error;
    },
  );
}

interface Swap {
  /** Where the replaced data went, or null when there was none. */
  aside: string | null;
  undo(): Promise<void>;
}

/** Moves `live` aside (if present) and `staged` into its place; both renames, nothing deleted. */
async function swapIn(live: string, staged: string, aside: string): Promise<Swap> {
  const hadLive = await exists(live);
  if (hadLive) await fs.rename(live, aside);
  try {
    await fs.rename(staged, live);
  } catch (error) {
    if (hadLive) await fs.rename(aside, live);
    throw error;
  }
  return {
    aside: hadLive ? aside : null,
    async undo() {
      await fs.rename(live, staged);
      if (hadLive) await fs.rename(aside, live);
    },
  };
}

function postgresStep(error: unknown, what: string): BackupError {
  return error instanceof BackupError ? error : new BackupError(`${what}: ${(error as Error).message}`);
}

/** Sessions on the database other than ours, described for the operator. */
async function otherSessions(db: SqlExecutor): Promise<string[]> {
  const rows = await db.query<{ pid: number; application_name: string; client_addr: string | null }>(
    `SELECT pid, application_name, client_addr::text AS client_addr FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
  );
  return rows.map((row) => `pid ${row.pid}${row.application_name ? ` "${row.application_name}"` : ""}${row.client_addr ? ` from ${row.client_addr}` : ""}`);
}

async function schemaExists(db: SqlExecutor, name: string): Promise<boolean> {
  return (await db.query<{ found: boolean }>(`SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS found`, [name]))[0].found;
}

/**
 * Replaces the database's tables with the dump: the current ones are renamed aside in one
 * transaction, pg_restore fills an empty schema in one transaction of its own, and only when the
 * restored tables have been checked are the old ones dropped; on any failure they are put back.
 */
async function restorePostgres(databaseUrl: string, dumpFile: string, manifest: BackupManifest, options: RestoreOptions, log: (line: string) => void): Promise<string[]> {
  const dumpedBy = manifest.database.pg_dump_version ?? manifest.database.server_version;
  const tool = await pgTool("pg_restore", majorOf(dumpedBy));
  if (tool.major < majorOf(dumpedBy)) {
    throw new BackupError(`pg_restore is version ${tool.version} but the backup was written by pg_dump ${dumpedBy}, whose files it cannot read: ${clientToolsAdvice(majorOf(dumpedBy))}`);
  }
  let db: SqlExecutor;
  try {
    db = await connectPostgresExecutor(databaseUrl);
  } catch (error) {
    throw new BackupError(`cannot connect to the database DATABASE_URL names: ${(error as Error).message}`);
  }
  try {
    if (!options.force) {
      const others = await otherSessions(db);
      if (others.length > 0) {
        throw new BackupError(
          `${others.length} other session(s) are connected to the database (${others.join(", ")}): stop every server process that uses it, then run restore again (or restore with --force to go ahead anyway)`,
        );
      }
    }
    if (await schemaExists(db, SCHEMA_ASIDE)) {
      throw new BackupError(
        `the schema ${SCHEMA_ASIDE} exists: an earlier restore stopped before it finished, and that schema holds the tables from before it. Check which you want, then DROP SCHEMA ${SCHEMA_ASIDE} CASCADE (or rename it back to ${SCHEMA}) and run restore again`,
      );
    }
    const env = libpqEnvironment(databaseUrl);
    // A dump of one schema creates it (pg_dump --schema); one of a whole database does not.
    const toc = await runTool("pg_restore", ["--list", dumpFile], env);
    const dumpCreatesSchema = new RegExp(`^\\d+; \\d+ \\d+ SCHEMA - ${SCHEMA} `, "m").test(toc);
    const hadSchema = await schemaExists(db, SCHEMA);
    const emptySchema = dumpCreatesSchema ? "" : `CREATE SCHEMA ${SCHEMA};`;
    await db.exec(hadSchema ? `BEGIN; ALTER SCHEMA ${SCHEMA} RENAME TO ${SCHEMA_ASIDE}; ${emptySchema} COMMIT` : `BEGIN; ${emptySchema} COMMIT`);
    const putBack = async () => {
      await db.exec(`BEGIN; DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; ${hadSchema ? `ALTER SCHEMA ${SCHEMA_ASIDE} RENAME TO ${SCHEMA}` : `CREATE SCHEMA ${SCHEMA}`}; COMMIT`);
    };
    try {
      // The database's name is no secret; the password stays in the environment.
      await runTool("pg_restore", ["--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges", "--no-password", `--dbname=${env.PGDATABASE ?? ""}`, dumpFile], env);
      const restored = (
        await db.query<{ migration_name: string }>(
          `SELECT migration_name FROM ${SCHEMA}."_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
        )
      ).map((row) => row.migration_name);
      if (!sameNames(restored, manifest.migrations)) throw new BackupError("the restored database's migrations are not those its manifest lists");
    } catch (error) {
      await putBack();
      throw postgresStep(error, "pg_restore did not complete; the database is as it was before");
    }
    log(`Postgres database restored (pg_restore ${tool.version})`);
    if (!hadSchema) return [];
    // The restore has succeeded: what is left is tidying, whose failure must not undo it.
    try {
      // Change batches are published under their outbox id, and event nodes drop an id they
      // handled within the last hour: ids must not start again below those already used.
      await db.exec(`
        DO $$
        DECLARE before bigint;
        BEGIN
          IF to_regclass('${SCHEMA_ASIDE}.event_outbox_id_seq') IS NOT NULL AND to_regclass('${SCHEMA}.event_outbox_id_seq') IS NOT NULL THEN
            SELECT last_value INTO before FROM ${SCHEMA_ASIDE}.event_outbox_id_seq;
            PERFORM setval('${SCHEMA}.event_outbox_id_seq', GREATEST(before, (SELECT last_value FROM ${SCHEMA}.event_outbox_id_seq)));
          END IF;
        END $$;
        DROP SCHEMA ${SCHEMA_ASIDE} CASCADE;`);
      return [];
    } catch (error) {
      return [`the tables from before the restore are left in the schema ${SCHEMA_ASIDE} (${(error as Error).message}): drop it (DROP SCHEMA ${SCHEMA_ASIDE} CASCADE) before the next restore`];
    }
  } finally {
    await db.close();
  }
}

/**
 * Replaces the data `config` names (the database, and with local storage the uploaded files) with
 * a backup's. The server must be stopped: it refuses while a live process holds the data folder's
 * lock (server.lock), and for Postgres while other sessions are connected unless `force`. Nothing
 * is changed until the whole file has been read and checked; what is replaced is moved aside
 * (RestoreResult.keptAside), except Postgres' old tables, dropped once the restored ones are checked.
 * The next start applies the migrations the backup's database lacks.
 */
export async function restoreBackup(config: Config, file: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const log = options.log ?? (() => {});
  const source = path.resolve(file);
  const manifest = await readBackupManifest(source);
  const pendingMigrations = checkMigrations(manifest, source);
  const targetKind = config.databaseUrl ? "postgres" : "pglite";
  if (config.dataDir === "memory://" && !config.databaseUrl) {
    throw new BackupError("DATA_DIR=memory:// keeps nothing to restore into: set DATA_DIR to the data folder to restore");
  }
  if (manifest.database.kind !== targetKind) {
    throw new BackupError(
      manifest.database.kind === "pglite"
        ? `${source} holds an embedded (PGlite) database, and this configuration uses Postgres (DATABASE_URL): restore it without DATABASE_URL`
        : `${source} holds a Postgres database, and this configuration uses the embedded database: set DATABASE_URL to the Postgres to restore it into`,
    );
  }
  if (config.dataDir !== "memory://") {
    let owner;
    try {
      owner = dataDirOwner(config.dataDir);
    } catch (error) {
      throw new BackupError(`DATA_DIR ${config.dataDir} cannot be used (${errorCode(error) ?? (error as Error).message}): set DATA_DIR to the data folder to restore, a folder this user may write`);
    }
    if (owner) {
      throw new BackupError(
        `the data folder ${config.dataDir} is in use by ${owner.kind === "server" ? "a server" : "an operator command"} (pid ${owner.pid} on ${owner.host}, since ${owner.since}): stop it, then run restore again`,
      );
    }
  }

  const warnings: string[] = [];
  const uploadsDir = config.storage.backend === "local" ? config.storage.directory : null;
  if (manifest.uploads.included && !uploadsDir) warnings.push("the backup holds uploaded files, but this server keeps its files in S3: they were not restored");
  if (!manifest.uploads.included && uploadsDir) warnings.push(`the backup holds no uploaded files (it was made with ${manifest.uploads.storage} storage): ${uploadsDir} was left as it is`);

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  // Staging sits beside what it replaces, so that putting it in place is a rename.
  const stagingRoot = path.join(config.dataDir === "memory://" ? path.dirname(uploadsDir ?? source) : config.dataDir, `.restore-${stamp}`);
  const uploadsStaging = manifest.uploads.included && uploadsDir ? `${uploadsDir}.restore-${stamp}` : null;
  try {
    await fs.mkdir(stagingRoot, { recursive: true, mode: 0o700 });
    if (uploadsStaging) await fs.mkdir(uploadsStaging, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new BackupError(`cannot write beside the data to restore (${(error as Error).message}): check that ${config.dataDir}${uploadsDir ? ` and ${path.dirname(uploadsDir)}` : ""} exist and are writable by this user`);
  }
  const keptAside: string[] = [];
  try {
    log(`reading ${source} (made ${manifest.created_at} by version ${manifest.app_version})`);
    const staged = await stageBackup(source, manifest, path.join(stagingRoot, path.basename(manifest.database.entry)), uploadsStaging);
    if (uploadsStaging) for (const tree of UPLOAD_TREES) await fs.mkdir(path.join(uploadsStaging, tree), { recursive: true });

    let stagedPglite: string | null = null;
    if (manifest.database.kind === "pglite") {
      stagedPglite = path.join(stagingRoot, "pglite");
      let loaded;
      try {
        loaded = await loadPgliteDump(stagedPglite, await fs.readFile(staged.databaseFile));
      } catch (error) {
        throw new BackupError(`the embedded database in ${source} could not be loaded (Postgres ${manifest.database.server_version} in the backup): ${(error as Error).message}`);
      }
      if (!sameNames(loaded.migrations, manifest.migrations)) {
        throw notABackup(source, "its database's migrations are not those its manifest lists");
      }
      await fs.rm(staged.databaseFile);
    }

    // Files first: their swap can be undone, the database's is the last step that can fail.
    const uploadsSwap = uploadsStaging && uploadsDir ? await swapIn(uploadsDir, uploadsStaging, `${uploadsDir}.before-restore-${stamp}`) : null;
    try {
      if (stagedPglite) {
        const live = path.join(config.dataDir, "pglite");
        const swap = await swapIn(live, stagedPglite, `${live}.before-restore-${stamp}`);
        if (swap.aside) keptAside.push(swap.aside);
        log("embedded database restored");
      } else {
        warnings.push(...(await restorePostgres(config.databaseUrl!, staged.databaseFile, manifest, options, log)));
      }
    } catch (error) {
      await uploadsSwap?.undo();
      throw error;
    }
    if (uploadsSwap?.aside) keptAside.push(uploadsSwap.aside);
    if (uploadsSwap) log(`${staged.uploadFiles} stored files restored to ${uploadsDir}`);
    return { manifest, uploadFiles: staged.uploadFiles, keptAside, pendingMigrations, warnings };
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOSPC") throw new BackupError("no space left on the device while restoring; nothing was changed");
    throw error;
  } finally {
    // Only staged copies: the live data and what was moved aside are never under these.
    await fs.rm(stagingRoot, { recursive: true, force: true });
    if (uploadsStaging) await fs.rm(uploadsStaging, { recursive: true, force: true });
  }
}

/** What the CLI prints after a backup. */
export function describeBackup(result: BackupResult): string {
  const { manifest } = result;
  const files = manifest.uploads.included ? `${result.uploadFiles} stored files` : `no stored files (they are in ${manifest.uploads.storage}: back that up with its own tools)`;
  return `wrote ${result.file} (${result.bytes} bytes): the ${manifest.database.kind === "pglite" ? "embedded" : "Postgres"} database with ${manifest.migrations.length} migrations, and ${files}\n`;
}

/** What the CLI prints after a restore. */
export function describeRestore(result: RestoreResult): string {
  const lines = [`restored the backup made ${result.manifest.created_at} by version ${result.manifest.app_version}` + (result.manifest.uploads.included ? `, with ${result.uploadFiles} stored files` : "")];
  for (const warning of result.warnings) lines.push(`warning: ${warning}`);
  if (result.pendingMigrations.length > 0) lines.push(`the next start applies ${result.pendingMigrations.length} migrations this backup predates`);
  if (result.keptAside.length > 0) lines.push(`the replaced data was moved aside; delete it once the restored server looks right:\n${result.keptAside.map((p) => `  ${p}`).join("\n")}`);
  return `${lines.join("\n")}\n`;
}
