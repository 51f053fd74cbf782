// One owner per data folder. The embedded database (PGlite) is a set of files that exactly one
// process may have open: a second server, or a CLI writing beside a running server, corrupts it or
// writes changes the server never sees. The owner holds DATA_DIR/server.lock, which names it
// (pid, host, what it is, and where its operators' channel listens).
//
// Hand-written rather than a lockfile package: the lock must carry the owner's pid and channel
// for the CLI, and be judged stale at once when its pid is gone (a killed server), not after a
// timeout. The heartbeat (mtime) covers owners on another host sharing the folder.
import { randomUUID } from "node:crypto";
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { processStartTime, sameProcessAlive } from "./process-identity.ts";

export const LOCK_FILE = "server.lock";
/** How often the owner touches the lock, and how old a lock of another host's owner may be before it is stale. */
const HEARTBEAT_MS = 10_000;
const FOREIGN_STALE_MS = 60_000;

export interface LockOwner {
  /** Unique per acquisition: tells a lock that was replaced from the one that was read. */
  token: string;
  pid: number;
  host: string;
  /** /proc's start time of the pid (Linux), so a reused pid is not taken for the owner. */
  startTime: string | null;
  kind: "server" | "cli";
  /** The operators' channel (a Unix socket) of a server once it listens; null until then. */
  socket: string | null;
  since: string;
}

export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    super(describeBusy(dataDir, owner));
  }
}

function describeBusy(dataDir: string, owner: LockOwner): string {
  const who = owner.kind === "server" ? `a server (pid ${owner.pid}${owner.host === os.hostname() ? "" : ` on ${owner.host}`})` : `an operator command (pid ${owner.pid})`;
  const what =
    owner.kind === "server"
      ? "Stop it before starting another server on this folder, or give this one its own DATA_DIR. While it runs, `npm run cli` carries out its commands through it."
      : "Wait for it to finish, then try again.";
  return `The data folder ${dataDir} is in use by ${who} since ${owner.since}. ${what}`;
}

/** Whether the process a lock names still runs (and still is that process). */
export function ownerAlive(owner: LockOwner, lockPath: string): boolean {
  if (owner.host !== os.hostname()) {
    // Its pid means nothing here; its heartbeat says whether it lives.
    try {
      return Date.now() - statSync(lockPath).mtimeMs < FOREIGN_STALE_MS;
    } catch {
      return false;
    }
  }
  return sameProcessAlive(owner.pid, owner.startTime);
}

function readOwner(lockPath: string): LockOwner | null {
  let text: string;
  try {
    text = readFileSync(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (typeof owner.pid === "number" && typeof owner.token === "string") return owner;
  } catch {
    // Written half (a crash between create and write): nobody can own it.
  }
  return { token: `unreadable:${text}`, pid: -1, host: os.hostname(), startTime: null, kind: "server", socket: null, since: "?" };
}

/** The live owner of a data folder, or null when it has none (no lock, or a stale one). */
export function dataDirOwner(dataDir: string): LockOwner | null {
  const lockPath = path.join(dataDir, LOCK_FILE);
  const owner = readOwner(lockPath);
  return owner && ownerAlive(owner, lockPath) ? owner : null;
}

export interface DataDirLock {
  readonly owner: LockOwner;
  /** Records where the owner's operators' channel listens, for the CLI to find. */
  setSocket(socket: string | null): void;
  release(): void;
}

export interface AcquireOptions {
  kind: LockOwner["kind"];
  /** Told when a stale lock is taken over (logged by the caller). */
  onStale?: (stale: LockOwner) => void;
}

/**
 * Takes the data folder or throws DataDirBusyError naming its live owner. A stale lock (its pid
 * gone) is moved aside atomically and checked to be the one judged stale, so two processes taking
 * over the same stale lock at once cannot both win.
 */
export function acquireDataDirLock(dataDir: string, options: AcquireOptions): DataDirLock {
  const lockPath = path.join(dataDir, LOCK_FILE);
  const owner: LockOwner = {
    token: randomUUID(),
    pid: process.pid,
    host: os.hostname(),
    startTime: processStartTime(process.pid),
    kind: options.kind,
    socket: null,
    since: new Date().toISOString(),
  };
  for (let attempt = 0; ; attempt++) {
    if (attempt > 5) throw new Error(`could not take ${lockPath}: it keeps changing`);
    if (createWhole(lockPath, owner)) break;
    const current = readOwner(lockPath);
    if (current === null) continue;
    if (ownerAlive(current, lockPath)) throw new DataDirBusyError(dataDir, current);
    const aside = `${lockPath}.stale-${process.pid}`;
    try {
      renameSync(lockPath, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const moved = readOwner(aside);
    if (moved?.token !== current.token) {
      // Another process took over between our read and our rename: give its lock back.
      try {
        linkSync(aside, lockPath);
      } catch {
        // A third one got in; its own checks decide.
      }
      unlinkSync(aside);
      if (moved) throw new DataDirBusyError(dataDir, moved);
      continue;
    }
    unlinkSync(aside);
    options.onStale?.(current);
  }

  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(lockPath, now, now);
    } catch {
      // Gone (the folder was removed): nothing to keep alive.
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  let released = false;
  return {
    owner,
    setSocket(socket) {
      owner.socket = socket;
      // Replaced atomically, so a reader never sees it half-written.
      const next = `${lockPath}.${owner.token}`;
      writeNew(next, owner);
      renameSync(next, lockPath);
    },
    release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      // Only our own lock: after a takeover (we were judged dead) it is someone else's.
      if (readOwner(lockPath)?.token === owner.token) unlinkSync(lockPath);
    },
  };
}

/**
 * Creates `file` with the owner in it, or returns false if it exists. Written aside and linked into
 * place, so nobody ever reads it empty or half-written (and judges it stale).
 */
function createWhole(file: string, owner: LockOwner): boolean {
  const temp = `${file}.${owner.token}`;
  writeNew(temp, owner);
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
}

function writeNew(file: string, owner: LockOwner): void {
  const fd = openSync(file, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(owner)}\n`);
  } finally {
    closeSync(fd);
  }
}
