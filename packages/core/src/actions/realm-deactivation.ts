// An owner deactivates their organization (Zulip's deactivate_realm view and do_deactivate_realm,
// feature level 332), and the worker deletes a deactivated organization's data once its
// scheduled_deletion_date has passed (Zulip's scrub/delete of a realm).
//
// Deactivation writes the realm row, which is what ends access: every cached actor is checked
// against the realm row's version (actor-cache.ts), so the next request of any of its users, on any
// node, authenticates again and is refused with REALM_DEACTIVATED. Browser sessions are deleted too.
//
// Deletion is driven by the catalog, not by a list kept by hand, so a table added later is covered:
// a row belongs to the organization if it has the organization's realm_id, or a foreign key to a
// row that belongs to it (its users, messages, streams, groups, ...). All of it is deleted in one
// transaction (mostly one statement), and the stored files are removed after it commits.
import type { PrismaClient, Tx } from "@chat/db";
import { Prisma } from "@chat/db";
import type { FileStorage } from "@chat/storage";
import { logger } from "@chat/logger";
import { badRequest, OwnerRequiredError } from "../errors.ts";
import type { EventRecorder } from "../events.ts";
import type { Actor } from "../models.ts";
import { isOwner } from "../lib/roles.ts";
import { avatarStorageKeys, customEmojiStorageKey } from "../lib/avatars.ts";
import { uploadStorageKey } from "../lib/uploads.ts";
import { realmExportStorageKey } from "./realm-export.ts";
import { tusPartKeys } from "./tus-uploads.ts";
import { activeUserIds } from "../queries/users.ts";

/** What /register reports as server_min/max_deactivated_realm_deletion_days (Zulip's settings' defaults). */
export const MIN_DEACTIVATED_REALM_DELETION_DAYS = 14;
export const MAX_DEACTIVATED_REALM_DELETION_DAYS: number | null = null;
/** About 2,700 years: the furthest date asked for that a timestamptz surely holds. */
export const MAX_STORABLE_DELETION_DAYS = 1_000_000;

/** Zulip's require_realm_owner: checked before the parameters are read. */
export function checkRealmOwner(actor: Actor): void {
  if (!isOwner(actor)) throw new OwnerRequiredError();
}

/**
 * POST /realm/deactivate. `deletionDelayDays` null: the data is kept (allowed only while the server
 * has no maximum); otherwise it is deleted that many days from now.
 */
