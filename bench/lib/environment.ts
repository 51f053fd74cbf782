// A throwaway Postgres database and Redis prefix with a running server (every tier) in its own
// process, as in production, so the load this benchmark generates does not share its event loop.
import pg from "pg";
import { startProcess, type ServerProcess } from "../../test/support/processes.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL } from "../../test/support/services.ts";

export interface BenchEnvironment {
  server: ServerProcess;
  baseUrl: string;
  databaseUrl: string;
  close(): Promise<void>;
}

/** The settings of a benchmark's server processes on this database and Redis prefix. */
export function benchServerEnv(databaseUrl: string, redisPrefix: string): Record<string, string> {
  return {
    PORT: "0",
    BIND_ADDRESS: "127.0.0.1",
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    BOOTSTRAP_OWNER_PASSWORD: "bench-password",
    LOG_LEVEL: "info",
    // A benchmark is one client sending as fast as it can: limits off, unless BENCH_RATE_LIMITING=true
    // measures what counting costs (with a limit no run reaches).
    RATE_LIMITING: process.env.BENCH_RATE_LIMITING === "true" ? "true" : "false",
    RATE_LIMIT_USER_REQUESTS_PER_MINUTE: "1000000",
  };
}

export async function startBenchEnvironment(extraEnv: Record<string, string> = {}): Promise<BenchEnvironment> {
  const database = await createTestDatabase();
  const redis = createRedisPrefix();
  const server = await startProcess({
    ROLE: "all",
    ...benchServerEnv(database.url, redis.prefix),
    ...extraEnv,
  }, {
    // For profiling the server under load, e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
    nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(/\s+/).filter(Boolean),
  });
  return {
    server,
    baseUrl: `http://127.0.0.1:${server.port}`,
    databaseUrl: database.url,
    async close() {
      await server.stop();
      await database.drop();
      await redis.clear();
    },
  };
}

/**
 * A database in steady state after a benchmark's writes: vacuumed (visibility map and hint bits
 * set), so autovacuum does not run in the middle of a measurement and compete with it for the two
 * cores, and checkpointed, so the written pages are not flushed during the first measurement.
 */
export async function settlePostgres(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("VACUUM ANALYZE");
    await client.query("CHECKPOINT");
  } finally {
    await client.end();
  }
}

export function basicAuth(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`;
}
