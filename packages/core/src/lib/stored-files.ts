// What actions that write files beside a transaction share. Storage cannot join a transaction, so
// files are written before the row and removed when the row does not commit, or removed after
// the row went; either way a failed removal leaves only an unreferenced file, never a wrong answer.
import type { PrismaClient } from "@chat/db";
import { logger } from "@chat/logger";
import type { FileStorage } from "@chat/storage";
import type { ActionRunner } from "../events.ts";

/** What writing files next to a transaction needs. */
export interface FileActionServices {
  prisma: PrismaClient;
  actions: ActionRunner;
  storage: FileStorage;
}

/** Removes files whose change failed or went; a failure is logged, not answered. */
export async function deleteFilesQuietly(storage: FileStorage, keys: string[]): Promise<void> {
  try {
    await storage.delete(keys);
  } catch (error) {
    logger.warn("could not delete files from storage", { keys, error: error instanceof Error ? error.message : String(error) });
  }
}
