// A gzip-compressed POSIX tar of an export, written as a stream (a pax header for names ustar
// cannot hold). Each entry's size is known before its bytes: a JSON file written to a temporary
// folder, or a stored file whose size storage reports; a body that is not that size fails the
// archive rather than shift every entry after it.
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { TAR_BLOCK, tarEntryHeaders, tarPadding } from "./tar-headers.ts";

export interface TarEntry {
  path: string;
  size: number;
  open: () => Promise<AsyncIterable<Buffer | Uint8Array>>;
}

async function* tarChunks(entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    yield* tarEntryHeaders(entry.path, entry.size, new Date());
    let written = 0;
    for await (const chunk of await entry.open()) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      written += buffer.length;
      if (written > entry.size) throw new Error(`${entry.path} is larger than its ${entry.size} bytes`);
      yield buffer;
    }
    if (written !== entry.size) throw new Error(`${entry.path} has ${written} bytes, not ${entry.size}`);
    yield tarPadding(entry.size);
  }
  yield Buffer.alloc(TAR_BLOCK * 2);
}

/** The gzip tar of `entries`, as a stream. */
export function tarGzStream(entries: AsyncIterable<TarEntry> | Iterable<TarEntry>): Readable {
  const tar = Readable.from(tarChunks(entries));
  const gzip = createGzip();
  tar.on("error", (error) => gzip.destroy(error));
  return tar.pipe(gzip);
}
