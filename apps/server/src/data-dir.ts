// The data folder (DATA_DIR): the embedded database, local uploads, the lock and the operators'
// channel of the process that owns it.
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { sharedRedis, type Config } from "@chat/config";

export class DataDirError extends Error {}

/**
 * Whether this deployment has one process owning the data folder: the embedded database, or any
 * server without Redis (its in-process bus reaches only its own clients). With Redis, processes
 * share Postgres and the bus, and the CLI writes to them directly.
 */
export function ownsDataDir(config: Pick<Config, "dataDir" | "redisUrl" | "redisClusterNodes">): boolean {
  return config.dataDir !== "memory://" && sharedRedis(config) === null;
}

/** Creates the folder if needed and checks it is a writable folder, saying what is wrong if not. */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EEXIST" || code === "ENOTDIR" ? "a file is in the way" : (error as Error).message;
    throw new DataDirError(`DATA_DIR ${dataDir} cannot be created (${why}): set DATA_DIR to a folder this user may write`);
  }
  if (!statSync(dataDir).isDirectory()) throw new DataDirError(`DATA_DIR ${dataDir} is not a folder: set DATA_DIR to a folder this user may write`);
  try {
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch {
    throw new DataDirError(`DATA_DIR ${dataDir} is not writable by this user: set DATA_DIR to a folder this user may write, or fix its owner`);
  }
}
