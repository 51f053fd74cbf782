import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_CLAIM_IDLE_MS, DEDUPE_WINDOW_MS, DEFAULT_SHARDS } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import {
  CHANGE_GROUPS,
  isAfterPosition,
  STREAM_START,
  type ChangeBatch,
  type ChangeGroup,
  type ChangeBatchesHandler,
  type ChangeHandler,
  type ChangeReadHandler,
  type ChangeStream,
  type ConsumeOptions,
  type DroppedChanges,
  type Stoppable,
  type StreamPosition,
} from "../types";
import { changeBatchJson } from "../batch-json";
import { connectRedis, REDIS_COMMAND_TIMEOUT_MS, type RedisClient, type RedisTarget } from "./connection";
import { BusKeys } from "./keys";
import { throwFirstError } from "./results";
import { SHARD_LEASE_RENEW_MS, ShardLeases } from "./shard-leases";

export type RedisChangeStreamOptions = RedisTarget & {
  prefix: string;
  shards?: number;
  claimIdleMs?: number;
  /** Entries a shard keeps that some group has not acknowledged; past it the oldest are dropped (onDropped). */
  maxEntries?: number;
  /** How long a handled batch id is remembered, to drop republished copies. */
  dedupeWindowMs?: number;
  log?: BusLog;
};

const READ_COUNT = 100;
const MAX_BLOCK_MS = 5000;
const ERROR_PAUSE_MS = 1000;
/** A publishing node trims its shards at most this often. */
const TRIM_EVERY_MS = 1000;
/** Entries read per XRANGE while dropping past the cap. */
const DROP_PAGE = 500;
/** Longer than dropping a shard's excess takes; a node that died holding it frees it by then. */
const DROP_LOCK_MS = 60_000;
export const DEFAULT_MAX_ENTRIES = 200_000;

/** Fields are nil for an entry trimmed while it was pending. */
type StreamEntry = [id: string, fields: string[] | null];
type ReadReply = [key: string, entries: StreamEntry[]][] | null;
/** Redis 6.2 has no third element and reports trimmed entries as nil. */
type AutoClaimReply = [cursor: string, entries: (StreamEntry | null)[], deleted?: string[]];

/** Change batches on Redis Streams, one stream per shard of realms. */
export class RedisChangeStream implements ChangeStream {
  private readonly target: RedisTarget;
  private readonly redis: RedisClient;
  private readonly streamKeys: string[];
  private readonly claimIdleMs: number;
  private readonly maxEntries: number;
  private readonly dedupeWindowMs: number;
  private readonly droppedListeners: ((dropped: DroppedChanges) => Promise<void> | void)[] = [];
  private trimming: Promise<void> | null = null;
  private trimQueue: Promise<void> = Promise.resolve();
  private nextTrimAt = 0;
  private readonly keys: BusKeys;
  private readonly log: BusLog;
  private readonly consumers = new Set<StreamConsumer>();
  private groupsReady: Promise<void> | null = null;

  constructor(options: RedisChangeStreamOptions) {
    const keys = new BusKeys(options.prefix);
    const shards = options.shards ?? DEFAULT_SHARDS;
    if (!Number.isInteger(shards) || shards < 1) throw new Error(`shards must be a positive integer, got ${shards}`);
    this.streamKeys = Array.from({ length: shards }, (_, shard) => keys.changeStream(shard));
    this.claimIdleMs = options.claimIdleMs ?? DEFAULT_CLAIM_IDLE_MS;
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.dedupeWindowMs = options.dedupeWindowMs ?? DEDUPE_WINDOW_MS;
    this.keys = keys;
    this.log = options.log ?? stderrLog;
    this.target = options.clusterNodes === undefined ? { url: options.url } : { clusterNodes: options.clusterNodes };
    this.redis = connectRedis(this.target, "change stream", this.log);
  }

