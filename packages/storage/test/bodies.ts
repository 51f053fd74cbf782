// Bodies for the storage tests: reproducible bytes, streams that end, fail, pause or never end.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";

export const MIB = 1024 * 1024;

/** `size` pseudo-random bytes, the same for the same seed (so a mixed-up object shows). */
export function pattern(size: number, seed = 1): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

export function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Chunk sizes that do not divide a MiB, so no part or buffer boundary lines up by luck. */
const CHUNK_SIZES = [65536, 1000, 131071, 7, 40000];

function* chunksOf(bytes: Buffer): Generator<Buffer> {
  let offset = 0;
  for (let i = 0; offset < bytes.length; i++) {
    const size = CHUNK_SIZES[i % CHUNK_SIZES.length];
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

/** `bytes` as a stream of uneven chunks. */
export function streamOf(bytes: Buffer): Readable {
  return Readable.from(chunksOf(bytes), { objectMode: false });
}

export interface Gate {
  /** Resolves when the stream has sent everything before the gate. */
  reached: Promise<void>;
  open(): void;
}

/**
 * `before`, then a pause until the gate opens, then `after` (or `failWith`, thrown instead of it).
 */
export function streamWithGate(before: Buffer, after: Buffer, failWith?: Error): { body: Readable; gate: Gate } {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  async function* generate() {
    yield* chunksOf(before);
    reach();
    await opened;
    if (failWith) throw failWith;
    yield* chunksOf(after);
  }
  return { body: Readable.from(generate(), { objectMode: false }), gate: { reached, open } };
}

/** `before`, then `error`: a client that goes away midway. */
export function failingStream(before: Buffer, error: Error): Readable {
  async function* generate() {
    yield* chunksOf(before);
    throw error;
  }
  return Readable.from(generate(), { objectMode: false });
}

/** A stream that never ends, counting what was read from it. */
export function endlessStream(): Readable & { sent: number } {
  const chunk = pattern(64 * 1024, 7);
  const stream = new Readable({
    read() {
      stream.sent += chunk.length;
      this.push(chunk);
    },
  }) as Readable & { sent: number };
  stream.sent = 0;
  return stream;
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Polls `check` until it holds; fails after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
