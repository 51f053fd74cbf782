// Organization data exports (Zulip's zerver/views/realm_export.py and actions/realm_export.py):
// an administrator asks for one, the worker tier writes it (apps/worker/src/realm-export.ts), and
// every administrator follows it through `realm_export` events carrying the whole list. The rows
// live in `realm_export` (migration 0034); the tarball in file storage under `exports/`.
import { randomBytes } from "node:crypto";
import type { JobQueue } from "@chat/bus";
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest } from "../errors.ts";
import { realmUri } from "../lib/realm-hosts.ts";
import { isAdmin } from "../lib/roles.ts";
import type { Actor } from "../models.ts";
import { activeAdminIds } from "../queries/users.ts";
import { sendNotification } from "./notification-bot.ts";

type Reader = Pick<Tx, "$queryRawUnsafe">;

/** The job the worker writes an export under. */
export const REALM_EXPORT_JOB = "realm-export";
/** Zulip's limit: five exports an organization in any seven days. */
export const EXPORT_LIMIT = 5;
export const EXPORT_LIMIT_DAYS = 7;
/** Zulip's RealmExport types (feature level 304): public data only, or full data with members' consent. */
export const EXPORT_PUBLIC = 1;
export const EXPORT_FULL_WITH_CONSENT = 2;
export const EXPORT_TYPES = [EXPORT_PUBLIC, EXPORT_FULL_WITH_CONSENT] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];
/** Serialises requests of one organization (pg_advisory_xact_lock's first key), so the limit holds. */
const EXPORT_LOCK = 72011034;

export interface RealmExportRow {
  id: number;
  realm_id: number;
  acting_user_id: number | null;
  export_time: Date;
  export_path: string | null;
  failed_timestamp: Date | null;
  deleted_timestamp: Date | null;
  export_type: number;
}

/** One export as GET /export/realm and the realm_export event show it (Zulip's get_realm_exports_serialized). */
export interface SerializedRealmExport {
  id: number;
  acting_user_id: number | null;
  export_time: number;
  deleted_timestamp: number | null;
  failed_timestamp: number | null;
  export_url: string | null;
  pending: boolean;
  export_type: number;
}

const seconds = (date: Date | null): number | null => (date === null ? null : date.getTime() / 1000);

