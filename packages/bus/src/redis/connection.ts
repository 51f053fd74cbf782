// Every Redis connection of the bus, with limits that make an outage fail fast. ioredis's
// defaults suit a batch job, not a request: a command waits in the offline queue through 20
// reconnect attempts (tens of seconds), and a command sent to a Redis that stopped answering
// (paused, partitioned) waits forever. Here a request gets its error within a second, and the
// client keeps reconnecting by itself, so service resumes when Redis does.
import Redis, { type RedisOptions } from "ioredis";
import type { BusLog } from "../log";

/** A command without a reply by then fails ("Command timed out"); requests answer 503 well within 2 s. */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** Opening the TCP connection (an unreachable host answers nothing; the default is 10 s). */
const CONNECT_TIMEOUT_MS = 2000;
/** Reconnect attempts back off to one a second: Redis's return is noticed within about a second. */
const MAX_RECONNECT_DELAY_MS = 1000;

export const OUTAGE_AWARE_REDIS_OPTIONS: RedisOptions = {
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: CONNECT_TIMEOUT_MS,
  // Commands issued while disconnected still queue (a blip shorter than the timeout goes unseen),
  // but fail after one reconnect attempt rather than twenty.
  maxRetriesPerRequest: 1,
  retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
};

/**
 * A connection with the bus's outage limits (`overrides` for a connection that blocks on purpose).
 * Connection errors are logged once per outage, not on every reconnect attempt.
 */
export function connectRedis(url: string, name: string, log: BusLog, overrides: RedisOptions = {}): Redis {
  const redis = new Redis(url, { ...OUTAGE_AWARE_REDIS_OPTIONS, ...overrides });
  logOutages(redis, name, log);
  return redis;
}

/**
 * Logs a connection's failure when it starts and its return, not each reconnect attempt (without
 * an "error" listener ioredis prints every one of them).
 */
export function logOutages(redis: Redis, name: string, log: BusLog): void {
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
