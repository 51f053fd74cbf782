// The embedded database's PGlite, started lean: it is the larger part of a trial server's memory
// (`npm run bench -- memory` measures it beside a bare PGlite). Three causes, each measured on an
// idle server after 60 s (issue 32):
//   - Postgres' shared memory is allocated and zeroed at start, so all of it is resident: PGlite's
//     shared_buffers=128MB made 145 MB of it. 16 MB of buffers is plenty for a team's chat, and
//     what is not cached there is read from the kernel's page cache.
//   - V8 compiles PGlite's 9 MB of WebAssembly at once with its baseline compiler, then recompiles
//     the hot functions with its optimizing one on background threads; those compilations left
//     60–100 MB of freed but resident memory in the threads' malloc arenas. The baseline code alone
//     starts faster on a loaded machine and keeps queries within 1.5x (a chat query is mostly I/O
//     and the JavaScript around it).
//   - WebAssembly memory never shrinks, and initdb (a second PGlite instance, a copy of its whole
//     memory and a tar of the new data directory) left about 80 MB behind in the server's heap: a
//     new data directory is made by a short-lived child process instead, then moved into place.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { setFlagsFromString } from "node:v8";
import { PGlite } from "@electric-sql/pglite";

/** Postgres settings of the embedded database, beside PGlite's own start parameters. */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "16MB",
};

/** The V8 flag that keeps WebAssembly on the baseline compiler (read when a module is compiled). */
export const PGLITE_NODE_FLAG = "--liftoff-only";

function startParams(): string[] {
  return [...PGlite.defaultStartParams, ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`])];
}

/** Run by the child process: creates the data directory (initdb) and stops. */
const INITIALIZE_SCRIPT = `
const [entry, dataDir, params] = process.argv.slice(1);
require(entry).PGlite.create(dataDir, { startParams: JSON.parse(params) })
  .then((db) => db.close())
  .then(() => process.exit(0), (error) => { process.stderr.write(String(error && error.stack || error) + "\\n"); process.exit(1); });
`;

const run = promisify(execFile);

function isEmptyOrMissing(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

/** Creates a new PGlite data directory at `location` in a child process, moved into place when complete. */
async function initializeDataDir(location: string): Promise<void> {
  const staging = `${location}.initializing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    await run(process.execPath, [PGLITE_NODE_FLAG, "-e", INITIALIZE_SCRIPT, require.resolve("@electric-sql/pglite"), staging, JSON.stringify(startParams())], {
      maxBuffer: 16 * 1024 * 1024,
    });
    // An empty directory is replaced; a crash before this leaves no half-made database behind.
    rmSync(location, { recursive: true, force: true });
    renameSync(staging, location);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`could not create the embedded database in ${path.dirname(location)}${stderr ? `: ${stderr}` : ""}`);
  }
}

/** Opens the embedded database at `location` (a directory, or "memory://"), creating it if new. */
export async function createPGlite(location: string): Promise<PGlite> {
  setFlagsFromString(PGLITE_NODE_FLAG);
  if (location !== "memory://" && isEmptyOrMissing(location)) await initializeDataDir(location);
  return PGlite.create(location, { startParams: startParams() });
}
