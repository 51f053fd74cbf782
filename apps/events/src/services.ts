import type { Bus } from "@chat/bus";
import type { Database, PrismaClient } from "@chat/db";
import type { ServerContext } from "@chat/core";
import type { RateLimits } from "@chat/http";

export interface EventServices {
  prisma: PrismaClient;
  /** Postgres notifications (null for PGlite): poll-auth.ts trusts a checked copy of a user until one names its rows. */
  listen: Database["listen"];
  bus: Bus;
  ctx: ServerContext;
  rateLimits: RateLimits;
  /** How long GET /events waits before answering with a heartbeat. */
  heartbeatMs: number;
}
