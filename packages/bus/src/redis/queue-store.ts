import { chunked, DEDUPE_WINDOW_MS, DEFAULT_MAX_EVENTS_PER_QUEUE, DEFAULT_MAX_QUEUES_PER_USER, newQueueId } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import { isAfterPosition, STREAM_START, type StreamPosition, type EventPayload, type QueueLimits, type QueueAck, type QueueAppend, type AnnouncedEvents, type QueueReadyListener, type QueuedEvent, type QueueInfo, type QueueOptions, type QueueStore, type QueueTarget } from "../types";
import { AnnouncedTexts, MAX_ANNOUNCED_TEXT_BYTES, SplicedEvents } from "../announced-events";
import { connectRedis, type RedisClient, type RedisTarget } from "./connection";
import { BusKeys, queueOwner, queueRealmId, type QueueOwner } from "./keys";
import { throwFirstError } from "./results";
import { defineQueueScripts, packQueueInfo, QUEUE_LOG_LENGTH, unpackQueueInfo } from "./queue-scripts";
import { RealmQueues } from "./realm-queues";

export type RedisQueueStoreOptions = QueueLimits &
  RedisTarget & {
    prefix: string;
    log?: BusLog;
  };

const IDLE_SCAN_BATCH = 500;
/** A copy of a realm's queues no fan-out has used for this long is dropped (it is read afresh if needed). */
const REALM_COPY_IDLE_MS = 10 * 60_000;
/** Queues one append script call fills at most. */
const APPEND_QUEUES_PER_CALL = 100;

/**
 * Event queues in Redis. Per queue: a hash (`q:`), a sorted set of events scored by id (`qe:`) and
 * a sorted set of applied source ids scored by time (`qs:`). Per realm: a set of each user's
 * queues, one of the all_public_streams queues, a hash of every queue's settings (`qinfo`), and
 * sorted sets of its queues by last poll and by deadline. All of a realm's keys share one hash tag
 * (keys.ts), and a queue's id names its realm and user, so every script gets its keys declared.
 */
export class RedisQueueStore implements QueueStore {
  private readonly target: RedisTarget;
  private readonly redis: RedisClient;
  private readonly batched: RedisClient;
  private readonly keys: BusKeys;
  private readonly log: BusLog;
  private readonly maxEventsPerQueue: number;
  private readonly maxQueuesPerUser: number;
  private readonly listeners: QueueReadyListener[] = [];
  private readonly missedListeners: (() => void)[] = [];
  private subscriber: RedisClient | null = null;
  private pendingAppends: Array<{ sourceId: string; appends: QueueAppend[]; resolve: () => void; reject: (error: unknown) => void }> = [];
  private subscribed: Promise<void> | null = null;
  private readonly realmCopies = new Map<number, RealmQueues>();
  private readonly realmSyncs = new Map<number, Promise<RealmQueues>>();
  private realmCopiesSweptAt = Date.now();

  constructor(options: RedisQueueStoreOptions) {
    this.keys = new BusKeys(options.prefix);
    this.log = options.log ?? stderrLog;
    this.target = options.clusterNodes === undefined ? { url: options.url } : { clusterNodes: options.clusterNodes };
    this.maxEventsPerQueue = options.maxEventsPerQueue ?? DEFAULT_MAX_EVENTS_PER_QUEUE;
    this.maxQueuesPerUser = options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER;
    // Two connections. Reads, appends and acknowledgments are auto-pipelined: when a message
    // reaches a big stream a thousand woken polls may read their queues in the same turn, and a
    // write each cost more than the rest of a poll. A cluster client pipelines commands by the
    // node of their first argument, so every script here declares a fixed number of keys (ioredis
    // then routes by the first key): a script whose key count came first could go to the wrong
    // node (cluster contract test). Everything else (a registration's create, a delete) is a
    // command or two at a time, for which an auto-pipeline each (measured: about twice the CPU of
    // a plain command) is only cost.
    this.redis = connectRedis(this.target, "queue store", this.log);
    this.batched = connectRedis(this.target, "queue store (pipelined)", this.log, { enableAutoPipelining: true });
    defineQueueScripts(this.redis);
    defineQueueScripts(this.batched);
  }

