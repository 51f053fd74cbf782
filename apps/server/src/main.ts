// `npm start`: one process running the tiers its ROLE names (all of them by default).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import express, { Router, type Express } from "express";
import { apiHotRoutes, apiRouter, fileRoutes, tusRoutes } from "@chat/app-api";
import { startEventTier, type EventTier } from "@chat/app-events";
import { startWorker, type WorkerTier } from "@chat/app-worker";
import { ConfigError, loadConfig, serverVersion, type Config } from "@chat/config";
import { ActorCache, oldestOutboxAgeSeconds, preloadEmojiNames } from "@chat/core";
import { compileWasmWithBaselineOnly } from "@chat/db";
import { createHttpApp, createJsonHttpServer, healthRoutes, trackRequest, withHotRoutes, type HotRoute } from "@chat/http";
import { collectProcessMetrics, measureAtScrape, metricsText } from "@chat/metrics";
import { logger } from "@chat/logger";
import { bootstrapIfEmpty, ensureSystemBotsOfAllRealms } from "./bootstrap.ts";
import { runCli } from "./cli-commands.ts";
import { acquireDataDirLock, DataDirBusyError, type DataDirLock } from "./data-dir-lock.ts";
import { DataDirError, ensureDataDir, ownsDataDir } from "./data-dir.ts";
import { openOperatorChannel, operatorSocketPath, type OperatorChannel } from "./operator-channel.ts";
import { isClusterWorker, runPrimary, type ReadyMessage } from "./cluster.ts";
import { openApiRoutes, servedEndpoints } from "./openapi.ts";
import { readinessCheck, type ReadinessCheck } from "./readiness.ts";
import { openServices, type Services } from "./services.ts";

/** Connections the kernel keeps waiting for accept(). */
const LISTEN_BACKLOG = 4096;

