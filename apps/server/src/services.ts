// Builds everything a process needs from its configuration: the database (Postgres or embedded
// PGlite), the bus (Redis or in-process), and the action runner that ties them together.
import { createMemoryBus, createRedisBus, type Bus } from "@chat/bus";
import type { Config } from "@chat/config";
import { ActionRunner, MessageCache, type ServerContext } from "@chat/core";
import { openDatabase, type Database } from "@chat/db";

export interface Services {
  config: Config;
  db: Database;
  bus: Bus;
  ctx: ServerContext;
  actions: ActionRunner;
  messageCache: MessageCache;
  close(): Promise<void>;
}

export async function openServices(config: Config, options: { migrate: boolean }): Promise<Services> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, migrate: options.migrate });
  const bus = config.redisUrl
    ? createRedisBus({ url: config.redisUrl, prefix: config.redisPrefix, shards: config.changeStreamShards })
    : createMemoryBus();
  const actions = new ActionRunner(db.prisma, bus.changes);
  return {
    config,
    db,
    bus,
    actions,
    messageCache: new MessageCache(db.prisma, { maxBytes: config.messageCacheMb * 1024 * 1024 }),
    ctx: { externalHost: config.externalHost, devMode: config.devMode },
    async close() {
      await actions.flush();
      await bus.close();
      await db.close();
    },
  };
}
