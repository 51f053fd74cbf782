// Runs the TypeScript sources through tsx with one option changed: esbuild's keepNames, which
// tsx turns on, is off. keepNames wraps every named function the code makes in
// `__name(fn, "name")`, an Object.defineProperty each time a closure is created: CPU on every
// request path, and a property array (about 250 bytes) on each closure a held long poll keeps
// (RSS per held poll, 10,000 held: 12.4 KiB with it, 9.7 KiB without). It matters only when
// minifying renames identifiers, which tsx does not do: functions keep the names JavaScript
// gives them anyway.
//
// Used as `node --import ./scripts/typescript.mjs <entry.ts>`. tsx compiles in two places, this
// thread (required modules) and Node's module-hooks thread (imported ones), each with its own
// esbuild, so this module is registered in the hooks thread too (it has no hooks) and patches
// both. tsx's transform cache is keyed by tsx's own options, keepNames included, so the code it
// cached for a plain `--import tsx` run would come back: ours lives in a directory of its own.
import { createRequire, register } from "node:module";
import os from "node:os";
import path from "node:path";
import { isMainThread } from "node:worker_threads";

const require = createRequire(import.meta.url);
const esbuild = require("esbuild");
// esbuild's exports are read-only getters: its cached module gets a copy with the two replaced,
// which tsx's require and import of "esbuild" then find.
require.cache[require.resolve("esbuild")].exports = {
  ...esbuild,
  transformSync: (input, options) => esbuild.transformSync(input, { ...options, keepNames: false }),
  transform: (input, options) => esbuild.transform(input, { ...options, keepNames: false }),
};

if (isMainThread) {
  // tsx places its cache under os.tmpdir() as it loads, here and in the hooks thread, which
  // takes a copy of this environment when register() starts it.
  const tmpdir = process.env.TMPDIR;
  process.env.TMPDIR = path.join(os.tmpdir(), "chat-typescript");
  try {
    register(import.meta.url);
    await import("tsx");
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
  }
}