export interface RunningServer {
  services: Services;
  server: http.Server | null;
  /** The API's hot routes (hot-routes.ts), with their counts; none without an API tier. */
  hotRoutes: HotRoute[];
  /** The event tier, if this process runs one. */
  events: EventTier | null;
  /** The Express app behind the hot routes (its routes are the API document's, test/api/openapi.test.ts). */
  app: Express | null;
  port: number | null;
  stop(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  // One process owns the embedded database (or a Redis-less server's folder): a second one stops here.
  let lock: DataDirLock | null = null;
  if (ownsDataDir(config)) {
    ensureDataDir(config.dataDir);
    lock = acquireDataDirLock(config.dataDir, {
      kind: "server",
      onStale: (stale) => logger.warn("took over the data folder's lock from a process that is gone", { pid: stale.pid, since: stale.since }),
    });
  }
  try {
    // A folder that cannot be used is said now, not found by whatever first writes to it.
    if (config.storage.backend === "local" && config.storage.directory !== null) ensureDataDir(config.storage.directory, "LOCAL_UPLOADS_DIR");
    return await startServerOwning(config, lock);
  } catch (error) {
    lock?.release();
    throw error;
  }
}

async function startServerOwning(config: Config, lock: DataDirLock | null): Promise<RunningServer> {
  const services = await openServices(config, { migrate: true });
  const { role } = config;

  if (role === "all" || role === "api") {
    // Reactions and markdown look emoji up; the table is built here rather than in a request.
    preloadEmojiNames();
    const result = await bootstrapIfEmpty(services);
    if (result.created) {
      logger.info(`created the first organization; its owner is ${result.email}`);
      if (result.generatedPassword) {
        // Printed once on purpose: the only copy of a generated password.
        process.stdout.write(`\n  Owner login: ${result.email}\n  Password:    ${result.generatedPassword}\n\n`);
      }
    }
    await ensureSystemBotsOfAllRealms(services);
  }

  let events: EventTier | null = null;
  let worker: WorkerTier | null = null;
  if (role === "all" || role === "events") {
    events = await startEventTier({
      prisma: services.db.prisma,
      listen: services.db.listen,
      bus: services.bus,
      ctx: services.ctx,
      rateLimits: services.rateLimits,
      heartbeatMs: config.eventHeartbeatSeconds * 1000,
    });
  }
  if (role === "all" || role === "worker") {
    worker = startWorker({
      prisma: services.db.prisma,
      bus: services.bus,
      outboxSweepAfterSeconds: config.outboxSweepAfterSeconds,
      queueIdleSeconds: config.eventQueueIdleSeconds,
      storage: services.storage,
      unclaimedUploadGraceHours: config.uploads.unclaimedGraceHours,
      actions: services.actions,
      outgoingWebhooks: config.outgoingWebhooks,
      devMode: config.devMode,
      mail: config.mail,
      ctx: services.ctx,
    });
  }

  let server: http.Server | null = null;
  let hotRoutes: HotRoute[] = [];
  let expressApp: Express | null = null;
  let draining = false;
  const readiness = readinessCheck(services, () => draining);
  // Requests are measured only where something can read the measurements.
  const observing = config.metricsPort !== null;
  if (observing) measureAtScrape("chat_outbox_oldest_age_seconds", () => oldestOutboxAgeSeconds(services.db.prisma));
  if (role !== "worker") {
    const apiServices = {
      prisma: services.db.prisma,
      actions: services.actions,
      ctx: services.ctx,
      messageCache: services.messageCache,
      actorCache: new ActorCache(),
      rateLimits: services.rateLimits,
      storage: services.storage,
      uploads: config.uploads,
      jobs: services.bus.jobs,
    };
    if (role !== "events") hotRoutes = apiHotRoutes(apiServices);
    if (events) hotRoutes = [...hotRoutes, ...events.hotRoutes];
    // The API document is served wherever the API tier is (its contracts cover every tier).
    const api = role === "api" ? Router().use(openApiRoutes()).use(apiRouter(apiServices)) : role === "events" ? events!.router : Router().use(openApiRoutes()).use(events!.router).use(apiRouter(apiServices));
    // Files are served outside /api/v1, at the paths Zulip gives them (/user_uploads, /user_avatars).
    const root = role === "events" ? undefined : fileRoutes(apiServices);
    const sessions = { prisma: services.db.prisma, externalHost: services.ctx.externalHost, rateLimits: services.rateLimits };
    // Resumable uploads (tus, /api/v1/tus) wherever the API tier is: they answer their own OPTIONS and read their own bodies.
    const early = role === "events" ? undefined : tusRoutes(apiServices);
    expressApp = createHttpApp({ api, root, early, sessions, trustedProxies: config.trustedProxies, readiness, endpoints: servedEndpoints(role) });
    const app = withHotRoutes(expressApp, hotRoutes);
    const tracking = { measure: observing };
    server = createJsonHttpServer((req, res) => {
      // Shutting down: no connection is kept for another request.
      if (draining) res.setHeader("Connection", "close");
      trackRequest(req, res, tracking);
      app(req, res);
    });
    // Long polls hold a request for up to the heartbeat wait; keep sockets open past it.
    server.keepAliveTimeout = 65_000;
    server.requestTimeout = (config.eventHeartbeatSeconds + 60) * 1000;
    await new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      // Clients come back thousands at once (another events node restarted, a network blip): with
      // Node's backlog of 511, connections past it lost their SYN and waited out the kernel's
      // retries (1, 3, 7, 15 s...), long after the node was ready for them. The kernel caps it at
      // net.core.somaxconn.
      server!.listen({ port: config.port, host: config.bindAddress, backlog: LISTEN_BACKLOG }, () => resolve());
    });
  }
  const address = server?.address();
  const port = address && typeof address === "object" ? address.port : null;
  // `npm run cli` finds it through the lock, and has this process carry out its commands.
  let channel: OperatorChannel | null = null;
  if (lock) {
    channel = await openOperatorChannel(operatorSocketPath(config.dataDir), (argv, io) => runCli(argv, services, io));
    lock.setSocket(channel.socket);
  }
  // Metrics and health on a port of its own, never public: the worker's only HTTP.
  const opsServer = config.metricsPort === null ? null : await startOpsServer(config.metricsPort, config.metricsBindAddress, readiness);
  const metricsPort = opsServer ? (opsServer.address() as AddressInfo).port : null;
  if (isClusterWorker()) {
    // The primary announces readiness once every process listens.
    logger.info("server process ready", { pid: process.pid, port, metricsPort });
    process.send?.({ type: "ready", port } satisfies ReadyMessage);
  } else {
    const host = config.bindAddress === "0.0.0.0" || config.bindAddress === "::" ? "localhost" : config.bindAddress.includes(":") ? `[${config.bindAddress}]` : config.bindAddress;
    logger.info(`team chat ${role} tier${role === "all" ? "s" : ""} ready`, {
      url: port === null ? null : `http://${host}:${port}`,
      port,
      metricsPort,
      version: serverVersion(),
      database: services.db.kind,
      // Where this process keeps what it keeps: the embedded database and local uploads.
      dataDir: services.db.kind === "pglite" || config.storage.backend === "local" ? config.dataDir : null,
      bus: config.redisClusterNodes ? "redis cluster" : config.redisUrl ? "redis" : "in-process",
    });
    // For a person trying it in a terminal: where the web client is (the organization's host).
    if ((role === "all" || role === "api") && process.stdout.isTTY) process.stdout.write(`\n  Web client: http://${config.externalHost}/\n\n`);
  }

  return {
    services,
    server,
    hotRoutes,
    events,
    app: expressApp,
    port,
    async stop() {
      // Readiness fails first, and every answer from now closes its connection. Held polls answer
      // at once, so their clients poll another node; the fan-out hands over.
      draining = true;
      // No new operator commands; one in progress finishes before the database closes.
      const channelClosed = channel?.close();
      const drained = events?.drain();
      // Load balancers notice the readiness before new connections are refused.
      if (config.shutdownDelaySeconds > 0) await sleep(config.shutdownDelaySeconds * 1000);
      const closed = server ? closeGracefully(server) : Promise.resolve();
      await drained;
      await worker?.stop();
      // Redis and Postgres close only after the last request is answered: a request still
      // running would otherwise write to a closed connection.
      await closed;
      await new Promise((resolve) => (opsServer ? opsServer.close(resolve) : resolve(undefined)));
      await events?.stop();
      await channelClosed;
      await services.close();
      lock?.release();
    },
  };
}

