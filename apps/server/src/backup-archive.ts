// The backup file's container: a POSIX tar (pax headers for long or non-ASCII names and for sizes
// past ustar's 8 GiB; the headers are core's lib/tar-headers.ts, which exports use too),
// gzip-compressed, so that an operator can look into a backup with `tar tzf` and take it apart
// with `tar xzf` without this server. Written here rather than with a tar package: a writer of
// regular files and a reader of what the writer makes are small, and reading must fail loudly on
// anything damaged rather than skip it.
import type { FileHandle } from "node:fs/promises";
import { TAR_BLOCK as BLOCK, tarEntryHeaders as entryHeaders, tarPadding as padding } from "@chat/core";

const ZERO_BLOCK = Buffer.alloc(BLOCK);
const READ_CHUNK = 256 * 1024;

/** The archive is not one this code wrote, or is damaged or cut short. */
export class ArchiveError extends Error {}

export interface ArchiveEntry {
  path: string;
  size: number;
  type: "file" | "directory" | "other";
}

/** One entry to write: its bytes in memory, or `size` bytes read from an open file. */
export type EntrySource = { path: string; data: Uint8Array; mtime?: Date } | { path: string; file: FileHandle; size: number; mtime?: Date };

/**
 * The tar stream of `entries`, as chunks. A file entry reads exactly the size it was given: a file
 * that shrank meanwhile fails the archive rather than shift every entry after it.
 */
export async function* tarChunks(entries: AsyncIterable<EntrySource> | Iterable<EntrySource>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    const mtime = entry.mtime ?? new Date();
    if ("data" in entry) {
      yield* entryHeaders(entry.path, entry.data.length, mtime);
      yield Buffer.from(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength);
      yield padding(entry.data.length);
      continue;
    }
    yield* entryHeaders(entry.path, entry.size, mtime);
    let position = 0;
    while (position < entry.size) {
      const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, entry.size - position));
      const { bytesRead } = await entry.file.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) throw new ArchiveError(`${entry.path} shrank while it was being read`);
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
    yield padding(entry.size);
  }
  // The end-of-archive marker: two zero blocks.
  yield Buffer.alloc(BLOCK * 2);
}

/** Exact-length reads over a stream of chunks. */
class ByteReader {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private done = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  /** Up to `max` bytes (at least one), or null at the end of the source. */
  async some(max: number): Promise<Buffer | null> {
    if (this.bufferedBytes === 0 && !(await this.fill())) return null;
    const first = this.buffered[0];
    if (first.length <= max) {
      this.buffered.shift();
      this.bufferedBytes -= first.length;
      return first;
    }
    this.buffered[0] = first.subarray(max);
    this.bufferedBytes -= max;
    return first.subarray(0, max);
  }

  /** Exactly `length` bytes, or null if the source ends first. */
  async exactly(length: number): Promise<Buffer | null> {
    while (this.bufferedBytes < length) if (!(await this.fill())) return null;
    const all = Buffer.concat(this.buffered);
    this.buffered = all.length > length ? [all.subarray(length)] : [];
    this.bufferedBytes = all.length - length;
    return all.subarray(0, length);
  }

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const next = await this.source.next();
    if (next.done) {
      this.done = true;
      return false;
    }
    if (next.value.length > 0) {
      this.buffered.push(next.value);
      this.bufferedBytes += next.value.length;
    }
    return true;
  }
}

function readString(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString("utf8");
}

function readOctal(block: Buffer, start: number, length: number): number {
  const text = readString(block, start, length).trim();
  if (!/^[0-7]+$/.test(text)) throw new ArchiveError("damaged tar header (a number field is not octal)");
  return parseInt(text, 8);
}

function checksumOk(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  return readOctal(block, 148, 8) === sum;
}

function parsePax(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    const length = parseInt(body.subarray(offset, space).toString("ascii"), 10);
    if (space === -1 || !Number.isSafeInteger(length) || length <= 0 || offset + length > body.length) throw new ArchiveError("damaged pax header");
    const record = body.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (equals === -1) throw new ArchiveError("damaged pax header");
    records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}

const TRUNCATED = "it ends in the middle of an entry (truncated)";

/**
 * The entries of a tar stream, each with its body. The consumer reads a body (or leaves it: what
 * it did not read is skipped) before asking for the next entry. Throws ArchiveError for anything
 * that is not a well-formed archive, including one cut short.
 */
export async function* tarEntries(source: AsyncIterable<Buffer>): AsyncGenerator<{ entry: ArchiveEntry; body: AsyncGenerator<Buffer> }> {
  const reader = new ByteReader(source[Symbol.asyncIterator]());
  let pax = new Map<string, string>();
  for (let first = true; ; first = false) {
    const block = await reader.exactly(BLOCK);
    if (block === null) throw new ArchiveError(first ? "it holds no tar archive" : TRUNCATED);
    if (block.equals(ZERO_BLOCK)) return;
    // POSIX "ustar\0" or GNU's "ustar ".
    if (!readString(block, 257, 6).startsWith("ustar") || !checksumOk(block)) {
      throw new ArchiveError(first ? "it holds no tar archive" : "a tar header is damaged where one should be");
    }
    const typeFlag = String.fromCharCode(block[156] || 0x30);
    const prefix = readString(block, 345, 155);
    const name = readString(block, 0, 100);
    const size = pax.has("size") ? Number(pax.get("size")) : readOctal(block, 124, 12);
    if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveError("damaged tar header (size)");
    if (typeFlag === "x" || typeFlag === "g") {
      const body = await reader.exactly(size + padding(size).length);
      if (body === null) throw new ArchiveError(TRUNCATED);
      // A global header applies to every later entry; we never write one, and a path in it would
      // rename them all: take only what a per-entry header says.
      if (typeFlag === "x") pax = parsePax(body.subarray(0, size));
      continue;
    }
    const path = pax.get("path") ?? (prefix ? `${prefix}/${name}` : name);
    pax = new Map();
    const type = typeFlag === "0" ? "file" : typeFlag === "5" ? "directory" : "other";
    let remaining = size;
    const body = (async function* () {
      while (remaining > 0) {
        const chunk = await reader.some(remaining);
        if (chunk === null) throw new ArchiveError(TRUNCATED);
        remaining -= chunk.length;
        yield chunk;
      }
    })();
    yield { entry: { path, size, type }, body };
    // Whatever the consumer left unread (it may have stopped iterating the body), then the
    // padding to the next header.
    while (remaining > 0) {
      const chunk = await reader.some(remaining);
      if (chunk === null) throw new ArchiveError(TRUNCATED);
      remaining -= chunk.length;
    }
    if ((await reader.exactly(padding(size).length)) === null) throw new ArchiveError(TRUNCATED);
  }
}
