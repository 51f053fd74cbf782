// Range arithmetic both backends share, so a range means the same thing whichever stores the bytes.
import type { ByteRange } from "./types.ts";

/** Refuses what no Range header can ask for: the HTTP layer parses headers, a bad range here is a bug. */
export function assertByteRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`invalid byte range ${start}-${end}`);
  }
}

/** The part of `range` an object of `size` bytes holds: null when none (start at or past the end). */
export function clampByteRange(range: ByteRange, size: number): ByteRange | null {
  if (range.start >= size) return null;
  return { start: range.start, end: Math.min(range.end, size - 1) };
}
