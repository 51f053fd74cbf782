// The embedded database's PGlite, started lean: it is the larger part of a trial server's memory
// (`npm run bench -- memory` measures it beside a bare PGlite). Measured on an idle server after
// 60 s (issue 32):
//   - Postgres' shared memory is allocated and zeroed at start, so all of it is resident: PGlite's
//     shared_buffers=128MB made 145 MB of it. 16 MB of buffers is plenty for a team's chat, and
//     what is not cached there is read from the kernel's page cache.
//   - Its 9 MB of WebAssembly is compiled by V8's baseline compiler only (wasm-compilation.ts).
//   - WebAssembly memory never shrinks, and initdb (a second PGlite instance, a copy of its whole
//     memory and a tar of the new data directory) left about 80 MB behind in the server: a new data
//     directory is made by a short-lived child process instead, then moved into place.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { BASELINE_WASM_FLAG, compileWasmWithBaselineOnly } from "./wasm-compilation.ts";

/** Postgres settings of the embedded database, beside PGlite's own start parameters. */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "16MB",
};

/** PGlite's start parameters with PGLITE_SETTINGS (the benchmark's bare PGlite starts with them too). */
export function pgliteStartParams(): string[] {
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
  // One name: what a start killed during this step left is cleared by the next (the data folder's
  // lock keeps two from running it at once).
  const staging = `${location}.initializing`;
  try {
    rmSync(staging, { recursive: true, force: true });
    await run(process.execPath, [BASELINE_WASM_FLAG, "-e", INITIALIZE_SCRIPT, require.resolve("@electric-sql/pglite"), staging, JSON.stringify(pgliteStartParams())], {
      maxBuffer: 16 * 1024 * 1024,
    });
    // An empty directory is replaced; a crash before this leaves no half-made database behind.
    rmSync(location, { recursive: true, force: true });
    renameSync(staging, location);
  } catch (error) {
    try {
      rmSync(staging, { recursive: true, force: true });
    } catch {
      // Nothing could be made there either.
    }
    // The child's own account when it ran, else what stopped it from running.
    const cause = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new Error(`could not create the embedded database in ${path.dirname(location)}: ${cause}`, { cause: error });
  }
}

/** Opens the embedded database at `location` (a directory, or "memory://"), creating it if new. */
export async function createPGlite(location: string): Promise<PGlite> {
  compileWasmWithBaselineOnly();
  if (location !== "memory://" && isEmptyOrMissing(location)) await initializeDataDir(location);
  return PGlite.create(location, { startParams: pgliteStartParams() });
}
