// Every setting comes from the environment, is parsed here once, and is typed from then on.
// A bad value stops the process with a message naming the variable, before anything starts.
import { isIP } from "node:net";
import path from "node:path";

export type Role = "all" | "api" | "events" | "worker";
const ROLES: readonly Role[] = ["all", "api", "events", "worker"];

export interface Config {
  role: Role;
  /** Server processes sharing the port (node:cluster); more than one needs Postgres and Redis. */
  processes: number;
  port: number;
  /** A port of its own for /health/* (and the worker's only HTTP), never public through the load balancer; null: none. */
  metricsPort: number | null;
  /**
   * The metrics port's address: loopback unless set, since what it serves is unauthenticated
   * (every route's counts, the queues' sizes). Kubernetes probes and a Prometheus in another pod
   * need it on the pod's address (the manifests set it).
   */
  metricsBindAddress: string;
  bindAddress: string;
  /** Postgres URL; null runs the embedded PGlite database under dataDir. */
  databaseUrl: string | null;
  /** Redis URL; null (and no redisClusterNodes) runs the in-process bus (one process only). */
  redisUrl: string | null;
  /** A Redis Cluster's seed nodes (`host:port`), instead of redisUrl; null: none. */
  redisClusterNodes: string[] | null;
  redisPrefix: string;
  dataDir: string;
  /**
   * Development server: POST /dev_fetch_api_key hands out any user's API key, the owner's
   * included, to anyone who can reach the port. It therefore starts only on a loopback address,
   * unless DEV_MODE_ALLOW_REMOTE says, as a second explicit setting, that it may be reached.
   */
  devMode: boolean;
  /**
   * Whether organizations may have web-public streams, readable by people who are not logged in
   * (Zulip's WEB_PUBLIC_STREAMS_ENABLED; off by default, as in Zulip).
   */
  webPublicStreamsEnabled: boolean;
  /** The host name clients use; a realm is served at `<subdomain>.<externalHost>`. */
  externalHost: string;
  bootstrap: { realmName: string; ownerEmail: string; ownerName: string; ownerPassword: string | null };
  /**
   * How long GET /events waits before answering with a heartbeat. /register advertises
   * event_queue_longpoll_timeout_seconds as max(90, this + 30), so a client's own timeout on a
   * poll never fires before the heartbeat (the default, 50, is well under 90).
   */
  eventHeartbeatSeconds: number;
  /** Queues not polled for this long are deleted (Zulip: 10 minutes). */
  eventQueueIdleSeconds: number;
  /** Events one queue holds unread before it is dropped (its client registers again). */
  eventQueueMaxEvents: number;
  /** Event queues one user holds; a new one evicts the least recently polled. */
  eventQueuesPerUser: number;
  /** After SIGTERM, how long a server answers (not ready, polls at once) before it stops accepting. */
  shutdownDelaySeconds: number;
  /** Outbox rows older than this are published by the worker's sweeper. */
  outboxSweepAfterSeconds: number;
  changeStreamShards: number;
  /**
   * Entries a change stream shard keeps unread by a consumer group before the oldest are dropped
   * (their realms' event queues invalidated). Read entries are trimmed at once.
   */
  changeStreamMaxEntries: number;
  /** Memory each API process may keep fetched messages in; 0 reads every message from the database. */
  messageCacheMb: number;
  logLevel: string;
  rateLimits: RateLimitConfig;
  /**
   * Addresses whose X-Forwarded-For and X-Forwarded-Proto are believed (Express's `trust proxy`):
   * IPs, CIDRs or Express's names (loopback, linklocal, uniquelocal); empty trusts none.
   */
  trustedProxies: string[];
  storage: StorageConfig;
  uploads: UploadConfig;
  outgoingWebhooks: OutgoingWebhookConfig;
  bots: BotLimitConfig;
  /** How soon a job whose worker died runs again on another (BullMQ's lock and stalled check). */
  jobStallSeconds: number;
  /** Outgoing email (password resets), sent by the worker tier. */
  mail: MailConfig;
}

/**
 * Outgoing email over SMTP, with Zulip's (Django's) setting names. Without a host the worker writes
 * each email to the log instead, as Zulip's development server does: a trial server needs no SMTP.
 */