  async publish(batches: ChangeBatch[]): Promise<void> {
    if (batches.length === 0) return;
    // The group must exist before the first entry, or a consumer joining later would miss it.
    await this.ensureGroups();
    const pipeline = this.redis.pipeline();
    // No MAXLEN: an entry some group has not acknowledged is never trimmed (trim() below).
    for (const batch of batches) pipeline.xadd(this.streamKey(batch.realmId), "*", "b", changeBatchJson(batch));
    throwFirstError(await pipeline.exec());
    if (Date.now() >= this.nextTrimAt && this.trimming === null) {
      this.nextTrimAt = Date.now() + TRIM_EVERY_MS;
      this.trimming = this.trim()
        .catch((error: unknown) => this.log("change stream trim failed", error))
        .finally(() => (this.trimming = null));
    }
  }

  trim(): Promise<void> {
    // One at a time on this node: two would each drop the same excess.
    const run = this.trimQueue.then(async () => {
      for (const key of this.streamKeys) await this.trimShard(key);
    });
    this.trimQueue = run.catch(() => undefined);
    return run;
  }

  onDropped(listener: (dropped: DroppedChanges) => Promise<void> | void): void {
    this.droppedListeners.push(listener);
  }

  /**
   * Trims the entries every group has acknowledged: below each group's first pending entry, and
   * up to its last delivered one (kept, so that position() still finds the realm's last entry).
   * Past maxEntries it drops the oldest even so, telling onDropped listeners what each group lost.
   */
  private async trimShard(key: string): Promise<void> {
    const cursors = await this.groupCursors(key);
    if (cursors.length === 0) return;
    let keepFrom: StreamPosition | null = null;
    for (const cursor of cursors) if (keepFrom === null || isAfterPosition(keepFrom, cursor.needsFrom)) keepFrom = cursor.needsFrom;
    if (keepFrom !== null && keepFrom !== STREAM_START) await this.redis.xtrim(key, "MINID", keepFrom);
    const excess = (await this.redis.xlen(key)) - this.maxEntries;
    if (excess <= 0) return;
    // One node at a time, across nodes too: two would each drop the same excess.
    const lock = `${key}:dropping`;
    if ((await this.redis.set(lock, "1", "PX", DROP_LOCK_MS, "NX")) === null) return;
    try {
      await this.dropOldest(key, excess, cursors);
    } finally {
      await this.redis.del(lock);
    }
  }

  /** Each group's oldest entry not yet acknowledged (or its last delivered one when all are). */
  private async groupCursors(key: string): Promise<GroupCursor[]> {
    let groups: unknown[][];
    try {
      groups = (await this.redis.xinfo("GROUPS", key)) as unknown[][];
    } catch (error) {
      // Nothing published to this shard yet.
      if (error instanceof Error && error.message.includes("no such key")) return [];
      throw error;
    }
    return Promise.all(
      groups.map(async (fields) => {
        const info = fieldsOf(fields);
        const group = String(info.name);
        const lastDelivered = String(info["last-delivered-id"]);
        if (Number(info.pending) === 0) return { group, needsFrom: lastDelivered, lastDelivered, pending: false };
        const [, firstPending] = (await this.redis.xpending(key, group)) as [number, string | null];
        return { group, needsFrom: firstPending ?? lastDelivered, lastDelivered, pending: firstPending !== null };
      }),
    );
  }

