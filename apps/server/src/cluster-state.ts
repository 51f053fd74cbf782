// What a running `npm run cluster` records in its data folder, so that `npm run cli` (which uses
// the same DATA_DIR, ./data by default) reaches the cluster's database and Redis rather than the
// embedded database of that folder. DATA_DIR/cluster/state.json exists while the cluster runs; at
// stop it becomes DATA_DIR/cluster/last-state.json, the settings of the last cluster, which a CLI
// asked for the cluster explicitly may still use.
import { readFileSync, renameSync, mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { processStartTime, sameProcessAlive } from "./process-identity.ts";

/** The cluster's folder inside the data folder. */
export const CLUSTER_DIR = "cluster";
const STATE_FILE = "state.json";
const LAST_STATE_FILE = "last-state.json";

/** Settings that say where the cluster's data lives: what the CLI needs to act on the same data. */
export const CLI_SETTING_NAMES = ["DATABASE_URL", "REDIS_URL", "REDIS_CLUSTER_NODES", "REDIS_PREFIX", "EXTERNAL_HOST"] as const;

export interface ClusterStateProcess {
  name: string;
  role: "api" | "events" | "worker" | "nginx";
  /** null while it is down (between a death and its restart). */
  pid: number | null;
  port: number | null;
  metricsPort: number | null;
}

export interface ClusterState {
  version: 1;
  /** The supervisor (`npm run cluster`'s node process). */
  pid: number;
  /** Its start time as the kernel counts it (Linux), so a reused pid is not taken for it. */
  pidStartTime: string | null;
  host: string;
  startedAt: string;
  /** Set in last-state.json: when the cluster stopped. */
  stoppedAt?: string;
  /** nginx, the address clients use. */
  url: string;
  /** Where its logs are (access.log, error.log, <process>.log, cluster.log). */
  logsDir: string;
  /** The values of CLI_SETTING_NAMES the cluster's processes run with (those that are set). */
  settings: Record<string, string>;
  processes: ClusterStateProcess[];
}

export function clusterDir(dataDir: string): string {
  return path.join(dataDir, CLUSTER_DIR);
}

export function clusterStatePath(dataDir: string): string {
  return path.join(clusterDir(dataDir), STATE_FILE);
}

export function lastClusterStatePath(dataDir: string): string {
  return path.join(clusterDir(dataDir), LAST_STATE_FILE);
}

/** Whether the supervisor a state names still runs (and is still that process, not a reused pid). */
export function supervisorAlive(state: Pick<ClusterState, "pid" | "pidStartTime" | "host">): boolean {
  // Another host's cluster (a shared folder) listens on that host's loopback: not one to reach from here.
  if (state.host !== os.hostname()) return false;
  return sameProcessAlive(state.pid, state.pidStartTime);
}

function readState(file: string): ClusterState | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const state = JSON.parse(text) as ClusterState;
    if (state.version === 1 && typeof state.pid === "number" && typeof state.settings === "object" && state.settings !== null) return state;
  } catch {
    // Not ours, or cut short: as if absent.
  }
  return null;
}

/** The state of the cluster running on this data folder, or null when none runs (no file, or its supervisor is gone). */
export function runningCluster(dataDir: string): ClusterState | null {
  const state = readState(clusterStatePath(dataDir));
  return state && supervisorAlive(state) ? state : null;
}

/**
 * The last cluster this data folder ran, running or not: the running one's state, else the one
 * recorded at its stop, else that of a supervisor that died without stopping (its state.json stayed).
 */
export function lastCluster(dataDir: string): ClusterState | null {
  const running = readState(clusterStatePath(dataDir));
  if (running && supervisorAlive(running)) return running;
  const stopped = readState(lastClusterStatePath(dataDir));
  if (running && (!stopped || stopped.startedAt < running.startedAt)) return running;
  return stopped;
}

/**
 * The settings `npm run cli` should use to act on the cluster of `dataDir` (its DATA_DIR):
 * DATABASE_URL, REDIS_URL, EXTERNAL_HOST (and REDIS_PREFIX, REDIS_CLUSTER_NODES where the cluster
 * had them), or null when no cluster runs on that folder. With `includeStopped` (a `--cluster`
 * flag), the last recorded cluster's settings even when it is stopped (null only if none was ever
 * recorded there). Settings the operator sets in the environment should win over these.
 */
export function clusterSettingsForCli(dataDir: string, options: { includeStopped?: boolean } = {}): Record<string, string> | null {
  const state = options.includeStopped ? lastCluster(dataDir) : runningCluster(dataDir);
  return state ? { ...state.settings } : null;
}

/** The CLI settings among `env` (the environment the cluster's processes get). */
export function pickCliSettings(env: Record<string, string | undefined>): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of CLI_SETTING_NAMES) {
    const value = env[name];
    if (value !== undefined && value !== "") settings[name] = value;
  }
  return settings;
}

/**
 * Writes state.json for a running cluster, replacing it atomically (a reader never sees half a
 * file), readable by its owner only: DATABASE_URL may hold a password.
 */
export function writeClusterState(dataDir: string, state: ClusterState): void {
  mkdirSync(clusterDir(dataDir), { recursive: true });
  const file = clusterStatePath(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** At stop: state.json becomes last-state.json, with the time of the stop. */
export function retireClusterState(dataDir: string, state: ClusterState): void {
  const last = lastClusterStatePath(dataDir);
  const temp = `${last}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ ...state, stoppedAt: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, last);
  try {
    unlinkSync(clusterStatePath(dataDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** A state for this process as the supervisor. */
export function newClusterState(fields: Omit<ClusterState, "version" | "pid" | "pidStartTime" | "host" | "startedAt">): ClusterState {
  return { version: 1, pid: process.pid, pidStartTime: processStartTime(process.pid), host: os.hostname(), startedAt: new Date().toISOString(), ...fields };
}
