// Files on the local disk: one node, or several processes of one node sharing the directory.
//
// Layout under the root:
//   objects/<key>   the bytes
//   meta/<key>      {"contentType": ...}, the sidecar
//   .tmp/<random>   bodies being written (same filesystem, so installing one is a rename)
// The three trees are apart so that no key can name another key's sidecar or the temporary files:
// with `<key>.meta` beside the file, the key `a.meta` would be the sidecar of `a`.
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { countBytes } from "./byte-counter.ts";
import { assertByteRange, clampByteRange } from "./byte-range.ts";
import { assertSafeKey, FileTooLargeError, type ByteRange, type FileStorage, type ObjectRead, type PutOptions, type StoredObject } from "./types.ts";

interface Sidecar {
  contentType: string | null;
}

export interface LocalFileStorageOptions {
  /** Remove the whole directory in close() (a temporary directory of its own). */
  removeOnClose?: boolean;
}

/** Errors that mean "no object there": nothing at the path, or a directory where a file would be. */
const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR"]);
const DELETE_CONCURRENCY = 32;
/** A delete removing an empty folder can race a put about to rename into it; the put tries again. */
const INSTALL_ATTEMPTS = 3;

export class LocalFileStorage implements FileStorage {
  readonly kind = "local";
  readonly directory: string;
  private readonly objectsDir: string;
  private readonly metaDir: string;
  private readonly tmpDir: string;

  constructor(
    directory: string,
    private readonly options: LocalFileStorageOptions = {},
  ) {
    this.directory = path.resolve(directory);
    this.objectsDir = path.join(this.directory, "objects");
    this.metaDir = path.join(this.directory, "meta");
    this.tmpDir = path.join(this.directory, ".tmp");
  }

  async put(key: string, body: Readable | Buffer, { contentType, maxBytes }: PutOptions): Promise<StoredObject> {
    const file = this.pathOf(this.objectsDir, key);
    const meta = this.pathOf(this.metaDir, key);
    if (Buffer.isBuffer(body) && maxBytes !== undefined && body.length > maxBytes) throw new FileTooLargeError(maxBytes);
    await fs.mkdir(this.tmpDir, { recursive: true });
    const tmpFile = path.join(this.tmpDir, randomUUID());
    const tmpMeta = `${tmpFile}.meta`;
    try {
      let size: number;
      if (Buffer.isBuffer(body)) {
        await fs.writeFile(tmpFile, body, { flag: "wx" });
        size = body.length;
      } else {
        // The file is made before the pipeline starts: a write stream opening its own path could
        // create it after a failed pipeline's cleanup had already removed nothing (seen under a
        // busy thread pool), leaving a partial file in .tmp/ for good.
        const handle = await fs.open(tmpFile, "wx");
        const counter = countBytes(body, maxBytes);
        await pipeline(counter, handle.createWriteStream());
        size = counter.bytes;
      }
      const sidecar: Sidecar = { contentType };
      await fs.writeFile(tmpMeta, JSON.stringify(sidecar), { flag: "wx" });
      // The sidecar first: whoever finds the new bytes finds their type.
      await this.install(tmpMeta, meta);
      await this.install(tmpFile, file);
      return { size, contentType };
    } catch (error) {
      await Promise.all([fs.rm(tmpFile, { force: true }), fs.rm(tmpMeta, { force: true })]);
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectRead | null> {
    const file = this.pathOf(this.objectsDir, key);
    if (range) assertByteRange(range);
    // Size and bytes come from one open file, so a replace in between cannot mix two versions.
    const handle = await fs.open(file, "r").catch(ifMissing(null));
    if (!handle) return null;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        await handle.close();
        return null;
      }
      const contentType = await this.readContentType(key);
      const served = range ? clampByteRange(range, stats.size) : null;
      // The stream closes the handle when it ends or is destroyed. 256 KiB reads: 64 KiB ones cost
      // downloads three quarters of their speed; 1 MiB ones left 4 concurrent downloads holding
      // 22-44 MiB of read buffers the GC had not yet collected.
      const body = handle.createReadStream({ highWaterMark: 256 * 1024, ...(served ? { start: served.start, end: served.end } : {}) });
      return { size: stats.size, contentType, body, range: served };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    const file = this.pathOf(this.objectsDir, key);
    const stats = await fs.stat(file).catch(ifMissing(null));
    if (!stats?.isFile()) return null;
    return { size: stats.size, contentType: await this.readContentType(key) };
  }

  async delete(keys: string[]): Promise<void> {
    const paths = keys.map((key) => [this.pathOf(this.objectsDir, key), this.pathOf(this.metaDir, key)] as const);
    for (let i = 0; i < paths.length; i += DELETE_CONCURRENCY) {
      await Promise.all(
        paths.slice(i, i + DELETE_CONCURRENCY).map(async ([file, meta]) => {
          await fs.unlink(file).catch(ifMissing(undefined));
          await fs.unlink(meta).catch(ifMissing(undefined));
          await Promise.all([this.pruneEmptyFolders(file, this.objectsDir), this.pruneEmptyFolders(meta, this.metaDir)]);
        }),
      );
    }
  }

  async close(): Promise<void> {
    if (this.options.removeOnClose) await fs.rm(this.directory, { recursive: true, force: true });
  }

  /** `key`'s path under `tree`, refused if it is not a safe key or would resolve outside the tree. */
  private pathOf(tree: string, key: string): string {
    assertSafeKey(key);
    const resolved = path.resolve(tree, key);
    if (!resolved.startsWith(tree + path.sep)) throw new Error(`unsafe storage key ${JSON.stringify(key)}`);
    return resolved;
  }

  private async readContentType(key: string): Promise<string | null> {
    const raw = await fs.readFile(this.pathOf(this.metaDir, key), "utf8").catch(ifMissing(null));
    if (raw === null) return null;
    try {
      const sidecar = JSON.parse(raw) as Partial<Sidecar>;
      return typeof sidecar.contentType === "string" ? sidecar.contentType : null;
    } catch {
      return null;
    }
  }

  private async install(from: string, to: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await fs.mkdir(path.dirname(to), { recursive: true });
      try {
        await fs.rename(from, to);
        return;
      } catch (error) {
        if (errorCode(error) !== "ENOENT" || attempt >= INSTALL_ATTEMPTS) throw error;
      }
    }
  }

  /** Uploads get a folder each (`uploads/<realm>/<random>/<name>`): without this, deleted ones leave theirs behind. */
  private async pruneEmptyFolders(removed: string, tree: string): Promise<void> {
    for (let dir = path.dirname(removed); dir.startsWith(tree + path.sep); dir = path.dirname(dir)) {
      try {
        await fs.rmdir(dir);
      } catch {
        return; // not empty (or already gone): the folders above are not empty either
      }
    }
  }
}

// Not `instanceof Error`: Node's own errors come from another realm under jest's sandbox.
function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

/** A catch handler turning "no such file" into `value` and rethrowing anything else. */
function ifMissing<T>(value: T): (error: unknown) => T {
  return (error) => {
    if (MISSING.has(errorCode(error) ?? "")) return value;
    throw error;
  };
}
