// Builds everything a process needs from its configuration: the database (Postgres or embedded
// PGlite), the bus (Redis or in-process), and the action runner that ties them together.
import { createMemoryBus, createRedisBus, createRedisClient, type Bus, type RedisClient } from "@chat/bus";
import { sharedRedis, type Config } from "@chat/config";
import { ActionRunner, MessageCache, type ServerContext } from "@chat/core";
import { openDatabase, type Database } from "@chat/db";
import { RateLimits } from "@chat/http";
import { openStorage, type FileStorage } from "@chat/storage";

export interface Services {
  config: Config;
  db: Database;
  bus: Bus;
  ctx: ServerContext;
  actions: ActionRunner;
  messageCache: MessageCache;
  rateLimits: RateLimits;
  /** Uploaded files, avatars and custom emoji: the local disk or an S3 bucket (packages/storage). */
  storage: FileStorage;
  close(): Promise<void>;
}

/** Resolves once `redis` is ready, or after `timeoutMs` (the limiter then lets requests through until it is). */
function connected(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once("ready", done);
  });
}

export async function openServices(config: Config, options: { migrate: boolean }): Promise<Services> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, migrate: options.migrate });
  const queueLimits = { maxEventsPerQueue: config.eventQueueMaxEvents, maxQueuesPerUser: config.eventQueuesPerUser };
  // One Redis server or a Redis Cluster; the bus and the limiter take either.
  const redis = sharedRedis(config);
  const bus = redis
    ? createRedisBus({
        ...redis,
        prefix: config.redisPrefix,
        shards: config.changeStreamShards,
        maxEntries: config.changeStreamMaxEntries,
        jobStallMs: config.jobStallSeconds * 1000,
        ...queueLimits,
      })
    : createMemoryBus({ maxEntries: config.changeStreamMaxEntries, ...queueLimits });
  const actions = new ActionRunner(db.prisma, bus.changes);
  // Its own connection, which fails a command at once while Redis is away rather than queueing it:
  // the limiter then lets requests through (rate-limit.ts).
  const rateLimitRedis = redis && config.rateLimits.enabled ? createRedisClient(redis, { enableOfflineQueue: false, commandTimeout: 1000, maxRetriesPerRequest: 1 }) : null;
  rateLimitRedis?.on("error", () => {
    // Reported by the limiter when a count fails; ioredis would otherwise print every reconnect.
  });
  // Requests that came before the connection would go uncounted.
  if (rateLimitRedis) await connected(rateLimitRedis, 5000);
  const storage = await openStorage(config.storage);
  return {
    config,
    db,
    bus,
    actions,
    messageCache: new MessageCache(db.prisma, { maxBytes: config.messageCacheMb * 1024 * 1024 }),
    rateLimits: new RateLimits(config.rateLimits, rateLimitRedis ? { redis: rateLimitRedis, prefix: config.redisPrefix } : null),
    ctx: { externalHost: config.externalHost, devMode: config.devMode, uploads: config.uploads, bots: config.bots, webPublicStreamsEnabled: config.webPublicStreamsEnabled },
    storage,
    async close() {
      await actions.flush();
      await bus.close();
      rateLimitRedis?.disconnect();
      await db.close();
      await storage.close();
    },
  };
}