export interface MailConfig {
  /** EMAIL_HOST; null: no SMTP, emails are logged (info) rather than sent. */
  host: string | null;
  /** EMAIL_PORT: 465 with EMAIL_USE_SSL, else 587 (submission) unless set. */
  port: number;
  /** EMAIL_HOST_USER and EMAIL_HOST_PASSWORD, both or neither (no SMTP AUTH). */
  user: string | null;
  password: string | null;
  /** EMAIL_USE_TLS: STARTTLS, required (the send fails rather than going on in clear). False: never TLS. */
  useTls: boolean;
  /** EMAIL_USE_SSL: TLS from the first byte (implicit TLS, port 465). */
  useSsl: boolean;
  /** NOREPLY_EMAIL_ADDRESS: the From address of the server's emails. */
  noreplyAddress: string;
}

/** How the worker tier calls bots' services (outgoing webhooks). */
export interface OutgoingWebhookConfig {
  /** A whole call: connecting, sending, and the answer (Zulip: 10 s). */
  timeoutMs: number;
  /** Calls per job before it fails: the first and the retries (Zulip retries 3 times). */
  attempts: number;
  /** Base of the exponential backoff between attempts. */
  backoffMs: number;
  /** Largest answer read. */
  maxResponseBytes: number;
  /** Calls one worker process has under way at once. */
  concurrency: number;
  /** Calls one worker process has under way at once for one organization (at most `concurrency`). */
  concurrencyPerRealm: number;
  /** Service bots one message calls; past it, bots mentioned by name first, then by id. */
  maxBotsPerMessage: number;
  /** Hosts, addresses and CIDR ranges called even though private (loopback too in DEV_MODE). */
  allowedHosts: string[];
}

/**
 * Caps on active bots, checked when a bot is created, reactivated or given a new owner: each call
 * a message triggers goes to one service bot, so the caps bound what one message can cost.
 */
export interface BotLimitConfig {
  /** Active bots one user may own (MAX_BOTS_PER_USER). */
  maxPerUser: number;
  /** Active bots one organization's users may own together (MAX_BOTS_PER_REALM). */
  maxPerRealm: number;
}

/** Where files live (packages/storage): the local disk for one node, S3-compatible storage for a cluster. */
export type StorageConfig =
  | { backend: "local"; /** null with DATA_DIR=memory://: a temporary directory removed at exit. */ directory: string | null }
  | {
      backend: "s3";
      bucket: string;
      /** For S3-compatible services (MinIO, Ceph, ...); null is AWS itself. */
      endpoint: string | null;
      region: string;
      /** Both or neither; neither uses the AWS SDK's default credential chain. */
      accessKeyId: string | null;
      secretAccessKey: string | null;
      forcePathStyle: boolean;
    };

export interface UploadConfig {
  /** Largest file POST /user_uploads takes (Zulip's MAX_FILE_UPLOAD_SIZE, 25 MiB). */
  maxFileBytes: number;
  /** Largest avatar or custom emoji image (Zulip: 5 MiB each). */
  maxImageBytes: number;
  /**
   * Total bytes each realm's uploads may use; 0 is no quota (Zulip's realm.upload_quota_gb). 5 GiB
   * by default (Zulip Cloud's free plan): more than a trial uses, and a member cannot fill the disk.
   */
  realmQuotaBytes: number;
  /** Unreferenced uploads older than this are deleted by the worker (Zulip: 3 weeks). */
  unclaimedGraceHours: number;
}

/** Zulip's limits by default (zproject/default_settings.py RATE_LIMITING_RULES). */
export interface RateLimitConfig {
  enabled: boolean;
  /** Requests per minute of each authenticated user (Zulip's api_by_user). */
  userRequestsPerMinute: number;
  /** Requests per minute of each client address without credentials (Zulip's api_by_ip). */
  ipRequestsPerMinute: number;
  /** Failed logins per account within the window (Zulip's authenticate_by_username). */
  loginFailuresPerAccount: number;
  /** Failed logins from one client address within the window, whatever accounts they name. */
  loginFailuresPerIp: number;
  loginFailureWindowSeconds: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function readString(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === "" ? fallback : value;
}

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** 127.0.0.0/8, ::1 (also as an IPv4-mapped address) or localhost: reachable from this host only. */
function isLoopbackAddress(address: string): boolean {
  const host = address.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return host === "localhost" || host === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const normalized = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(normalized)) return true;
  if (["0", "false", "no", "off"].includes(normalized)) return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
}

