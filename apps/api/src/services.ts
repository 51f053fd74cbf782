import type { PrismaClient } from "@chat/db";
import type { ActionRunner, ServerContext } from "@chat/core";

/** What the API tier's routes need; built once per process by the server. */
export interface ApiServices {
  prisma: PrismaClient;
  actions: ActionRunner;
  ctx: ServerContext;
}