export async function deactivateRealm(tx: Tx, events: EventRecorder, actor: Actor, deletionDelayDays: number | null): Promise<void> {
  checkRealmOwner(actor);
  const max = MAX_DEACTIVATED_REALM_DELETION_DAYS;
  if (max !== null && (deletionDelayDays === null || deletionDelayDays > max)) {
    throw badRequest(`Data deletion time must be at most ${max} days in the future.`);
  }
  // With no maximum configured, still a date Postgres can store (Zulip's would fail to compute it).
  if (deletionDelayDays !== null && deletionDelayDays > MAX_STORABLE_DELETION_DAYS) {
    throw badRequest(`Data deletion time must be at most ${MAX_STORABLE_DELETION_DAYS} days in the future.`);
  }
  const min = MIN_DEACTIVATED_REALM_DELETION_DAYS;
  if (deletionDelayDays !== null && deletionDelayDays < min) {
    throw badRequest(`Data deletion time must be at least ${min} days in the future.`);
  }
  const [realm] = await tx.$queryRaw<Array<{ deactivated: boolean }>>`SELECT deactivated FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  // A second request that got past authentication while the first committed: already done.
  if (realm === undefined || realm.deactivated) return;
  // Recipients read before the write (the users are not deactivated, only their organization).
  const recipients = await activeUserIds(tx, actor.realm_id);
  await tx.$executeRaw`
    UPDATE realm SET deactivated = true,
      scheduled_deletion_date = CASE WHEN ${deletionDelayDays}::int IS NULL THEN NULL ELSE now() + make_interval(days => ${deletionDelayDays}::int) END
    WHERE id = ${actor.realm_id}`;
  await tx.$executeRaw`DELETE FROM browser_session WHERE user_id IN (SELECT id FROM user_profile WHERE realm_id = ${actor.realm_id})`;
  events.send({ type: "realm", op: "deactivated", realm_id: actor.realm_id }, recipients);
}

interface ForeignKey {
  child: string;
  column: string;
  parent: string;
  parentColumn: string;
}

/**
 * Keys the catalog does not show: user_message's were dropped for the speed of sends and are kept
 * by triggers instead (migration 0009).
 */
const KEYS_KEPT_BY_TRIGGERS: ForeignKey[] = [
  { child: "user_message", column: "user_id", parent: "user_profile", parentColumn: "id" },
  { child: "user_message", column: "message_id", parent: "message", parentColumn: "id" },
];

/** Tables with neither a realm_id nor a key to the realm's rows: theirs are the rows the realm's rows name. */
const OWNED_BY_REFERENCES = new Set(["recipient"]);

/** Tables that are the server's, not any organization's. */
const SERVER_TABLES = new Set(["_prisma_migrations", "server_secret"]);

async function catalog(db: Tx | PrismaClient): Promise<{ tables: string[]; realmTables: Set<string>; keys: ForeignKey[] }> {
  const tables = (
    await db.$queryRaw<Array<{ name: string }>>`
      SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`
  )
    .map((row) => row.name)
    .filter((name) => !SERVER_TABLES.has(name));
  const realmTables = new Set(
    (
      await db.$queryRaw<Array<{ name: string }>>`
        SELECT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'realm_id'`
    ).map((row) => row.name),
  );
  // Single-column foreign keys (every one of ours is).
  const keys = await db.$queryRaw<ForeignKey[]>`
    SELECT cl.relname AS child, a.attname AS column, pl.relname AS parent, pa.attname AS "parentColumn"
    FROM pg_constraint k
    JOIN pg_class cl ON cl.oid = k.conrelid JOIN pg_class pl ON pl.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = cl.relnamespace
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
    JOIN pg_attribute pa ON pa.attrelid = k.confrelid AND pa.attnum = k.confkey[1]
    WHERE k.contype = 'f' AND n.nspname = current_schema() AND cardinality(k.conkey) = 1 AND NOT cl.relispartition`;
  // Columns naming a recipient without a key to it (user_profile's, huddle's): as good as a key here.
  const recipientColumns = await db.$queryRaw<Array<{ child: string }>>`
    SELECT table_name AS child FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'recipient_id'`;
  const implied = recipientColumns
    .filter(({ child }) => realmTables.has(child) && !keys.some((key) => key.child === child && key.column === "recipient_id"))
    .map(({ child }) => ({ child, column: "recipient_id", parent: "recipient", parentColumn: "id" }));
  return { tables, realmTables, keys: [...keys, ...implied, ...KEYS_KEPT_BY_TRIGGERS.filter((key) => tables.includes(key.child))] };
}

const ident = (name: string) => Prisma.raw(`"${name.replace(/"/g, '""')}"`);

/**
 * The rows of `table` that belong to the realm: a WHERE condition on the table's own columns. The
 * realm table itself is its row; otherwise its realm_id, or a key to a row that belongs (followed
 * through parents, each table once on a path so cycles end).
 */
function belongs(table: string, realmId: number, realmTables: Set<string>, keys: ForeignKey[], path: string[] = []): Prisma.Sql | null {
  if (table === "realm") return Prisma.sql`${ident(table)}.id = ${realmId}`;
  // A recipient is its user's, stream's or group conversation's: the rows the realm's rows name.
  if (OWNED_BY_REFERENCES.has(table)) {
    const referenced = keys
      .filter((key) => key.parent === table && realmTables.has(key.child))
      .map((key) => Prisma.sql`${ident(table)}.${ident(key.parentColumn)} IN (SELECT ${ident(key.column)} FROM ${ident(key.child)} WHERE realm_id = ${realmId})`);
    return referenced.length === 0 ? null : Prisma.join(referenced, " OR ");
  }
  // A table with a realm_id says itself whose its rows are.
  if (realmTables.has(table)) return Prisma.sql`${ident(table)}.realm_id = ${realmId}`;
  const conditions: Prisma.Sql[] = [];
  for (const key of keys) {
    if (key.child !== table || key.parent === table || path.includes(key.parent)) continue;
    if (key.parent === "realm") {
      conditions.push(Prisma.sql`${ident(table)}.${ident(key.column)} = ${realmId}`);
      continue;
    }
    const inner = belongs(key.parent, realmId, realmTables, keys, [...path, table]);
    if (inner !== null) conditions.push(Prisma.sql`${ident(table)}.${ident(key.column)} IN (SELECT ${ident(key.parentColumn)} FROM ${ident(key.parent)} WHERE ${inner})`);
  }
  if (conditions.length === 0) return null;
  return Prisma.join(conditions, " OR ");
}

