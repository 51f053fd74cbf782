// Which consumer of a group reads which shard of the change stream. Consumers of one group on a
// shared stream would each take the next entries, and two event nodes would append one realm's
// batches to a queue in whatever order their handlers finished. A shard is read by one consumer
// at a time instead, under a lease it renews; the live consumers share the shards evenly, and a
// consumer that takes a shard over first handles what its previous owner left pending, so a
// realm's batches reach its queues in publish order across a crash too.
import type { Result } from "ioredis";
import type { BusLog } from "../log";
import type { RedisClient } from "./connection";

/** A consumer that stops renewing (killed) loses its shards this long after its last renewal. */
export const SHARD_LEASE_MS = 5000;
/** How often leases are renewed and the shards shared out again. */
export const SHARD_LEASE_RENEW_MS = 1000;

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    busLeaseRenew(leaseKey: string, owner: string, leaseMs: number): Result<number, Context>;
    busLeaseRelease(leaseKey: string, owner: string): Result<number, Context>;
  }
}

export interface ShardLeasesOptions {
  /** Not the consumer's own connection, which spends its time blocked in XREADGROUP. */
  redis: RedisClient;
  streamKeys: string[];
  /** The group's set of live consumers (by last renewal). */
  membersKey: string;
  group: string;
  consumer: string;
  leaseMs?: number;
  /**
   * Whether the consumer is stuck (a handler running past claimIdleMs): its shards are then given
   * up, so that another consumer takes them over, as it would a dead consumer's.
   */
  stuck: () => boolean;
  log: BusLog;
}

export class ShardLeases {
  private readonly held = new Set<string>();
  private readonly leaseMs: number;
  private readonly timer: NodeJS.Timeout;
  private renewing: Promise<void> | null = null;
  /** When the held leases were last renewed (or taken). */
  private renewedAt = Date.now();

  constructor(private readonly o: ShardLeasesOptions) {
    this.leaseMs = o.leaseMs ?? SHARD_LEASE_MS;
    defineLeaseScripts(o.redis);
    // Renewed on a timer, not between reads: handling a long read must not cost the leases.
    this.timer = setInterval(() => void this.renew(), Math.min(SHARD_LEASE_RENEW_MS, this.leaseMs / 3));
    this.timer.unref();
  }

  /**
   * The shards this consumer may read now: none once its leases may have lapsed unrenewed (Redis
   * unreachable for a lease's length), since another consumer may have taken them meanwhile.
   */
  owned(): string[] {
    if (this.held.size > 0 && Date.now() - this.renewedAt >= this.leaseMs) this.held.clear();
    return this.o.streamKeys.filter((key) => this.held.has(key));
  }

  /**
   * Takes free shards up to this consumer's share and gives back those beyond it; returns the
   * shards taken, whose pending entries the caller handles before it reads them. Called between
   * reads, when nothing of a shard given back is in hand.
   */
  async rebalance(): Promise<string[]> {
    const now = Date.now();
    const { membersKey, consumer, redis } = this.o;
    const [, , [, live]] = (await redis
      .multi()
      .zadd(membersKey, now, consumer)
      .zremrangebyscore(membersKey, "-inf", now - this.leaseMs)
      .zcard(membersKey)
      .exec()) as [unknown, unknown, [Error | null, number]];
    const share = Math.ceil(this.o.streamKeys.length / Math.max(1, live));
    for (const key of this.owned().slice(share)) {
      await redis.busLeaseRelease(this.leaseKey(key), consumer);
      this.held.delete(key);
    }
    // Leases held on from before a lapse are taken again like any other.
    this.owned();
    const startedAt = Date.now();
    const taken: string[] = [];
    for (const key of this.o.streamKeys) {
      if (this.held.size >= share) break;
      if (this.held.has(key)) continue;
      if ((await redis.set(this.leaseKey(key), consumer, "PX", this.leaseMs, "NX")) === "OK") {
        if (this.held.size === 0) this.renewedAt = startedAt;
        this.held.add(key);
        taken.push(key);
      }
    }
    return taken;
  }

  /** Gives every shard back and leaves the group's live set: another consumer takes over at once. */
  async releaseAll(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing;
    const { redis, consumer, membersKey } = this.o;
    await Promise.all(this.owned().map((key) => redis.busLeaseRelease(this.leaseKey(key), consumer)));
    this.held.clear();
    await redis.zrem(membersKey, consumer);
  }

  private renew(): Promise<void> {
    this.renewing ??= (async () => {
      try {
        await this.o.redis.zadd(this.o.membersKey, Date.now(), this.o.consumer);
        if (this.held.size > 0 && this.o.stuck()) {
          this.o.log(`change stream consumer ${this.o.consumer} is stuck in a handler; giving up its shards`);
          const keys = this.owned();
          this.held.clear();
          await Promise.all(keys.map((key) => this.o.redis.busLeaseRelease(this.leaseKey(key), this.o.consumer)));
          return;
        }
        const startedAt = Date.now();
        for (const key of this.owned()) {
          // Expired meanwhile (this process stalled past the lease): another consumer may own it.
          if ((await this.o.redis.busLeaseRenew(this.leaseKey(key), this.o.consumer, this.leaseMs)) === 0) {
            this.held.delete(key);
            this.o.log(`change stream consumer ${this.o.consumer} lost its lease on ${key}`);
          }
        }
        this.renewedAt = startedAt;
      } catch {
        // Redis unreachable: the consumer's reads fail and say so; a lease not renewed lapses.
      } finally {
        this.renewing = null;
      }
    })();
    return this.renewing;
  }

  private leaseKey(streamKey: string): string {
    return `${streamKey}:lease:${this.o.group}`;
  }
}

const defined = new WeakSet<RedisClient>();

function defineLeaseScripts(redis: RedisClient): void {
  if (defined.has(redis)) return;
  defined.add(redis);
  redis.defineCommand("busLeaseRenew", { numberOfKeys: 1, lua: RENEW });
  redis.defineCommand("busLeaseRelease", { numberOfKeys: 1, lua: RELEASE });
}
