// Zulip's rate limits: requests per authenticated user, requests without credentials per client
// address, and failed logins per account and per address. The counters live in Redis, so every
// node shares them (in memory in the embedded mode, which is one process). A counter that cannot be
// reached lets the request through: an outage of Redis must not turn every request into an error.
import type { IncomingMessage } from "node:http";
import type { Request, RequestHandler } from "express";
import type { Cluster, Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { RateLimitConfig } from "@chat/config";
import { RateLimitedError } from "@chat/core";
import { logger } from "@chat/logger";
import { rateLimitHits } from "@chat/metrics";

/**
 * Requests never counted, as Zulip: the events long poll (a client keeps one open at all times and
 * its pace is the server's) and file downloads (uploaded files, their temporary URLs, avatars and
 * custom emoji, the server's static images; a message list shows dozens at once).
 */
const EXEMPT: ReadonlyArray<{ method: string | null; path: string; prefix: boolean }> = [
  { method: "GET", path: "/api/v1/events", prefix: false },
  { method: "GET", path: "/json/events", prefix: false },
  { method: null, path: "/user_uploads/", prefix: true },
  { method: "GET", path: "/api/v1/user_uploads/", prefix: true },
  { method: "GET", path: "/json/user_uploads/", prefix: true },
  { method: null, path: "/user_avatars/", prefix: true },
  { method: null, path: "/static/", prefix: true },
];

export function isExemptFromRateLimit(method: string | undefined, url: string | undefined): boolean {
  const full = url ?? "/";
  const question = full.indexOf("?");
  const path = question === -1 ? full : full.slice(0, question);
  return EXEMPT.some((rule) => (rule.method === null || rule.method === method) && (rule.prefix ? path.startsWith(rule.path) : path === rule.path));
}

/** Seconds a limited client must wait: Zulip sends a fraction (`secs_to_freedom`). */
function retryAfterSeconds(res: RateLimiterRes): number {
  return Math.max(0.001, Math.round(res.msBeforeNext) / 1000);
}

/**
 * Where the counters live: Redis (shared by every node; one server or a cluster, each counter is
 * one key) or this process's memory.
 */
export type RateLimitStore = { redis: Redis | Cluster; prefix: string } | null;

export class RateLimits {
  readonly enabled: boolean;
  private readonly byUser: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;
  private readonly loginByAccount: RateLimiterAbstract;
  private readonly loginByIp: RateLimiterAbstract;
  private readonly loginPoints: { account: number; ip: number };
  /** Zulip's password_reset_form_by_email (two windows) and sends_email_by_ip. */
  private readonly resetByAddress: RateLimiterAbstract[];
  private readonly emailByIp: RateLimiterAbstract;
  private lastStoreWarning = 0;
  /** Each limiter's name, the label of its hits in the metrics. */
  private readonly names = new Map<RateLimiterAbstract, string>();

  constructor(settings: RateLimitConfig, store: RateLimitStore) {
    this.enabled = settings.enabled;
    const limiter = (name: string, points: number, duration: number): RateLimiterAbstract => {
      const created =
        store === null
          ? new RateLimiterMemory({ keyPrefix: name, points, duration })
          : // Not ready (reconnecting) fails at once rather than waiting in ioredis's queue.
            new RateLimiterRedis({ storeClient: store.redis, keyPrefix: `${store.prefix}ratelimit:${name}`, points, duration, rejectIfRedisNotReady: true });
      this.names.set(created, name);
      return created;
    };
    this.byUser = limiter("user", settings.userRequestsPerMinute, 60);
    this.byIp = limiter("ip", settings.ipRequestsPerMinute, 60);
    this.loginByAccount = limiter("login-account", settings.loginFailuresPerAccount, settings.loginFailureWindowSeconds);
    this.loginByIp = limiter("login-ip", settings.loginFailuresPerIp, settings.loginFailureWindowSeconds);
    this.loginPoints = { account: settings.loginFailuresPerAccount, ip: settings.loginFailuresPerIp };
    // Zulip's fixed rules: an email address gets 2 reset emails an hour and 5 a day, and one client
    // address may have 5 sent a day, whoever they go to: each could be mail to a stranger.
    this.resetByAddress = [limiter("reset-address-hour", 2, 3600), limiter("reset-address-day", 5, 86_400)];
    this.emailByIp = limiter("email-ip", 5, 86_400);
  }

  /** Counts one request of a user; the seconds to wait when past the limit, else null. */
  countUser(userId: number): Promise<number | null> {
    return this.consume(this.byUser, String(userId));
  }

  /** Counts one request without credentials from a client address. */
  countIp(ip: string): Promise<number | null> {
    return this.consume(this.byIp, ip);
  }

  /** Whether logins naming this account, or from this address, wait; checked before the password is. */
  async loginThrottled(account: string, ip: string): Promise<number | null> {
    if (!this.enabled) return null;
    try {
      const [byAccount, byIp] = await Promise.all([this.loginByAccount.get(account), this.loginByIp.get(ip)]);
      const waits = [
        byAccount !== null && byAccount.consumedPoints >= this.loginPoints.account ? retryAfterSeconds(byAccount) : 0,
        byIp !== null && byIp.consumedPoints >= this.loginPoints.ip ? retryAfterSeconds(byIp) : 0,
      ];
      const wait = Math.max(...waits);
      return wait > 0 ? wait : null;
    } catch (error) {
      this.warnStoreDown(error);
      return null;
    }
  }

  /** Counts a failed login against the account and the address; the seconds to wait once past either limit. */
  async countLoginFailure(account: string | null, ip: string): Promise<number | null> {
    const waits = await Promise.all([account === null ? null : this.consume(this.loginByAccount, account), this.consume(this.loginByIp, ip)]);
    const limited = waits.filter((wait): wait is number => wait !== null);
    return limited.length === 0 ? null : Math.max(...limited);
  }

  /**
   * Counts a password reset email asked for `email` from `ip`: the seconds to wait once past the
   * address's limits or the client's, else null. An address past its limit counts nothing against
   * the client (Zulip checks the address first).
   */
  async countPasswordResetEmail(email: string, ip: string): Promise<number | null> {
    const address = email.trim().toLowerCase();
    for (const limiter of this.resetByAddress) {
      const wait = await this.consume(limiter, address);
      if (wait !== null) return wait;
    }
    return this.consume(this.emailByIp, ip);
  }

  private async consume(limiter: RateLimiterAbstract, key: string): Promise<number | null> {
    if (!this.enabled) return null;
    try {
      await limiter.consume(key);
      return null;
    } catch (rejection) {
      // The library rejects with its result when past the limit, and with an error when its store fails.
      if (rejection instanceof RateLimiterRes) {
        rateLimitHits.inc({ limit: this.names.get(limiter) ?? "unknown" });
        return retryAfterSeconds(rejection);
      }
      this.warnStoreDown(rejection);
      return null;
    }
  }

  private warnStoreDown(error: unknown): void {
    // Once a minute, not once a request.
    const now = Date.now();
    if (now - this.lastStoreWarning < 60_000) return;
    this.lastStoreWarning = now;
    logger.warn("rate limit counters unavailable: requests are not being limited", { error: error instanceof Error ? error.message : String(error) });
  }
}

/** A limiter that counts nothing (RATE_LIMITING=false, and tools that build routes without a server). */
export function disabledRateLimits(): RateLimits {
  return new RateLimits(
    { enabled: false, userRequestsPerMinute: 1, ipRequestsPerMinute: 1, loginFailuresPerAccount: 1, loginFailuresPerIp: 1, loginFailureWindowSeconds: 1 },
    null,
  );
}

/** The user's count of a request a hot route counted before declining it to Express: counted once. */
const HOT_COUNT = Symbol("rate limit counted by a hot route");
type CountedRequest = IncomingMessage & { [HOT_COUNT]?: number | null };

/**
 * Counts a hot route's request for its user; false when past the limit, and the route then declines:
 * Express answers with the 429, from this count, without counting the request again.
 */
export async function countHotRequest(limits: RateLimits, req: IncomingMessage, userId: number): Promise<boolean> {
  if (!limits.enabled) return true;
  const wait = await limits.countUser(userId);
  (req as CountedRequest)[HOT_COUNT] = wait;
  return wait === null;
}

/** Counts an authenticated request for its user (after authentication); throws past the limit. */
export async function countUserRequest(limits: RateLimits, req: Request, userId: number): Promise<void> {
  if (!limits.enabled || isExemptFromRateLimit(req.method, req.originalUrl)) return;
  const counted = req as CountedRequest;
  const wait = HOT_COUNT in counted ? counted[HOT_COUNT] : await limits.countUser(userId);
  if (wait !== null && wait !== undefined) throw new RateLimitedError(wait);
}

/** The client's address: the connection's, or a trusted proxy's X-Forwarded-For (app.ts). */
export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? "unknown";
}

/** Counts a request without credentials (or to an endpoint that takes none) for its client address. */
export async function countIpRequest(limits: RateLimits, req: Request): Promise<void> {
  if (!limits.enabled || isExemptFromRateLimit(req.method, req.originalUrl)) return;
  const wait = await limits.countIp(clientIp(req));
  if (wait !== null) throw new RateLimitedError(wait);
}

/** countIpRequest as middleware, for the endpoints that need no credentials. */
export function limitByIp(limits: RateLimits): RequestHandler {
  return (req, _res, next) => {
    countIpRequest(limits, req).then(() => next(), next);
  };
}

/** The key failed logins are counted under: an email in an organization. */
export function loginAccountKey(subdomain: string, email: string): string {
  return `${subdomain}:${email.trim().toLowerCase()}`;
}
