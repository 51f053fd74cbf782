import type { Router } from "express";
import { Router as createRouter } from "express";
import { hostname } from "node:os";
import { logger } from "@chat/logger";
import type { Stoppable } from "@chat/bus";
import { ActorCache, RealmStateCache } from "@chat/core";
import type { HotRoute } from "@chat/http";
import { measureAtScrape } from "@chat/metrics";
import { listenForActorRows } from "./actor-row-listener.ts";
import { deleteQueueHotRoute, eventsHotRoute } from "./events-hot-route.ts";
import { PollAuthenticator } from "./poll-auth.ts";
import { createReadFanout } from "./fanout.ts";
import { eventRoutes } from "./routes.ts";
import { sendRestartEvents } from "./restart-events.ts";
import type { EventServices } from "./services.ts";
import { LongPollWaiters } from "./waiters.ts";

export type { EventServices } from "./services.ts";
export { createReadFanout, shapeEvent } from "./fanout.ts";
export { sendRestartEvents } from "./restart-events.ts";
export { LongPollWaiters } from "./waiters.ts";
export { eventEndpoints } from "./routes.ts";
export { ACTOR_ROW_LISTENER_NAME } from "./actor-row-listener.ts";
export type { PollAuthenticator, PollAuthStats } from "./poll-auth.ts";

export interface EventTier {
  router: Router;
  /** GET /events answered before Express (events-hot-route.ts). */
  hotRoutes: HotRoute[];
  /** How this node authenticates polls (poll-auth.ts), with its counts. */
  pollAuth: PollAuthenticator;
  /**
   * The first step of a graceful shutdown: held polls answer at once (later ones too), and this
   * node's fan-out finishes the batches it read and leaves the stream to the other nodes.
   */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** The event tier: /register and /events routes, plus this node's share of the fan-out. */
export async function startEventTier(services: EventServices): Promise<EventTier> {
  const waiters = await LongPollWaiters.attach(services.bus.queues);
  measureAtScrape("chat_long_polls_held", () => waiters.size);
  measureAtScrape("chat_event_queues", () => services.bus.queues.count());
  const consumer: Stoppable = services.bus.changes.consumeInOrder(`events-${hostname()}-${process.pid}`, createReadFanout(services.bus.queues));
  // Queues of clients told another API version register again; nothing waits for it.
  sendRestartEvents(services.bus.queues).catch((error: unknown) => logger.error("restart events failed", { error: String(error) }));
  const router = createRouter();
  // This node's copy of what /register shows every member of a realm.
  const ctx = { ...services.ctx, realmState: services.ctx.realmState ?? new RealmStateCache(services.prisma) };
  const actorRows = listenForActorRows(services.listen);
  const auth = new PollAuthenticator(services.prisma, new ActorCache(), services.ctx.externalHost, actorRows.validity);
  router.use(eventRoutes({ ...services, ctx }, waiters, auth));
  const hotServices = { queues: services.bus.queues, waiters, auth, heartbeatMs: services.heartbeatMs, rateLimits: services.rateLimits };
  const hotRoutes = [eventsHotRoute(hotServices), deleteQueueHotRoute(hotServices)];
  return {
    router,
    hotRoutes,
    pollAuth: auth,
    async drain() {
      waiters.drain();
      await consumer.stop();
    },
    async stop() {
      waiters.drain();
      await consumer.stop();
      // Before the database closes (main.ts); from here no copy is trusted.
      await actorRows.close();
    },
  };
}