function readUrl(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(" or ")}`);
  }
  return raw;
}

const PROXY_NAMES = ["loopback", "linklocal", "uniquelocal"];

/** TRUSTED_PROXIES as Express's `trust proxy` takes it, each entry checked here rather than at the first request. */
function readTrustedProxies(env: Env): string[] {
  const raw = readString(env, "TRUSTED_PROXIES", "loopback").trim();
  if (raw.toLowerCase() === "none") return [];
  return raw.split(",").map((entry) => {
    const value = entry.trim();
    if (PROXY_NAMES.includes(value.toLowerCase())) return value.toLowerCase();
    const slash = value.indexOf("/");
    const address = slash === -1 ? value : value.slice(0, slash);
    const family = isIP(address);
    const bits = slash === -1 ? null : value.slice(slash + 1);
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || (bits !== null && (!/^\d{1,3}$/.test(bits) || Number(bits) > maxBits))) {
      throw new ConfigError(
        `TRUSTED_PROXIES must be a comma-separated list of IP addresses, CIDR ranges (10.0.0.0/8) or ${PROXY_NAMES.join(", ")}, or none; got ${JSON.stringify(value)}`,
      );
    }
    return value;
  });
}

/** REDIS_CLUSTER_NODES: `host:port` seeds, comma-separated; the client learns the other nodes from them. */
function readClusterNodes(env: Env): string[] | null {
  const raw = env.REDIS_CLUSTER_NODES?.trim();
  if (raw === undefined || raw === "") return null;
  return raw.split(",").map((entry) => {
    const node = entry.trim();
    const colon = node.lastIndexOf(":");
    const port = Number(node.slice(colon + 1));
    if (colon < 1 || !/^\d+$/.test(node.slice(colon + 1)) || port < 1 || port > 65535 || /[\s/@]/.test(node)) {
      throw new ConfigError(`REDIS_CLUSTER_NODES must be a comma-separated list of host:port, got ${JSON.stringify(node)}`);
    }
    return node;
  });
}

/** The Redis the tiers share: one server, a cluster, or none (the in-process bus). */
export function sharedRedis(config: Pick<Config, "redisUrl" | "redisClusterNodes">): { url: string } | { clusterNodes: string[] } | null {
  if (config.redisClusterNodes !== null) return { clusterNodes: config.redisClusterNodes };
  return config.redisUrl === null ? null : { url: config.redisUrl };
}

export function loadConfig(env: Env = process.env): Config {
  const role = readString(env, "ROLE", "all") as Role;
  if (!ROLES.includes(role)) throw new ConfigError(`ROLE must be one of ${ROLES.join(", ")}, got ${JSON.stringify(role)}`);
  const databaseUrl = readUrl(env, "DATABASE_URL", ["postgres:", "postgresql:"]);
  const redisUrl = readUrl(env, "REDIS_URL", ["redis:", "rediss:"]);
  const redisClusterNodes = readClusterNodes(env);
  if (redisUrl && redisClusterNodes) {
    throw new ConfigError("REDIS_URL and REDIS_CLUSTER_NODES are both set: set REDIS_URL for one Redis server, or REDIS_CLUSTER_NODES for a Redis Cluster");
  }
  const redisName = redisClusterNodes ? "REDIS_CLUSTER_NODES" : redisUrl ? "REDIS_URL" : null;
  if (role !== "all" && (!databaseUrl || !redisName)) {
    throw new ConfigError(`ROLE=${role} runs one tier of several processes, which share state only through Postgres and Redis: set DATABASE_URL and REDIS_URL (or REDIS_CLUSTER_NODES)`);
  }
  if (redisName && !databaseUrl) {
    throw new ConfigError(`${redisName} is set without DATABASE_URL: the embedded database cannot be shared by several processes; set DATABASE_URL too`);
  }
  const processes = readInt(env, "PROCESSES", 1, 1, 256);
  if (processes > 1 && (!databaseUrl || !redisName)) {
    throw new ConfigError("PROCESSES above 1 runs several processes, which share state only through Postgres and Redis: set DATABASE_URL and REDIS_URL (or REDIS_CLUSTER_NODES)");
  }
  const redisPrefix = readString(env, "REDIS_PREFIX", "chat:");
  // The bus puts the prefix inside hash tags ({<prefix>...}), which a brace would cut short.
  if (/[{}]/.test(redisPrefix)) throw new ConfigError(`REDIS_PREFIX must not contain { or }, got ${JSON.stringify(redisPrefix)}`);
  const ownerEmail = readString(env, "BOOTSTRAP_OWNER_EMAIL", "owner@example.com");
  if (!/^[^@\s]+@[^@\s]+$/.test(ownerEmail)) throw new ConfigError(`BOOTSTRAP_OWNER_EMAIL is not an email address: ${JSON.stringify(ownerEmail)}`);
  const ownerPassword = readString(env, "BOOTSTRAP_OWNER_PASSWORD", "");
  if (ownerPassword !== "" && ownerPassword.length < 8) throw new ConfigError("BOOTSTRAP_OWNER_PASSWORD must be at least 8 characters");
  const port = readInt(env, "PORT", 9991, 0, 65535);
  // "memory://" keeps the embedded database in memory (tests, throwaway demos).
  const dataDir = readString(env, "DATA_DIR", "./data");
  const bindAddress = readString(env, "BIND_ADDRESS", "0.0.0.0");
  const devMode = readBool(env, "DEV_MODE", false);
  const webPublicStreamsEnabled = readBool(env, "WEB_PUBLIC_STREAMS_ENABLED", false);
  const devModeAllowRemote = readBool(env, "DEV_MODE_ALLOW_REMOTE", false);
  if (devMode && !devModeAllowRemote && !isLoopbackAddress(bindAddress)) {
    throw new ConfigError(
      `DEV_MODE=true hands any user's API key to whoever can reach the server, and BIND_ADDRESS=${bindAddress} is not a loopback address: ` +
        "bind 127.0.0.1, or set DEV_MODE_ALLOW_REMOTE=true if every host that can reach it is trusted",
    );
  }
  return {
    role,
    processes,
    port,
    metricsPort: env.METRICS_PORT === undefined || env.METRICS_PORT === "" ? null : readInt(env, "METRICS_PORT", 0, 0, 65535),
    metricsBindAddress: readString(env, "METRICS_BIND_ADDRESS", "127.0.0.1"),
    bindAddress,
    databaseUrl,
    redisUrl,
    redisClusterNodes,
    redisPrefix,
    dataDir: dataDir === "memory://" ? dataDir : path.resolve(dataDir),
    devMode,
    webPublicStreamsEnabled,
    externalHost: readString(env, "EXTERNAL_HOST", `localhost:${port}`).toLowerCase(),
    bootstrap: {
      realmName: readString(env, "BOOTSTRAP_REALM_NAME", "Team Chat"),
      ownerEmail,
      ownerName: readString(env, "BOOTSTRAP_OWNER_NAME", "Owner"),
      ownerPassword: ownerPassword === "" ? null : ownerPassword,
    },
    eventHeartbeatSeconds: readInt(env, "EVENT_HEARTBEAT_SECONDS", 50, 1, 600),
    eventQueueIdleSeconds: readInt(env, "EVENT_QUEUE_IDLE_SECONDS", 600, 10, 7 * 24 * 3600),
    eventQueueMaxEvents: readInt(env, "EVENT_QUEUE_MAX_EVENTS", 20_000, 10, 10_000_000),
    eventQueuesPerUser: readInt(env, "EVENT_QUEUES_PER_USER", 50, 1, 10_000),
    outboxSweepAfterSeconds: readInt(env, "OUTBOX_SWEEP_AFTER_SECONDS", 5, 1, 3600),
    shutdownDelaySeconds: readInt(env, "SHUTDOWN_DELAY_SECONDS", 0, 0, 300),
    changeStreamShards: readInt(env, "CHANGE_STREAM_SHARDS", 4, 1, 1024),
    changeStreamMaxEntries: readInt(env, "CHANGE_STREAM_MAX_ENTRIES", 200_000, 100, 100_000_000),
    messageCacheMb: readInt(env, "MESSAGE_CACHE_MB", 64, 0, 1024 * 1024),
    logLevel: readLogLevel(env),
    rateLimits: {
      enabled: readBool(env, "RATE_LIMITING", true),
      userRequestsPerMinute: readInt(env, "RATE_LIMIT_USER_REQUESTS_PER_MINUTE", 200, 1, 1_000_000),
      ipRequestsPerMinute: readInt(env, "RATE_LIMIT_IP_REQUESTS_PER_MINUTE", 100, 1, 1_000_000),
      loginFailuresPerAccount: readInt(env, "RATE_LIMIT_LOGIN_FAILURES_PER_ACCOUNT", 5, 1, 1_000_000),
      loginFailuresPerIp: readInt(env, "RATE_LIMIT_LOGIN_FAILURES_PER_IP", 50, 1, 1_000_000),
      loginFailureWindowSeconds: readInt(env, "RATE_LIMIT_LOGIN_WINDOW_SECONDS", 1800, 1, 7 * 24 * 3600),
    },
    trustedProxies: readTrustedProxies(env),
    storage: readStorage(env, dataDir),
    uploads: {
      maxFileBytes: readInt(env, "MAX_FILE_UPLOAD_SIZE_MIB", 25, 1, 1024 * 1024) * MIB,
      maxImageBytes: readInt(env, "MAX_IMAGE_UPLOAD_SIZE_MIB", 5, 1, 1024) * MIB,
      realmQuotaBytes: readInt(env, "REALM_UPLOAD_QUOTA_MIB", 5120, 0, 1024 * 1024 * 1024) * MIB,
      unclaimedGraceHours: readInt(env, "UNCLAIMED_UPLOAD_GRACE_HOURS", 21 * 24, 1, 10 * 365 * 24),
    },
    outgoingWebhooks: {
      timeoutMs: readInt(env, "OUTGOING_WEBHOOK_TIMEOUT_SECONDS", 10, 1, 300) * 1000,
      attempts: readInt(env, "OUTGOING_WEBHOOK_ATTEMPTS", 4, 1, 20),
      backoffMs: readInt(env, "OUTGOING_WEBHOOK_BACKOFF_MS", 1000, 1, 3_600_000),
      maxResponseBytes: readInt(env, "OUTGOING_WEBHOOK_MAX_RESPONSE_KIB", 1024, 1, 1024 * 1024) * 1024,
      concurrency: readInt(env, "OUTGOING_WEBHOOK_CONCURRENCY", 64, 1, 10_000),
      concurrencyPerRealm: readInt(env, "OUTGOING_WEBHOOK_CONCURRENCY_PER_REALM", 16, 1, 10_000),
      maxBotsPerMessage: readInt(env, "OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE", 20, 1, 1000),
      allowedHosts: readAllowedHosts(env, "OUTGOING_WEBHOOK_ALLOWED_HOSTS"),
    },
    bots: {
      maxPerUser: readInt(env, "MAX_BOTS_PER_USER", 100, 1, 1_000_000),
      maxPerRealm: readInt(env, "MAX_BOTS_PER_REALM", 1000, 1, 1_000_000),
    },
    jobStallSeconds: readInt(env, "JOB_STALL_SECONDS", 30, 1, 3600),
    mail: readMail(env, readString(env, "EXTERNAL_HOST", `localhost:${port}`).toLowerCase()),
  };
}

