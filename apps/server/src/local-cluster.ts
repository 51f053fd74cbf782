// `npm run cluster`: the scaled-out deployment on one machine, as operators run it. nginx from the
// system's packages, with infra/nginx/nginx.conf (the compose file's proxy) given this machine's
// upstreams, in front of N API processes, M events processes and a worker, on the local Postgres
// and Redis. Each process can be restarted on its own port (a rolling restart), which the cluster
// test does under load.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../../..");
const MAIN = path.join(ROOT, "apps/server/src/main.ts");
const NGINX_CONF = path.join(ROOT, "infra/nginx/nginx.conf");
/** Node's flags to run a TypeScript entry as `npm start` does (scripts/typescript.mjs says why not plain tsx). */
export const TYPESCRIPT_NODE_ARGS = ["--import", path.join(ROOT, "scripts/typescript.mjs")];
const START_TIMEOUT_MS = 60_000;
/**
 * nginx takes a server that failed out of its upstream group for this long (its passive check),
 * and tries it again with one request after. A restarting process fails those tries until it
 * listens, so it is back in rotation only up to this long after it is ready.
 */
const NGINX_FAIL_TIMEOUT_SECONDS = 2;

export type ClusterRole = "api" | "events" | "worker";

export interface ClusterOptions {
  api: number;
  events: number;
  /** nginx's port; 0 picks a free one. */
  port: number;
  /** Settings every process gets (DATABASE_URL and REDIS_URL at least). */
  env: Record<string, string>;
  /** Where a process's output goes; the cluster keeps it (see ClusterProcess.output) as well. */
  onOutput?: (name: string, text: string) => void;
}

export interface ClusterProcess {
  name: string;
  role: ClusterRole;
  /** Its HTTP port (the worker has none), the same across restarts. */
  port: number | null;
  child: ChildProcess;
  output(): string;
}

