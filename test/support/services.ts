// Each test file gets its own Postgres database and Redis key prefix, so runs never see each
// other's data (ARCHITECTURE.md). Both are removed when the file's tests end.
import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { Client } from "pg";

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
}

/** Runs `fn` on a connection to the maintenance database, as the test suite's Postgres superuser. */
export async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = uniqueName("chat_test");
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

export interface TestRedisPrefix {
  prefix: string;
  clear(): Promise<void>;
}

export function createRedisPrefix(): TestRedisPrefix {
  const prefix = `${uniqueName("test")}:`;
  return {
    prefix,
    async clear() {
      const redis = new Redis(REDIS_URL, { lazyConnect: true });
      await redis.connect();
      try {
        // An organization's keys share a hash tag, so they begin with "{" and then the prefix.
        for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
          let cursor = "0";
          do {
            const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
            cursor = next;
            if (keys.length > 0) await redis.del(...keys);
          } while (cursor !== "0");
        }
      } finally {
        redis.disconnect();
      }
    },
  };
}