/** /metrics (Prometheus text), /health/live and /health/ready on their own port (METRICS_PORT). */
async function startOpsServer(port: number, bindAddress: string, readiness: ReadinessCheck): Promise<http.Server> {
  collectProcessMetrics();
  const app = express();
  app.disable("x-powered-by");
  app.use(healthRoutes(readiness));
  app.get("/metrics", async (_req, res) => {
    const { contentType, text } = await metricsText();
    res.type(contentType).send(text);
  });
  app.use((_req, res) => {
    res.status(404).json({ result: "error", msg: "Endpoint not found", code: "BAD_REQUEST" });
  });
  const server = http.createServer(app);
  // Probes answer and close; nothing is held open past a shutdown.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, bindAddress, () => resolve());
  });
  return server;
}

/** Requests a draining server may take to finish before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Stops accepting, lets requests in progress finish (each answer closes its connection), closes
 * connections as they fall idle, and cuts whatever is left after DRAIN_TIMEOUT_MS.
 */
function closeGracefully(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function main(): Promise<void> {
  // Before Prisma's and PGlite's WebAssembly is compiled: 40 MB and more per process (wasm-compilation.ts).
  compileWasmWithBaselineOnly();
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (config.processes > 1 && !isClusterWorker()) {
    runPrimary(config);
    return;
  }
  // Handlers before startup: a SIGTERM right after the ready line (or during startup) must shut
  // down gracefully, not kill the process by the signal's default action.
  const starting = startServer(config);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: shutting down`);
    starting.then((running) => running.stop()).then(
      () => process.exit(0),
      (error) => {
        logger.error("shutdown failed", { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  // A server process whose primary died (SIGKILL) must not live on, orphaned, holding the port.
  if (isClusterWorker()) process.on("disconnect", () => shutdown("primary process gone"));
  await starting;
}

if (require.main === module) {
  main().catch((error) => {
    if (error instanceof DataDirBusyError || error instanceof DataDirError) {
      // The operator's next step, said plainly rather than as a log record.
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    logger.error("startup failed", { error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
}