  async create(options: QueueOptions): Promise<QueueInfo> {
    const { realmId, userId } = options;
    const id = newQueueId(realmId, userId);
    const now = Date.now();
    const settings = JSON.stringify(options.settings);
    const since = options.since ?? STREAM_START;
    const info = packQueueInfo(options.allPublicStreams, since, options.idleTimeoutMs, settings);
    const k = this.keys;
    const [evicted] = await Promise.all([
      this.redis.busQueueCreate(
        k.queue(realmId, id), k.queueInfo(realmId), k.queueLog(realmId), k.queuesByPoll(realmId), k.queuesByDeadline(realmId), k.userQueues(realmId, userId),
        id, userId, realmId, now, options.idleTimeoutMs ?? "", info, this.maxQueuesPerUser,
      ),
      // The realm is listed for the idle sweep; another slot's key, so not in the script.
      this.redis.sadd(k.realmsWithQueues(), realmId),
    ]);
    if (evicted.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const queueId of evicted) this.deleteCommand(pipeline, { realmId, userId }, queueId, "", "");
      throwFirstError(await pipeline.exec());
      // Evicted queues are announced: a poll held on one learns at once that it is gone.
      await this.redis.publish(k.queueReadyChannel(), JSON.stringify(evicted));
    }
    return {
      id,
      userId,
      realmId,
      allPublicStreams: options.allPublicStreams,
      settings: JSON.parse(settings) as Record<string, unknown>,
      since,
      lastPollMs: now,
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    };
  }

  async get(queueId: string): Promise<QueueInfo | null> {
    const owner = queueOwner(queueId);
    if (owner === null) return null;
    // Both of the realm's slot, in one write.
    const replies = await this.redis.pipeline().hmget(this.keys.queue(owner.realmId, queueId), "lastPollMs", "idleTimeoutMs").hget(this.keys.queueInfo(owner.realmId), queueId).exec();
    throwFirstError(replies);
    const [fields, info] = replies!.map(([, value]) => value) as [Array<string | null>, string | null];
    if (fields[0] === null || info === null) return null;
    const [allPublicStreams, since, , settings] = unpackQueueInfo(info);
    return {
      id: queueId,
      userId: owner.userId,
      realmId: owner.realmId,
      allPublicStreams: allPublicStreams === "1",
      settings: JSON.parse(settings) as Record<string, unknown>,
      since,
      lastPollMs: Number(fields[0]),
      ...(fields[1] !== null ? { idleTimeoutMs: Number(fields[1]) } : {}),
    };
  }

  async queuesOfUsers(realmId: number, userIds: number[]): Promise<QueueTarget[]> {
    if (userIds.length === 0) return [];
    return (await this.realmQueues(realmId)).queuesOfUsers(userIds);
  }

  async allPublicStreamsQueues(realmId: number): Promise<QueueTarget[]> {
    return (await this.realmQueues(realmId)).allPublicStreamsQueues();
  }

  async *allQueues(): AsyncIterable<QueueTarget[]> {
    for (const realmId of await this.realms()) {
      // A page of HSCAN at a time (which may answer an entry twice, as the interface allows).
      for await (const page of this.redis.hscanStream(this.keys.queueInfo(realmId), { count: 1000 })) {
        const flat = page as string[];
        const targets: QueueTarget[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const owner = queueOwner(flat[i]);
          if (owner === null) continue;
          const [allPublicStreams, since, idleTimeoutMs, settings] = unpackQueueInfo(flat[i + 1]);
          targets.push({
            id: flat[i],
            userId: owner.userId,
            realmId,
            allPublicStreams: allPublicStreams === "1",
            settings: JSON.parse(settings) as Record<string, unknown>,
            since,
            ...(idleTimeoutMs !== "" ? { idleTimeoutMs: Number(idleTimeoutMs) } : {}),
          });
        }
        if (targets.length > 0) yield targets;
      }
    }
  }

  /**
   * Appends made in one turn of the event loop go to Redis together (a fan-out issues a read's
   * batches at once): one script step per queue, whatever the number of batches that reach it.
   * Under a steady stream of sends, the script's fixed work per queue and append (its checks, its
   * dedupe, its id) was what bounded the rate, not the events.
   */
  append(sourceId: string, appends: QueueAppend[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pendingAppends.push({ sourceId, appends, resolve, reject });
      if (this.pendingAppends.length === 1) setImmediate(() => this.flushAppends());
    });
  }

  private flushAppends(): void {
    const pending = this.pendingAppends;
    this.pendingAppends = [];
    this.appendTogether(pending).then(
      () => pending.forEach((each) => each.resolve()),
      (error: unknown) => pending.forEach((each) => each.reject(error)),
    );
  }

  private async appendTogether(batches: Array<{ sourceId: string; appends: QueueAppend[] }>): Promise<void> {
    // By realm: each realm's queues are in one slot, and one script call serves each (at most
    // APPEND_QUEUES_PER_CALL of them). A fan-out is one realm's, so one group. Ids that name no
    // realm are no queue of this store: appending to them is a no-op. Each queue's parts keep the
    // order of the appends.
    const byRealm = new Map<number, Map<string, QueueParts>>();
    for (const { sourceId, appends } of batches) {
      for (const { queueId, events } of appends) {
        if (events.length === 0) continue;
        const realmId = queueRealmId(queueId);
        if (realmId === null) continue;
        let queues = byRealm.get(realmId);
        if (!queues) byRealm.set(realmId, (queues = new Map()));
        const parts = queues.get(queueId);
        if (parts) parts.add(sourceId, events);
        else queues.set(queueId, new QueueParts(queueId, sourceId, events));
      }
    }
    if (byRealm.size === 0) return;
    const now = Date.now();
    const k = this.keys;
    // In calls of bounded size, so that no one script holds Redis for long, and the first queues
    // are woken (each call announces its own) while Redis appends to the rest.
    const calls: Promise<unknown>[] = [];
    for (const [realmId, queues] of byRealm) {
      for (const chunk of chunked([...queues.values()], APPEND_QUEUES_PER_CALL)) {
        // Each distinct event object (the fan-out shapes one per kind of queue) is serialized and
        // sent once, and each source id once.
        const variants = new Map<EventPayload, number>();
        const texts: string[] = [];
        const sources = new Map<string, number>();
        const indexOf = (event: EventPayload): number => {
          let index = variants.get(event);
          if (index === undefined) {
            texts.push(eventJsonWithoutId(event));
            variants.set(event, (index = texts.length));
          }
          return index;
        };
        const sourceOf = (sourceId: string): number => {
          let source = sources.get(sourceId);
          if (source === undefined) sources.set(sourceId, (source = sources.size + 1));
          return source;
        };
        const lines: string[] = [];
        for (const parts of chunk) {
          // A fan-out's every queue: `<queue> 1 <source> 1 <text>` made at once, not grown part by part.
          if (parts.more === null && parts.events.length === 1) {
            lines.push(`${parts.queueId} 1 ${sourceOf(parts.sourceId)} 1 ${indexOf(parts.events[0])}`);
            continue;
          }
          let line = `${parts.queueId} ${parts.count}`;
          for (const { sourceId, events } of parts.all()) {
            line += ` ${sourceOf(sourceId)} ${events.length}`;
            for (const event of events) line += ` ${indexOf(event)}`;
          }
          lines.push(line);
        }
        calls.push(
          this.batched.busQueueAppendMany(
            k.queuesByPoll(realmId), k.queuesByDeadline(realmId), k.queueInfo(realmId), k.queueLog(realmId),
            now, DEDUPE_WINDOW_MS, this.maxEventsPerQueue, k.queueReadyChannel(), MAX_ANNOUNCED_TEXT_BYTES, k.realmTag(realmId),
            sources.size, ...sources.keys(), texts.length, ...texts, lines.join("\n"),
          ),
        );
      }
    }
    // Every call runs to its end before a failure is reported: the others' queues have their events.
    const outcomes = await Promise.allSettled(calls);
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  }

  async read(queueId: string, lastEventId: number, ownerId?: number): Promise<QueuedEvent[] | null> {
    const events = await this.readJson(queueId, lastEventId, ownerId);
    return events === null ? null : events.map((json) => JSON.parse(json) as QueuedEvent);
  }

  async readJson(queueId: string, lastEventId: number, ownerId?: number): Promise<string[] | null> {
    const owner = queueOwner(queueId);
    if (owner === null) return null;
    const { realmId } = owner;
    return this.batched.busQueueRead(
      this.keys.queue(realmId, queueId), this.keys.queueEvents(realmId, queueId), this.keys.queuesByPoll(realmId), this.keys.queuesByDeadline(realmId),
      lastEventId, Date.now(), queueId, ownerId ?? "",
    );
  }

  async acknowledge(acks: QueueAck[]): Promise<string[]> {
    const now = Date.now();
    const byRealm = new Map<number, QueueAck[]>();
    const missing: string[] = [];
    for (const ack of acks) {
      const owner = queueOwner(ack.queueId);
      // A queue's id names its user: one named for another is not this user's queue.
      if (owner === null || owner.userId !== ack.ownerId) missing.push(ack.queueId);
      else (byRealm.get(owner.realmId) ?? byRealm.set(owner.realmId, []).get(owner.realmId)!).push(ack);
    }
    const k = this.keys;
    // One call per realm (its keys share a slot), in calls of bounded size.
    const calls = [...byRealm].flatMap(([realmId, realmAcks]) =>
      chunked(realmAcks, APPEND_QUEUES_PER_CALL).map((chunk) => {
        const lines = chunk.map(({ queueId, lastEventId }) => `${queueId} ${lastEventId}`).join("\n");
        return this.batched.busQueueAcknowledgeMany(k.queuesByPoll(realmId), k.queuesByDeadline(realmId), now, k.realmTag(realmId), lines);
      }),
    );
    for (const gone of await Promise.all(calls)) missing.push(...gone);
    return missing;
  }

  async lastEventId(queueId: string): Promise<number | null> {
    const owner = queueOwner(queueId);
    if (owner === null) return null;
    const nextId = await this.redis.hget(this.keys.queue(owner.realmId, queueId), "nextId");
    return nextId === null ? null : Number(nextId) - 1;
  }

  async delete(queueId: string): Promise<boolean> {
    const owner = queueOwner(queueId);
    if (owner === null) return false;
    return (await this.deleteCommand(this.redis, owner, queueId, "", "")) === 1;
  }

  async invalidate(queueIds: string[]): Promise<number> {
    // One pipeline per realm: its keys share a slot.
    const byRealm = new Map<number, Array<{ owner: QueueOwner; queueId: string }>>();
    for (const queueId of new Set(queueIds)) {
      const owner = queueOwner(queueId);
      if (owner !== null) (byRealm.get(owner.realmId) ?? byRealm.set(owner.realmId, []).get(owner.realmId)!).push({ owner, queueId });
    }
    const deleted: string[] = [];
    await Promise.all(
      [...byRealm.values()].map(async (queues) => {
        const pipeline = this.redis.pipeline();
        for (const { owner, queueId } of queues) this.deleteCommand(pipeline, owner, queueId, "", "");
        const replies = await pipeline.exec();
        throwFirstError(replies);
        replies!.forEach(([, result], i) => {
          if (Number(result) === 1) deleted.push(queues[i].queueId);
        });
      }),
    );
    if (deleted.length > 0) await this.redis.publish(this.keys.queueReadyChannel(), JSON.stringify(deleted));
    return deleted.length;
  }

  async invalidateRealm(realmId: number, through: StreamPosition): Promise<number> {
    // Rare (a tier down long enough for its backlog to pass the cap): a walk of the realm's queues.
    const invalid: string[] = [];
    for await (const page of this.redis.hscanStream(this.keys.queueInfo(realmId), { count: 1000 })) {
      const flat = page as string[];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const [, since] = unpackQueueInfo(flat[i + 1]);
        if (isAfterPosition(through, since)) invalid.push(flat[i]);
      }
    }
    let deleted = 0;
    for (const queueId of invalid) if (await this.delete(queueId)) deleted++;
    // Their waiting polls answer BAD_EVENT_QUEUE_ID now, not at their heartbeat.
    if (invalid.length > 0) await this.redis.publish(this.keys.queueReadyChannel(), JSON.stringify(invalid));
    return deleted;
  }

  async deleteIdle(idleMs: number): Promise<number> {
    const now = Date.now();
    let deleted = 0;
    for (const realmId of await this.realms()) {
      // Queues without a timeout of their own last polled before the cutoff, and those whose own deadline passed.
      for (const [key, max] of [[this.keys.queuesByPoll(realmId), now - idleMs], [this.keys.queuesByDeadline(realmId), now]] as const) {
        for (;;) {
          const ids = await this.redis.zrangebyscore(key, "-inf", max, "LIMIT", 0, IDLE_SCAN_BATCH);
          if (ids.length === 0) break;
          // The realm's keys only: one slot.
          const pipeline = this.redis.pipeline();
          // The script checks the idle time again: a queue polled since the scan survives.
          for (const id of ids) this.deleteCommand(pipeline, queueOwner(id) ?? { realmId, userId: 0 }, id, now, idleMs);
          for (const [error, result] of (await pipeline.exec()) ?? []) {
            if (error) throw error;
            deleted += Number(result);
          }
          if (ids.length < IDLE_SCAN_BATCH) break;
        }
      }
    }
    return deleted;
  }

  async onReady(listener: QueueReadyListener): Promise<void> {
    this.listeners.push(listener);
    this.subscribed ??= this.subscribe().catch((error: unknown) => {
      this.subscribed = null;
      throw error;
    });
    await this.subscribed;
  }

  onAnnouncementsMissed(listener: () => void): void {
    this.missedListeners.push(listener);
  }

  async count(): Promise<number> {
    // Every queue is in exactly one of its realm's two indexes: by last poll, or by its own deadline.
    const counts = await Promise.all(
      (await this.realms()).flatMap((realmId) => [this.redis.zcard(this.keys.queuesByPoll(realmId)), this.redis.zcard(this.keys.queuesByDeadline(realmId))]),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /** Resolves when Redis answers a PING on this store's connection. */
  async ping(): Promise<void> {
    await Promise.all([this.redis.ping(), this.batched.ping()]);
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
    this.missedListeners.length = 0;
    await Promise.all([this.subscriber?.quit(), this.redis.quit(), this.batched.quit()].map((p) => p?.catch(() => undefined)));
  }

  private async subscribe(): Promise<void> {
    // ioredis subscribes again by itself after a reconnect.
    this.subscriber ??= connectRedis(this.target, "queue-ready subscription", this.log);
    const subscriber = this.subscriber;
    // Announcements published while the subscription is down are gone for good. So when it drops,
    // waiting polls read again (answering 503 at once rather than at their heartbeat), and again
    // once it is back: after a PING, which follows ioredis's new SUBSCRIBE on the connection.
    let lost = false;
    subscriber.on("close", () => {
      lost = true;
      this.announcementsMissed();
    });
    subscriber.on("ready", () => {
      if (!lost) return;
      lost = false;
      subscriber.ping().then(
        () => this.announcementsMissed(),
        () => undefined,
      );
    });
    this.subscriber.on("message", (_channel: string, message: string) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch (error) {
        this.log("malformed queue-ready message", error);
        return;
      }
      forEachAnnouncedQueue(parsed, (queueId, events) => {
        for (const listener of this.listeners) {
          try {
            listener(queueId, events);
          } catch (error) {
            this.log("queue-ready listener failed", error);
          }
        }
      });
    });
    await this.subscriber.subscribe(this.keys.queueReadyChannel());
  }

  private announcementsMissed(): void {
    for (const listener of this.missedListeners) {
      try {
        listener();
      } catch (error) {
        this.log("announcements-missed listener failed", error);
      }
    }
  }

  /** The realms that have (or had) queues. */
  private async realms(): Promise<number[]> {
    return (await this.redis.smembers(this.keys.realmsWithQueues())).map(Number);
  }

  /**
   * This node's copy of the realm's queues, brought up to date: it holds every queue created
   * before this call and none deleted before it, as a read of the realm's keys would. Lookups
   * begun in the same turn (a fan-out asks for users' queues and all_public_streams queues at
   * once) share one read of the log; a later one reads again, as queues may have changed since.
   */
  private realmQueues(realmId: number): Promise<RealmQueues> {
    const inFlight = this.realmSyncs.get(realmId);
    if (inFlight !== undefined) return inFlight;
    const sync = this.syncRealmQueues(realmId);
    this.realmSyncs.set(realmId, sync);
    process.nextTick(() => this.realmSyncs.delete(realmId));
    return sync;
  }

  private async syncRealmQueues(realmId: number): Promise<RealmQueues> {
    const now = Date.now();
    if (now - this.realmCopiesSweptAt > REALM_COPY_IDLE_MS) {
      this.realmCopiesSweptAt = now;
      for (const [id, copy] of this.realmCopies) if (now - copy.usedAt > REALM_COPY_IDLE_MS) this.realmCopies.delete(id);
    }
    let copy = this.realmCopies.get(realmId);
    if (copy === undefined) this.realmCopies.set(realmId, (copy = new RealmQueues(realmId)));
    copy.usedAt = now;
    copy.apply(await this.redis.busQueueLogSince(this.keys.queueLog(realmId), this.keys.queueInfo(realmId), copy.loaded ? copy.since : "", QUEUE_LOG_LENGTH));
    return copy;
  }

  private deleteCommand(client: RedisClient | ReturnType<RedisClient["pipeline"]>, owner: QueueOwner, queueId: string, nowMs: number | "", defaultIdleMs: number | "") {
    const k = this.keys;
    const { realmId, userId } = owner;
    return client.busQueueDelete(
      k.queue(realmId, queueId), k.queueEvents(realmId, queueId), k.queueSources(realmId, queueId),
      k.queueInfo(realmId), k.queuesByPoll(realmId), k.queuesByDeadline(realmId), k.userQueues(realmId, userId), k.queueLog(realmId),
      queueId, nowMs, defaultIdleMs,
    );
  }
}

