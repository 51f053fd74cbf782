// Imports an organization export in Zulip's format (realm-export-format.ts) into a new
// organization of this server: ours, or a Zulip server's (`./manage.py export` or the admin UI's
// public export). Every row gets a new id and every reference follows it; fields this server has
// no column for are left out, columns the export does not fill take their defaults. Passwords are
// not in an export (Zulip leaves them out): imported users set one through a password reset; API
// keys are made anew. Messages are rendered again, so mentions, stream links and custom emoji name
// the new ids. Uploads, avatars and custom emoji are copied into file storage under new paths, and
// messages' links to uploads are rewritten.
//
// One transaction: a failure anywhere leaves no organization, and the files written so far are
// removed. Memory is bounded by realm.json (read whole, as Zulip's import does) and one messages
// file at a time; messages' old-to-new ids are kept in a temporary table, not in memory.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { PrismaClient, Tx } from "@chat/db";
import type { FileStorage } from "@chat/storage";
import type { ServerContext } from "../context.ts";
import { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Realm } from "../models.ts";
import { checkSubdomain } from "../actions/realms.ts";
import { botDomain, ensureSystemBots, isSystemBot } from "../actions/system-bots.ts";
import { createSystemGroups, syncSystemGroupMemberships, systemGroupIds } from "../actions/system-groups.ts";
import { shownEmail } from "./email-visibility.ts";
import { avatarStorageKeys, customEmojiStorageKey } from "./avatars.ts";
import { resizeAvatar } from "./images.ts";
import { fetchRenderContext, MARKDOWN_VERSION, renderMarkdown } from "./markdown.ts";
import { realmHost } from "./realm-hosts.ts";
import { formatStringToTemplate, templateToFormatString } from "./linkifiers.ts";
import { generateApiKey } from "./secrets.ts";
import { contentTypeFor, fileNameOfPathId, newPathId, uploadStorageKey } from "./uploads.ts";
import { ATTACHMENT_TABLE, MESSAGE_CHILD_TABLES, MESSAGE_TABLE, REALM_TABLES, USER_MESSAGE_TABLE, exportFieldName, type ExportTable } from "./realm-export-format.ts";

type Row = Record<string, unknown>;

export interface RealmImportOptions {
  /** The new organization's subdomain (must be free). */
  subdomain: string;
  /** Its name; the export's by default. */
  name?: string;
}

export interface RealmImportResult {
  realm: Realm;
  users: number;
  streams: number;
  messages: number;
  files: number;
}

export interface RealmImportServices {
  prisma: PrismaClient;
  storage: FileStorage;
  ctx: ServerContext;
}

/** The most bytes of realm.json (read whole) and of one messages file. */
const MAX_JSON_BYTES = 512 * 1024 ** 2;
/** The largest avatar original taken to make the avatar again. */
const MAX_AVATAR_BYTES = 5 * 1024 ** 2;
/** Statement parameters Postgres takes at most (65,535), with room to spare. */
const MAX_PARAMETERS = 30_000;

interface Column {
  name: string;
  udt: string;
  nullable: boolean;
  hasDefault: boolean;
}

/** The export's problem, told to the operator as it is. */
export class RealmImportError extends Error {}

async function readJson(file: string): Promise<Row> {
  const info = await stat(file).catch(() => null);
  if (!info) throw new RealmImportError(`the export has no ${path.basename(file)}`);
  if (info.size > MAX_JSON_BYTES) throw new RealmImportError(`${path.basename(file)} is larger than this server reads (${MAX_JSON_BYTES} bytes)`);
  try {
    return JSON.parse(await readFile(file, "utf8")) as Row;
  } catch (error) {
    throw new RealmImportError(`${path.basename(file)} is not JSON: ${(error as Error).message}`);
  }
}

async function readJsonIfPresent(file: string): Promise<unknown> {
  const info = await stat(file).catch(() => null);
  return info ? readJson(file) : null;
}

function rowsOf(data: Row, key: string): Row[] {
  const rows = data[key];
  if (rows === undefined || rows === null) return [];
  if (!Array.isArray(rows) || rows.some((row) => typeof row !== "object" || row === null || Array.isArray(row))) throw new RealmImportError(`${key} is not a list of rows`);
  return rows as Row[];
}

function idOf(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) ? value : typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : null;
}

class ImportContext {
  readonly maps = new Map<string, Map<number, number>>();
  readonly columns = new Map<string, Column[]>();
  readonly written: string[] = [];
  files = 0;

  constructor(
    readonly tx: Tx,
    readonly storage: FileStorage,
    readonly dir: string,
  ) {}

  map(key: string): Map<number, number> {
    let map = this.maps.get(key);
    if (!map) this.maps.set(key, (map = new Map()));
    return map;
  }

  newId(key: string, old: unknown): number | null {
    const id = idOf(old);
    return id === null ? null : (this.maps.get(key)?.get(id) ?? null);
  }

  async columnsOf(table: string): Promise<Column[]> {
    let columns = this.columns.get(table);
    if (!columns) {
      const rows = await this.tx.$queryRawUnsafe<{ column_name: string; udt_name: string; is_nullable: string; column_default: string | null }[]>(
        "SELECT column_name, udt_name, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        table,
      );
      columns = rows.map((r) => ({ name: r.column_name, udt: r.udt_name, nullable: r.is_nullable === "YES", hasDefault: r.column_default !== null }));
      this.columns.set(table, columns);
    }
    return columns;
  }

  /** New ids for `count` rows of `table`, from its sequence. */
  async allocate(table: string, count: number): Promise<number[]> {
    if (count === 0) return [];
    const rows = await this.tx.$queryRawUnsafe<{ id: number }[]>(`SELECT nextval(pg_get_serial_sequence('"${table}"', 'id'))::int AS id FROM generate_series(1, $1)`, count);
    return rows.map((r) => r.id);
  }

