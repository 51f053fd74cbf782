// Every Redis connection of the bus, with limits that make an outage fail fast. ioredis's
// defaults suit a batch job, not a request: a command waits in the offline queue through 20
// reconnect attempts (tens of seconds), and a command sent to a Redis that stopped answering
// (paused, partitioned) waits forever. Here a request gets its error within a second, and the
// client keeps reconnecting by itself, so service resumes when Redis does.
//
// One Redis server (a `redis://` URL) or a Redis Cluster (its seed nodes): every connection of the
// bus, the job queue and the rate limiter is made here, so the two differ in this file only. On a
// cluster every multi-key command, transaction, pipeline and script keeps to one hash slot
// (keys.ts tags the keys so).
import type { Cluster, ClusterOptions, Redis, RedisOptions } from "ioredis";
import type { BusLog } from "../log";

/** A connection to one server or to a cluster: the bus's code runs on either. */
export type RedisClient = Redis | Cluster;

/** ioredis, loaded with the first connection: a process on the in-process bus never needs it. */
function ioredis(): typeof import("ioredis") {
  return require("ioredis") as typeof import("ioredis");
}

/** Where Redis is: one server's URL, or a cluster's seed nodes (`host:port`; the rest are discovered). */
export type RedisTarget = { url: string; clusterNodes?: undefined } | { clusterNodes: string[]; url?: undefined };

/** A command without a reply by then fails ("Command timed out"); requests answer 503 well within 2 s. */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** Opening the TCP connection (an unreachable host answers nothing; the default is 10 s). */
const CONNECT_TIMEOUT_MS = 2000;
/** Reconnect attempts back off to one a second: Redis's return is noticed within about a second. */
const MAX_RECONNECT_DELAY_MS = 1000;

const reconnectDelay = (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS);

export const OUTAGE_AWARE_REDIS_OPTIONS: RedisOptions = {
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: CONNECT_TIMEOUT_MS,
  // Commands issued while disconnected still queue (a blip shorter than the timeout goes unseen),
  // but fail after one reconnect attempt rather than twenty.
  maxRetriesPerRequest: 1,
  retryStrategy: reconnectDelay,
};

/**
 * A client of `target` with these per-connection options. On a cluster they apply to each node's
 * connection, except what the cluster client does itself: reconnecting (the same backoff),
 * queueing while disconnected, and auto-pipelining, which it does per node.
 */
export function createRedisClient(target: RedisTarget, options: RedisOptions): RedisClient {
  const { Redis, Cluster } = ioredis();
  if (target.clusterNodes === undefined) return new Redis(target.url, options);
  const { retryStrategy, enableOfflineQueue, enableAutoPipelining, autoPipeliningIgnoredCommands, lazyConnect, ...perNode } = options;
  const retry = retryStrategy ?? reconnectDelay;
  const clusterOptions: ClusterOptions = {
    redisOptions: perNode,
    clusterRetryStrategy: (times) => retry(times),
    // A node that goes away is reconnected like a lone server; meanwhile its slots answer errors.
    clusterNodeRetryStrategy: retry,
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(enableAutoPipelining !== undefined ? { enableAutoPipelining } : {}),
    ...(autoPipeliningIgnoredCommands !== undefined ? { autoPipeliningIgnoredCommands } : {}),
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
  };
  return new Cluster(target.clusterNodes, clusterOptions);
}

/** Whether the client talks to a Redis Cluster (and so must group multi-key work by slot). */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof ioredis().Cluster;
}

/**
 * A connection with the bus's outage limits (`overrides` for a connection that blocks on purpose).
 * Connection errors are logged once per outage, not on every reconnect attempt.
 */
export function connectRedis(target: RedisTarget, name: string, log: BusLog, overrides: RedisOptions = {}): RedisClient {
  const redis = createRedisClient(target, { ...OUTAGE_AWARE_REDIS_OPTIONS, ...overrides });
  logOutages(redis, name, log);
  return redis;
}

/**
 * Logs a connection's failure when it starts and its return, not each reconnect attempt (without
 * an "error" listener ioredis prints every one of them).
 */
export function logOutages(redis: RedisClient, name: string, log: BusLog): void {
  let failing = false;
  redis.on("error", (error: unknown) => {
    if (failing) return;
    failing = true;
    log(`redis connection ${name} failed; reconnecting`, error);
  });
  redis.on("ready", () => {
    if (!failing) return;
    failing = false;
    log(`redis connection ${name} is back`);
  });
}