  /** Drops the `count` oldest entries; what a group had not read it never will, and listeners hear of it. */
  private async dropOldest(key: string, count: number, cursors: GroupCursor[]): Promise<void> {
    const lost = new Map(cursors.map((cursor) => [cursor.group, { count: 0, realms: new Map<number, StreamPosition>() }]));
    let after = "-";
    let last: StreamPosition | null = null;
    for (let remaining = count; remaining > 0; ) {
      const entries = (await this.redis.xrange(key, after, "+", "COUNT", Math.min(DROP_PAGE, remaining))) as StreamEntry[];
      if (entries.length === 0) break;
      for (const [id, fields] of entries) {
        const realmId = realmOf(fields);
        for (const cursor of cursors) {
          // Unread by the group, or read and perhaps not acknowledged (at or after its first pending).
          const unread = isAfterPosition(id, cursor.lastDelivered);
          const maybePending = cursor.pending && !isAfterPosition(cursor.needsFrom, id);
          if (!unread && !maybePending) continue;
          const groupLost = lost.get(cursor.group)!;
          groupLost.count++;
          if (realmId !== null) groupLost.realms.set(realmId, id);
        }
      }
      last = entries[entries.length - 1][0];
      after = `(${last}`;
      remaining -= entries.length;
    }
    if (last === null) return;
    await this.redis.xtrim(key, "MINID", "=", nextPosition(last));
    for (const [group, { count: lostCount, realms }] of lost) {
      if (lostCount === 0) continue;
      this.log(`change stream ${key}: dropped ${lostCount} batches group ${group} had not handled (past ${this.maxEntries} kept)`);
      const dropped: DroppedChanges = { group: group as ChangeGroup, count: lostCount, realms };
      for (const listener of this.droppedListeners) await listener(dropped);
    }
  }

  async position(realmId: number): Promise<StreamPosition> {
    // The last entry: trimming removes the oldest only, and keeps the last delivered one.
    const [last] = (await this.redis.xrevrange(this.streamKey(realmId), "+", "-", "COUNT", 1)) as StreamEntry[];
    return last?.[0] ?? STREAM_START;
  }

  consume(consumerName: string, handler: ChangeHandler, options: ConsumeOptions = {}): Stoppable {
    return this.startConsumer(consumerName, { batch: handler }, options);
  }

  consumeReads(consumerName: string, handler: ChangeReadHandler, options: ConsumeOptions = {}): Stoppable {
    return this.startConsumer(consumerName, { read: handler }, options);
  }

  consumeInOrder(consumerName: string, handler: ChangeBatchesHandler, options: ConsumeOptions = {}): Stoppable {
    return this.startConsumer(consumerName, { ordered: handler }, options);
  }

