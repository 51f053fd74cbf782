// `import-realm FILE`: an organization export (a .tar.gz as POST /export/realm or Zulip's
// `manage.py export` writes it, or a folder already unpacked) imported as a new organization
// (core/lib/realm-import.ts). The tarball is unpacked into a temporary folder first, entry by entry
// (never in memory); an entry whose path would leave that folder fails the import.
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { importRealm, type RealmImportResult } from "@chat/core";
import { tarEntries } from "./backup-archive.ts";
import type { Services } from "./services.ts";

/** A path inside the archive, as a path under `root`; null for anything that would leave it. */
function entryTarget(root: string, name: string): string | null {
  const clean = name.replace(/^\.\/+/, "");
  if (clean === "" || clean.includes("\0") || path.isAbsolute(clean) || clean.split(/[\\/]/).includes("..")) return null;
  const target = path.resolve(root, clean);
  return target.startsWith(root + path.sep) ? target : null;
}

export async function unpackExport(file: string, into: string): Promise<void> {
  const gunzip = createGunzip();
  const source = createReadStream(file).pipe(gunzip);
  for await (const { entry, body } of tarEntries(source as AsyncIterable<Buffer>)) {
    if (entry.type !== "file") continue;
    const target = entryTarget(into, entry.path);
    if (target === null) throw new Error(`the archive names a path outside itself: ${JSON.stringify(entry.path)}`);
    await mkdir(path.dirname(target), { recursive: true });
    await pipeline(body, createWriteStream(target, { flags: "wx" }) as Writable);
  }
}

/** Imports the export at `file` (a tarball or a folder) as the organization `subdomain`. */
export async function importRealmFromFile(services: Services, file: string, options: { subdomain: string; name?: string }): Promise<RealmImportResult> {
  const info = await stat(file).catch(() => null);
  if (!info) throw new Error(`no such file: ${file}`);
  const importServices = { prisma: services.db.prisma, storage: services.storage, ctx: services.ctx };
  if (info.isDirectory()) return importRealm(importServices, file, options);
  const dir = await mkdtemp(path.join(tmpdir(), "realm-import-"));
  try {
    await unpackExport(file, dir);
    return await importRealm(importServices, dir, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
