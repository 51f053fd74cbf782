// Writes the organization exports administrators ask for (POST /export/realm queues a
// `realm-export` job): the tarball goes to file storage (core/lib/realm-export.ts), then the row
// is marked done and the administrators told. A failure marks it failed (and tells them) rather
// than retrying: an export that failed once is asked for again by a person. A job whose worker
// died mid-export runs again on another (stalled jobs), and writes the same export again.
import type { JobQueue, Stoppable } from "@chat/bus";
import type { PrismaClient } from "@chat/db";
import {
  completeRealmExport,
  consentedUserIds,
  EXPORT_FULL_WITH_CONSENT,
  failRealmExport,
  newRealmExportPath,
  realmExportById,
  realmExportStorageKey,
  REALM_EXPORT_JOB,
  writeRealmExport,
  type ActionRunner,
  type ServerContext,
} from "@chat/core";
import type { FileStorage } from "@chat/storage";
import { logger } from "@chat/logger";
import { jobRuns } from "@chat/metrics";

/** Exports one worker process writes at once: each reads the whole organization. */
const CONCURRENCY = 1;

export interface RealmExportServices {
  prisma: PrismaClient;
  storage: FileStorage;
  actions: ActionRunner;
  ctx: ServerContext;
}

export async function runRealmExport(services: RealmExportServices, exportId: number, publicOnly: boolean): Promise<void> {
  const { prisma, storage, actions, ctx } = services;
  const row = await realmExportById(prisma, exportId);
  if (!row || row.export_path !== null || row.failed_timestamp !== null || row.deleted_timestamp !== null) return;
  const realm = await prisma.realm.findUnique({ where: { id: row.realm_id } });
  if (!realm) return;
  const exportPath = newRealmExportPath(realm.id, realm.string_id);
  const key = realmExportStorageKey(exportPath);
  const started = Date.now();
  try {
    // A full export with consent (feature level 304): the consents as they are when it is written, as Zulip's.
    const options =
      row.export_type === EXPORT_FULL_WITH_CONSENT ? { publicOnly: false, consentedUserIds: await consentedUserIds(prisma, realm.id) } : { publicOnly };
    const size = await writeRealmExport(prisma, storage, realm.id, key, options);
    const done = await actions.run(realm.id, (tx, events) => completeRealmExport(tx, events, ctx, exportId, exportPath, size));
    // Deleted or given up while it was written: nobody will download it.
    if (!done) await storage.delete([key]);
    logger.info("wrote an organization export", { realm: realm.id, export: exportId, bytes: size, ms: Date.now() - started });
    jobRuns.inc({ kind: "realm_export", outcome: "ok" });
  } catch (error) {
    logger.error("an organization export failed", { realm: realm.id, export: exportId, error: error instanceof Error ? error.message : String(error) });
    jobRuns.inc({ kind: "realm_export", outcome: "failed" });
    await storage.delete([key]).catch(() => undefined);
    await actions.run(realm.id, (tx, events) => failRealmExport(tx, events, ctx, exportId));
  }
}

/** Runs the export jobs on this worker. */
export function processRealmExportJobs(jobs: JobQueue, services: RealmExportServices): Stoppable {
  return jobs.process(
    REALM_EXPORT_JOB,
    async (data) => {
      const exportId = data.exportId;
      if (typeof exportId !== "number" || !Number.isSafeInteger(exportId)) {
        logger.error("dropped an export job that names no export", { fields: Object.keys(data) });
        return;
      }
      await runRealmExport(services, exportId, data.publicOnly !== false);
    },
    CONCURRENCY,
  );
}