  private startConsumer(consumerName: string, handler: ConsumerHandler, options: ConsumeOptions): Stoppable {
    const group = options.group ?? "events";
    // Batch by batch in order: one consumer of the group reads a shard at a time (shard-leases.ts).
    const leases =
      !("read" in handler)
        ? new ShardLeases({
            redis: this.redis,
            streamKeys: this.streamKeys,
            membersKey: this.keys.changeConsumers(group),
            group,
            consumer: consumerName,
            stuck: () => consumer.handlingFor() > this.claimIdleMs,
            log: this.log,
          })
        : null;
    const consumer: StreamConsumer = new StreamConsumer({
      leases,
      group,
      containing: options.containing ?? null,
      // Its reads block for up to MAX_BLOCK_MS on purpose: time out only well after that.
      connection: connectRedis(this.target, `change stream consumer ${consumerName}`, this.log, { commandTimeout: MAX_BLOCK_MS + REDIS_COMMAND_TIMEOUT_MS }),
      streamKeys: this.streamKeys,
      name: consumerName,
      handler,
      claimIdleMs: this.claimIdleMs,
      handledKey: (batchId) => this.keys.handledBatch(group, batchId),
      dedupeWindowMs: this.dedupeWindowMs,
      log: this.log,
      ensureGroups: (recreate) => {
        if (recreate) this.groupsReady = null;
        return this.ensureGroups();
      },
    });
    this.consumers.add(consumer);
    return {
      stop: async () => {
        await consumer.stop();
        this.consumers.delete(consumer);
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    this.consumers.clear();
    await this.redis.quit().catch(() => undefined);
  }

  private streamKey(realmId: number): string {
    const shards = this.streamKeys.length;
    return this.streamKeys[((realmId % shards) + shards) % shards];
  }

  private ensureGroups(): Promise<void> {
    this.groupsReady ??= createGroups(this.redis, this.streamKeys).catch((error: unknown) => {
      this.groupsReady = null;
      throw error;
    });
    return this.groupsReady;
  }
}

async function createGroups(redis: RedisClient, streamKeys: string[]): Promise<void> {
  const pipeline = redis.pipeline();
  // From 0, not $: entries added before the group existed are still delivered. Every group is
  // made with the stream, by its first publisher, so none starts after entries it should read.
  for (const key of streamKeys) for (const group of CHANGE_GROUPS) pipeline.xgroup("CREATE", key, group, "0", "MKSTREAM");
  const results = (await pipeline.exec()) ?? [];
  for (const [error] of results) {
    if (error && !error.message.startsWith("BUSYGROUP")) throw error;
  }
}

/** One batch at a time, in order, with handled marks; or each read at once (consumeReads). */
type ConsumerHandler = { batch: ChangeHandler } | { read: ChangeReadHandler } | { ordered: ChangeBatchesHandler };

interface ConsumerOptions {
  /** The shards this consumer may read; null: all of them (consumeReads, which needs no order). */
  leases: ShardLeases | null;
  group: ChangeGroup;
  containing: string | null;
  /** Dedicated: it spends most of its time blocked in XREADGROUP. */
  connection: RedisClient;
  streamKeys: string[];
  name: string;
  handler: ConsumerHandler;
  claimIdleMs: number;
  handledKey: (batchId: string) => string;
  dedupeWindowMs: number;
  log: BusLog;
  ensureGroups: (recreate: boolean) => Promise<void>;
}

class StreamConsumer {
  private stopping = false;
  private blocked = false;
  private disconnected = false;
  private readonly wake = new AbortController();
  private readonly done: Promise<void>;
  private handlingSince: number | null = null;

  constructor(private readonly o: ConsumerOptions) {
    this.done = this.run();
  }

  /** How long the running handler has run; 0 if none runs. */
  handlingFor(): number {
    return this.handlingSince === null ? 0 : Date.now() - this.handlingSince;
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.wake.abort();
      // Rejects the pending XREADGROUP at once instead of waiting out BLOCK. A running handler
      // is left to finish, and its batch acknowledged, before the loop ends.
      if (this.blocked) this.disconnect();
    }
    await this.done;
  }

  private async run(): Promise<void> {
    const claimEveryMs = Math.max(1, Math.floor(this.o.claimIdleMs / 2));
    let nextClaimAt = 0;
    let recreateGroups = false;
    // Set after a failure: a read that timed out on our side may still have been served by Redis
    // (paused, then resumed), its entries now pending for us with the reply thrown away.
    let ownPendingUnread = false;
    let failing = false;
    let nextRebalanceAt = 0;
    while (!this.stopping) {
      try {
        await this.o.ensureGroups(recreateGroups);
        recreateGroups = false;
        if (this.o.leases && Date.now() >= nextRebalanceAt) {
          const taken = await this.o.leases.rebalance();
          nextRebalanceAt = Date.now() + SHARD_LEASE_RENEW_MS;
          for (const key of taken) await this.recover(key);
          continue;
        }
        if (ownPendingUnread) {
          await this.deliverOwnPending();
          ownPendingUnread = false;
          continue;
        }
        if (Date.now() >= nextClaimAt) {
          await this.claimIdle();
          nextClaimAt = Date.now() + claimEveryMs;
          continue;
        }
        if (this.stopping) break;
        const keys = this.readableKeys();
        const until = this.o.leases ? Math.min(nextClaimAt, nextRebalanceAt) : nextClaimAt;
        if (keys.length === 0) {
          // Every shard is another consumer's: wait for the next share-out.
          await sleep(Math.max(1, nextRebalanceAt - Date.now()), undefined, { signal: this.wake.signal }).catch(() => undefined);
          continue;
        }
        const blockMs = Math.max(1, Math.min(MAX_BLOCK_MS, until - Date.now()));
        this.blocked = true;
        let reply: ReadReply;
        try {
          reply = (await this.o.connection.xreadgroup(
            "GROUP", this.o.group, this.o.name,
            "COUNT", READ_COUNT,
            "BLOCK", blockMs,
            "STREAMS", ...keys, ...keys.map(() => ">"),
          )) as ReadReply;
        } finally {
          this.blocked = false;
        }
        for (const [key, entries] of reply ?? []) await this.deliverAll(key, entries);
        if (failing) {
          failing = false;
          this.o.log(`change stream consumer ${this.o.name}: reading again`);
        }
      } catch (error) {
        if (this.stopping) break;
        // The stream (and its group) was deleted under us, e.g. by FLUSHDB.
        if (error instanceof Error && error.message.startsWith("NOGROUP")) recreateGroups = true;
        ownPendingUnread = true;
        // Once per outage, not once a second for as long as it lasts.
        if (!failing) this.o.log(`change stream consumer ${this.o.name}: read failed, retrying every ${ERROR_PAUSE_MS} ms`, error);
        failing = true;
        await sleep(ERROR_PAUSE_MS, undefined, { signal: this.wake.signal }).catch(() => undefined);
      }
    }
    // Handed over at once: the next owner handles whatever is still pending first.
    await this.o.leases?.releaseAll().catch((error: unknown) => this.o.log(`change stream consumer ${this.o.name}: releasing its shards failed`, error));
    this.disconnect();
  }

  /** The shards this consumer reads: those it holds the lease of, or all (consumeReads). */
  private readableKeys(): string[] {
    return this.o.leases ? this.o.leases.owned() : this.o.streamKeys;
  }

  /**
   * A shard just taken over: whatever its group has pending there (a dead owner's, or one that
   * failed) is handled first, in stream order, before anything newer is read.
   */
  private async recover(key: string): Promise<void> {
    let cursor = "0-0";
    do {
      const [next, entries] = (await this.o.connection.xautoclaim(key, this.o.group, this.o.name, 0, cursor, "COUNT", READ_COUNT)) as AutoClaimReply;
      await this.deliverAll(key, entries.filter((entry): entry is StreamEntry => entry !== null));
      cursor = next;
    } while (cursor !== "0-0" && !this.stopping);
  }

  /** Once only: a second disconnect() leaves ioredis a 2s timer for a socket already closed. */
  private disconnect(): void {
    if (this.disconnected) return;
    this.disconnected = true;
    this.o.connection.disconnect();
  }

  /**
   * Delivers the entries pending for this consumer itself, oldest first. Read on this connection,
   * after every command sent on it before, so it sees whatever those commands took even if their
   * replies were dropped; without it those entries would wait claimIdleMs for XAUTOCLAIM.
   */
  private async deliverOwnPending(): Promise<void> {
    for (const key of this.readableKeys()) {
      let after = "0-0";
      while (!this.stopping) {
        const reply = (await this.o.connection.xreadgroup("GROUP", this.o.group, this.o.name, "COUNT", READ_COUNT, "STREAMS", key, after)) as ReadReply;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length === 0) break;
        await this.deliverAll(key, entries);
        after = entries[entries.length - 1][0];
      }
    }
  }

