// A body for a bare server process, in a file: an environment variable holds at most 128 KiB on
// Linux, and a /register answer is several times that. The server removes it once read.
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

let files = 0;

/** Writes `body` to a file of its own under the temporary directory; returns its path. */
export function bodyFile(body: string): string {
  const file = path.join(os.tmpdir(), `bench-bare-body-${process.pid}-${files++}`);
  writeFileSync(file, body);
  return file;
}
