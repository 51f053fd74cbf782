import type { Bus } from "@chat/bus";
import type { PrismaClient } from "@chat/db";
import type { ServerContext } from "@chat/core";

export interface EventServices {
  prisma: PrismaClient;
  bus: Bus;
  ctx: ServerContext;
  /** How long GET /events waits before answering with a heartbeat. */
  heartbeatMs: number;
}