  /** Takes over entries pending longer than claimIdleMs: a failed handler's, or a dead consumer's. */
  private async claimIdle(): Promise<void> {
    for (const key of this.readableKeys()) {
      let cursor = "0-0";
      do {
        const [next, entries] = (await this.o.connection.xautoclaim(
          key, this.o.group, this.o.name, this.o.claimIdleMs, cursor, "COUNT", READ_COUNT,
        )) as AutoClaimReply;
        await this.deliverAll(key, entries.filter((entry): entry is StreamEntry => entry !== null));
        cursor = next;
      } while (cursor !== "0-0" && !this.stopping);
    }
  }

  private async deliverAll(key: string, entries: StreamEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const handler = this.o.handler;
    if ("read" in handler) {
      const batches: ChangeBatch[] = [];
      for (const [id, fields] of entries) {
        const batch = this.readable(key, id, fields);
        if (batch !== null) batches.push(batch);
      }
      if (batches.length > 0) {
        try {
          await handler.read(batches);
        } catch (error) {
          // The whole read stays pending and is claimed again later.
          this.o.log(`a read of ${batches.length} change batches (${key} ${entries[0][0]}..) failed in ${this.o.name}, redelivered after ${this.o.claimIdleMs}ms`, error);
          return;
        }
      }
      await this.o.connection.xack(key, this.o.group, ...entries.map(([id]) => id));
      return;
    }
    if ("ordered" in handler) await this.deliverReadInOrder(key, entries, handler.ordered);
    else await this.deliverInOrder(key, entries, handler.batch);
  }