/**
 * A queue-ready message, as the append script publishes it: the queues that got events, with the
 * events unless their texts are too long to send along ({texts, queues: [[id, first id, ...text
 * indexes]], ids}); or a plain array of queue ids (announcements without events: evictions,
 * redelivered batches, dropped queues). Calls `each` with each queue it names, and its events when
 * it carries them.
 */
function forEachAnnouncedQueue(message: unknown, each: (queueId: string, events: AnnouncedEvents | undefined) => void): void {
  if (Array.isArray(message)) {
    for (const queueId of message) if (typeof queueId === "string") each(queueId, undefined);
    return;
  }
  if (typeof message !== "object" || message === null) return;
  const { texts, queues, ids } = message as { texts?: unknown; queues?: unknown; ids?: unknown };
  if (Array.isArray(texts) && Array.isArray(queues)) {
    const shared = new AnnouncedTexts(texts as string[]);
    for (const entry of queues) {
      if (!Array.isArray(entry) || typeof entry[0] !== "string" || typeof entry[1] !== "number") continue;
      each(entry[0], new SplicedEvents(entry[1], shared, (entry as number[]).slice(2)));
    }
  }
  if (Array.isArray(ids)) for (const queueId of ids) if (typeof queueId === "string") each(queueId, undefined);
}

/** `id` is assigned by the script; one the caller left in the payload would be a duplicate key. */
function eventJsonWithoutId(event: EventPayload): string {
  return JSON.stringify({ ...event, id: undefined });
}

/**
 * What one append call gives one queue: its first source's events, and any later sources' in
 * order. One object per queue: a fan-out gives each queue one part.
 */
class QueueParts {
  more: Array<{ sourceId: string; events: EventPayload[] }> | null = null;

  constructor(
    readonly queueId: string,
    readonly sourceId: string,
    readonly events: EventPayload[],
  ) {}

  get count(): number {
    return this.more === null ? 1 : this.more.length + 1;
  }

  add(sourceId: string, events: EventPayload[]): void {
    (this.more ??= []).push({ sourceId, events });
  }

  /** Every part, in order. */
  all(): Array<{ sourceId: string; events: EventPayload[] }> {
    return [{ sourceId: this.sourceId, events: this.events }, ...(this.more ?? [])];
  }
}