  async put(key: string, body: Buffer | NodeJS.ReadableStream, contentType: string): Promise<void> {
    this.written.push(key);
    await this.storage.put(key, body as Buffer, { contentType });
    this.files++;
  }
}

/** A value as the column takes it; undefined for "the column's default". */
function columnValue(column: Column, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (value === null) return column.nullable ? null : undefined;
  switch (column.udt) {
    case "timestamptz":
    case "timestamp": {
      const date = typeof value === "number" ? new Date(value * 1000) : new Date(String(value));
      return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
    }
    case "int4":
    case "int2":
    case "int8": {
      const number = typeof value === "boolean" ? Number(value) : Number(value);
      return Number.isFinite(number) ? String(Math.trunc(number)) : undefined;
    }
    case "bool":
      return typeof value === "boolean" ? value : value === 1 || value === "true" || value === "t";
    case "jsonb":
    case "json":
      return JSON.stringify(value);
    case "text":
    case "varchar":
      return typeof value === "string" ? value.replaceAll("\0", "") : typeof value === "object" ? JSON.stringify(value) : String(value);
    default:
      return undefined;
  }
}

/** Inserts rows (our column names → values; undefined: the column's default), in batches. */
async function insertRows(ictx: ImportContext, table: string, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = await ictx.columnsOf(table);
  const used = columns.filter((c) => rows.some((row) => row[c.name] !== undefined));
  if (used.length === 0) return;
  const perBatch = Math.max(1, Math.floor(MAX_PARAMETERS / used.length));
  for (let start = 0; start < rows.length; start += perBatch) {
    const batch = rows.slice(start, start + perBatch);
    const params: unknown[] = [];
    const tuples = batch.map((row) => {
      const cells = used.map((column) => {
        const value = row[column.name];
        if (value === undefined) return "DEFAULT";
        params.push(value);
        return `$${params.length}::${column.udt.startsWith("_") ? `${column.udt.slice(1)}[]` : column.udt}`;
      });
      return `(${cells.join(",")})`;
    });
    await ictx.tx.$executeRawUnsafe(`INSERT INTO "${table}" (${used.map((c) => `"${c.name}"`).join(",")}) VALUES ${tuples.join(",")}`, ...params);
  }
}

/** The export's field for one of our columns (our name, Zulip's, or an alias). */
function fieldValue(spec: ExportTable, row: Row, column: string): unknown {
  const field = exportFieldName(spec, column);
  if (field in row) return row[field];
  if (column in row) return row[column];
  for (const [alias, target] of Object.entries(spec.aliases ?? {})) if (target === column && alias in row) return row[alias];
  return undefined;
}

/**
 * A row of the export as our columns: references through the id maps (an unknown one is null, or
 * drops the row when the column needs it), the organization's id the new one.
 */
async function translateRow(ictx: ImportContext, spec: ExportTable, row: Row, realmId: number, newId: number | null): Promise<Row | null> {
  const out: Row = {};
  for (const column of await ictx.columnsOf(spec.table)) {
    if (column.name === "id") {
      if (newId !== null) out.id = String(newId);
      continue;
    }
    if (spec.omit?.includes(column.name)) continue;
    if (column.name === "realm_id") {
      out.realm_id = String(realmId);
      continue;
    }
    const target = spec.refs?.[column.name];
    if (target !== undefined) {
      if (spec.deferred?.includes(column.name)) continue;
      const raw = fieldValue(spec, row, column.name);
      const mapped = raw === null || raw === undefined ? null : ictx.newId(target, raw);
      if (mapped === null) {
        if (!column.nullable) return null;
        out[column.name] = null;
      } else {
        out[column.name] = String(mapped);
      }
      continue;
    }
    // A group setting: set once the groups are in (groupSettingValue).
    if (column.name.endsWith("_group_id")) continue;
    // A reference this description does not know: its id means nothing here.
    if (column.name.endsWith("_id") && column.name !== "type_id" && column.name !== "path_id" && column.name !== "string_id") continue;
    out[column.name] = columnValue(column, fieldValue(spec, row, column.name));
  }
  return out;
}

/**
 * Settings an older export has no value for (Zulip 10.0's channel and user-group settings, from an
 * export of Zulip 9 or of this server before migration 0041) get what migration 0041 gave existing
 * rows: who may post from stream_post_policy, role:nobody for what is new, leaving open.
 */
async function fillDefaultGroupSettings(ictx: ImportContext, realmId: number): Promise<void> {
  await ictx.tx.$executeRawUnsafe(
    `WITH g AS (SELECT name, id FROM user_group WHERE realm_id = $1 AND is_system_group)
     UPDATE stream s SET
       can_send_message_group_id = COALESCE(s.can_send_message_group_id, (SELECT id FROM g WHERE name = CASE s.stream_post_policy
         WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' ELSE 'role:everyone' END)),
       can_administer_channel_group_id = COALESCE(s.can_administer_channel_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_add_subscribers_group_id = COALESCE(s.can_add_subscribers_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_subscribe_group_id = COALESCE(s.can_subscribe_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_remove_subscribers_group_id = COALESCE(s.can_remove_subscribers_group_id, (SELECT id FROM g WHERE name = 'role:administrators'))
     WHERE s.realm_id = $1`,
    realmId,
  );
  await ictx.tx.$executeRawUnsafe(
    `WITH g AS (SELECT name, id FROM user_group WHERE realm_id = $1 AND is_system_group)
     UPDATE user_group u SET
       can_add_members_group_id = COALESCE(u.can_add_members_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_join_group_id = COALESCE(u.can_join_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_leave_group_id = COALESCE(u.can_leave_group_id, (SELECT id FROM g WHERE name = CASE WHEN u.is_system_group THEN 'role:nobody' ELSE 'role:everyone' END)),
       can_manage_group_id = COALESCE(u.can_manage_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_remove_members_group_id = COALESCE(u.can_remove_members_group_id, (SELECT id FROM g WHERE name = 'role:nobody')),
       can_mention_group_id = COALESCE(u.can_mention_group_id, (SELECT id FROM g WHERE name = CASE WHEN u.is_system_group THEN 'role:nobody' ELSE 'role:everyone' END))
     WHERE u.realm_id = $1 AND u.name IS NOT NULL`,
    realmId,
  );
}