  /** The batches of the read not handled before, and those handled (or unreadable) to acknowledge. */
  private async unhandled(key: string, entries: StreamEntry[]): Promise<{ fresh: Array<{ id: string; batch: ChangeBatch }>; skipped: string[] }> {
    const batches = entries.map(([id, fields]) => this.readable(key, id, fields));
    const lookups = this.o.connection.pipeline();
    for (const batch of batches) if (batch !== null) lookups.exists(this.o.handledKey(batch.id));
    const replies = lookups.length > 0 ? ((await lookups.exec()) ?? []) : [];
    const fresh: Array<{ id: string; batch: ChangeBatch }> = [];
    const skipped: string[] = [];
    const seen = new Set<string>();
    let reply = 0;
    for (const [i, batch] of batches.entries()) {
      const id = entries[i][0];
      if (batch === null) {
        skipped.push(id);
        continue;
      }
      const [error, exists] = replies[reply++] ?? [null, 0];
      if (error) throw error;
      // Handled before, or a republished copy earlier in this very read.
      if (exists === 1 || seen.has(batch.id)) skipped.push(id);
      else fresh.push({ id, batch });
      seen.add(batch.id);
    }
    return { fresh, skipped };
  }

  /** A read's new batches to the handler at once (consumeInOrder); acknowledged together. */
  private async deliverReadInOrder(key: string, entries: StreamEntry[], handler: ChangeBatchesHandler): Promise<void> {
    if (this.o.leases && !this.o.leases.owned().includes(key)) return;
    const { fresh, skipped } = await this.unhandled(key, entries);
    if (fresh.length > 0) {
      this.handlingSince = Date.now();
      try {
        await handler(fresh.map(({ id, batch }) => ({ batch, position: id })));
      } catch (error) {
        this.o.log(`a read of ${fresh.length} change batches (${key} ${entries[0][0]}..) failed in ${this.o.name}, redelivered after ${this.o.claimIdleMs}ms`, error);
        return;
      } finally {
        this.handlingSince = null;
      }
    }
    const acknowledge = this.o.connection.multi();
    for (const { batch } of fresh) acknowledge.set(this.o.handledKey(batch.id), "1", "PX", this.o.dedupeWindowMs);
    acknowledge.xack(key, this.o.group, ...skipped, ...fresh.map(({ id }) => id));
    throwFirstError(await acknowledge.exec());
  }

