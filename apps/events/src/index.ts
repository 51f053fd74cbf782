import type { Router } from "express";
import { Router as createRouter } from "express";
import { hostname } from "node:os";
import type { Stoppable } from "@chat/bus";
import { createFanout } from "./fanout.ts";
import { eventRoutes } from "./routes.ts";
import type { EventServices } from "./services.ts";
import { LongPollWaiters } from "./waiters.ts";

export type { EventServices } from "./services.ts";
export { createFanout, shapeEvent } from "./fanout.ts";
export { LongPollWaiters } from "./waiters.ts";

export interface EventTier {
  router: Router;
  stop(): Promise<void>;
}

/** The event tier: /register and /events routes, plus this node's share of the fan-out. */
export async function startEventTier(services: EventServices): Promise<EventTier> {
  const waiters = await LongPollWaiters.attach(services.bus.queues);
  const consumer: Stoppable = services.bus.changes.consume(`events-${hostname()}-${process.pid}`, createFanout(services.bus.queues));
  const router = createRouter();
  router.use(eventRoutes(services, waiters));
  return {
    router,
    async stop() {
      await consumer.stop();
      waiters.wakeAll();
    },
  };
}