/** A group setting's group (`x_group_id` ours, `x_group` Zulip's), or undefined. */
function groupSettingValue(row: Row, column: string): unknown {
  return column in row ? row[column] : row[column.slice(0, -3)];
}

/** Zulip 9.0 splits a user group's row into zerver_usergroup and zerver_namedusergroup. */
function userGroupRows(data: Row): Row[] {
  const named = rowsOf(data, "zerver_namedusergroup");
  if (named.length === 0) return rowsOf(data, "zerver_usergroup");
  const groups = new Map(rowsOf(data, "zerver_usergroup").map((g) => [idOf(g.id), g]));
  return named.map((n) => ({ ...(groups.get(idOf(n.usergroup_ptr) ?? idOf(n.id)) ?? {}), ...n, id: n.usergroup_ptr ?? n.id, realm: n.realm ?? n.realm_for_sharding }));
}

/** Rows of a table as the export holds them. */
function exportRows(data: Row, spec: ExportTable): Row[] {
  if (spec.key === "zerver_usergroup") return userGroupRows(data);
  // Zulip 10 renamed huddles.
  if (spec.key === "zerver_huddle" && data.zerver_huddle === undefined) return rowsOf(data, "zerver_directmessagegroup");
  return rowsOf(data, spec.key);
}

const SYSTEM_BOT_EMAIL = /^(notification-bot|welcome-bot|emailgateway|nagios-receive-bot|nagios-send-bot|reminder-bot)@/i;

/** The folder holding realm.json: the export's own, or the one folder inside it (the tarball's top). */
async function exportRoot(dir: string): Promise<string> {
  if (await stat(path.join(dir, "realm.json")).catch(() => null)) return dir;
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
  for (const entry of entries) {
    const inner = path.join(dir, entry.name);
    if (await stat(path.join(inner, "realm.json")).catch(() => null)) return inner;
  }
  throw new RealmImportError("this is not an organization export: it holds no realm.json");
}

/** A file of the export by its relative path, never outside the export's folder. */
function exportFile(root: string, relative: unknown): string | null {
  if (typeof relative !== "string" || relative === "" || relative.includes("\0")) return null;
  const resolved = path.resolve(root, relative);
  return resolved.startsWith(root + path.sep) ? resolved : null;
}

async function messageFiles(root: string): Promise<string[]> {
  return (await readdir(root)).filter((name) => /^messages-\d{6}\.json$/.test(name)).sort();
}

/** Imports the export in `dir` (unpacked) as a new organization. */
export async function importRealm(services: RealmImportServices, dir: string, options: RealmImportOptions): Promise<RealmImportResult> {
  const root = await exportRoot(path.resolve(dir));
  const subdomain = checkSubdomain(options.subdomain);
  const data = await readJson(path.join(root, "realm.json"));
  const realmRows = rowsOf(data, "zerver_realm");
  if (realmRows.length !== 1) throw new RealmImportError("realm.json must hold exactly one zerver_realm row");
  const written: string[] = [];
  try {
    return await services.prisma.$transaction(
      async (tx) => {
        const ictx = new ImportContext(tx, services.storage, root);
        try {
          return await importInto(ictx, services, root, data, subdomain, options);
        } finally {
          written.push(...ictx.written);
        }
      },
      { maxWait: 60_000, timeout: 24 * 3600_000 },
    );
  } catch (error) {
    await services.storage.delete(written).catch(() => undefined);
    throw error;
  }
}

