// Writes an organization's export in Zulip's format (realm-export-format.ts) as one gzip tar in
// file storage. Memory stays bounded whatever the organization's size: tables are read in pages
// and written as they come to JSON files in a temporary folder, messages a file of 1,000 at a time
// with their user_message rows, and stored files are streamed from storage into the tar. Like
// Zulip's, the export is not one snapshot: what changes while it runs may or may not be in it.
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@chat/db";
import type { FileStorage } from "@chat/storage";
import { avatarStorageKeys, customEmojiStorageKey } from "./avatars.ts";
import { uploadStorageKey } from "./uploads.ts";
import { EMAIL_ADDRESS_VISIBILITY_NOBODY } from "./email-visibility.ts";
import { newUserSettingColumns } from "../actions/realm-user-defaults.ts";
import {
  ATTACHMENT_TABLE,
  exportFieldName,
  MESSAGE_CHILD_TABLES,
  MESSAGE_TABLE,
  MESSAGES_PER_FILE,
  messageFileName,
  REALM_TABLES,
  USER_MESSAGE_TABLE,
  type ExportTable,
} from "./realm-export-format.ts";
import { tarGzStream, type TarEntry } from "./realm-export-tar.ts";

type Row = Record<string, unknown>;
type Db = Pick<PrismaClient, "$queryRawUnsafe">;
/** What writing an export reads with (the organization's defaults are read with $queryRaw). */
type ExportDb = Pick<PrismaClient, "$queryRawUnsafe" | "$queryRaw">;

/** Rows read at once from a table with ids. */
const PAGE = 2000;
/** The largest export this server writes (the tarball's bytes). */
export const MAX_EXPORT_BYTES = 64 * 1024 ** 3;

export interface RealmExportOptions {
  /** Zulip's public export (what POST /export/realm makes by default): only public streams' messages. */
  publicOnly: boolean;
  /**
   * Zulip's full export with consent (export_type 2, feature level 304): private data of these
   * users only (consentedUserIds in actions/realm-export.ts). Absent with publicOnly false: every
   * user's (the operators' full export).
   */
  consentedUserIds?: number[];
}

/**
 * Tables of one user's private data, by the column naming the user (Zulip's Configs with
 * limit_to_consenting_users): in an export with consent, only consenting users' rows; in a public
 * export, nobody's. Custom profile field values are public, as Zulip's.
 */
const CONSENT_LIMITED: Record<string, string> = {
  alert_word: "user_id",
  user_status: "user_id",
  user_topic: "user_id",
  muted_user: "user_id",
  service: "user_id",
  bot_config_data: "bot_profile_id",
  bot_storage_data: "user_id",
};

/** A subscription's personal choices, as a user whose private data the export does not hold is exported with (Zulip's scrubbed Subscription). */
const SCRUBBED_SUBSCRIPTION: Row = {
  is_muted: false,
  pin_to_top: false,
  desktop_notifications: null,
  audible_notifications: null,
  push_notifications: null,
  email_notifications: null,
  wildcard_mentions_notify: null,
};
/** Zulip's STREAM_ASSIGNMENT_COLORS' first few: a colour that says nothing of the user's. */
const NEUTRAL_COLORS = ["#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5"];

/**
 * What becomes of the row of a user whose private data the export does not hold (Zulip's
 * custom_fetch_user_profile): their personal settings are the organization's defaults for new
 * users, their email address visibility stays, and if nobody may see their address, the export
 * does not either: it holds a made-up one, and in a public export the account (which cannot be
 * used without its address) becomes a deactivated mirror dummy.
 */
async function userScrubber(db: ExportDb, realmId: number, privateOf: Set<number>, publicOnly: boolean): Promise<(row: Row) => void> {
  const [realm] = await db.$queryRawUnsafe<{ id: number; default_twenty_four_hour_time: boolean }[]>("SELECT id, default_twenty_four_hour_time FROM realm WHERE id = $1", realmId);
  const defaults = Object.entries(await newUserSettingColumns(db, realm)).filter(([column]) => column !== "email_address_visibility");
  return (row) => {
    if (privateOf.has(row.id as number)) return;
    for (const [column, value] of defaults) if (column in row) row[column] = value;
    if (row.email_address_visibility === EMAIL_ADDRESS_VISIBILITY_NOBODY) {
      const domain = String(row.email ?? "").split("@").pop() || "export.invalid";
      row.delivery_email = `exported-user-${randomBytes(16).toString("hex")}@${domain}`;
      if (publicOnly) {
        row.is_mirror_dummy = true;
        row.is_active = false;
      }
    }
  };
}

