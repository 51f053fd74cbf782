// A body of unknown length into S3, holding almost none of it in memory: each part is spooled to a
// file as it arrives, sent from that file, and the file removed.
//
// Not lib-storage's Upload, which keeps two or three parts in memory at once (four 100 MiB uploads
// grew the process by 75-85 MiB), nor one 5 MiB part buffer per upload (25-35 MiB for four): a
// server taking many large uploads at once would hold 5 MiB for each. A part file costs page cache,
// which the kernel reclaims, and the file is unlinked (its dirty pages dropped unwritten) once sent.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from "@aws-sdk/client-s3";
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { crc32 } from "node:zlib";

/** S3's smallest part (but the last). */
export const PART_SIZE = 5 * 1024 * 1024;
/** Bodies up to this size are sent from memory as they came, without a part file. */
const SMALL_BODY = 1024 * 1024;
/** What an upload holds in memory on its way to the part file: one buffer, reused. */
const WRITE_BUFFER = 256 * 1024;
/** Read size when a part file is sent. */
const READ_CHUNK = 256 * 1024;

export interface UploadTarget {
  Bucket: string;
  Key: string;
  ContentType: string;
}

export interface UploadOptions {
  /** The directory part files go in (it must exist); asked for only when a body outgrows SMALL_BODY. */
  spoolDirectory(): Promise<string>;
}

/**
 * Reads `source` (a stream of Buffers) to its end into the object: one PutObject when it fits one part, else a multipart
 * upload, its parts sent one after the other. On failure (the source's error, or S3's) a multipart
 * upload begun is aborted before this rejects, so nothing remains, and so are the part files.
 * Resolves with the byte count.
 */
export async function uploadStream(client: S3Client, target: UploadTarget, source: Readable, options: UploadOptions): Promise<number> {
  const reader = new ChunkReader(source);
  let part: PartFile | null = null;
  try {
    // Most bodies (images, avatars, emoji) are small: gathered as they come, they cost their own size.
    const first = await reader.gather(SMALL_BODY);
    const gathered = first.reduce((sum, chunk) => sum + chunk.length, 0);
    if (!(await reader.more())) {
      const body = first.length === 1 ? first[0] : Buffer.concat(first, gathered);
      await client.send(new PutObjectCommand({ ...target, Body: body, ContentLength: gathered }));
      return gathered;
    }
    // A client that adds checksums (the SDK's default, kept for AWS itself) computes them here, as
    // the bytes are spooled: given a stream, the SDK would send the body aws-chunked with a trailing
    // checksum instead, which S3-compatible services take less often than the header.
    const checksummed = (await client.config.requestChecksumCalculation()) === "WHEN_SUPPORTED";
    const directory = await options.spoolDirectory();
    const buffer = Buffer.allocUnsafe(WRITE_BUFFER);
    part = await PartFile.create(directory, checksummed);
    await part.write(first);
    first.length = 0; // written: not kept alive while the part fills
    await part.fill(reader, buffer);
    if (!(await reader.more())) {
      const { size } = part;
      const checksum = part.checksum();
      await sendFromFile(client, part, (Body) => client.send(quiet(new PutObjectCommand({ ...target, Body, ContentLength: size, ...checksum }))));
      return size;
    }
    // A client that adds checksums to its parts must say so when it begins the upload, and list them
    // when it completes it: S3 refuses the parts otherwise.
    const algorithm = checksummed ? ({ ChecksumAlgorithm: "CRC32" } as const) : {};
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ ...target, ...algorithm }));
    if (!UploadId) throw new Error("S3 answered CreateMultipartUpload without an UploadId");
    const { Bucket, Key } = target;
    try {
      const parts: CompletedPart[] = [];
      let total = 0;
      for (;;) {
        const PartNumber = parts.length + 1;
        const sending: PartFile = part;
        const checksum = sending.checksum();
        const { ETag } = await sendFromFile(client, sending, (Body) =>
          client.send(quiet(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body, ContentLength: sending.size, ...algorithm, ...checksum }))),
        );
        await sending.discard();
        parts.push({ PartNumber, ETag, ...checksum });
        total += sending.size;
        if (!(await reader.more())) break;
        part = await PartFile.create(directory, checksummed);
        await part.fill(reader, buffer);
      }
      await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
      return total;
    } catch (error) {
      // A failed abort leaves the parts to a bucket lifecycle rule (AbortIncompleteMultipartUpload);
      // the caller still learns the first failure, the one that matters.
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => {});
      throw error;
    }
  } finally {
    await part?.discard();
    await reader.close();
  }
}

/** One part's bytes in a file of its own, with their CRC32 when the client sends checksums. */
class PartFile {
  size = 0;
  private crc = 0;
  private handle: FileHandle | null = null;

  private constructor(
    readonly path: string,
    private readonly checksummed: boolean,
  ) {}

  static async create(directory: string, checksummed: boolean): Promise<PartFile> {
    const part = new PartFile(path.join(directory, `${randomUUID()}.part`), checksummed);
    part.handle = await fs.open(part.path, "wx");
    return part;
  }

  /** Writes `chunks` after what the file holds. */
  async write(chunks: Buffer[]): Promise<void> {
    if (!this.handle) throw new Error("part file already closed");
    if (chunks.length === 0) return;
    let { bytesWritten } = await this.handle.writev(chunks);
    // A regular file takes all of a write but on a full disk, which fails the next one; still, finish it.
    for (const chunk of chunks) {
      let offset = Math.min(bytesWritten, chunk.length);
      bytesWritten -= offset;
      while (offset < chunk.length) {
        const written = (await this.handle.write(chunk, offset)).bytesWritten;
        if (written === 0) throw new Error(`could not write to ${this.path}`);
        offset += written;
      }
      this.size += chunk.length;
      if (this.checksummed) this.crc = crc32(chunk, this.crc);
    }
  }

