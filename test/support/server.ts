// A whole server (every tier, role "all") in the test process, over real HTTP on loopback, in
// one of the two modes the product runs in: Postgres + Redis, or embedded PGlite + in-process bus.
import { loadConfig } from "@chat/config";
import { startServer, type RunningServer } from "../../apps/server/src/main.ts";
import { createRedisPrefix, createTestDatabase, REDIS_URL, type TestDatabase, type TestRedisPrefix } from "./services.ts";
import { ApiClient } from "./client.ts";

export type Mode = "postgres" | "embedded";
/** Both modes; TEST_MODES=postgres (or embedded) narrows a local run to one, CI runs both. */
export const MODES: Mode[] = (["postgres", "embedded"] as Mode[]).filter((mode) => !process.env.TEST_MODES || process.env.TEST_MODES.split(",").includes(mode));

export const OWNER_EMAIL = "owner@example.com";
export const OWNER_PASSWORD = "owner-password-123";

export interface TestServer {
  mode: Mode;
  baseUrl: string;
  running: RunningServer;
  /** The bootstrap realm's owner. */
  owner: ApiClient;
  /** An unauthenticated client. */
  anonymous: ApiClient;
  client(email: string, apiKey: string, host?: string): ApiClient;
  /** An unauthenticated client that sends this Host header. */
  anonymousAt(host: string): ApiClient;
  stop(): Promise<void>;
}

export async function startTestServer(mode: Mode, env: Record<string, string> = {}): Promise<TestServer> {
  let database: TestDatabase | null = null;
  let redis: TestRedisPrefix | null = null;
  const base: Record<string, string> = {
    ROLE: "all",
    PORT: "0",
    BIND_ADDRESS: "127.0.0.1",
    DEV_MODE: "true",
    EXTERNAL_HOST: "chat.test",
    EVENT_HEARTBEAT_SECONDS: "2",
    BOOTSTRAP_OWNER_EMAIL: OWNER_EMAIL,
    BOOTSTRAP_OWNER_PASSWORD: OWNER_PASSWORD,
    BOOTSTRAP_OWNER_NAME: "Olivia Owner",
    DATA_DIR: "memory://",
    // Tests send as fast as they can; the rate limit tests turn it on.
    RATE_LIMITING: "false",
  };
  if (mode === "postgres") {
    database = await createTestDatabase();
    redis = createRedisPrefix();
    Object.assign(base, { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: redis.prefix });
  }
  const running = await startServer(loadConfig({ ...base, ...env }));
  const baseUrl = `http://127.0.0.1:${running.port}`;
  const owner = await running.services.db.prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
  return {
    mode,
    baseUrl,
    running,
    owner: new ApiClient(baseUrl, { email: owner.email, apiKey: owner.api_key }),
    anonymous: new ApiClient(baseUrl, null),
    client: (email, apiKey, host) => new ApiClient(baseUrl, { email, apiKey }, host),
    anonymousAt: (host) => new ApiClient(baseUrl, null, host),
    async stop() {
      await running.stop();
      await database?.drop();
      await redis?.clear();
    },
  };
}

export interface SecondNode {
  running: RunningServer;
  /** A client of this node, with these credentials. */
  client(credentials: ApiClient["credentials"]): ApiClient;
  stop(): Promise<void>;
}

/** Another node (every tier) on the same Postgres and Redis as `server`, as a second machine runs it. */
export async function startSecondNode(server: TestServer): Promise<SecondNode> {
  const running = await startServer({ ...server.running.services.config, port: 0 });
  return {
    running,
    client: (credentials) => new ApiClient(`http://127.0.0.1:${running.port}`, credentials),
    stop: () => running.stop(),
  };
}
