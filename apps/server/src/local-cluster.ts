// `npm run cluster`: the scaled-out deployment on one machine, as operators run it. nginx from the
// system's packages, with infra/nginx/nginx.conf (the compose file's proxy) given this machine's
// upstreams, in front of N API processes, M events processes and a worker, on the local Postgres
// (its database created when missing) and Redis. The cluster supervises what it starts: a process
// that dies is logged and started again, with backoff, on the same ports. Each process can also be
// restarted on purpose (a rolling restart), which the cluster test does under load. Logs (nginx's
// and each process's) go to files kept after stop; metrics to a port per process.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, chmodSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync, writeFileSync, type WriteStream } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ensureDatabase } from "./cluster-database.ts";
import { pidAlive } from "./process-identity.ts";
import { clusterDir, lastCluster, newClusterState, pickCliSettings, retireClusterState, runningCluster, supervisorAlive, writeClusterState, type ClusterState } from "./cluster-state.ts";

const ROOT = path.resolve(__dirname, "../../..");
const MAIN = path.join(ROOT, "apps/server/src/main.ts");
/** What `npm run build` makes (scripts/build-server.cjs), run by `npm start`. */
export const BUNDLE = path.join(ROOT, "apps/server/dist/main.cjs");
/** What the bundle is built from: a bundle older than any of these is out of date. */
const BUNDLE_SOURCES = ["apps", "packages"].flatMap((tier) => readdirSync(path.join(ROOT, tier)).map((name) => path.join(ROOT, tier, name, "src")));
const NGINX_CONF = path.join(ROOT, "infra/nginx/nginx.conf");
/** Node's flags to run a TypeScript entry as `npm start` does (scripts/typescript.mjs says why not plain tsx). */
/** What ./teamchat and the Docker image run the bundle with (teamchat says why): a smaller young generation. */
const LEAN_NODE_ARGS = ["--max-semi-space-size=4"];
export const TYPESCRIPT_NODE_ARGS = ["--import", path.join(ROOT, "scripts/typescript.mjs")];
const START_TIMEOUT_MS = 60_000;
/** A process that has not stopped this long after its signal is killed (a drain takes at most 10 s past its delay). */
const STOP_TIMEOUT_MS = 30_000;
/** Output kept in memory per process (the files have all of it). */
const OUTPUT_KEPT_CHARS = 1 << 20;
/** Lines of a dead process's output the supervisor logs with its death. */
const TAIL_LINES = 20;
/**
 * nginx takes a server that failed out of its upstream group for this long (its passive check),
 * and tries it again with one request after. A restarting process fails those tries until it
 * listens, so it is back in rotation only up to this long after it is ready.
 */
const NGINX_FAIL_TIMEOUT_SECONDS = 2;

export type ClusterRole = "api" | "events" | "worker";

/** Which server the processes run: the built bundle, the TypeScript sources, or the bundle when it is current. */
export type ClusterEntry = "auto" | "bundle" | "typescript";