/** An address as an SMTP envelope takes it: local@domain, no spaces, angle brackets or controls. */
const EMAIL_ADDRESS = /^[^\s@<>()",;:\\\x00-\x1f\x7f]+@[^\s@<>()",;\\\x00-\x1f\x7f]+$/;

/** EMAIL_* and NOREPLY_EMAIL_ADDRESS; `externalHost` gives the default From domain. */
function readMail(env: Env, externalHost: string): MailConfig {
  const rawHost = readString(env, "EMAIL_HOST", "").trim();
  const host = rawHost === "" ? null : rawHost.replace(/^\[(.*)\]$/, "$1");
  if (host !== null && isIP(host) === 0 && !HOSTNAME.test(host)) {
    throw new ConfigError(`EMAIL_HOST must be a host name or an IP address (no scheme or port: EMAIL_PORT sets the port), got ${JSON.stringify(rawHost)}`);
  }
  const user = readString(env, "EMAIL_HOST_USER", "");
  const password = readString(env, "EMAIL_HOST_PASSWORD", "");
  if (host === null) {
    for (const name of ["EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD", "EMAIL_PORT"]) {
      if ((env[name] ?? "") !== "") throw new ConfigError(`${name} is set without EMAIL_HOST: set EMAIL_HOST to send email over SMTP (without it, emails are written to the log)`);
    }
  }
  if ((user === "") !== (password === "")) throw new ConfigError("Set both EMAIL_HOST_USER and EMAIL_HOST_PASSWORD (SMTP login), or neither");
  const useSsl = readBool(env, "EMAIL_USE_SSL", false);
  // Django's two settings are exclusive; STARTTLS is the default unless implicit TLS is asked for.
  const useTls = readBool(env, "EMAIL_USE_TLS", !useSsl);
  if (useTls && useSsl) {
    throw new ConfigError("EMAIL_USE_TLS and EMAIL_USE_SSL are both true: EMAIL_USE_SSL is TLS from the start (usually port 465), EMAIL_USE_TLS is STARTTLS (usually port 587); set one");
  }
  const domain = externalHost.startsWith("[") ? externalHost.slice(0, externalHost.indexOf("]") + 1) : externalHost.replace(/:\d*$/, "");
  const noreplyAddress = readString(env, "NOREPLY_EMAIL_ADDRESS", `noreply@${domain}`).trim();
  if (!EMAIL_ADDRESS.test(noreplyAddress)) throw new ConfigError(`NOREPLY_EMAIL_ADDRESS must be a plain email address (local@domain), got ${JSON.stringify(noreplyAddress)}`);
  return {
    host,
    port: readInt(env, "EMAIL_PORT", useSsl ? 465 : 587, 1, 65535),
    user: user === "" ? null : user,
    password: password === "" ? null : password,
    useTls,
    useSsl,
    noreplyAddress,
  };
}

