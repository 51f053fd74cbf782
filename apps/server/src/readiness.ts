// Whether this process should take traffic (GET /health/ready, on its HTTP port and on
// METRICS_PORT): its database answers with every migration this code has applied, its Redis
// answers (when it has one), and it is not shutting down. Liveness is only that it answers.
import { sharedRedis } from "@chat/config";
import { leanSql, pendingMigrations } from "@chat/db";
import type { Services } from "./services.ts";

/** A check that has not answered by then has failed: a probe must not hang on a dead service. */
const CHECK_TIMEOUT_MS = 1500;

export interface Readiness {
  ready: boolean;
  /** Each check's outcome: "ok", or what is wrong. */
  checks: Record<string, string>;
}

export type ReadinessCheck = () => Promise<Readiness>;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function outcome(check: () => Promise<string>): Promise<string> {
  try {
    return await check();
  } catch {
    return "unreachable";
  }
}

export function readinessCheck(services: Pick<Services, "db" | "bus" | "config">, isDraining: () => boolean): ReadinessCheck {
  return async () => {
    const [database, redis] = await Promise.all([
      outcome(async () => {
        const pending = await withTimeout(pendingMigrations(leanSql(services.db.prisma)), "the database");
        return pending.length === 0 ? "ok" : `${pending.length} migrations not applied`;
      }),
      sharedRedis(services.config) ? outcome(async () => (await withTimeout(services.bus.ping(), "Redis"), "ok")) : Promise.resolve(null),
    ]);
    const checks: Record<string, string> = { database, ...(redis === null ? {} : { redis }), shutdown: isDraining() ? "draining" : "ok" };
    return { ready: Object.values(checks).every((value) => value === "ok"), checks };
  };
}