async function importInto(ictx: ImportContext, services: RealmImportServices, root: string, data: Row, subdomain: string, options: RealmImportOptions): Promise<RealmImportResult> {
  const { tx } = ictx;
  if (await tx.realm.findUnique({ where: { string_id: subdomain } })) throw badRequest(`Subdomain '${subdomain}' is already in use`);
  await tx.$executeRawUnsafe("CREATE TEMPORARY TABLE import_message_ids (old_id bigint PRIMARY KEY, new_id integer NOT NULL) ON COMMIT DROP");

  // New ids for every row of realm.json's tables, so references can be followed in any order.
  for (const spec of [...REALM_TABLES, ...MESSAGE_CHILD_TABLES]) {
    if (!spec.hasId) continue;
    // System groups are this server's own (made with the realm), matched by name below.
    const rows = exportRows(data, spec).filter((row) => !(spec.key === "zerver_usergroup" && row.is_system_group === true));
    const ids = await ictx.allocate(spec.table, rows.length);
    const map = ictx.map(spec.key);
    rows.forEach((row, i) => {
      const old = idOf(row.id);
      if (old !== null) map.set(old, ids[i]);
    });
  }
  const realmId = ictx.map("zerver_realm").values().next().value;
  if (realmId === undefined) throw new RealmImportError("zerver_realm's row has no id");
  const source = rowsOf(data, "zerver_realm")[0];
  const name = (options.name ?? (typeof source.name === "string" ? source.name : subdomain)).trim().slice(0, 40) || subdomain;

  const deferred: Array<{ table: string; column: string; id: number; value: number }> = [];
  const groupSettings: Array<{ table: string; column: string; id: number; old: unknown }> = [];
  for (const spec of REALM_TABLES) {
    const out: Row[] = [];
    const rows = exportRows(data, spec);
    const groupColumns = (await ictx.columnsOf(spec.table)).map((c) => c.name).filter((name) => name.endsWith("_group_id") && spec.refs?.[name] === undefined);
    for (const row of rows) {
      if (spec.key === "zerver_usergroup" && row.is_system_group === true) continue;
      const newId = spec.hasId ? ictx.newId(spec.key, row.id) : null;
      if (spec.hasId && newId === null) continue;
      const translated = await translateRow(ictx, spec, row, realmId, newId);
      if (!translated) continue;
      for (const column of spec.deferred ?? []) {
        const target = spec.refs![column];
        const value = ictx.newId(target, fieldValue(spec, row, column));
        if (value !== null && newId !== null) deferred.push({ table: spec.table, column, id: newId, value });
      }
      for (const column of groupColumns) {
        const raw = groupSettingValue(row, column);
        if (raw !== null && raw !== undefined && newId !== null) groupSettings.push({ table: spec.table, column, id: newId, old: raw });
      }
      if (!(await adjustRow(ictx, spec, row, translated, { realmId, subdomain, name }))) continue;
      out.push(translated);
    }
    await insertRows(ictx, spec.table, out);
    if (spec.key === "zerver_realm") {
      // This server's system groups, with the realm's group settings at their defaults; the
      // export's system groups are them, by name.
      await createSystemGroups(tx, (await tx.realm.findUniqueOrThrow({ where: { id: realmId } })) as Realm);
      const ours = await systemGroupIds(tx, realmId);
      for (const group of exportRows(data, REALM_TABLES.find((t) => t.key === "zerver_usergroup")!)) {
        const id = ours.get(group.name as never);
        const old = idOf(group.id);
        if (group.is_system_group === true && id !== undefined && old !== null) ictx.map("zerver_usergroup").set(old, id);
      }
    }
    if (spec.key === "zerver_defaultstreamgroup") {
      const links: Row[] = [];
      for (const row of rows) {
        const group = ictx.newId(spec.key, row.id);
        for (const stream of Array.isArray(row.streams) ? row.streams : []) {
          const streamId = ictx.newId("zerver_stream", stream);
          if (group !== null && streamId !== null) links.push({ group_id: String(group), stream_id: String(streamId) });
        }
      }
      await insertRows(ictx, "default_stream_group_stream", links);
    }
  }
  for (const setting of groupSettings) {
    // A setting naming a group that did not come (an anonymous group) keeps this server's default.
    const value = ictx.newId("zerver_usergroup", setting.old);
    if (value !== null) deferred.push({ table: setting.table, column: setting.column, id: setting.id, value });
  }
  for (const update of deferred) {
    await tx.$executeRawUnsafe(`UPDATE "${update.table}" SET "${update.column}" = $1 WHERE id = $2`, update.value, update.id);
  }
  await fixHuddleHashes(ictx, realmId);
  await fixUserProfileValues(ictx, realmId);

  // The server's own bots: Zulip's live in its system realm (zerver_userprofile_crossrealm), ours
  // are the organization's users. Messages they sent are sent by this organization's.
  const realm = (await tx.realm.findUniqueOrThrow({ where: { id: realmId } })) as Realm;
  // Each user's email_address_visibility is theirs in an export of Zulip 7.0 or later (feature
  // level 163, where the realm has none: it stays 1); an older export has only the organization's,
  // which then becomes each user's. The address others see follows it, as everywhere.
  for (const user of await tx.userProfile.findMany({ where: { realm_id: realmId } })) {
    if (isSystemBot(user)) continue;
    const visibility = realm.email_address_visibility !== 1 ? realm.email_address_visibility : user.email_address_visibility;
    const email = shownEmail(user, visibility, botDomain(services.ctx));
    if (email !== user.email || user.email_address_visibility !== visibility) await tx.userProfile.update({ where: { id: user.id }, data: { email, email_address_visibility: visibility } });
  }
  const events = new EventRecorder();
  // Everyone in the system groups their role says.
  for (const user of await tx.userProfile.findMany({ where: { realm_id: realmId }, orderBy: { id: "asc" } })) await syncSystemGroupMemberships(tx, events, user);
  await ensureSystemBots(tx, events, services.ctx, realm);
  for (const bot of rowsOf(data, "zerver_userprofile_crossrealm")) {
    const old = idOf(bot.id);
    if (old === null || typeof bot.email !== "string") continue;
    const localPart = bot.email.slice(0, bot.email.indexOf("@")).toLowerCase();
    const existing = await tx.userProfile.findFirst({ where: { realm_id: realmId, is_bot: true, bot_owner_id: null, delivery_email: { startsWith: `${localPart}@`, mode: "insensitive" } } });
    const user =
      existing ??
      (await tx.userProfile.create({
        data: { realm_id: realmId, email: bot.email, delivery_email: bot.email, full_name: typeof bot.full_name === "string" ? bot.full_name : localPart, api_key: generateApiKey(), is_bot: true, bot_type: 1 },
      }));
    ictx.map("zerver_userprofile").set(old, user.id);
  }

  // Uploads, then messages (whose links to them are rewritten), then what refers to messages.
  const pathIds = await importAttachments(ictx, root, realmId);
  const messages = await importMessages(ictx, root, data, realmId, realmHost(subdomain, services.ctx.externalHost), pathIds);
  for (const spec of MESSAGE_CHILD_TABLES) {
    const rows = rowsOf(data, spec.key);
    for (let start = 0; start < rows.length; start += 1000) {
      const batch = rows.slice(start, start + 1000);
      const messageIds = await mapMessageIds(ictx, batch.map((r) => r.message));
      const out: Row[] = [];
      for (const row of batch) {
        const messageId = messageIds.get(idOf(row.message) ?? -1);
        const newId = ictx.newId(spec.key, row.id);
        if (messageId === undefined || newId === null) continue;
        const refs = Object.fromEntries(Object.entries(spec.refs ?? {}).filter(([column]) => column !== "message_id"));
        const translated = await translateRow(ictx, { ...spec, refs }, row, realmId, newId);
        if (!translated) continue;
        translated.message_id = String(messageId);
        if (spec.key === "zerver_reaction" && row.reaction_type === "realm_emoji") {
          const emoji = ictx.newId("zerver_realmemoji", row.emoji_code);
          if (emoji === null) continue;
          translated.emoji_code = String(emoji);
        }
        out.push(translated);
      }
      await insertRows(ictx, spec.table, dedupeReactions(spec, out));
    }
  }
  await linkAttachments(ictx, realmId);
  await tx.$executeRawUnsafe(
    "UPDATE stream s SET first_message_id = (SELECT min(m.id) FROM message m WHERE m.recipient_id = s.recipient_id) WHERE s.realm_id = $1",
    realmId,
  );
  await fillDefaultGroupSettings(ictx, realmId);
  await importAvatars(ictx, root, realmId);
  await importEmojiFiles(ictx, root, realmId);

  const counts = await tx.$queryRawUnsafe<{ users: bigint; streams: bigint }[]>(
    "SELECT (SELECT count(*) FROM user_profile WHERE realm_id = $1) AS users, (SELECT count(*) FROM stream WHERE realm_id = $1) AS streams",
    realmId,
  );
  return { realm: (await tx.realm.findUniqueOrThrow({ where: { id: realmId } })) as Realm, users: Number(counts[0].users), streams: Number(counts[0].streams), messages, files: ictx.files };
}