const MIB = 1024 * 1024;

/** winston's levels (packages/logger), most to least severe. */
const LOG_LEVELS = ["error", "warn", "info", "http", "verbose", "debug", "silly"];

function readLogLevel(env: Env): string {
  const level = readString(env, "LOG_LEVEL", "info").trim().toLowerCase();
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(env.LOG_LEVEL)}`);
  return level;
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** Host names, addresses and CIDR ranges; anything else (a port, a URL) is a mistake said at start. */
function readAllowedHosts(env: Env, name: string): string[] {
  const entries = readString(env, name, "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  for (const entry of entries) {
    const [address, bits, extra] = entry.split("/");
    const family = isIP(address.replace(/^\[(.*)\]$/, "$1"));
    const validRange = family !== 0 && extra === undefined && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
    if (!validRange && !(bits === undefined && HOSTNAME.test(entry))) {
      throw new ConfigError(`${name}: ${JSON.stringify(entry)} is not a host name, an IP address or a CIDR range`);
    }
  }
  return entries;
}

function readStorage(env: Env, dataDir: string): StorageConfig {
  const backend = readString(env, "STORAGE_BACKEND", "local");
  if (backend === "local") {
    const configured = readString(env, "LOCAL_UPLOADS_DIR", "");
    if (configured !== "") return { backend, directory: path.resolve(configured) };
    return { backend, directory: dataDir === "memory://" ? null : path.join(path.resolve(dataDir), "uploads") };
  }
  if (backend !== "s3") throw new ConfigError(`STORAGE_BACKEND must be local or s3, got ${JSON.stringify(backend)}`);
  const bucket = readString(env, "S3_BUCKET", "");
  if (bucket === "") throw new ConfigError("STORAGE_BACKEND=s3 needs S3_BUCKET");
  const endpoint = readUrl(env, "S3_ENDPOINT", ["http:", "https:"]);
  const accessKeyId = readString(env, "S3_ACCESS_KEY_ID", "");
  const secretAccessKey = readString(env, "S3_SECRET_ACCESS_KEY", "");
  if ((accessKeyId === "") !== (secretAccessKey === "")) throw new ConfigError("Set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither");
  return {
    backend,
    bucket,
    endpoint,
    region: readString(env, "S3_REGION", "us-east-1"),
    accessKeyId: accessKeyId === "" ? null : accessKeyId,
    secretAccessKey: secretAccessKey === "" ? null : secretAccessKey,
    // Most S3-compatible servers address buckets by path; AWS by host name.
    forcePathStyle: readBool(env, "S3_FORCE_PATH_STYLE", endpoint !== null),
  };
}
export { serverVersion } from "./version.ts";