/** The realm's stored files: uploads, unfinished resumable uploads' pieces, custom emoji, avatars, its icon and logo, exports. */
async function realmStorageKeys(tx: Tx, realmId: number): Promise<string[]> {
  const keys: string[] = [];
  for (const row of await tx.$queryRaw<Array<{ path_id: string }>>`SELECT path_id FROM attachment WHERE realm_id = ${realmId}`) keys.push(uploadStorageKey(row.path_id));
  for (const row of await tx.$queryRaw<Array<{ id: string; parts: number }>>`SELECT id, parts FROM tus_upload WHERE realm_id = ${realmId}`) keys.push(...tusPartKeys(row.id, row.parts));
  for (const row of await tx.$queryRaw<Array<{ file_name: string | null }>>`SELECT file_name FROM realm_emoji WHERE realm_id = ${realmId}`) {
    if (row.file_name) keys.push(customEmojiStorageKey(realmId, row.file_name), `${customEmojiStorageKey(realmId, row.file_name)}.original`);
  }
  for (const row of await tx.$queryRaw<Array<{ id: number }>>`SELECT id FROM user_profile WHERE realm_id = ${realmId}`) {
    const avatar = avatarStorageKeys(realmId, row.id);
    keys.push(avatar.small, avatar.medium, avatar.original);
  }
  for (const name of ["icon.png", "icon.original", "logo.png", "logo.original", "night_logo.png", "night_logo.original"]) keys.push(`avatars/${realmId}/realm/${name}`);
  for (const row of await tx.$queryRaw<Array<{ export_path: string | null }>>`SELECT export_path FROM realm_export WHERE realm_id = ${realmId}`) {
    if (row.export_path) keys.push(realmExportStorageKey(row.export_path));
  }
  return keys;
}

/** Deletes every row of the realm, in every table, in one transaction; then its files. */
export async function deleteRealmData(prisma: PrismaClient, storage: FileStorage, realmId: number): Promise<void> {
  const files = await prisma.$transaction(
    async (tx) => {
      // Lock it and make sure it is still due (a second worker, or a reactivation).
      const [realm] = await tx.$queryRaw<Array<{ id: number }>>`
        SELECT id FROM realm WHERE id = ${realmId} AND deactivated AND scheduled_deletion_date <= now() FOR UPDATE`;
      if (realm === undefined) return null;
      const files = await realmStorageKeys(tx, realmId);
      const { tables, realmTables, keys } = await catalog(tx);
      // user_message first, on its own: a trigger refuses to delete a user who still has rows, and
      // within one statement it would still see them.
      const triggerKept = new Set(KEYS_KEPT_BY_TRIGGERS.map((key) => key.child));
      const unowned: string[] = [];
      const deletes: Prisma.Sql[] = [];
      for (const table of tables) {
        if (table === "realm") continue;
        const condition = belongs(table, realmId, realmTables, keys);
        if (condition === null) {
          // No realm_id and no key to anything of a realm (the event outbox): nothing of it to find.
          unowned.push(table);
        } else if (triggerKept.has(table)) {
          await tx.$executeRaw`DELETE FROM ${ident(table)} WHERE ${condition}`;
        } else {
          deletes.push(Prisma.sql`${Prisma.raw(`d${deletes.length}`)} AS (DELETE FROM ${ident(table)} WHERE ${condition})`);
        }
      }
      // Everything else in one statement: its parts read the same snapshot, so each finds its rows
      // through parents the others delete, and foreign keys are checked once all of it is done,
      // so cycles between tables (streams and groups name each other) need no order.
      await tx.$executeRaw`WITH ${Prisma.join(deletes, ", ")} DELETE FROM realm WHERE id = ${realmId}`;
      if (unowned.length > 0) logger.info("tables with no column naming an organization, left as they are", { realmId, tables: unowned });
      return files;
    },
    { timeout: 10 * 60_000, maxWait: 60_000 },
  );
  if (files === null) return;
  // After commit: a failure here leaves files nobody can reach, never rows pointing at no file.
  for (let i = 0; i < files.length; i += 500) await storage.delete(files.slice(i, i + 500));
}

/** The worker's sweep: deletes each deactivated organization whose scheduled_deletion_date has passed; how many it deleted. */
export async function sweepDeactivatedRealms(prisma: PrismaClient, storage: FileStorage): Promise<number> {
  const due = await prisma.$queryRaw<Array<{ id: number; string_id: string }>>`
    SELECT id, string_id FROM realm WHERE deactivated AND scheduled_deletion_date <= now() ORDER BY scheduled_deletion_date`;
  let deleted = 0;
  for (const realm of due) {
    logger.info("deleting a deactivated organization's data", { realmId: realm.id, subdomain: realm.string_id });
    try {
      await deleteRealmData(prisma, storage, realm.id);
      deleted += 1;
    } catch (error) {
      // Rolled back whole; the next sweep tries again. One organization must not hold up the others.
      logger.error("could not delete a deactivated organization's data", { realmId: realm.id, error: String(error) });
    }
  }
  return deleted;
}
