// Both databases run WebAssembly: Prisma's query compiler (3.4 MB of it, in every process that
// queries) and PGlite's Postgres (9 MB, in the embedded trial). V8 compiles a module at once with
// its baseline compiler (Liftoff), then compiles the functions that run often again with its
// optimizing one (TurboFan) on background threads. Those recompilations of very large functions
// left 40–100 MB per process in the threads' malloc arenas, freed but resident, after a minute
// idle (issue 32, measured by `npm run bench -- memory`). Baseline code alone measured the same:
// Prisma caches its query plans, and a new query shape compiled as fast; on the embedded trial,
// 300 messages sent and 200 pages of 50 read through the API took 7 ms and 2.6 ms each either way,
// while the server held 236 MiB after them instead of 275–310 MiB.

import { setFlagsFromString } from "node:v8";

/** The V8 flag; read when a module is compiled, so it must be set before the first one is. */
export const BASELINE_WASM_FLAG = "--liftoff-only";

/** Keeps every WebAssembly module compiled from now on to V8's baseline compiler. */
export function compileWasmWithBaselineOnly(): void {
  setFlagsFromString(BASELINE_WASM_FLAG);
}