/** What each table needs beyond translation; false drops the row. */
async function adjustRow(ictx: ImportContext, spec: ExportTable, row: Row, out: Row, realm: { realmId: number; subdomain: string; name: string }): Promise<boolean> {
  switch (spec.key) {
    case "zerver_realm":
      out.string_id = realm.subdomain;
      out.name = realm.name;
      out.deactivated = false;
      // The icon and logo files are not carried over.
      if ("icon_source" in out) out.icon_source = "G";
      if ("logo_source" in out) out.logo_source = "D";
      return true;
    case "zerver_userprofile":
      out.api_key = generateApiKey();
      out.password_hash = null;
      if (typeof out.email !== "string" || typeof out.delivery_email !== "string") {
        const email = typeof row.delivery_email === "string" ? row.delivery_email : typeof row.email === "string" ? row.email : null;
        if (email === null) return false;
        out.email ??= email;
        out.delivery_email ??= email;
      }
      out.full_name ??= String(out.delivery_email);
      return true;
    case "zerver_stream":
      out.email_token ??= randomBytes(16).toString("hex");
      // The export's HTML is not taken as it is: rendered again from the description.
      out.rendered_description = typeof out.description === "string" && out.description !== "" ? renderMarkdown(out.description).html : "";
      return true;
    case "zerver_customprofilefieldvalue":
      if (typeof out.rendered_value === "string" && typeof out.value === "string") out.rendered_value = renderMarkdown(out.value).html;
      return true;
    case "zerver_realmemoji": {
      // This server's file name for it (`<id>.<ext>`), never a path the export chose.
      const ext = /\.(png|gif|jpe?g|webp)$/i.exec(typeof out.file_name === "string" ? out.file_name : "")?.[0].toLowerCase() ?? ".png";
      out.file_name = `${out.id}${ext}`;
      return true;
    }
    case "zerver_huddle":
      // Made from the members once the subscriptions are in (fixHuddleHashes).
      out.huddle_hash = `import-${out.id}`;
      return true;
    case "zerver_recipient": {
      const type = idOf(row.type);
      const target = type === 1 ? "zerver_userprofile" : type === 2 ? "zerver_stream" : type === 3 ? "zerver_huddle" : null;
      const typeId = target === null ? null : ictx.newId(target, row.type_id);
      if (typeId === null) return false;
      out.type_id = String(typeId);
      return true;
    }
    case "zerver_customprofilefield":
      // Zulip's field_type; ours is `type`.
      if (out.type === undefined && row.field_type !== undefined) out.type = String(row.field_type);
      return out.type !== undefined;
    case "zerver_realmfilter": {
      const columns = new Set((await ictx.columnsOf("realm_filter")).map((c) => c.name));
      const template = typeof row.url_template === "string" && row.url_template !== "" ? row.url_template : null;
      const format = typeof row.url_format_string === "string" && row.url_format_string !== "" ? row.url_format_string : null;
      if (template === null && format === null) return false;
      if (columns.has("url_template")) out.url_template = template ?? formatStringToTemplate(format!);
      if (columns.has("url_format_string")) out.url_format_string = format ?? templateToFormatString(template!);
      return true;
    }
    default:
      return true;
  }
}