  /**
   * Hands a read's batches to the handler one at a time, in order. The read's handled marks are
   * looked up in one round trip and its acknowledgements (with the new marks) made in another,
   * after its last batch: two round trips per batch on top of the handler's made the consumer, not
   * the handlers, what bounded a node's throughput. A batch that failed stays pending.
   */
  private async deliverInOrder(key: string, entries: StreamEntry[], handler: ChangeHandler): Promise<void> {
    const { fresh, skipped } = await this.unhandled(key, entries);
    const done = [...skipped];
    const handledNow: string[] = [];
    try {
      for (const [i, { id, batch }] of fresh.entries()) {
        // The shard went to another consumer (this one was stuck): it handles what is left, in order.
        if (this.o.leases && !this.o.leases.owned().includes(key)) return;
        if (await this.handle(handler, batch, key, id)) {
          done.push(id);
          handledNow.push(batch.id);
          continue;
        }
        // Stopping, the entries read are still handled, in order: released, they would wait for
        // another node's next claim (and reach queues after the batches it read meanwhile). Only
        // once one fails are the rest released.
        if (this.stopping) {
          await this.release(key, fresh.slice(i + 1).map((rest) => rest.id));
          return;
        }
      }
    } finally {
      if (done.length > 0) {
        const acknowledge = this.o.connection.multi();
        for (const batchId of handledNow) acknowledge.set(this.o.handledKey(batchId), "1", "PX", this.o.dedupeWindowMs);
        acknowledge.xack(key, this.o.group, ...done);
        throwFirstError(await acknowledge.exec());
      }
    }
  }

  /** The entry's batch, or null for one to acknowledge unread: trimmed, without the `containing` text, or malformed. */
  private readable(key: string, id: string, fields: string[] | null): ChangeBatch | null {
    // Dropped past the cap while pending here: the listeners of onDropped have been told.
    if (fields === null) return null;
    if (this.o.containing !== null && !fields.some((field) => field.includes(this.o.containing!))) return null;
    try {
      return parseBatch(fields);
    } catch (error) {
      // Redelivering it would fail the same way forever.
      this.o.log(`change stream entry ${key} ${id} is malformed, dropping it`, error);
      return null;
    }
  }

  /** Runs the handler; false if it threw (the entry stays pending and is claimed again later). */
  private async handle(handler: ChangeHandler, batch: ChangeBatch, key: string, id: string): Promise<boolean> {
    this.handlingSince = Date.now();
    try {
      await handler(batch, id);
      return true;
    } catch (error) {
      this.o.log(`change batch ${batch.id} (${key} ${id}) failed in ${this.o.name}, redelivered after ${this.o.claimIdleMs}ms`, error);
      return false;
    } finally {
      this.handlingSince = null;
    }
  }

  /** Entries read but not handled before stop: mark them idle so another consumer claims them now. */
  private async release(key: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.o.connection
      .xclaim(key, this.o.group, this.o.name, 0, ...ids, "IDLE", this.o.claimIdleMs, "JUSTID")
      .catch((error: unknown) => this.o.log(`change stream consumer ${this.o.name}: release failed`, error));
  }
}

function parseBatch(fields: string[]): ChangeBatch {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== "b") continue;
    const batch: unknown = JSON.parse(fields[i + 1]);
    if (!isChangeBatch(batch)) throw new Error("entry is not a change batch");
    return batch;
  }
  throw new Error("entry has no field b");
}

function isChangeBatch(value: unknown): value is ChangeBatch {
  if (typeof value !== "object" || value === null) return false;
  const batch = value as Partial<ChangeBatch>;
  return typeof batch.id === "string" && typeof batch.realmId === "number" && Array.isArray(batch.events);
}

/** Where a consumer group stands in a shard. */
interface GroupCursor {
  group: string;
  /** Its first pending entry, or its last delivered one when none is pending. */
  needsFrom: StreamPosition;
  lastDelivered: StreamPosition;
  pending: boolean;
}

/** XINFO's flat [name, value, ...] reply as an object. */
function fieldsOf(flat: unknown[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = flat[i + 1];
  return fields;
}

/** The realm of an entry's batch, or null if it has none readable. */
function realmOf(fields: string[] | null): number | null {
  if (fields === null) return null;
  try {
    return parseBatch(fields).realmId;
  } catch {
    return null;
  }
}

/** The smallest stream id after `position`. */
function nextPosition(position: StreamPosition): StreamPosition {
  const dash = position.indexOf("-");
  return `${position.slice(0, dash)}-${BigInt(position.slice(dash + 1)) + 1n}`;
}