/** How long the supervisor waits before starting a dead process again. */
export interface RestartBackoff {
  /** The first wait; each death in a row doubles it... */
  initialMs: number;
  /** ...up to this. */
  maxMs: number;
  /** A process that stayed up this long had its deaths forgiven: the next wait is initialMs again. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: RestartBackoff = { initialMs: 1000, maxMs: 30_000, stableMs: 60_000 };

/** The wait before the next start of a process that died `failures` times in a row before (0: its first death). */
export function restartDelay(failures: number, backoff: RestartBackoff = DEFAULT_BACKOFF): number {
  return Math.min(backoff.initialMs * 2 ** Math.min(failures, 30), backoff.maxMs);
}

export interface ClusterOptions {
  api: number;
  events: number;
  /** nginx's port; 0 picks a free one. */
  port: number;
  /** Settings every process gets (DATABASE_URL and REDIS_URL at least). */
  env: Record<string, string>;
  /** Where a process's output goes; the cluster keeps it (see ClusterProcess.output) and writes it to <logsDir>/<name>.log as well. */
  onOutput?: (name: string, text: string) => void;
  /**
   * Metrics (METRICS_PORT, on 127.0.0.1): process i, in the order of `processes` (API, events,
   * worker), gets this port + i; 0 (the default) gives each a free port; null turns metrics off.
   */
  metricsPort?: number | null;
  /**
   * Where the logs go, kept after stop: nginx's access.log and error.log, <name>.log for each
   * process, and cluster.log (what the supervisor did). Left out: a temporary folder removed at stop.
   */
  logsDir?: string;
  /**
   * The data folder (DATA_DIR) whose cluster this is: its state is kept in <dataDir>/cluster/
   * (state.json while running, for `npm run cli`; prometheus-targets.json). Left out: no state.
   */
  dataDir?: string;
  /** "auto" (the default): the built bundle when it is newer than every source, else the TypeScript sources. */
  entry?: ClusterEntry;
  /** Told each line the supervisor logs (a death, a restart, a stop); cluster.log has them all. */
  onSupervisorLog?: (line: string) => void;
  backoff?: Partial<RestartBackoff>;
  /** Stops the cluster while it starts (a Ctrl-C before it is ready): the start then fails. */
  abort?: AbortSignal;
}

export interface ClusterProcess {
  name: string;
  role: ClusterRole;
  /** Its HTTP port (the worker has none), the same across restarts. */
  port: number | null;
  /** Its metrics port (/metrics, /health/*), the same across restarts; null with metrics off. */
  metricsPort: number | null;
  /** The process now running (or starting); replaced at each restart. */
  child: ChildProcess;
  /** Its output since its last start (the tail of it past 1 MiB). */
  output(): string;
  /** Times it died unexpectedly (and was started again, or is about to be); a rolling restart is not counted. */
  deaths: number;
}

export interface ServerEntry {
  kind: "bundle" | "typescript";
  file: string;
  /** Node's arguments to run it. */
  args: string[];
  /** Why this one, for the summary. */
  reason: string;
}

export interface LocalCluster {
  /** nginx, the one address clients use. */
  url: string;
  processes: ClusterProcess[];
  /** nginx's master process now (null while it is down). */
  nginxPid(): number | null;
  /** What nginx wrote to its error log since this cluster started. */
  nginxErrors(): string;
  /** Where the logs are (see ClusterOptions.logsDir). */
  logsDir: string;
  /** The file that records the running cluster for `npm run cli`, when there is a dataDir. */
  stateFile: string | null;
  /** Prometheus' file_sd targets (every metrics port), when there is a dataDir and metrics are on. */
  prometheusTargetsFile: string | null;
  entry: ServerEntry;
  /** Whether DATABASE_URL's database existed or was created at start. */
  database: "exists" | "created";
  /**
   * Stops one process gracefully (SIGTERM) and starts it again on the same port; resolves once it
   * is ready and nginx sends to it again, so that restarting the next one leaves its tier a node.
   */
  restart(member: ClusterProcess): Promise<void>;
  /** Stops every process and nginx, gracefully; nothing is restarted once it is called. */
  stop(): Promise<void>;
}

/** The nginx binary of the system's packages. */
export function findNginx(): string | null {
  for (const candidate of ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]) {
    if (spawnSync(candidate, ["-v"]).status === 0) return candidate;
  }
  const found = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" });
  return found.status === 0 ? found.stdout.trim() : null;
}

/**
 * Whether this nginx takes `-e` (its error log before the configuration is read, since 1.19.5):
 * Ubuntu 22.04's is 1.18. Without it, nginx's start-up messages go to its compiled-in path too.
 */
function nginxTakesErrorLogFlag(binary: string): boolean {
  const version = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(spawnSync(binary, ["-v"], { encoding: "utf8" }).stderr ?? "");
  if (!version) return false;
  const [major, minor, patch] = version.slice(1).map(Number);
  return major > 1 || (major === 1 && (minor > 19 || (minor === 19 && patch >= 5)));
}

/** A port nothing listens on now (the kernel's choice for port 0). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a port can be listened on at 127.0.0.1 now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Whether `bundle` exists and is newer than every file under `sources` (folders). */
export function bundleIsCurrent(bundle: string = BUNDLE, sources: string[] = BUNDLE_SOURCES): boolean {
  let built: number;
  try {
    built = statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  const newer = (dir: string): boolean => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() ? newer(full) : statSync(full).mtimeMs > built) return true;
    }
    return false;
  };
  return !sources.some(newer);
}