/** A huddle's hash is the sha1 of its members' sorted ids: the new ids. */
async function fixHuddleHashes(ictx: ImportContext, realmId: number): Promise<void> {
  const huddles = await ictx.tx.$queryRawUnsafe<{ id: number; members: number[] | null }[]>(
    `SELECT h.id, array_agg(s.user_id ORDER BY s.user_id) AS members FROM huddle h
     LEFT JOIN subscription s ON s.recipient_id = h.recipient_id WHERE h.realm_id = $1 GROUP BY h.id`,
    realmId,
  );
  for (const huddle of huddles) {
    const members = (huddle.members ?? []).filter((id) => id !== null);
    const hash = createHash("sha1").update(members.join(",")).digest("hex");
    await ictx.tx.$executeRawUnsafe("UPDATE huddle SET huddle_hash = $1 WHERE id = $2", members.length > 0 ? hash : `import-${huddle.id}`, huddle.id);
  }
}

/** A "user" profile field's value lists user ids: the new ones. */
async function fixUserProfileValues(ictx: ImportContext, realmId: number): Promise<void> {
  const rows = await ictx.tx.$queryRawUnsafe<{ id: number; value: string }[]>(
    "SELECT v.id, v.value FROM custom_profile_field_value v JOIN custom_profile_field f ON f.id = v.field_id WHERE f.realm_id = $1 AND f.type = 6",
    realmId,
  );
  for (const row of rows) {
    let ids: unknown;
    try {
      ids = JSON.parse(row.value);
    } catch {
      continue;
    }
    if (!Array.isArray(ids)) continue;
    const mapped = ids.map((id) => ictx.newId("zerver_userprofile", id)).filter((id): id is number => id !== null);
    await ictx.tx.$executeRawUnsafe("UPDATE custom_profile_field_value SET value = $1 WHERE id = $2", JSON.stringify(mapped), row.id);
  }
}