/** A literal array of ids for SQL (integers only, so nothing can be injected). */
function idArray(ids: number[]): string {
  return `'{${ids.filter((id) => Number.isSafeInteger(id)).join(",")}}'::int[]`;
}

/**
 * The condition on `t` (a message, `$1` the realm) choosing the messages an export holds:
 *  - public: the public streams' messages;
 *  - with consent (Zulip's export_partial_message_files for EXPORT_FULL_WITH_CONSENT): the public
 *    streams', those of private streams with shared history a consenting user is subscribed to,
 *    those of private streams with protected history a consenting user is subscribed to and
 *    received, and the direct messages a consenting user sent or received;
 *  - full: all.
 * Unlike Zulip, which counts any subscription a consenting user ever had, only current ones count:
 * a user who left a private stream consents to nothing said there since.
 */
function messageCondition(options: RealmExportOptions): string {
  const publicStreams = "SELECT recipient_id FROM stream WHERE realm_id = $1 AND NOT invite_only AND recipient_id IS NOT NULL";
  if (options.publicOnly) return ` AND t.recipient_id IN (${publicStreams})`;
  if (options.consentedUserIds === undefined) return "";
  const ids = idArray(options.consentedUserIds);
  const subscribed = `SELECT recipient_id FROM subscription WHERE active AND user_id = ANY(${ids})`;
  const received = `EXISTS (SELECT 1 FROM user_message um WHERE um.message_id = t.id AND um.user_id = ANY(${ids}))`;
  return (
    ` AND (t.recipient_id IN (${publicStreams})` +
    ` OR t.recipient_id IN (SELECT recipient_id FROM stream WHERE realm_id = $1 AND invite_only AND history_public_to_subscribers AND recipient_id IN (${subscribed}))` +
    ` OR (t.recipient_id IN (SELECT recipient_id FROM stream WHERE realm_id = $1 AND invite_only AND NOT history_public_to_subscribers AND recipient_id IN (${subscribed})) AND ${received})` +
    ` OR (t.recipient_id IN (SELECT id FROM recipient WHERE type <> 2) AND ${received}))`
  );
}

const columnCache = new Map<string, string[]>();

/** The table's columns, in order (cached: the schema does not change under a running server). */
export async function tableColumns(db: Db, table: string): Promise<string[]> {
  let columns = columnCache.get(table);
  if (!columns) {
    const rows = await db.$queryRawUnsafe<{ column_name: string }[]>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
      table,
    );
    columns = rows.map((row) => row.column_name);
    columnCache.set(table, columns);
  }
  return columns;
}

/** Seconds since the epoch, as Zulip's floatify_datetime_fields writes times. */
function exportValue(value: unknown): unknown {
  if (value instanceof Date) return value.getTime() / 1000;
  if (typeof value === "bigint") return Number(value);
  return value;
}

function exportRow(spec: ExportTable, columns: string[], row: Row): Row {
  const out: Row = {};
  for (const column of columns) {
    if (spec.omit?.includes(column)) continue;
    out[exportFieldName(spec, column)] = exportValue(row[column]);
  }
  return out;
}

/** A JSON file written as it is produced. */
class JsonFileWriter {
  private readonly stream: WriteStream;
  constructor(readonly file: string) {
    this.stream = createWriteStream(file);
  }
  async write(text: string): Promise<void> {
    if (!this.stream.write(text)) await once(this.stream, "drain");
  }
  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, "finish");
  }
}

/** Writes `"key":[rows...]` of one table, page by page. */
async function writeTable(db: Db, out: JsonFileWriter, spec: ExportTable, realmId: number, extra: string, first: boolean, decorate?: (rows: Row[]) => Promise<void>): Promise<void> {
  const columns = await tableColumns(db, spec.table);
  await out.write(`${first ? "" : ","}${JSON.stringify(spec.key)}:[`);
  // A table this database does not have (yet): nothing of it to export.
  if (columns.length === 0) return void (await out.write("]"));
  let count = 0;
  const emit = async (rows: Row[]) => {
    const exported = rows.map((row) => exportRow(spec, columns, row));
    if (decorate) await decorate(exported);
    for (const row of exported) await out.write(`${count++ === 0 ? "" : ","}${JSON.stringify(row)}`);
  };
  if (spec.hasId) {
    for (let after = 0; ; ) {
      const rows = await db.$queryRawUnsafe<Row[]>(`SELECT * FROM "${spec.table}" t WHERE (${spec.where})${extra} AND t.id > $2 ORDER BY t.id LIMIT ${PAGE}`, realmId, after);
      if (rows.length === 0) break;
      await emit(rows);
      after = rows[rows.length - 1].id as number;
    }
  } else {
    await emit(await db.$queryRawUnsafe<Row[]>(`SELECT * FROM "${spec.table}" t WHERE (${spec.where})${extra}`, realmId));
  }
  await out.write("]");
}

