import { chunked, DEDUPE_WINDOW_MS, DEFAULT_MAX_EVENTS_PER_QUEUE, DEFAULT_MAX_QUEUES_PER_USER, newQueueId } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import { isAfterPosition, STREAM_START, type StreamPosition, type EventPayload, type QueueLimits, type QueueAppend, type AnnouncedEvents, type QueueReadyListener, type QueuedEvent, type QueueInfo, type QueueOptions, type QueueStore } from "../types";
import { MAX_ANNOUNCED_TEXT_CHARS, SplicedEvents } from "../announced-events";
import { connectRedis, type RedisClient, type RedisTarget } from "./connection";
import { BusKeys, queueOwner, type QueueOwner } from "./keys";
import { throwFirstError } from "./results";
import { defineQueueScripts, packQueueInfo, unpackQueueInfo } from "./queue-scripts";

export type RedisQueueStoreOptions = QueueLimits &
  RedisTarget & {
    prefix: string;
    log?: BusLog;
  };

const IDLE_SCAN_BATCH = 500;
/** Queues one append script call fills at most. */
const APPEND_QUEUES_PER_CALL = 500;

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
  private readonly keys: BusKeys;
  private readonly log: BusLog;
  private readonly maxEventsPerQueue: number;
  private readonly maxQueuesPerUser: number;
  private readonly listeners: QueueReadyListener[] = [];
  private readonly missedListeners: (() => void)[] = [];
  private subscriber: RedisClient | null = null;
  private subscribed: Promise<void> | null = null;

  constructor(options: RedisQueueStoreOptions) {
    this.keys = new BusKeys(options.prefix);
    this.log = options.log ?? stderrLog;
    this.target = options.clusterNodes === undefined ? { url: options.url } : { clusterNodes: options.clusterNodes };
    this.maxEventsPerQueue = options.maxEventsPerQueue ?? DEFAULT_MAX_EVENTS_PER_QUEUE;
    this.maxQueuesPerUser = options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER;
    // Auto-pipelined: when a message reaches a big stream a thousand woken polls read their queues
    // in the same turn, and a write each cost more than the rest of a poll.
    this.redis = connectRedis(this.target, "queue store", this.log, { enableAutoPipelining: true });
    defineQueueScripts(this.redis);
  }

  async create(options: QueueOptions): Promise<QueueInfo> {
    const { realmId, userId } = options;
    const id = newQueueId(realmId, userId);
    const now = Date.now();
    const settings = JSON.stringify(options.settings);
    const since = options.since ?? STREAM_START;
    const k = this.keys;
    const multi = this.redis
      .multi()
      .hset(k.queue(realmId, id), {
        userId,
        realmId,
        lastPollMs: now,
        nextId: 0,
        ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      })
      .hset(k.queueInfo(realmId), id, packQueueInfo(options.allPublicStreams, since, options.idleTimeoutMs, settings))
      .sadd(k.userQueues(realmId, userId), id);
    if (options.idleTimeoutMs !== undefined) multi.zadd(k.queuesByDeadline(realmId), now + options.idleTimeoutMs, id);
    else multi.zadd(k.queuesByPoll(realmId), now, id);
    if (options.allPublicStreams) multi.sadd(k.allPublicStreamsQueues(realmId), id);
    multi.busQueueEvict(k.userQueues(realmId, userId), k.queueInfo(realmId), k.queuesByPoll(realmId), k.queuesByDeadline(realmId), this.maxQueuesPerUser, id);
    // The realm is listed for the idle sweep; another slot's key, so not in the transaction.
    const [results] = await Promise.all([multi.exec(), this.redis.sadd(k.realmsWithQueues(), realmId)]);
    throwFirstError(results);
    const evicted = (results?.[results.length - 1]?.[1] ?? []) as string[];
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
    // Both of the realm's slot, in one write (auto-pipelined).
    const [fields, info] = await Promise.all([
      this.redis.hmget(this.keys.queue(owner.realmId, queueId), "lastPollMs", "idleTimeoutMs"),
      this.redis.hget(this.keys.queueInfo(owner.realmId), queueId),
    ]);
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

  async queuesOfUsers(realmId: number, userIds: number[]): Promise<QueueInfo[]> {
    if (userIds.length === 0) return [];
    const sets = [...new Set(userIds)].map((userId) => this.keys.userQueues(realmId, userId));
    return queueInfos(realmId, await this.redis.busQueuesOfSets(3 + sets.length, ...this.collectKeys(realmId), ...sets));
  }

  async allPublicStreamsQueues(realmId: number): Promise<QueueInfo[]> {
    return queueInfos(realmId, await this.redis.busQueuesOfSets(4, ...this.collectKeys(realmId), this.keys.allPublicStreamsQueues(realmId)));
  }

  async append(sourceId: string, appends: QueueAppend[]): Promise<void> {
    // By realm: each realm's queues are in one slot, and one script call serves each (at most
    // APPEND_QUEUES_PER_CALL of them). A fan-out is one realm's, so one group. Ids that name no
    // realm are no queue of this store: appending to them is a no-op.
    const byRealm = new Map<number, QueueAppend[]>();
    for (const append of appends) {
      if (append.events.length === 0) continue;
      const owner = queueOwner(append.queueId);
      if (owner === null) continue;
      let group = byRealm.get(owner.realmId);
      if (!group) byRealm.set(owner.realmId, (group = []));
      group.push(append);
    }
    if (byRealm.size === 0) return;
    const now = Date.now();
    const ready = new Set<string>();
    // Queues that got events, with them: [queue id, first id, ...indexes into `announcedTexts`].
    const announcedTexts: string[] = [];
    const announcedQueues: (string | number)[][] = [];
    let failure: Error | null = null;
    const k = this.keys;
    // In calls of bounded size, so that no one script holds Redis for long.
    const calls = [...byRealm].flatMap(([realmId, work]) =>
      chunked(work, APPEND_QUEUES_PER_CALL).map(async (chunk) => {
        // Each distinct event object (the fan-out shapes one per kind of queue) is serialized and sent once.
        const variants = new Map<EventPayload, number>();
        const texts: string[] = [];
        const keys: string[] = [k.queuesByPoll(realmId), k.queuesByDeadline(realmId), k.queueInfo(realmId)];
        const perQueue: (string | number)[] = [];
        const indexes: number[][] = [];
        for (const { queueId, events } of chunk) {
          keys.push(k.queue(realmId, queueId), k.queueEvents(realmId, queueId), k.queueSources(realmId, queueId));
          perQueue.push(queueId, events.length);
          const own: number[] = [];
          for (const event of events) {
            let index = variants.get(event);
            if (index === undefined) {
              texts.push(eventJsonWithoutId(event));
              variants.set(event, (index = texts.length));
            }
            perQueue.push(index);
            own.push(index);
          }
          indexes.push(own);
        }
        try {
          const results = await this.redis.busQueueAppendMany(
            keys.length, ...keys,
            sourceId, now, DEDUPE_WINDOW_MS, this.maxEventsPerQueue, texts.length, ...texts, ...perQueue,
          );
          // A source id already applied (-1) is announced again: the earlier attempt may have died
          // between appending and publishing, and a spurious wake-up costs a poller one read. A queue
          // dropped for overflowing (-2) is announced so that a waiting poll learns it is gone.
          // The chunk's texts join the announcement's, their indexes shifted past those before.
          const base = announcedTexts.length;
          announcedTexts.push(...texts);
          for (let i = 0; i < chunk.length; i++) {
            const added = results[2 * i];
            const first = results[2 * i + 1];
            if (added > 0) announcedQueues.push([chunk[i].queueId, first, ...indexes[i].map((index) => base + index - 1)]);
            else if (added !== 0) ready.add(chunk[i].queueId);
          }
        } catch (error) {
          failure ??= error as Error;
        }
      }),
    );
    await Promise.all(calls);
    if (announcedQueues.length > 0 || ready.size > 0) await this.redis.publish(k.queueReadyChannel(), announcement(announcedTexts, announcedQueues, ready));
    if (failure) throw failure;
  }

  async read(queueId: string, lastEventId: number, ownerId?: number): Promise<QueuedEvent[] | null> {
    const events = await this.readJson(queueId, lastEventId, ownerId);
    return events === null ? null : events.map((json) => JSON.parse(json) as QueuedEvent);
  }

  async readJson(queueId: string, lastEventId: number, ownerId?: number): Promise<string[] | null> {
    const owner = queueOwner(queueId);
    if (owner === null) return null;
    const { realmId } = owner;
    return this.redis.busQueueRead(
      this.keys.queue(realmId, queueId), this.keys.queueEvents(realmId, queueId), this.keys.queuesByPoll(realmId), this.keys.queuesByDeadline(realmId),
      lastEventId, Date.now(), queueId, ownerId ?? "",
    );
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
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
    this.missedListeners.length = 0;
    await Promise.all([this.subscriber?.quit(), this.redis.quit()].map((p) => p?.catch(() => undefined)));
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
      for (const [queueId, events] of announcedQueues(parsed)) {
        for (const listener of this.listeners) {
          try {
            listener(queueId, events);
          } catch (error) {
            this.log("queue-ready listener failed", error);
          }
        }
      }
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

  /** The first keys of busQueuesOfSets: the realm's info hash, poll and deadline sets. */
  private collectKeys(realmId: number): [string, string, string] {
    return [this.keys.queueInfo(realmId), this.keys.queuesByPoll(realmId), this.keys.queuesByDeadline(realmId)];
  }

  private deleteCommand(client: RedisClient | ReturnType<RedisClient["pipeline"]>, owner: QueueOwner, queueId: string, nowMs: number | "", defaultIdleMs: number | "") {
    const k = this.keys;
    const { realmId, userId } = owner;
    return client.busQueueDelete(
      k.queue(realmId, queueId), k.queueEvents(realmId, queueId), k.queueSources(realmId, queueId),
      k.queueInfo(realmId), k.queuesByPoll(realmId), k.queuesByDeadline(realmId), k.userQueues(realmId, userId), k.allPublicStreamsQueues(realmId),
      queueId, nowMs, defaultIdleMs,
    );
  }
}

/** Values per queue in busQueuesOfSets' answer: its id, its settings' index, then the rest of its info (queue-scripts.ts). */
const COLLECTED_VALUES = 6;

/**
 * busQueuesOfSets' answer as QueueInfo. Queues with the same settings text get one settings
 * object: parsed once, and the fan-out shapes an event once per settings object.
 */
function queueInfos(realmId: number, [settingsTexts, flat]: [string[], (string | number)[]]): QueueInfo[] {
  const settings = settingsTexts.map((text) => JSON.parse(text) as Record<string, unknown>);
  const queues: QueueInfo[] = [];
  for (let i = 0; i + COLLECTED_VALUES <= flat.length; i += COLLECTED_VALUES) {
    const id = String(flat[i]);
    const idleTimeoutMs = flat[i + 5];
    queues.push({
      id,
      settings: settings[Number(flat[i + 1]) - 1],
      // The id's second part (keys.ts, queueOwner), without a regular expression per queue.
      userId: Number(id.slice(id.indexOf(":") + 1, id.indexOf(":", id.indexOf(":") + 1))),
      realmId,
      allPublicStreams: flat[i + 2] === "1",
      since: String(flat[i + 3]),
      lastPollMs: Number(flat[i + 4]),
      ...(idleTimeoutMs !== "" ? { idleTimeoutMs: Number(idleTimeoutMs) } : {}),
    });
  }
  return queues;
}

/**
 * A queue-ready message: the queues that got events, with the events unless their texts are too
 * long to send along ({texts, queues: [[id, first id, ...text indexes]], ids}); or a plain array
 * of queue ids (announcements without events: evictions, redelivered batches, dropped queues).
 */
function announcement(texts: string[], queues: (string | number)[][], others: Set<string>): string {
  let chars = 0;
  for (const text of texts) chars += text.length;
  if (chars > MAX_ANNOUNCED_TEXT_CHARS) return JSON.stringify([...queues.map((queue) => queue[0] as string), ...others]);
  return JSON.stringify({ texts, queues, ids: [...others] });
}

/** The queues a queue-ready message names, each with its events when it carries them. */
function* announcedQueues(message: unknown): Generator<[string, AnnouncedEvents | undefined]> {
  if (Array.isArray(message)) {
    for (const queueId of message) if (typeof queueId === "string") yield [queueId, undefined];
    return;
  }
  if (typeof message !== "object" || message === null) return;
  const { texts, queues, ids } = message as { texts?: unknown; queues?: unknown; ids?: unknown };
  if (Array.isArray(texts) && Array.isArray(queues)) {
    for (const entry of queues) {
      if (!Array.isArray(entry) || typeof entry[0] !== "string" || typeof entry[1] !== "number") continue;
      const [queueId, firstId, ...indexes] = entry as [string, number, ...number[]];
      yield [queueId, new SplicedEvents(firstId, texts as string[], indexes)];
    }
  }
  if (Array.isArray(ids)) for (const queueId of ids) if (typeof queueId === "string") yield [queueId, undefined];
}

/** `id` is assigned by the script; one the caller left in the payload would be a duplicate key. */
function eventJsonWithoutId(event: EventPayload): string {
  return JSON.stringify({ ...event, id: undefined });
}