function dedupeReactions(spec: ExportTable, rows: Row[]): Row[] {
  if (spec.key !== "zerver_reaction") return rows;
  const seen = new Set<string>();
  return rows.filter((r) => {
    const key = `${r.user_id}:${r.message_id}:${r.emoji_code}:${r.reaction_type}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function mapMessageIds(ictx: ImportContext, olds: unknown[]): Promise<Map<number, number>> {
  const ids = olds.map(idOf).filter((id): id is number => id !== null);
  if (ids.length === 0) return new Map();
  const rows = await ictx.tx.$queryRawUnsafe<{ old_id: bigint; new_id: number }[]>("SELECT old_id, new_id FROM import_message_ids WHERE old_id = ANY($1::bigint[])", ids);
  return new Map(rows.map((r) => [Number(r.old_id), r.new_id]));
}

/** attachment.json's rows, their files copied under new path ids. Returns old path id → new. */
async function importAttachments(ictx: ImportContext, root: string, realmId: number): Promise<Map<string, string>> {
  const pathIds = new Map<string, string>();
  const data = (await readJsonIfPresent(path.join(root, "attachment.json"))) as Row | null;
  if (!data) return pathIds;
  const records = ((await readJsonIfPresent(path.join(root, "uploads", "records.json"))) ?? []) as Row[];
  const fileOf = new Map<string, string>();
  for (const record of Array.isArray(records) ? records : []) {
    for (const name of [record.path, record.s3_path]) if (typeof name === "string" && typeof record.path === "string") fileOf.set(name, record.path);
  }
  const rows = rowsOf(data, "zerver_attachment");
  const ids = await ictx.allocate("attachment", rows.length);
  const out: Row[] = [];
  const links: Array<{ attachment: number; messages: unknown[] }> = [];
  for (const [i, row] of rows.entries()) {
    const old = idOf(row.id);
    if (old === null || typeof row.path_id !== "string") continue;
    ictx.map("zerver_attachment").set(old, ids[i]);
    const translated = await translateRow(ictx, ATTACHMENT_TABLE, row, realmId, ids[i]);
    if (!translated) continue;
    const pathId = newPathId(realmId, fileNameOfPathId(row.path_id));
    translated.path_id = pathId;
    const file = exportFile(path.join(root, "uploads"), fileOf.get(row.path_id) ?? row.path_id);
    const info = file ? await stat(file).catch(() => null) : null;
    if (!file || !info?.isFile()) continue;
    const contentType = typeof row.content_type === "string" && row.content_type ? row.content_type : contentTypeFor(fileNameOfPathId(pathId), "application/octet-stream");
    await ictx.put(uploadStorageKey(pathId), createReadStream(file), contentType);
    translated.size = String(info.size);
    pathIds.set(row.path_id, pathId);
    out.push(translated);
    links.push({ attachment: ids[i], messages: Array.isArray(row.messages) ? row.messages : [] });
  }
  await insertRows(ictx, "attachment", out);
  pendingLinks.set(ictx, links);
  return pathIds;
}

const pendingLinks = new WeakMap<ImportContext, Array<{ attachment: number; messages: unknown[] }>>();

async function linkAttachments(ictx: ImportContext, realmId: number): Promise<void> {
  const links = pendingLinks.get(ictx) ?? [];
  for (const link of links) {
    const messageIds = await mapMessageIds(ictx, link.messages);
    const rows = [...new Set(messageIds.values())].map((messageId) => ({ attachment_id: String(link.attachment), message_id: String(messageId) }));
    await insertRows(ictx, "attachment_message", rows);
  }
  // An attachment of a public stream's message is the realm's to read (as a send marks it).
  await ictx.tx.$executeRawUnsafe(
    `UPDATE attachment a SET is_realm_public = true WHERE a.realm_id = $1 AND EXISTS (
       SELECT 1 FROM attachment_message am JOIN message m ON m.id = am.message_id JOIN stream s ON s.recipient_id = m.recipient_id
       WHERE am.attachment_id = a.id AND NOT s.invite_only)`,
    realmId,
  );
}

const UPLOAD_LINK = /\/user_uploads\/(\d+\/[^\s)"'<>\]]+)/g;

function rewriteUploadLinks(text: string, pathIds: Map<string, string>): string {
  if (!text.includes("/user_uploads/")) return text;
  return text.replace(UPLOAD_LINK, (whole, pathId: string) => {
    const replaced = pathIds.get(pathId) ?? pathIds.get(decodeURIComponent(pathId));
    return replaced === undefined ? whole : `/user_uploads/${replaced}`;
  });
}

const MENTION_WITH_ID = /(@_?\*\*)([^*]*)\|(\d{1,15})\*\*/g;

/** `@**Name|id**` mentions name the user by the export's id: the new one (unknown ids left as they are). */
function rewriteMentionIds(ictx: ImportContext, text: string): string {
  if (!text.includes("|")) return text;
  return text.replace(MENTION_WITH_ID, (whole, open: string, name: string, id: string) => {
    const mapped = ictx.newId("zerver_userprofile", id);
    return mapped === null ? whole : `${open}${name}|${mapped}**`;
  });
}

async function importMessages(ictx: ImportContext, root: string, data: Row, realmId: number, host: string, pathIds: Map<string, string>): Promise<number> {
  const clients = new Map<number, string>();
  for (const client of rowsOf(data, "zerver_client")) {
    const id = idOf(client.id);
    if (id !== null && typeof client.name === "string") clients.set(id, client.name);
  }
  const realm = await ictx.tx.realm.findUniqueOrThrow({ where: { id: realmId } });
  let count = 0;
  for (const name of await messageFiles(root)) {
    const file = await readJson(path.join(root, name));
    const messages = rowsOf(file, MESSAGE_TABLE.key);
    const ids = await ictx.allocate("message", messages.length);
    const batch = new Map<number, number>();
    const out: Row[] = [];
    const edits: Row[] = [];
    for (const [i, row] of messages.entries()) {
      const old = idOf(row.id);
      const translated = old === null ? null : await translateRow(ictx, MESSAGE_TABLE, row, realmId, ids[i]);
      if (!translated || old === null) continue;
      batch.set(old, ids[i]);
      for (const edit of await editRows(ictx, row, ids[i], translated, realmId, { imagePreviews: realm.inline_image_preview, realmHost: host }, pathIds)) edits.push(edit);
      const content = rewriteMentionIds(ictx, rewriteUploadLinks(typeof row.content === "string" ? row.content : "", pathIds));
      translated.content = content;
      const client = clients.get(idOf(row.sending_client) ?? -1) ?? (typeof row.sending_client === "string" ? row.sending_client : undefined);
      if (client !== undefined) translated.sending_client = client;
      // Rendered again: mentions, stream links and emoji name this organization's new ids, and no
      // HTML from the export reaches a client as it came.
      const context = await fetchRenderContext(ictx.tx, realmId, content, { imagePreviews: realm.inline_image_preview, realmHost: host });
      const rendered = renderMarkdown(content, context);
      translated.rendered_content = rendered.html;
      translated.rendered_content_version = String(MARKDOWN_VERSION);
      translated.has_link = rendered.hasLink;
      translated.has_image = rendered.hasImage;
      translated.is_me_message = rendered.isMeMessage;
      translated.has_attachment = content.includes("/user_uploads/");
      out.push(translated);
    }
    await insertRows(ictx, "message", out);
    await insertRows(ictx, "message_edit", edits);
    if (batch.size > 0) {
      await ictx.tx.$executeRawUnsafe(
        "INSERT INTO import_message_ids (old_id, new_id) SELECT * FROM unnest($1::bigint[], $2::int[])",
        [...batch.keys()],
        [...batch.values()],
      );
    }
    const userMessages: Row[] = [];
    const seen = new Set<string>();
    for (const row of rowsOf(file, USER_MESSAGE_TABLE.key)) {
      const messageId = batch.get(idOf(row.message) ?? -1);
      const userId = ictx.newId("zerver_userprofile", row.user_profile);
      if (messageId === undefined || userId === null) continue;
      const key = `${userId}:${messageId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const flags = idOf(row.flags_mask) ?? (typeof row.flags === "number" ? row.flags : 0);
      userMessages.push({ user_id: String(userId), message_id: String(messageId), flags: String(flags) });
    }
    await insertRows(ictx, "user_message", userMessages);
    count += out.length;
  }
  return count;
}

/** The most edits of one message taken from an export (Zulip keeps them all; this bounds a hostile file). */
const MAX_EDITS_PER_MESSAGE = 1000;
/** Zulip's topics are at most 60 characters. */
const MAX_TOPIC_LENGTH = 60;

/**
 * A message's edit_history (Zulip's: a JSON string, or a list, newest edit first) as message_edit
 * rows, oldest first so their ids keep the order: users and streams by their new ids, an unknown
 * editor the message's sender, an unknown stream dropped from its entry. Earlier contents are
 * rendered again here (never the export's HTML). From the history, last_edit_time becomes its
 * newest content edit and last_moved_time its newest move (resolving a topic is none), as feature
 * level 365 reads them: Zulip's last_edit_time counts moves too.
 */
async function editRows(
  ictx: ImportContext,
  row: Row,
  messageId: number,
  message: Row,
  realmId: number,
  render: { imagePreviews: boolean; realmHost: string },
  pathIds: Map<string, string>,
): Promise<Row[]> {
  let history: unknown = row.edit_history;
  if (typeof history === "string") {
    try {
      history = JSON.parse(history);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(history)) return [];
  const out: Row[] = [];
  let newestContent: number | null = null;
  let newestMove: number | null = null;
  // Newest first: an entry's topic after the edit is the newer topic change's previous one.
  let topicAfter = typeof message.subject === "string" ? message.subject : "";
  const unresolved = (topic: string) => topic.replace(/^[✔ ]+/u, "");
  for (const entry of history.slice(0, MAX_EDITS_PER_MESSAGE) as unknown[]) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) continue;
    const e = entry as Row;
    const timestamp = typeof e.timestamp === "number" && Number.isFinite(e.timestamp) && e.timestamp >= 0 && e.timestamp < 1e11 ? e.timestamp : null;
    if (timestamp === null) continue;
    const edit: Row = {
      message_id: String(messageId),
      user_id: String(ictx.newId("zerver_userprofile", e.user_id) ?? message.sender_id),
      timestamp: new Date(Math.floor(timestamp) * 1000).toISOString(),
    };
    // Zulip before 5.0 (feature level 118) said prev_subject.
    const prevTopic = typeof e.prev_topic === "string" ? e.prev_topic : typeof e.prev_subject === "string" ? e.prev_subject : null;
    if (prevTopic !== null) edit.prev_topic = prevTopic.replaceAll("\0", "").slice(0, MAX_TOPIC_LENGTH);
    if (e.prev_stream !== undefined && e.prev_stream !== null) {
      const stream = ictx.newId("zerver_stream", e.prev_stream);
      if (stream !== null) edit.prev_stream_id = String(stream);
    }
    if (typeof e.prev_content === "string") {
      const content = rewriteMentionIds(ictx, rewriteUploadLinks(e.prev_content.replaceAll("\0", ""), pathIds));
      edit.prev_content = content;
      const context = await fetchRenderContext(ictx.tx, realmId, content, render);
      edit.prev_rendered_content = renderMarkdown(content, context).html;
      edit.prev_rendered_content_version = String(MARKDOWN_VERSION);
    }
    if (edit.prev_topic === undefined && edit.prev_stream_id === undefined && edit.prev_content === undefined) continue;
    let moved = edit.prev_stream_id !== undefined;
    if (typeof edit.prev_topic === "string") {
      const after = typeof e.topic === "string" ? e.topic : topicAfter;
      if (unresolved(edit.prev_topic) !== unresolved(after)) moved = true;
      topicAfter = edit.prev_topic;
    }
    if (moved) newestMove = Math.max(newestMove ?? 0, timestamp);
    if (edit.prev_content !== undefined) newestContent = Math.max(newestContent ?? 0, timestamp);
    out.push(edit);
  }
  if (out.length > 0) {
    const at = (seconds: number | null) => (seconds === null ? null : new Date(Math.floor(seconds) * 1000).toISOString());
    message.last_edit_time = at(newestContent);
    message.last_moved_time = at(newestMove);
  }
  return out.reverse();
}