/**
 * The messages' edit histories as Zulip's zerver_message.edit_history holds them: a JSON string of
 * a list, newest edit first, each entry with what the edit changed (`prev_content` with its
 * rendering, `prev_topic` with the `topic` after it, `prev_stream` with the `stream` after it).
 * Our message_edit rows hold only the before; the after is found walking back from the message.
 */
async function editHistories(db: Db, messages: Row[]): Promise<Map<number, string>> {
  const histories = new Map<number, string>();
  const ids = messages.map((m) => m.id as number);
  if (ids.length === 0) return histories;
  const edits = await db.$queryRawUnsafe<Row[]>(
    "SELECT message_id, user_id, timestamp, prev_content, prev_rendered_content, prev_rendered_content_version, prev_topic, prev_stream_id FROM message_edit WHERE message_id = ANY($1::int[]) ORDER BY message_id, id DESC",
    ids,
  );
  if (edits.length === 0) return histories;
  const streams = await db.$queryRawUnsafe<{ id: number; recipient_id: number }[]>(
    "SELECT id, recipient_id FROM stream WHERE recipient_id = ANY($1::int[])",
    [...new Set(messages.map((m) => m.recipient_id as number))],
  );
  const streamOf = new Map(streams.map((s) => [s.recipient_id, s.id]));
  const byId = new Map(messages.map((m) => [m.id as number, m]));
  const grouped = new Map<number, Row[]>();
  for (const edit of edits) {
    const list = grouped.get(edit.message_id as number);
    if (list) list.push(edit);
    else grouped.set(edit.message_id as number, [edit]);
  }
  for (const [messageId, list] of grouped) {
    const message = byId.get(messageId)!;
    let topic = message.subject as string;
    let stream = streamOf.get(message.recipient_id as number) ?? null;
    const entries: Row[] = [];
    for (const edit of list) {
      const entry: Row = { user_id: edit.user_id, timestamp: Math.floor((edit.timestamp as Date).getTime() / 1000) };
      if (edit.prev_content !== null) {
        entry.prev_content = edit.prev_content;
        entry.prev_rendered_content = edit.prev_rendered_content;
        entry.prev_rendered_content_version = edit.prev_rendered_content_version;
      }
      if (edit.prev_topic !== null) {
        entry.prev_topic = edit.prev_topic;
        entry.topic = topic;
        topic = edit.prev_topic as string;
      }
      if (edit.prev_stream_id !== null) {
        entry.prev_stream = edit.prev_stream_id;
        if (stream !== null) entry.stream = stream;
        stream = edit.prev_stream_id as number;
      }
      entries.push(entry);
    }
    histories.set(messageId, JSON.stringify(entries));
  }
  return histories;
}

interface StagedFile {
  path: string;
  file: string;
}

interface StoredEntry {
  path: string;
  key: string;
  size: number;
}

/**
 * Writes the export of `realmId` to storage under `key`. Returns its size. Everything staged on
 * disk is removed, whether or not it succeeds; a failure leaves nothing in storage.
 */
