// CPU time from /proc, so a benchmark can say what each process spent on a figure (all threads:
// the collector's and libuv's too).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** USER_HZ: /proc counts CPU time in ticks of 10 ms on Linux. */
export const CLOCK_TICKS = 100;

/** CPU time a process has used (all its threads), in ms. */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** The local Redis server's CPU time in ms (the benchmarks' Redis is the machine's). */
export function redisCpuMs(): number {
  try {
    const pid = Number(execFileSync("pgrep", ["-o", "redis-server"], { encoding: "utf8" }).trim());
    return processCpuMs(pid);
  } catch {
    return 0;
  }
}

/** The whole machine's busy and idle CPU time, in ms, from /proc/stat. */
export function machineCpuMs(): { busy: number; idle: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  return { busy: ((fields.reduce((a, b) => a + b, 0) - idle) * 1000) / CLOCK_TICKS, idle: (idle * 1000) / CLOCK_TICKS };
}

/** Resident memory of a process, in bytes. */
export function processRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}
