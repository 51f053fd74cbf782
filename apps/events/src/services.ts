import type { Bus } from "@chat/bus";
import type { PrismaClient } from "@chat/db";
import type { ServerContext } from "@chat/core";
import type { RateLimits } from "@chat/http";

export interface EventServices {
  prisma: PrismaClient;
  bus: Bus;
  ctx: ServerContext;
  rateLimits: RateLimits;
  /** How long GET /events waits before answering with a heartbeat. */
  heartbeatMs: number;
}
