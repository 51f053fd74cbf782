// POSIX tar headers, for the two tar files this server writes: backups (apps/server/src/backup-archive.ts)
// and organization exports (realm-export-tar.ts). A pax header comes first when ustar cannot say
// an entry's name (non-ASCII, past 100 bytes) or its size (past 8 GiB). Written here rather than
// with a tar package: a writer of regular files is small (the reasons are in backup-archive.ts).

export const TAR_BLOCK = 512;
/** ustar's size field holds 11 octal digits. */
const USTAR_MAX_SIZE = 0o77777777777;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: string, size: number, mtime: Date, type: "0" | "x"): Buffer {
  const block = Buffer.alloc(TAR_BLOCK);
  block.write(name, 0, 100, "utf8");
  block.write(octal(0o644, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, "ascii");
  block.write(" ".repeat(8), 148, "ascii");
  block.write(type, 156, "ascii");
  block.write("ustar\0" + "00", 257, "ascii");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

/** A pax record: its length counts itself, so the number is found by trying. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (Buffer.byteLength(`${length}${body}`) !== length) length = Buffer.byteLength(`${length}${body}`);
  return `${length}${body}`;
}

/** The zeros that fill an entry of `size` bytes to a whole block. */
export function tarPadding(size: number): Buffer {
  const rest = size % TAR_BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(TAR_BLOCK - rest);
}

/** The headers of one regular file: a pax header first when ustar cannot say the name or the size. */
export function tarEntryHeaders(path: string, size: number, mtime: Date): Buffer[] {
  const plainName = /^[\x20-\x7e]*$/.test(path) && path.length <= 100;
  const records = (plainName ? "" : paxRecord("path", path)) + (size > USTAR_MAX_SIZE ? paxRecord("size", String(size)) : "");
  const name = plainName ? path : `PaxHeader/${path.replace(/[^\x20-\x7e]/g, "_").slice(-80)}`;
  const out: Buffer[] = [];
  if (records) {
    const body = Buffer.from(records, "utf8");
    out.push(header(name, body.length, mtime, "x"), body, tarPadding(body.length));
  }
  out.push(header(plainName ? path : name.slice("PaxHeader/".length), Math.min(size, USTAR_MAX_SIZE), mtime, "0"));
  return out;
}