/** localhost or a loopback address (with a port or not): its URLs are http. */
function isLocalHost(externalHost: string): boolean {
  const host = externalHost.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The absolute URL an export is downloaded at (served by apps/api/src/routes/realm-export.ts). */
export function realmExportUrl(ctx: Pick<ServerContext, "externalHost">, subdomain: string, exportPath: string): string {
  const base = realmUri(subdomain, ctx.externalHost, isLocalHost(ctx.externalHost) ? "http" : "https");
  return `${base}/${exportPath.split("/").map(encodeURIComponent).join("/")}`;
}

/** Storage keys of exports: `exports/<realm>/<random>/<name>.tar.gz`, served at /realm_exports/... */
export function realmExportStorageKey(exportPath: string): string {
  return `exports/${exportPath.slice("realm_exports/".length)}`;
}

export function newRealmExportPath(realmId: number, subdomain: string): string {
  const name = `zulip-export-${(subdomain || "root").replace(/[^A-Za-z0-9-]/g, "")}-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, "")}.tar.gz`;
  return `realm_exports/${realmId}/${randomBytes(18).toString("base64url")}/${name}`;
}

export function serializeRealmExport(ctx: Pick<ServerContext, "externalHost">, subdomain: string, row: RealmExportRow): SerializedRealmExport {
  const done = row.export_path !== null && row.deleted_timestamp === null;
  return {
    id: row.id,
    acting_user_id: row.acting_user_id,
    export_time: row.export_time.getTime() / 1000,
    deleted_timestamp: seconds(row.deleted_timestamp),
    failed_timestamp: seconds(row.failed_timestamp),
    export_url: done ? realmExportUrl(ctx, subdomain, row.export_path!) : null,
    pending: row.export_path === null && row.failed_timestamp === null && row.deleted_timestamp === null,
    export_type: row.export_type,
  };
}

export async function realmExportRows(db: Reader, realmId: number): Promise<RealmExportRow[]> {
  return db.$queryRawUnsafe<RealmExportRow[]>(
    "SELECT id, realm_id, acting_user_id, export_time, export_path, failed_timestamp, deleted_timestamp, export_type FROM realm_export WHERE realm_id = $1 ORDER BY id",
    realmId,
  );
}

export async function realmExportById(db: Reader, exportId: number): Promise<RealmExportRow | null> {
  const rows = await db.$queryRawUnsafe<RealmExportRow[]>(
    "SELECT id, realm_id, acting_user_id, export_time, export_path, failed_timestamp, deleted_timestamp, export_type FROM realm_export WHERE id = $1",
    exportId,
  );
  return rows[0] ?? null;
}

async function subdomainOf(db: Reader, realmId: number): Promise<string> {
  const rows = await db.$queryRawUnsafe<{ string_id: string }[]>("SELECT string_id FROM realm WHERE id = $1", realmId);
  return rows[0]?.string_id ?? "";
}

/** GET /export/realm: every export of the organization, oldest first. */
export async function listRealmExports(db: Reader, ctx: Pick<ServerContext, "externalHost">, actor: Actor): Promise<SerializedRealmExport[]> {
  checkExportAdmin(actor);
  return (await realmExportRows(db, actor.realm_id)).map((row) => serializeRealmExport(ctx, actor.realm.string_id, row));
}

/** Zulip's require_realm_admin. */
export function checkExportAdmin(actor: Actor): void {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
}

/** Sends the organization's administrators the whole list (Zulip's notify_realm_export). */
export async function notifyRealmExport(tx: Tx, events: EventRecorder, ctx: Pick<ServerContext, "externalHost">, realmId: number): Promise<void> {
  const subdomain = await subdomainOf(tx, realmId);
  const exports = (await realmExportRows(tx, realmId)).map((row) => serializeRealmExport(ctx, subdomain, row));
  events.send({ type: "realm_export", exports }, await activeAdminIds(tx, realmId));
}

/**
 * POST /export/realm: records a pending export and tells the administrators. The caller queues
 * the job once this commits (queueRealmExport).
 */
export async function requestRealmExport(tx: Tx, events: EventRecorder, ctx: Pick<ServerContext, "externalHost">, actor: Actor, exportType: ExportType = EXPORT_PUBLIC): Promise<number> {
  checkExportAdmin(actor);
  await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock($1, $2)", EXPORT_LOCK, actor.realm_id);
  const recent = await tx.$queryRawUnsafe<{ count: bigint }[]>(
    `SELECT count(*) AS count FROM realm_export WHERE realm_id = $1 AND export_time >= now() - interval '${EXPORT_LIMIT_DAYS} days'`,
    actor.realm_id,
  );
  if (Number(recent[0].count) >= EXPORT_LIMIT) throw badRequest("Exceeded rate limit.");
  const rows = await tx.$queryRawUnsafe<{ id: number }[]>("INSERT INTO realm_export (realm_id, acting_user_id, export_type) VALUES ($1, $2, $3) RETURNING id", actor.realm_id, actor.id, exportType);
  await notifyRealmExport(tx, events, ctx, actor.realm_id);
  return rows[0].id;
}

/**
 * Queues the export's job for the worker tier (one job an export, never run twice at once). The
 * worker reads what to export from the row's export_type; `publicOnly: false` (the operators'
 * full export, every user's data) is only for jobs queued by the server's operators.
 */
export async function queueRealmExport(jobs: JobQueue, exportId: number, options: { publicOnly: boolean } = { publicOnly: true }): Promise<void> {
  await jobs.add(REALM_EXPORT_JOB, { exportId, publicOnly: options.publicOnly }, { jobId: `realm-export-${exportId}`, attempts: 1, keepCompletedSeconds: 3600 });
}

/**
 * GET /export/realm/consents (feature level 295): whether each active human user of the
 * organization lets administrators export their private data (Zulip's get_users_export_consents).
 */
export async function listExportConsents(db: Reader, actor: Actor): Promise<Array<{ user_id: number; consented: boolean }>> {
  checkExportAdmin(actor);
  return db.$queryRawUnsafe<Array<{ user_id: number; consented: boolean }>>(
    "SELECT id AS user_id, allow_private_data_export AS consented FROM user_profile WHERE realm_id = $1 AND is_active AND NOT is_bot ORDER BY id",
    actor.realm_id,
  );
}

/** The users whose private data a full export with consent includes (Zulip's get_consented_user_ids). */
export async function consentedUserIds(db: Reader, realmId: number): Promise<number[]> {
  const rows = await db.$queryRawUnsafe<{ id: number }[]>(
    "SELECT id FROM user_profile WHERE realm_id = $1 AND is_active AND NOT is_bot AND allow_private_data_export ORDER BY id",
    realmId,
  );
  return rows.map((row) => row.id);
}

/**
 * DELETE /export/realm/{export_id}: the tarball is removed (returned for the caller to delete after
 * the commit), the row kept with its deletion time, as Zulip's list shows it.
 */
export async function deleteRealmExport(tx: Tx, events: EventRecorder, ctx: Pick<ServerContext, "externalHost">, actor: Actor, exportId: number): Promise<string> {
  checkExportAdmin(actor);
  const rows = await tx.$queryRawUnsafe<RealmExportRow[]>("SELECT * FROM realm_export WHERE id = $1 AND realm_id = $2 FOR UPDATE", exportId, actor.realm_id);
  const row = rows[0];
  if (!row) throw badRequest("Invalid data export ID");
  if (row.deleted_timestamp !== null) throw badRequest("Export already deleted");
  if (row.export_path === null) {
    if (row.failed_timestamp !== null) throw badRequest("Export failed, nothing to delete");
    throw badRequest("Export still in progress");
  }
  await tx.$executeRawUnsafe("UPDATE realm_export SET deleted_timestamp = now() WHERE id = $1", exportId);
  await notifyRealmExport(tx, events, ctx, actor.realm_id);
  return realmExportStorageKey(row.export_path);
}

/** The worker finished writing the tarball: the export is done. False if it was meanwhile given up. */
export async function completeRealmExport(tx: Tx, events: EventRecorder, ctx: ServerContext, exportId: number, exportPath: string, size: number): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<RealmExportRow[]>(
    "UPDATE realm_export SET export_path = $2, export_size = $3 WHERE id = $1 AND export_path IS NULL AND failed_timestamp IS NULL AND deleted_timestamp IS NULL RETURNING *",
    exportId,
    exportPath,
    BigInt(size),
  );
  if (rows.length === 0) return false;
  await notifyRealmExport(tx, events, ctx, rows[0].realm_id);
  await tellActingUser(tx, events, ctx, rows[0], "Your data export is complete. [View and download exports](/#organization/data-exports-admin).");
  return true;
}

/** A direct message from the Notification Bot to whoever asked for the export (Zulip's). */
async function tellActingUser(tx: Tx, events: EventRecorder, ctx: ServerContext, row: RealmExportRow, content: string): Promise<void> {
  if (row.acting_user_id === null) return;
  const user = await tx.userProfile.findUnique({ where: { id: row.acting_user_id }, include: { realm: true } });
  if (!user || !user.is_active) return;
  await sendNotification(tx, events, ctx, user.realm, { type: "private", to: [user.id] }, content);
}

/** The export could not be written: failed_timestamp set, the administrators told. */
export async function failRealmExport(tx: Tx, events: EventRecorder, ctx: ServerContext, exportId: number): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<RealmExportRow[]>(
    "UPDATE realm_export SET failed_timestamp = now() WHERE id = $1 AND export_path IS NULL AND failed_timestamp IS NULL RETURNING *",
    exportId,
  );
  if (rows.length === 0) return false;
  await notifyRealmExport(tx, events, ctx, rows[0].realm_id);
  await tellActingUser(tx, events, ctx, rows[0], "Your data export failed. Please try again, or ask your server's administrator.");
  return true;
}
