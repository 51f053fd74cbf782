// Both backends stream a body of unknown length; this is where its length is counted and capped.
import { finished, Transform, type Readable, type TransformCallback } from "node:stream";
import { FileTooLargeError } from "./types.ts";

/** Passes bytes through, counting them; past `maxBytes` it fails with FileTooLargeError. */
export class ByteCounter extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.maxBytes !== undefined && this.bytes > this.maxBytes) callback(new FileTooLargeError(this.maxBytes));
    else callback(null, chunk);
  }
}

/**
 * `source` piped through a ByteCounter. `pipe` forwards neither errors nor an early close, which
 * would leave the reader waiting forever; here either fails the counter. On failure the source is
 * unpiped, not destroyed: the rest of it (drain it, destroy it) is the caller's to decide.
 */
export function countBytes(source: Readable, maxBytes: number | undefined): ByteCounter {
  const counter = new ByteCounter(maxBytes);
  // The listener stays after the counter is done, so a late source error is not an uncaught one.
  finished(source, { writable: false }, (error) => {
    if (error) counter.destroy(error);
  });
  source.pipe(counter);
  return counter;
}
