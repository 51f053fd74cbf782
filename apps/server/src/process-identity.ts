// Whether a process named in a file (the data folder's lock, the cluster's state) still runs and is
// still that process: its pid alive, with the start time it had when it wrote the file, so that a
// reused pid is not taken for it.
import { readFileSync } from "node:fs";

/** Field 22 of /proc/<pid>/stat (start time since boot); null off Linux or when the process is gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process `pid`, started at `startTime` (null: not known), runs on this host. Never
 * this process itself: a container restarted with the same host name runs us under the pid of its
 * last life.
 */
export function sameProcessAlive(pid: number, startTime: string | null): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !pidAlive(pid)) return false;
  const now = processStartTime(pid);
  return startTime === null || now === null || now === startTime;
}
