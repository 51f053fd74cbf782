// The service bots a worker process calls, kept for a moment: a bot mentioned in a busy stream is
// looked up once per TTL, not once per message. Measured: with a query per job, 64 calls under way
// waited on the connection pool (108 ms a lookup on average) and one worker delivered about 450
// calls a second. A bot deactivated or given a new URL is therefore seen within the TTL.
import type { PrismaClient } from "@chat/db";
import { loadServiceBot, type ServiceBot } from "@chat/core";
import { LRUCache } from "lru-cache";

export class ServiceBotCache {
  private readonly entries: LRUCache<number, { value: Promise<ServiceBot | null> }>;

  constructor(
    private readonly prisma: PrismaClient,
    ttlMs: number,
  ) {
    this.entries = new LRUCache({ max: 10_000, ttl: ttlMs });
  }

  /** The bot as of at most the TTL ago; concurrent lookups of one bot share one query. */
  get(botId: number): Promise<ServiceBot | null> {
    const cached = this.entries.get(botId);
    if (cached) return cached.value;
    const value = loadServiceBot(this.prisma, botId);
    this.entries.set(botId, { value });
    // A failed lookup is not kept: the next job asks again.
    value.catch(() => this.entries.delete(botId));
    return value;
  }
}