export interface LocalCluster {
  /** nginx, the one address clients use. */
  url: string;
  processes: ClusterProcess[];
  /** What nginx wrote to its standard error (its error log). */
  nginxErrors(): string;
  /**
   * Stops one process gracefully (SIGTERM) and starts it again on the same port; resolves once it
   * is ready and nginx sends to it again, so that restarting the next one leaves its tier a node.
   */
  restart(member: ClusterProcess): Promise<void>;
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

/**
 * infra/nginx/nginx.conf for this machine: the same routes, timeouts and buffering, with the
 * upstreams' servers listed (compose resolves service names instead), its listen address, and
 * paths under `dir` (nginx's defaults need root).
 */
export function localNginxConf(template: string, options: { dir: string; port: number; api: number[]; events: number[] }): string {
  const servers = (ports: number[]) => ports.map((port) => `server 127.0.0.1:${port} max_fails=1 fail_timeout=${NGINX_FAIL_TIMEOUT_SECONDS}s;`).join("\n        ");
  const replace = (text: string, pattern: RegExp, replacement: string) => {
    if (!pattern.test(text)) throw new Error(`infra/nginx/nginx.conf has no ${pattern}: update localNginxConf`);
    return text.replace(pattern, replacement);
  };
  let conf = template;
  conf = replace(conf, /^worker_processes .*;$/m, "worker_processes 1;");
  conf = replace(conf, /^worker_rlimit_nofile .*;$/m, "");
  conf = replace(conf, /^pid .*;$/m, `pid ${options.dir}/nginx.pid;`);
  // nginx's own name for its standard error (/dev/stderr cannot be opened when it is a socket).
  conf = replace(conf, /^error_log \/dev\/stderr (\w+);$/m, "error_log stderr $1;");
  conf = replace(conf, /^\s*access_log .*;$/m, `    access_log ${options.dir}/access.log main;`);
  conf = replace(conf, /^\s*resolver .*;$/m, "");
  conf = replace(conf, /^\s*resolver_timeout .*;$/m, "");
  conf = replace(conf, /server api:\d+ resolve;/, servers(options.api));
  conf = replace(conf, /server events:\d+ resolve;/, servers(options.events));
  conf = replace(conf, /listen \d+ default_server;/, `listen 127.0.0.1:${options.port} default_server;`);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `    ${kind}_temp_path ${options.dir}/${kind};`).join("\n");
  conf = replace(conf, /^http \{$/m, `http {\n${temp}`);
  return conf;
}

export async function startLocalCluster(options: ClusterOptions): Promise<LocalCluster> {
  const nginxBinary = findNginx();
  if (nginxBinary === null) throw new Error("nginx is not installed: apt-get install nginx (the system's package is what this runs)");
  const dir = mkdtempSync(path.join(os.tmpdir(), "chat-cluster-"));
  // nginx's workers may run as another user than its master (root's default is nobody).
  chmodSync(dir, 0o755);
  for (const kind of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) {
    mkdirSync(path.join(dir, kind));
    chmodSync(path.join(dir, kind), 0o777);
  }
  const processes: ClusterProcess[] = [];
  let nginx: ChildProcess | null = null;
  const stopAll = async () => {
    await Promise.all(processes.map((p) => stopChild(p.child, "SIGTERM")));
    if (nginx) await stopChild(nginx, "SIGQUIT");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const roles: ClusterRole[] = [...Array<ClusterRole>(options.api).fill("api"), ...Array<ClusterRole>(options.events).fill("events"), "worker"];
    // The API processes first: the first one creates the organization if the database is empty.
    const [first, ...rest] = await Promise.all(roles.map(async (role, i) => ({ role, name: `${role}-${roles.slice(0, i).filter((r) => r === role).length + 1}`, port: role === "worker" ? null : await freePort() })));
    processes.push(await startClusterProcess(first, options));
    processes.push(...(await Promise.all(rest.map((spec) => startClusterProcess(spec, options)))));
    const port = options.port === 0 ? await freePort() : options.port;
    const conf = localNginxConf(readFileSync(NGINX_CONF, "utf8"), {
      dir,
      port,
      api: processes.filter((p) => p.role === "api").map((p) => p.port!),
      events: processes.filter((p) => p.role === "events").map((p) => p.port!),
    });
    writeFileSync(path.join(dir, "nginx.conf"), conf);
    const started = await startNginx(nginxBinary, dir, port);
    nginx = started.child;
    const url = `http://127.0.0.1:${port}`;
    return {
      url,
      processes,
      nginxErrors: started.errors,
      async restart(member) {
        await stopChild(member.child, "SIGTERM");
        const started = await startClusterProcess(member, options);
        member.child = started.child;
        member.output = started.output;
        if (member.port !== null) await new Promise((resolve) => setTimeout(resolve, NGINX_FAIL_TIMEOUT_SECONDS * 1000 + 500));
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function startClusterProcess(spec: { role: ClusterRole; name: string; port: number | null }, options: ClusterOptions): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [...TYPESCRIPT_NODE_ARGS, MAIN], {
    cwd: ROOT,
    env: { ...process.env, ...options.env, ROLE: spec.role, PORT: String(spec.port ?? 0), BIND_ADDRESS: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const take = (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    options.onOutput?.(spec.name, text);
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${spec.name} did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const check = () => {
      if (!/"message":"team chat \w+ tier ready"/.test(output)) return;
      clearTimeout(timer);
      child.stdout!.off("data", check);
      child.off("exit", exited);
      resolve();
    };
    const exited = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${spec.name} exited with ${code} before it was ready:\n${output}`));
    };
    child.stdout!.on("data", check);
    child.once("exit", exited);
  });
  return { ...spec, child, output: () => output };
}

async function startNginx(binary: string, dir: string, port: number): Promise<{ child: ChildProcess; errors: () => string }> {
  const test = spawnSync(binary, ["-t", "-p", dir, "-c", path.join(dir, "nginx.conf")], { encoding: "utf8" });
  if (test.status !== 0) throw new Error(`nginx refused its configuration:\n${test.stderr}`);
  const child = spawn(binary, ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${errors}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (up) return { child, errors: () => errors };
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}:\n${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