/** What the processes run for an `entry` choice (ClusterOptions.entry). */
export function resolveServerEntry(choice: ClusterEntry = "auto", bundle: string = BUNDLE, sources: string[] = BUNDLE_SOURCES): ServerEntry {
  const typescript = (reason: string): ServerEntry => ({ kind: "typescript", file: MAIN, args: [...TYPESCRIPT_NODE_ARGS, MAIN], reason });
  const built = (reason: string): ServerEntry => ({ kind: "bundle", file: bundle, args: [...LEAN_NODE_ARGS, bundle], reason });
  if (choice === "typescript") return typescript("asked for");
  if (choice === "bundle") {
    if (!existsSync(bundle)) throw new Error(`${path.relative(ROOT, bundle)} does not exist: run \`npm run build\` first (or run the TypeScript sources: --entry typescript)`);
    return built(bundleIsCurrent(bundle, sources) ? "asked for" : "asked for, though older than the sources");
  }
  if (!existsSync(bundle)) return typescript("no build; `npm run build` makes one");
  return bundleIsCurrent(bundle, sources) ? built("newer than the sources") : typescript("the build is older than the sources; `npm run build` updates it");
}

/** A path for nginx's configuration, in quotes; nginx would read `$` as a variable. */
function nginxPath(file: string): string {
  if (/["\\$\n;{}]/.test(file)) throw new Error(`nginx cannot be given the path ${JSON.stringify(file)}: choose a folder without quotes, backslashes, $, ;, { or }`);
  return `"${file}"`;
}

/**
 * infra/nginx/nginx.conf for this machine: the same routes, timeouts and buffering, with the
 * upstreams' servers listed (compose resolves service names instead), its listen address, its
 * pid and temporary files under `dir` (nginx's defaults need root), and its logs under `logs`.
 */
export function localNginxConf(template: string, options: { dir: string; logs: string; port: number; api: number[]; events: number[] }): string {
  const servers = (ports: number[]) => ports.map((port) => `server 127.0.0.1:${port} max_fails=1 fail_timeout=${NGINX_FAIL_TIMEOUT_SECONDS}s;`).join("\n        ");
  const replace = (text: string, pattern: RegExp, replacement: string) => {
    if (!pattern.test(text)) throw new Error(`infra/nginx/nginx.conf has no ${pattern}: update localNginxConf`);
    return text.replace(pattern, replacement);
  };
  let conf = template;
  conf = replace(conf, /^worker_processes .*;$/m, "worker_processes 1;");
  conf = replace(conf, /^worker_rlimit_nofile .*;$/m, "");
  conf = replace(conf, /^pid .*;$/m, `pid ${nginxPath(path.join(options.dir, "nginx.pid"))};`);
  conf = replace(conf, /^error_log \/dev\/stderr (\w+);$/m, `error_log ${nginxPath(path.join(options.logs, "error.log"))} $1;`);
  conf = replace(conf, /^\s*access_log .*;$/m, `    access_log ${nginxPath(path.join(options.logs, "access.log"))} main;`);
  conf = replace(conf, /^\s*resolver .*;$/m, "");
  conf = replace(conf, /^\s*resolver_timeout .*;$/m, "");
  conf = replace(conf, /server api:\d+ resolve;/, servers(options.api));
  conf = replace(conf, /server events:\d+ resolve;/, servers(options.events));
  conf = replace(conf, /listen \d+ default_server;/, `listen 127.0.0.1:${options.port} default_server;`);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `    ${kind}_temp_path ${nginxPath(path.join(options.dir, kind))};`).join("\n");
  conf = replace(conf, /^http \{$/m, `http {\n${temp}`);
  return conf;
}

/** The last `lines` lines of a text, indented, for a log message. */
function tail(text: string, lines: number): string {
  const kept = text.split("\n").filter((line) => line.trim() !== "").slice(-lines);
  return kept.length === 0 ? "    (no output)" : kept.map((line) => `    ${line}`).join("\n");
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** Something the supervisor starts and starts again: a server process or nginx. */
interface Supervised {
  name: string;
  child(): ChildProcess | null;
  /** Starts it; resolves once it is ready, rejects (its child gone) if it exits first or takes too long. */
  launch(): Promise<void>;
  /** Its recent output, for the message about its death. */
  recentOutput(): string;
  /** After an unexpected exit, before the next start (nginx: its orphaned workers). */
  cleanUp?(): void;
  onDeath?(): void;
  /** Deaths in a row, for the backoff. */
  failures: number;
  readyAt: number;
  timer: NodeJS.Timeout | null;
  /** Set while we stop it ourselves (a rolling restart): its exit is expected. */
  stoppingOnPurpose: boolean;
  /** Starts and restarts of one process run one after another. */
  queue: Promise<unknown>;
}

export async function startLocalCluster(options: ClusterOptions): Promise<LocalCluster> {
  const nginxBinary = findNginx();
  if (nginxBinary === null) throw new Error("nginx is not installed: apt-get install nginx (the system's package is what this runs)");
  const errorLogFlag = nginxTakesErrorLogFlag(nginxBinary);
  const backoff: RestartBackoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  const entry = resolveServerEntry(options.entry);
  const databaseUrl = options.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("the cluster needs DATABASE_URL (Postgres): its processes share their data through it");
  if (options.dataDir !== undefined) {
    const running = runningCluster(options.dataDir);
    if (running) {
      throw new Error(
        `a cluster already runs on the data folder ${options.dataDir} (supervisor pid ${running.pid}, since ${running.startedAt}, at ${running.url}): ` +
          "stop it (Ctrl-C in its terminal, or kill its pid) or give this one its own DATA_DIR",
      );
    }
  }

  // A supervisor killed outright leaves its processes running on their ports: say which they may be.
  const orphans = (() => {
    if (options.dataDir === undefined) return "";
    const last = lastCluster(options.dataDir);
    if (!last || last.stoppedAt !== undefined || supervisorAlive(last)) return "";
    const pids = last.processes.filter((p) => p.pid !== null && pidAlive(p.pid)).map((p) => `${p.name} ${p.pid}`);
    return pids.length === 0 ? "" : `. The last cluster on this data folder died without stopping, and these of its processes may still run: ${pids.join(", ")}`;
  })();
  // Ports are fixed for the cluster's life, so nginx's upstreams and Prometheus' targets hold across restarts.
  const roles: ClusterRole[] = [...Array<ClusterRole>(options.api).fill("api"), ...Array<ClusterRole>(options.events).fill("events"), "worker"];
  const metricsBase = options.metricsPort === undefined ? 0 : options.metricsPort;
  const specs: Array<{ role: ClusterRole; name: string; port: number | null; metricsPort: number | null }> = [];
  for (const [i, role] of roles.entries()) {
    const name = `${role}-${roles.slice(0, i).filter((r) => r === role).length + 1}`;
    const metricsPort = metricsBase === null ? null : metricsBase === 0 ? await freePort() : metricsBase + i;
    if (metricsPort !== null && metricsBase !== 0 && !(await portFree(metricsPort))) {
      throw new Error(`port ${metricsPort} (metrics of ${name}: the first metrics port ${metricsBase} + ${i}) is in use: choose another first metrics port (npm run cluster -- --metrics-port P)${orphans}`);
    }
    specs.push({ role, name: role === "worker" ? "worker" : name, port: role === "worker" ? null : await freePort(), metricsPort });
  }
  const port = options.port === 0 ? await freePort() : options.port;
  if (!(await portFree(port))) throw new Error(`port ${port} (nginx, where clients connect) is in use: choose another (npm run cluster -- --port P)${orphans}`);

  const database = await ensureDatabase(databaseUrl);

  const temporaryLogs = options.logsDir === undefined;
  const logsDir = path.resolve(options.logsDir ?? mkdtempSync(path.join(os.tmpdir(), "chat-cluster-logs-")));
  mkdirSync(logsDir, { recursive: true });
  // nginx's workers may run as another user than its master (root's default is nobody).
  const runDir = mkdtempSync(path.join(os.tmpdir(), "chat-cluster-"));
  chmodSync(runDir, 0o755);
  for (const kind of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) {
    mkdirSync(path.join(runDir, kind));
    chmodSync(path.join(runDir, kind), 0o777);
  }
  const clusterLog = path.join(logsDir, "cluster.log");
  const errorLog = path.join(logsDir, "error.log");
  const errorLogStart = existsSync(errorLog) ? statSync(errorLog).size : 0;
  const log = (line: string) => {
    try {
      appendFileSync(clusterLog, `${new Date().toISOString()} ${line.replaceAll("\n", `\n${" ".repeat(25)}`)}\n`);
    } catch {
      // A full disk or a removed folder: the line is still told to onSupervisorLog (the terminal).
    }
    options.onSupervisorLog?.(line);
  };
  const url = `http://127.0.0.1:${port}`;

  let stopping = false;
  let stopped: Promise<void> | null = null;
  const supervised: Supervised[] = [];
  const processes: ClusterProcess[] = [];
  const logFiles: WriteStream[] = [];
  let nginx: ChildProcess | null = null;
  let nginxStderr = "";

  const stateFile = options.dataDir === undefined ? null : path.join(clusterDir(options.dataDir), "state.json");
  let state: ClusterState | null = null;
  const saveState = () => {
    // Once stopping, the stop retires the state: nothing may write it again.
    if (options.dataDir === undefined || stopping) return;
    const alive = (child: ChildProcess | null) => (child && child.exitCode === null && child.signalCode === null ? (child.pid ?? null) : null);
    state = {
      ...(state ?? newClusterState({ url, logsDir, settings: {}, processes: [] })),
      settings: pickCliSettings({ ...process.env, ...options.env }),
      processes: [
        ...processes.map((p) => ({ name: p.name, role: p.role, pid: alive(p.child), port: p.port, metricsPort: p.metricsPort })),
        { name: "nginx", role: "nginx" as const, pid: alive(nginx), port, metricsPort: null },
      ],
    };
    writeClusterState(options.dataDir, state);
  };
  let prometheusTargetsFile: string | null = null;

  const schedule = (unit: Supervised) => {
    const delay = restartDelay(unit.failures, backoff);
    unit.failures++;
    log(`${unit.name}: starting again in ${seconds(delay)}`);
    unit.timer = setTimeout(() => {
      unit.timer = null;
      serially(unit, async () => {
        if (stopping) return;
        try {
          await unit.launch();
          unit.readyAt = Date.now();
          log(`${unit.name}: started again (pid ${unit.child()?.pid})`);
          saveState();
        } catch (error) {
          if (stopping) return;
          log(`${unit.name}: failed to start: ${error instanceof Error ? error.message : String(error)}`);
          unit.cleanUp?.();
          schedule(unit);
        }
      });
    }, delay);
  };
  const serially = (unit: Supervised, task: () => Promise<void>): Promise<void> => {
    const run = unit.queue.then(task, task);
    unit.queue = run.catch(() => {});
    return run;
  };
  /** Watches a child that is ready: an exit nobody asked for is a death, logged, and the process is started again. */
  const watch = (unit: Supervised, child: ChildProcess) => {
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      if (stopping || unit.stoppingOnPurpose || unit.child() !== child) return;
      const upMs = Date.now() - unit.readyAt;
      if (upMs >= backoff.stableMs) unit.failures = 0;
      log(`${unit.name} (pid ${child.pid}) died: ${signal ? `killed by ${signal}` : `exit code ${code}`}, after ${seconds(upMs)} up. Its last output:\n${tail(unit.recentOutput(), TAIL_LINES)}`);
      unit.cleanUp?.();
      unit.onDeath?.();
      saveState();
      schedule(unit);
    };
    // It may have exited between its readiness and now, its 'exit' already emitted.
    if (child.exitCode !== null || child.signalCode !== null) exited(child.exitCode, child.signalCode);
    else child.once("exit", exited);
  };

  const processUnit = (member: ClusterProcess, logFile: WriteStream): Supervised => {
    const unit: Supervised = {
      name: member.name,
      child: () => member.child,
      recentOutput: () => member.output(),
      onDeath: () => member.deaths++,
      failures: 0,
      readyAt: 0,
      timer: null,
      stoppingOnPurpose: false,
      queue: Promise.resolve(),
      async launch() {
        const started = startClusterProcess(member, entry, options, logFile);
        member.child = started.child;
        member.output = started.output;
        await started.ready;
        watch(unit, started.child);
      },
    };
    return unit;
  };

  const launchNginx = async () => {
    nginxStderr = "";
    const args = ["-p", runDir, ...(errorLogFlag ? ["-e", errorLog] : []), "-c", path.join(runDir, "nginx.conf")];
    const test = spawnSync(nginxBinary, [...args, "-t"], { encoding: "utf8" });
    if (test.status !== 0) throw new Error(`nginx refused its configuration:\n${test.stderr}`);
    // A process group of its own: if the master dies, its workers (which keep the port) are found and stopped with it.
    const child = spawn(nginxBinary, [...args, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"], detached: true });
    nginx = child;
    child.stderr!.on("data", (chunk: Buffer) => (nginxStderr = (nginxStderr + chunk.toString()).slice(-OUTPUT_KEPT_CHARS)));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nginx exited with ${child.exitCode ?? child.signalCode}:\n${nginxStderr}${readFrom(errorLog, errorLogStart).split("\n").slice(-10).join("\n")}`);
      if (await listening(port)) break;
      if (Date.now() > deadline) {
        killGroup(child);
        throw new Error(`nginx did not listen on ${port}:\n${nginxStderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    watch(nginxUnit, child);
  };
  const nginxUnit: Supervised = {
    name: "nginx",
    child: () => nginx,
    recentOutput: () => `${nginxStderr}${readFrom(errorLog, errorLogStart)}`.slice(-64 * 1024),
    cleanUp: () => nginx && killGroup(nginx),
    failures: 0,
    readyAt: 0,
    timer: null,
    stoppingOnPurpose: false,
    queue: Promise.resolve(),
    launch: launchNginx,
  };

  const stopAll = (): Promise<void> => {
    if (stopped) return stopped;
    // Before anything else: an exit from now on is part of the stop.
    stopping = true;
    stopped = (async () => {
      for (const unit of supervised) if (unit.timer) clearTimeout(unit.timer);
      log("stopping");
      await Promise.all(processes.map((p) => stopChild(p.child, "SIGTERM")));
      if (nginx) {
        await stopChild(nginx, "SIGQUIT");
        killGroup(nginx);
      }
      await Promise.all(logFiles.map((file) => new Promise((resolve) => file.end(resolve))));
      if (options.dataDir !== undefined && state) retireClusterState(options.dataDir, state);
      log("stopped");
      rmSync(runDir, { recursive: true, force: true });
      if (temporaryLogs) rmSync(logsDir, { recursive: true, force: true });
    })();
    return stopped;
  };

  options.abort?.addEventListener("abort", () => void stopAll(), { once: true });
  try {
    if (options.abort?.aborted) throw new Error("stopped before it started");
    log(`starting: ${options.api} API, ${options.events} events, a worker and nginx on ${url}; running ${path.relative(ROOT, entry.file)} (${entry.reason}); database ${database === "created" ? "created" : "found"}`);
    for (const spec of specs) {
      const logFile = createWriteStream(path.join(logsDir, `${spec.name}.log`), { flags: "a" });
      // A full disk must not take the supervisor down with it: said once, and the output still echoes.
      let failed = false;
      logFile.on("error", (error) => {
        if (!failed) log(`${spec.name}: its log file failed: ${error.message}`);
        failed = true;
      });
      logFiles.push(logFile);
      // Its child is set by its first launch, before the cluster is returned to anyone (stopChild takes the null).
      const member: ClusterProcess = { ...spec, child: null as unknown as ChildProcess, output: () => "", deaths: 0 };
      processes.push(member);
      supervised.push(processUnit(member, logFile));
    }
    supervised.push(nginxUnit);
    saveState();
    // The API processes first: the first one creates the organization if the database is empty.
    const launchFirst = async (unit: Supervised) => {
      await unit.launch();
      unit.readyAt = Date.now();
    };
    await launchFirst(supervised[0]);
    await Promise.all(supervised.slice(1, processes.length).map(launchFirst));
    writeFileSync(
      path.join(runDir, "nginx.conf"),
      localNginxConf(readFileSync(NGINX_CONF, "utf8"), {
        dir: runDir,
        logs: logsDir,
        port,
        api: processes.filter((p) => p.role === "api").map((p) => p.port!),
        events: processes.filter((p) => p.role === "events").map((p) => p.port!),
      }),
    );
    await launchFirst(nginxUnit);
    saveState();
    if (options.dataDir !== undefined && metricsBase !== null) {
      prometheusTargetsFile = path.join(clusterDir(options.dataDir), "prometheus-targets.json");
      const targets = processes.map((p) => ({ targets: [`127.0.0.1:${p.metricsPort}`], labels: { role: p.role, process: p.name } }));
      writeFileSync(prometheusTargetsFile, `${JSON.stringify(targets, null, 2)}\n`);
    }
    if (options.abort?.aborted) throw new Error("stopped before it was ready");
    log(`ready: ${processes.map((p) => `${p.name} pid ${p.child.pid}${p.port ? ` port ${p.port}` : ""}${p.metricsPort ? ` metrics ${p.metricsPort}` : ""}`).join(", ")}, nginx pid ${nginx!.pid}`);
  } catch (error) {
    // Stopped while starting: the processes it stopped failed their start, but that is not news.
    const reason = options.abort?.aborted ? new Error("stopped before it was ready") : error;
    log(`could not start: ${reason instanceof Error ? reason.message : String(reason)}`);
    await stopAll();
    throw reason;
  }

  return {
    url,
    processes,
    nginxPid: () => (nginx && nginx.exitCode === null && nginx.signalCode === null ? (nginx.pid ?? null) : null),
    nginxErrors: () => `${nginxStderr}${readFrom(errorLog, errorLogStart)}`,
    logsDir,
    stateFile,
    prometheusTargetsFile,
    entry,
    database,
    async restart(member) {
      const unit = supervised[processes.indexOf(member)];
      if (!unit) throw new Error(`${member.name} is not one of this cluster's processes`);
      await serially(unit, async () => {
        if (stopping) throw new Error("the cluster is stopping");
        if (unit.timer) clearTimeout(unit.timer);
        unit.timer = null;
        unit.stoppingOnPurpose = true;
        try {
          await stopChild(member.child, "SIGTERM");
          await unit.launch();
        } catch (error) {
          unit.stoppingOnPurpose = false;
          // Down now, so the supervisor takes over.
          if (!stopping) schedule(unit);
          throw error;
        }
        unit.stoppingOnPurpose = false;
        unit.readyAt = Date.now();
        unit.failures = 0;
        log(`${member.name}: restarted on purpose (pid ${member.child.pid})`);
        saveState();
      });
      if (member.port !== null) await new Promise((resolve) => setTimeout(resolve, NGINX_FAIL_TIMEOUT_SECONDS * 1000 + 500));
    },
    stop: stopAll,
  };
}

/**
 * Spawns one server process on its ports. `ready` resolves when it is ready (its metrics port's
 * /health/ready answers, or, with metrics off, its ready line), and rejects if it exits first or
 * takes over START_TIMEOUT_MS (then it is killed).
 */
function startClusterProcess(
  spec: { role: ClusterRole; name: string; port: number | null; metricsPort: number | null },
  entry: ServerEntry,
  options: ClusterOptions,
  logFile: WriteStream,
): { child: ChildProcess; output: () => string; ready: Promise<void> } {
  const child = spawn(process.execPath, entry.args, {
    cwd: ROOT,
    env: {
      // glibc's trim threshold pinned, as ./teamchat and the image do: 20-40 MB less per idle process.
      MALLOC_TRIM_THRESHOLD_: "131072",
      ...process.env,
      ...options.env,
      ROLE: spec.role,
      PORT: String(spec.port ?? 0),
      BIND_ADDRESS: "127.0.0.1",
      // Set either way: one METRICS_PORT inherited by every process would collide.
      METRICS_PORT: spec.metricsPort === null ? "" : String(spec.metricsPort),
      METRICS_BIND_ADDRESS: "127.0.0.1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const take = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-OUTPUT_KEPT_CHARS);
    // Output can still arrive after 'exit' (its pipes drain later), when a stop has closed the file.
    if (!logFile.writableEnded && !logFile.destroyed) logFile.write(chunk);
    options.onOutput?.(spec.name, text);
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = (async () => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${spec.name} exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${tail(output, 40)}`);
      }
      if (/"message":"team chat \w+ tier ready"/.test(output)) return;
      if (spec.metricsPort !== null && (await healthReady(spec.metricsPort))) return;
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        await exited;
        throw new Error(`${spec.name} did not start within ${START_TIMEOUT_MS} ms:\n${tail(output, 40)}`);
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
  })();
  // The caller may be gone (a stop) when it fails: never an unhandled rejection.
  ready.catch(() => {});
  return { child, output: () => output, ready };
}

/** Whether a process's ops server says it is ready (plain http: the test's fetch checks responses against the API document). */
function healthReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/health/ready", timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
  });
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** A file's text from a byte offset (nothing if it does not exist). */
function readFrom(file: string, offset: number): string {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return "";
  }
  try {
    const size = statSync(file).size;
    if (size <= offset) return "";
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString();
  } finally {
    closeSync(fd);
  }
}

/** Kills a detached child's whole process group (nginx's orphaned workers); nothing if it is gone. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // ESRCH: nothing left of it.
  }
}

/** Stops a child with `signal`, and kills it if it has not exited STOP_TIMEOUT_MS later. */
function stopChild(child: ChildProcess | null, signal: NodeJS.Signals): Promise<void> {
  // null: never started (a start that failed before it).
  if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill(signal);
  });
}
