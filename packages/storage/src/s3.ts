// Objects in an S3 bucket (AWS, or an S3-compatible service such as MinIO or Ceph): any node reads
// what any other node wrote.
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type GetObjectCommandOutput,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import type { StorageConfig } from "@chat/config";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { countBytes } from "./byte-counter.ts";
import { assertByteRange, clampByteRange } from "./byte-range.ts";
import { uploadStream } from "./multipart-upload.ts";
import { assertSafeKey, FileTooLargeError, type ByteRange, type FileStorage, type ObjectRead, type PutOptions, type StoredObject } from "./types.ts";

// The SDK warns once per process, on the first client, that its 2027 releases will need Node 22;
// the SDK's documented switch turns that off (aws/aws-sdk-js-v3#7983). An operator's own value stays.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export type S3StorageConfig = Extract<StorageConfig, { backend: "s3" }>;

export interface S3FileStorageOptions {
  /** Put before every key, as is (end it with "/" for a folder): several deployments can share a bucket. */
  prefix?: string;
  /**
   * Where uploads larger than 1 MiB spool their parts (up to 5 MiB a file, each removed once sent;
   * created if missing). By default a directory of this storage's own under os.tmpdir() (TMPDIR),
   * removed by close(). Better on a disk than on a tmpfs, whose files are memory.
   */
  spoolDirectory?: string;
}

/** DeleteObjects takes at most 1000 keys a request. */
const DELETE_BATCH = 1000;

export class S3FileStorage implements FileStorage {
  readonly kind = "s3";
  readonly bucket: string;
  readonly prefix: string;
  private readonly client: S3Client;
  private readonly spoolOption: string | null;
  private spool: Promise<string> | null = null;

  constructor(config: S3StorageConfig, options: S3FileStorageOptions = {}) {
    this.bucket = config.bucket;
    this.prefix = options.prefix ?? "";
    this.spoolOption = options.spoolDirectory ?? null;
    const clientConfig: S3ClientConfig = {
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      // Neither: the SDK's default chain (environment, profile, instance or task role).
      ...(config.accessKeyId !== null && config.secretAccessKey !== null
        ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
        : {}),
    };
    if (config.endpoint !== null) {
      clientConfig.endpoint = config.endpoint;
      // Several S3-compatible services (Ceph RGW, Backblaze B2, ...) refuse the checksum headers the
      // SDK sends by default since early 2025; this sends them only where an operation requires one
      // (DeleteObjects). The SDK's own AWS_REQUEST_CHECKSUM_CALCULATION, when set, decides instead.
      if (process.env.AWS_REQUEST_CHECKSUM_CALCULATION === undefined) clientConfig.requestChecksumCalculation = "WHEN_REQUIRED";
    }
    // GetObject responses are not checked against their checksum, on AWS either. The SDK's default
    // passes the body through one more stream computing its CRC32 (about 0.2 ms of CPU a MiB, a
    // fifth of what the API spends proxying it), and finds a mismatch only after the last byte:
    // get()'s bytes are streamed on as they come, so by then they have all been sent, and the check
    // would only cut off a complete response. TLS guards them in transit. A caller keeping the bytes
    // can still ask, with ChecksumMode: "ENABLED"; AWS_RESPONSE_CHECKSUM_VALIDATION decides when set.
    if (process.env.AWS_RESPONSE_CHECKSUM_VALIDATION === undefined) clientConfig.responseChecksumValidation = "WHEN_REQUIRED";
    this.client = new S3Client(clientConfig);
  }

  async put(key: string, body: Readable | Buffer, { contentType, maxBytes }: PutOptions): Promise<StoredObject> {
    const Key = this.objectKey(key);
    if (Buffer.isBuffer(body)) {
      if (maxBytes !== undefined && body.length > maxBytes) throw new FileTooLargeError(maxBytes);
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: body, ContentLength: body.length, ContentType: contentType }));
      return { size: body.length, contentType };
    }
    const counter = countBytes(body, maxBytes);
    // A failed body (past maxBytes, or its stream failed) fails the counter, and with it the upload.
    const size = await uploadStream(this.client, { Bucket: this.bucket, Key, ContentType: contentType }, counter, {
      spoolDirectory: () => this.spoolDirectory(),
    });
    return { size, contentType };
  }

  async get(key: string, range?: ByteRange): Promise<ObjectRead | null> {
    const Key = this.objectKey(key);
    if (range) assertByteRange(range);
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
    } catch (error) {
      if (isNotFound(error)) return null;
      // 416: the range starts past the end. The interface reads that as the whole object.
      if (range && error instanceof S3ServiceException && (error.name === "InvalidRange" || error.$metadata.httpStatusCode === 416)) {
        return this.get(key);
      }
      throw error;
    }
    const body = response.Body;
    if (!(body instanceof Readable)) throw new Error(`S3 returned no readable body for ${JSON.stringify(Key)}`);
    const contentType = response.ContentType ?? null;
    const contentRange = parseContentRange(response.ContentRange);
    if (contentRange) {
      // 206: ContentLength is the range's; the object's size is after the slash.
      return { size: contentRange.size, contentType, body, range: clampByteRange(contentRange, contentRange.size) };
    }
    return { size: response.ContentLength ?? 0, contentType, body, range: null };
  }

  async stat(key: string): Promise<StoredObject | null> {
    const Key = this.objectKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
      return { size: head.ContentLength ?? 0, contentType: head.ContentType ?? null };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(keys: string[]): Promise<void> {
    const objectKeys = keys.map((key) => this.objectKey(key));
    for (let i = 0; i < objectKeys.length; i += DELETE_BATCH) {
      const batch = objectKeys.slice(i, i + DELETE_BATCH);
      // Quiet: the answer lists only failures. A key with no object is a success in S3's eyes.
      const result = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      const failed = result.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0];
        throw new Error(`S3 did not delete ${failed.length} of ${batch.length} objects; ${first.Key}: ${first.Code} ${first.Message}`);
      }
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
    // Only a directory of its own: a given one may be shared, and holds nothing once uploads are done.
    const spool = this.spool;
    this.spool = null;
    if (spool && this.spoolOption === null) {
      const directory = await spool.catch(() => null);
      if (directory) await fs.rm(directory, { recursive: true, force: true });
    }
  }

  /** The directory part files go in, made on first use. */
  private spoolDirectory(): Promise<string> {
    if (!this.spool) {
      const given = this.spoolOption;
      const made = given !== null ? fs.mkdir(given, { recursive: true }).then(() => given) : fs.mkdtemp(path.join(os.tmpdir(), "teamchat-s3-parts-"));
      made.catch(() => (this.spool = null)); // tried again by the next upload
      this.spool = made;
    }
    return this.spool;
  }

  private objectKey(key: string): string {
    assertSafeKey(key);
    return this.prefix + key;
  }
}

/** "bytes 0-9/100" as the range it holds and the object's size; null for anything else. */
function parseContentRange(header: string | undefined): (ByteRange & { size: number }) | null {
  const match = header ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header.trim()) : null;
  if (!match) return null;
  return { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) };
}

/** NoSuchKey from GET, NotFound from HEAD (which has no body to name the error). */
function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === "NoSuchKey" || error.name === "NotFound");
}