/** avatars/records.json: each user's files, by what their names end with. */
async function importAvatars(ictx: ImportContext, root: string, realmId: number): Promise<void> {
  const records = await readJsonIfPresent(path.join(root, "avatars", "records.json"));
  const byUser = new Map<number, { small?: string; medium?: string; original?: string }>();
  for (const record of Array.isArray(records) ? (records as Row[]) : []) {
    const userId = ictx.newId("zerver_userprofile", record.user_profile_id);
    const file = exportFile(path.join(root, "avatars"), record.path);
    if (userId === null || file === null) continue;
    const files = byUser.get(userId) ?? {};
    const name = String(record.path);
    if (name.endsWith(".original")) files.original = file;
    else if (name.endsWith("-medium.png")) files.medium = file;
    else if (name.endsWith(".png")) files.small = file;
    byUser.set(userId, files);
  }
  for (const [userId, files] of byUser) {
    const keys = avatarStorageKeys(realmId, userId);
    const source = files.original ?? files.small;
    if (!source) continue;
    const info = await stat(source).catch(() => null);
    if (!info?.isFile() || info.size > MAX_AVATAR_BYTES) continue;
    try {
      const images = await resizeAvatar(await readFile(source));
      await ictx.put(keys.original, images.original.data, images.original.contentType);
      await ictx.put(keys.medium, images.medium, "image/png");
      await ictx.put(keys.small, images.small, "image/png");
    } catch {
      continue;
    }
  }
  // A user whose avatar did not come shows a gravatar rather than a broken image.
  const withFiles = [...byUser.keys()];
  await ictx.tx.$executeRawUnsafe(
    "UPDATE user_profile SET avatar_source = 'G' WHERE realm_id = $1 AND avatar_source = 'U' AND NOT (id = ANY($2::int[]))",
    realmId,
    withFiles.length === 0 ? [0] : withFiles,
  );
}

/** emoji/records.json: each custom emoji's image (and original), at this server's key for its file name. */
async function importEmojiFiles(ictx: ImportContext, root: string, realmId: number): Promise<void> {
  const records = await readJsonIfPresent(path.join(root, "emoji", "records.json"));
  const emoji = await ictx.tx.$queryRawUnsafe<{ id: number; file_name: string; name: string }[]>("SELECT id, file_name, name FROM realm_emoji WHERE realm_id = $1", realmId);
  const byId = new Map(emoji.map((e) => [e.id, e]));
  for (const record of Array.isArray(records) ? (records as Row[]) : []) {
    const newId = ictx.newId("zerver_realmemoji", record.id);
    const row = newId === null ? emoji.find((e) => e.name === record.name) : byId.get(newId);
    const file = exportFile(path.join(root, "emoji"), record.path);
    if (!row || !file) continue;
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) continue;
    const key = customEmojiStorageKey(realmId, row.file_name) + (String(record.path).endsWith(".original") ? ".original" : "");
    await ictx.put(key, createReadStream(file), contentTypeFor(row.file_name, "application/octet-stream"));
  }
}