  /** Fills the file to PART_SIZE from `reader` (through `buffer`), or to the stream's end; then closes it. */
  async fill(reader: ChunkReader, buffer: Buffer): Promise<void> {
    while (this.size < PART_SIZE) {
      const filled = await reader.fill(buffer.subarray(0, Math.min(buffer.length, PART_SIZE - this.size)));
      if (filled === 0) break;
      await this.write([buffer.subarray(0, filled)]);
    }
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }

  /** The part's CRC32 as S3 takes it (big-endian, base64), or nothing when the client sends none. */
  checksum(): { ChecksumCRC32?: string } {
    if (!this.checksummed) return {};
    const bytes = Buffer.allocUnsafe(4);
    bytes.writeUInt32BE(this.crc >>> 0);
    return { ChecksumCRC32: bytes.toString("base64") };
  }

  async discard(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close().catch(() => {});
    await fs.rm(this.path, { force: true });
  }
}

/**
 * Sends a request whose body is a read stream of the part file, from `send`. The SDK retries no
 * request with a stream body (it cannot read one again); this does, reading the file again, for
 * the failures the SDK's standard retry strategy would retry.
 */
async function sendFromFile<T>(client: S3Client, part: PartFile, send: (body: Readable) => Promise<T>): Promise<T> {
  const attempts = await client.config.maxAttempts();
  for (let attempt = 1; ; attempt++) {
    const body = createReadStream(part.path, { highWaterMark: READ_CHUNK });
    try {
      return await send(body);
    } catch (error) {
      body.destroy();
      if (attempt >= attempts || !isTransient(error)) throw error;
      // Exponential backoff with full jitter, as the SDK's: up to 0.1 s, 0.2 s, 0.4 s, ...
      await sleep(Math.random() * 100 * 2 ** (attempt - 1));
    }
  }
}

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * `command`, logging nothing. When a request with a stream body fails, the SDK writes "non-retryable
 * streaming request" to the console, past any logger; sendFromFile does retry, and the server's
 * logs are JSON lines. The SDK's commands log nothing else by default.
 */
function quiet<C extends PutObjectCommand | UploadPartCommand>(command: C): C {
  (command.middlewareStack as PutObjectCommand["middlewareStack"]).add(
    (next, context) => (args) => {
      context.logger = SILENT;
      return next(args);
    },
    { step: "initialize", name: "silentStreamingRequest" },
  );
  return command;
}

const TRANSIENT_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const TRANSIENT_NAMES = new Set(["TimeoutError", "RequestTimeout", "RequestTimeoutException", "SlowDown", "Throttling", "ThrottlingException"]);

/** What the SDK's standard retry strategy retries: dropped connections, timeouts, throttling, 5xx. */
function isTransient(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: string; code?: string };
  if (name === "AbortError") return false;
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode ?? 0;
    return error.$retryable !== undefined || status === 429 || status >= 500 || TRANSIENT_NAMES.has(error.name);
  }
  return TRANSIENT_NAMES.has(name ?? "") || TRANSIENT_CODES.has(code ?? "");
}

/** Reads a stream as its own chunks or copied into a buffer, keeping what did not fit for the next read. */
class ChunkReader {
  private readonly chunks: AsyncIterator<Buffer>;
  private leftover: Buffer | null = null;
  /** Whether the stream has been read to its end. */
  ended = false;

  constructor(source: Readable) {
    this.chunks = source[Symbol.asyncIterator]();
  }

  /** The next chunk, or null at the end. */
  private async next(): Promise<Buffer | null> {
    const chunk = this.leftover;
    this.leftover = null;
    if (chunk) return chunk;
    if (this.ended) return null;
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return null;
    }
    return next.value;
  }

  /** Whether any bytes remain (reading the next chunk, if need be, to know). */
  async more(): Promise<boolean> {
    while (!this.leftover?.length) {
      this.leftover = await this.next();
      if (!this.leftover) return false;
    }
    return true;
  }

  /** Fills `buffer`; returns the bytes added, fewer than its length only at the stream's end. */
  async fill(buffer: Buffer): Promise<number> {
    let filled = 0;
    while (filled < buffer.length) {
      const chunk = await this.next();
      if (!chunk) break;
      const copied = chunk.copy(buffer, filled);
      filled += copied;
      if (copied < chunk.length) this.leftover = chunk.subarray(copied);
    }
    return filled;
  }

  /** Up to `size` bytes as the stream's own chunks; fewer only when the stream has ended. */
  async gather(size: number): Promise<Buffer[]> {
    const chunks: Buffer[] = [];
    let gathered = 0;
    while (gathered < size) {
      const chunk = await this.next();
      if (!chunk) break;
      const taken = chunk.length <= size - gathered ? chunk : chunk.subarray(0, size - gathered);
      if (taken !== chunk) this.leftover = chunk.subarray(taken.length);
      chunks.push(taken);
      gathered += taken.length;
    }
    return chunks;
  }

  /** Stops reading: the stream is destroyed if it had not ended (a Readable's iterator does that). */
  async close(): Promise<void> {
    if (!this.ended) await this.chunks.return?.();
  }
}
