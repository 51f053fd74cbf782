// Tiers as separate OS processes on a database and Redis prefix of the test's own, for tests that
// start, stop and kill them: the setup they share, and the owner's client on the API process.
import { ApiClient } from "./client.ts";
import { startProcess, type ServerProcess } from "./processes.ts";
import { startRedisCluster, type TestRedisCluster } from "./redis-cluster.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "./services.ts";

export const TIER_OWNER_EMAIL = "owner@example.com";

export interface TierProcesses {
  /** Starts a process of `role` with the shared settings and `extra`; it is killed after the tests. */
  start(role: "all" | "api" | "events" | "worker", extra?: Record<string, string>): Promise<ServerProcess>;
  /** The owner, through the given API process. */
  owner(api: ServerProcess): Promise<ApiClient>;
  /** The test's own database. */
  databaseUrl(): string;
}

export interface TierProcessesOptions {
  /** The processes share a Redis Cluster of the block's own (three masters, REDIS_CLUSTER_NODES) rather than the shared Redis. */
  redisCluster?: boolean;
}

/** Registers the hooks of a describe block whose tests run tier processes with `settings`. */
export function useTierProcesses(settings: Record<string, string> = {}, options: TierProcessesOptions = {}): TierProcesses {
  let database: TestDatabase;
  let redis: TestRedisPrefix;
  let cluster: TestRedisCluster | null = null;
  const processes: ServerProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createRedisPrefix();
    if (options.redisCluster) cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await database.drop();
    if (cluster) await cluster.stop();
    else await redis.clear();
  });
  return {
    async start(role, extra = {}) {
      const started = await startProcess({
        BOOTSTRAP_OWNER_EMAIL: TIER_OWNER_EMAIL,
        BOOTSTRAP_OWNER_PASSWORD: "owner-password",
        DEV_MODE: "true",
        BIND_ADDRESS: "127.0.0.1",
        DATABASE_URL: database.url,
        ...(cluster ? { REDIS_CLUSTER_NODES: cluster.nodes.join(",") } : { REDIS_URL }),
        REDIS_PREFIX: redis.prefix,
        PORT: "0",
        ...settings,
        ...extra,
        ROLE: role,
      });
      processes.push(started);
      return started;
    },
    databaseUrl: () => database.url,
    async owner(api) {
      const apiUrl = `http://127.0.0.1:${api.port}`;
      const key = await new ApiClient(apiUrl, null).post("/dev_fetch_api_key", { username: TIER_OWNER_EMAIL });
      return new ApiClient(apiUrl, { email: TIER_OWNER_EMAIL, apiKey: key.body.api_key });
    },
  };
}