export async function writeRealmExport(db: ExportDb, storage: FileStorage, realmId: number, key: string, options: RealmExportOptions): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), "realm-export-"));
  try {
    const staged: StagedFile[] = [];
    const stage = (name: string) => {
      const file = path.join(dir, name.replaceAll("/", "_"));
      staged.push({ path: name, file });
      return new JsonFileWriter(file);
    };
    // The messages of the export: all of them, those of public streams, or those consenting users may read.
    const messageWhere = messageCondition(options);
    const consenting = options.consentedUserIds === undefined ? null : new Set(options.consentedUserIds);
    // The users whose private data the export holds (null: everyone's). A public export holds
    // nobody's, as Zulip's: its users' messages read and flags stay (fetch_usermessages), their
    // alert words, muted users and topics, statuses, bots' data, subscriptions' and account's
    // personal settings do not.
    const privateOf = options.publicOnly ? new Set<number>() : consenting;
    const scrubUsers = privateOf === null ? null : await userScrubber(db, realmId, privateOf, options.publicOnly);

    // realm.json
    const realm = stage("realm.json");
    await realm.write("{");
    let first = true;
    for (const spec of REALM_TABLES) {
      const limitedBy = privateOf === null ? undefined : CONSENT_LIMITED[spec.table];
      const extra = limitedBy === undefined ? "" : ` AND t.${limitedBy} = ANY(${idArray([...privateOf!])})`;
      const decorate =
        spec.key === "zerver_userprofile" && scrubUsers !== null
          ? async (rows: Row[]) => rows.forEach(scrubUsers)
          : spec.key === "zerver_subscription" && privateOf !== null
          ? async (rows: Row[]) => {
              for (const row of rows) {
                if (privateOf.has(row.user_profile as number)) continue;
                for (const [field, value] of Object.entries(SCRUBBED_SUBSCRIPTION)) if (field in row) row[field] = value;
                if ("color" in row) row.color = NEUTRAL_COLORS[(row.recipient as number) % NEUTRAL_COLORS.length];
              }
            }
          : spec.key === "zerver_defaultstreamgroup"
          ? async (rows: Row[]) => {
              for (const row of rows) {
                const streams = await db.$queryRawUnsafe<{ stream_id: number }[]>("SELECT stream_id FROM default_stream_group_stream WHERE group_id = $1 ORDER BY stream_id", row.id);
                row.streams = streams.map((s) => s.stream_id);
              }
            }
          : undefined;
      await writeTable(db, realm, spec, realmId, extra, first, decorate);
      first = false;
    }
    const exportedMessage = `t.message_id IN (SELECT id FROM message t WHERE t.realm_id = $1${messageWhere})`;
    for (const spec of MESSAGE_CHILD_TABLES) await writeTable(db, realm, { ...spec, where: exportedMessage }, realmId, "", false);
    // Zulip's messages name their client by a zerver_client row.
    const clients = await db.$queryRawUnsafe<{ sending_client: string }[]>(`SELECT DISTINCT sending_client FROM message t WHERE t.realm_id = $1${messageWhere} ORDER BY 1`, realmId);
    const clientIds = new Map(clients.map((c, i) => [c.sending_client, i + 1]));
    await realm.write(`,"zerver_client":${JSON.stringify(clients.map((c, i) => ({ id: i + 1, name: c.sending_client })))}`);
    // Zulip's system bots live in its system realm; ours are the realm's own users.
    await realm.write(`,"zerver_userprofile_crossrealm":[],"export_format":"chat-server 1"}`);
    await realm.close();

    // messages-NNNNNN.json
    const messageColumns = await tableColumns(db, MESSAGE_TABLE.table);
    const userMessageColumns = await tableColumns(db, USER_MESSAGE_TABLE.table);
    let fileIndex = 1;
    for (let after = 0; ; fileIndex++) {
      const messages = await db.$queryRawUnsafe<Row[]>(
        `SELECT * FROM message t WHERE t.realm_id = $1${messageWhere} AND t.id > $2 ORDER BY t.id LIMIT ${MESSAGES_PER_FILE}`,
        realmId,
        after,
      );
      if (messages.length === 0 && fileIndex > 1) break;
      const out = stage(messageFileName(fileIndex));
      await out.write('{"zerver_message":[');
      const ids = messages.map((m) => m.id as number);
      const histories = await editHistories(db, messages);
      await out.write(
        messages
          .map((m) =>
            JSON.stringify({
              ...exportRow(MESSAGE_TABLE, messageColumns, m),
              sending_client: clientIds.get(m.sending_client as string) ?? null,
              type: 1,
              edit_history: histories.get(m.id as number) ?? null,
            }),
          )
          .join(","),
      );
      await out.write('],"zerver_usermessage":[');
      // With consent, only the consenting users' rows (Zulip's fetch_usermessages): what others read or starred is theirs.
      const userMessages =
        ids.length === 0
          ? []
          : await db.$queryRawUnsafe<Row[]>(
              `SELECT * FROM user_message WHERE message_id = ANY($1::int[])${consenting === null ? "" : ` AND user_id = ANY(${idArray([...consenting])})`} ORDER BY message_id, user_id`,
              ids,
            );
      await out.write(userMessages.map((um) => JSON.stringify(exportRow(USER_MESSAGE_TABLE, userMessageColumns, um))).join(","));
      await out.write("]}");
      await out.close();
      if (messages.length === 0) break;
      after = ids[ids.length - 1];
    }

    // attachment.json and the uploads they name
    const attachments = stage("attachment.json");
    const uploads: StoredEntry[] = [];
    const uploadRecords: Row[] = [];
    const attachmentWhere = messageWhere !== "" ? ` AND t.id IN (SELECT attachment_id FROM attachment_message WHERE ${exportedMessage.replace("t.message_id", "message_id")})` : "";
    await attachments.write("{");
    await writeTable(db, attachments, ATTACHMENT_TABLE, realmId, attachmentWhere, true, async (rows) => {
      for (const row of rows) {
        const links = await db.$queryRawUnsafe<{ message_id: number }[]>(
          `SELECT message_id FROM attachment_message am WHERE am.attachment_id = $1 AND am.message_id IN (SELECT id FROM message t WHERE t.realm_id = $2${messageWhere}) ORDER BY message_id`,
          row.id,
          realmId,
        );
        row.messages = links.map((l) => l.message_id);
        const pathId = row.path_id as string;
        const stored = await storage.stat(uploadStorageKey(pathId));
        if (!stored) continue;
        uploads.push({ path: `uploads/${pathId}`, key: uploadStorageKey(pathId), size: stored.size });
        uploadRecords.push({ path: pathId, s3_path: pathId, realm_id: realmId, user_profile_id: row.owner, size: stored.size, content_type: stored.contentType, last_modified: row.create_time });
      }
    });
    await attachments.write("}");
    await attachments.close();

    // avatars and custom emoji
    const avatars: StoredEntry[] = [];
    const avatarRecords: Row[] = [];
    const avatarUsers = await db.$queryRawUnsafe<{ id: number; email: string }[]>("SELECT id, email FROM user_profile WHERE realm_id = $1 AND avatar_source = 'U' ORDER BY id", realmId);
    for (const user of avatarUsers) {
      for (const storageKey of Object.values(avatarStorageKeys(realmId, user.id))) {
        const stored = await storage.stat(storageKey);
        if (!stored) continue;
        const relative = storageKey.slice("avatars/".length);
        avatars.push({ path: `avatars/${relative}`, key: storageKey, size: stored.size });
        avatarRecords.push({ path: relative, s3_path: relative, realm_id: realmId, user_profile_id: user.id, user_profile_email: user.email, size: stored.size, content_type: stored.contentType });
      }
    }
    const emoji: StoredEntry[] = [];
    const emojiRecords: Row[] = [];
    const emojiRows = await db.$queryRawUnsafe<{ id: number; name: string; file_name: string; author_id: number | null; deactivated: boolean }[]>(
      "SELECT id, name, file_name, author_id, deactivated FROM realm_emoji WHERE realm_id = $1 ORDER BY id",
      realmId,
    );
    for (const row of emojiRows) {
      const storageKey = customEmojiStorageKey(realmId, row.file_name);
      for (const candidate of [storageKey, `${storageKey}.original`]) {
        const stored = await storage.stat(candidate);
        if (!stored) continue;
        const relative = candidate.slice("avatars/".length);
        emoji.push({ path: `emoji/${relative}`, key: candidate, size: stored.size });
        emojiRecords.push({ path: relative, s3_path: relative, realm_id: realmId, id: row.id, name: row.name, file_name: row.file_name, author: row.author_id, deactivated: row.deactivated });
      }
    }
    for (const [name, records] of [["uploads/records.json", uploadRecords], ["avatars/records.json", avatarRecords], ["emoji/records.json", emojiRecords]] as const) {
      const out = stage(name);
      await out.write(JSON.stringify(records));
      await out.close();
    }

    const top = `zulip-export-${realmId}-${Date.now().toString(36)}`;
    const entries = async function* (): AsyncGenerator<TarEntry> {
      for (const file of staged) {
        const { size } = await stat(file.file);
        yield { path: `${top}/${file.path}`, size, open: async () => createReadStream(file.file) };
      }
      for (const stored of [...uploads, ...avatars, ...emoji]) {
        yield {
          path: `${top}/${stored.path}`,
          size: stored.size,
          open: async () => {
            const object = await storage.get(stored.key);
            if (!object) throw new Error(`${stored.key} disappeared from storage during the export`);
            return object.body;
          },
        };
      }
    };
    const written = await storage.put(key, tarGzStream(entries()), { contentType: "application/gzip", maxBytes: MAX_EXPORT_BYTES });
    return written.size;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
