// A gzip-compressed POSIX tar of an export, written as a stream (a pax header for names ustar
// cannot hold). Each entry's size is known before its bytes: a JSON file written to a temporary
// folder, or a stored file whose size storage reports; a body that is not that size fails the
// archive rather than shift every entry after it.
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";

const BLOCK = 512;

export interface TarEntry {
  path: string;
  size: number;
  open: () => Promise<AsyncIterable<Buffer | Uint8Array>>;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: string, size: number, type: "0" | "x"): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "utf8");
  block.write(octal(0o644, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(Math.floor(Date.now() / 1000), 12), 136, "ascii");
  block.write(" ".repeat(8), 148, "ascii");
  block.write(type, 156, "ascii");
  block.write("ustar\0" + "00", 257, "ascii");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (Buffer.byteLength(`${length}${body}`) !== length) length = Buffer.byteLength(`${length}${body}`);
  return `${length}${body}`;
}

async function* tarChunks(entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    const plain = /^[\x20-\x7e]*$/.test(entry.path) && entry.path.length <= 100;
    if (!plain) {
      const body = Buffer.from(paxRecord("path", entry.path), "utf8");
      yield header("PaxHeader", body.length, "x");
      yield body;
      yield padding(body.length);
    }
    yield header(plain ? entry.path : entry.path.replace(/[^\x20-\x7e]/g, "_").slice(-100), entry.size, "0");
    let written = 0;
    for await (const chunk of await entry.open()) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      written += buffer.length;
      if (written > entry.size) throw new Error(`${entry.path} is larger than its ${entry.size} bytes`);
      yield buffer;
    }
    if (written !== entry.size) throw new Error(`${entry.path} has ${written} bytes, not ${entry.size}`);
    yield padding(entry.size);
  }
  yield Buffer.alloc(BLOCK * 2);
}

/** The gzip tar of `entries`, as a stream. */
export function tarGzStream(entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): Readable {
  const tar = Readable.from(tarChunks(entries));
  const gzip = createGzip();
  tar.on("error", (error) => gzip.destroy(error));
  return tar.pipe(gzip);
}
