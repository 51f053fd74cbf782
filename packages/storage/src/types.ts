// Where uploaded files, avatars and custom emoji live. Every API node reads and writes through this
// interface, so with object storage any node serves any file; the local disk suits one node.
import type { Readable } from "node:stream";

/** A byte range, both ends inclusive (as HTTP's Range header counts). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface PutOptions {
  contentType: string;
  /**
   * The most bytes the body may hold. Past it `put` rejects with FileTooLargeError and leaves
   * nothing stored (no partial object, no temporary file).
   */
  maxBytes?: number;
}

export interface StoredObject {
  size: number;
  contentType: string | null;
}

export interface ObjectRead extends StoredObject {
  /** The requested range's bytes (or the whole object); the caller must consume or destroy it. */
  body: Readable;
  /** The range this body holds, when one was asked for and is satisfiable. */
  range: ByteRange | null;
}

export interface FileStorage {
  /** "local" or "s3", for logs and the README. */
  readonly kind: string;
  /**
   * Streams `body` to `key`, never holding the whole of it in memory. A failed body (its stream
   * errors, or passes maxBytes) rejects and stores nothing; a key already present is replaced.
   */
  put(key: string, body: Readable | Buffer, options: PutOptions): Promise<StoredObject>;
  /** The object at `key`, or null when there is none. A range past its end reads as no range. */
  get(key: string, range?: ByteRange): Promise<ObjectRead | null>;
  /** The object's size and type, or null when there is none. */
  stat(key: string): Promise<StoredObject | null>;
  /** Removes the objects; keys with no object are ignored. */
  delete(keys: string[]): Promise<void>;
  close(): Promise<void>;
}

/** The body passed `maxBytes`. */
export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file larger than ${maxBytes} bytes`);
    this.name = "FileTooLargeError";
  }
}

/**
 * Keys are made by the server (`uploads/<realm>/<random>/<name>`, `avatars/...`), never taken from
 * a client as they are; still, each storage refuses a key that could leave its root.
 */
export function assertSafeKey(key: string): void {
  if (
    key.length === 0 ||
    key.length > 1024 ||
    key.startsWith("/") ||
    key.includes("\\") ||
    key.includes("\0") ||
    key.split("/").some((part) => part === "" || part === "." || part === "..")
  ) {
    throw new Error(`unsafe storage key ${JSON.stringify(key)}`);
  }
}
