// The data folder (DATA_DIR): the embedded database, local uploads, the lock and the operators'
// channel of the process that owns it.
import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
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
export function ensureDataDir(dataDir: string, setting = "DATA_DIR"): void {
  try {
    makeFolders(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EEXIST" || code === "ENOTDIR" ? "a file is in the way" : (error as Error).message;
    throw new DataDirError(`${setting} ${dataDir} cannot be created (${why}): set ${setting} to a folder this user may write`);
  }
  if (!statSync(dataDir).isDirectory()) throw new DataDirError(`${setting} ${dataDir} is not a folder: set ${setting} to a folder this user may write`);
  try {
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch {
    throw new DataDirError(`${setting} ${dataDir} is not writable by this user: set ${setting} to a folder this user may write, or fix its owner`);
  }
}

/**
 * mkdir -p, one folder at a time from the deepest one that exists. Node's recursive mkdir spins
 * forever on some paths it cannot create (under /proc, seen on Node 20), which left the server
 * hanging at startup instead of saying what is wrong.
 */
function makeFolders(dir: string): void {
  const missing: string[] = [];
  let existing = dir;
  while (!existsSync(existing)) {
    missing.unshift(existing);
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  for (const folder of missing) mkdirSync(folder, { mode: 0o700 });
}
