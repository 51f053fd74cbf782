import type Redis from "ioredis";
import { chunked, DEDUPE_WINDOW_MS, DEFAULT_MAX_EVENTS_PER_QUEUE, DEFAULT_MAX_QUEUES_PER_USER, newQueueId } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import { isAfterPosition, STREAM_START, type StreamPosition, type EventPayload, type QueueLimits, type QueueAppend, type AnnouncedEvents, type QueueReadyListener, type QueuedEvent, type QueueInfo, type QueueOptions, type QueueStore } from "../types";
import { MAX_ANNOUNCED_TEXT_CHARS, SplicedEvents } from "../announced-events";
import { connectRedis } from "./connection";
import { BusKeys } from "./keys";
import { throwFirstError } from "./results";
import { defineQueueScripts } from "./queue-scripts";

export interface RedisQueueStoreOptions extends QueueLimits {
  url: string;
  prefix: string;
  log?: BusLog;
}

const IDLE_SCAN_BATCH = 500;
/** Queues one append script call fills at most. */
const APPEND_QUEUES_PER_CALL = 500;

/**
 * Event queues in Redis. Per queue: a hash (`q:`), a sorted set of events scored by id (`qe:`) and
 * a sorted set of applied source ids scored by time (`qs:`); plus per-user and per-realm index
 * sets and one sorted set of queues by last poll.
 */
export class RedisQueueStore implements QueueStore {
  private readonly url: string;
  private readonly redis: Redis;
  private readonly keys: BusKeys;
  private readonly log: BusLog;
  private readonly maxEventsPerQueue: number;
  private readonly maxQueuesPerUser: number;
  private readonly listeners: QueueReadyListener[] = [];
  private readonly missedListeners: (() => void)[] = [];
  private subscriber: Redis | null = null;
  private subscribed: Promise<void> | null = null;

  constructor(options: RedisQueueStoreOptions) {
    this.keys = new BusKeys(options.prefix);
    this.log = options.log ?? stderrLog;
    this.url = options.url;
    this.maxEventsPerQueue = options.maxEventsPerQueue ?? DEFAULT_MAX_EVENTS_PER_QUEUE;
    this.maxQueuesPerUser = options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER;
    // Auto-pipelined: when a message reaches a big stream a thousand woken polls read their queues
    // in the same turn, and a write each cost more than the rest of a poll.
    this.redis = connectRedis(options.url, "queue store", this.log, { enableAutoPipelining: true });
    defineQueueScripts(this.redis);
  }

  async create(options: QueueOptions): Promise<QueueInfo> {
    const id = newQueueId();
    const now = Date.now();
    const settings = JSON.stringify(options.settings);
    const since = options.since ?? STREAM_START;
    const multi = this.redis
      .multi()
      .hset(this.keys.queue(id), {
        userId: options.userId,
        realmId: options.realmId,
        allPublicStreams: options.allPublicStreams ? "1" : "0",
        settings,
        since,
        lastPollMs: now,
        nextId: 0,
        ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      })
      .sadd(this.keys.userQueues(options.realmId, options.userId), id);
    if (options.idleTimeoutMs !== undefined) multi.zadd(this.keys.queuesByDeadline(), now + options.idleTimeoutMs, id);
    else multi.zadd(this.keys.queuesByPoll(), now, id);
    if (options.allPublicStreams) multi.sadd(this.keys.allPublicStreamsQueues(options.realmId), id);
    multi.busQueueEvict(this.keys.userQueues(options.realmId, options.userId), this.keys.queuesByPoll(), this.keys.queuesByDeadline(), this.keys.prefix, this.maxQueuesPerUser, id);
    const results = await multi.exec();
    throwFirstError(results);
    // Evicted queues are announced: a poll held on one learns at once that it is gone.
    const evicted = (results?.[results.length - 1]?.[1] ?? []) as string[];
    if (evicted.length > 0) await this.redis.publish(this.keys.queueReadyChannel(), JSON.stringify(evicted));
    return {
      id,
      userId: options.userId,
      realmId: options.realmId,
      allPublicStreams: options.allPublicStreams,
      settings: JSON.parse(settings) as Record<string, unknown>,
      since,
      lastPollMs: now,
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    };
  }

  async get(queueId: string): Promise<QueueInfo | null> {
    const fields = await this.redis.hgetall(this.keys.queue(queueId));
    return Object.keys(fields).length === 0 ? null : toQueueInfo(queueId, fields);
  }

  async queuesOfUsers(realmId: number, userIds: number[]): Promise<QueueInfo[]> {
    if (userIds.length === 0) return [];
    // The script builds each user's set key as keys.userQueues does.
    return queueInfos(await this.redis.busQueuesOfUsers(this.keys.prefix, realmId, ...new Set(userIds)));
  }

  async allPublicStreamsQueues(realmId: number): Promise<QueueInfo[]> {
    return queueInfos(await this.redis.busQueuesOfSets(1, this.keys.allPublicStreamsQueues(realmId), this.keys.prefix));
  }

  async append(sourceId: string, appends: QueueAppend[]): Promise<void> {
    const work = appends.filter((append) => append.events.length > 0);
    if (work.length === 0) return;
    const now = Date.now();
    const ready = new Set<string>();
    // Queues that got events, with them: [queue id, first id, ...indexes into `announcedTexts`].
    const announcedTexts: string[] = [];
    const announcedQueues: (string | number)[][] = [];
    let failure: Error | null = null;
    // In calls of bounded size, so that no one script holds Redis for long.
    const calls = chunked(work, APPEND_QUEUES_PER_CALL).map(async (chunk) => {
      // Each distinct event object (the fan-out shapes one per kind of queue) is serialized and sent once.
      const variants = new Map<EventPayload, number>();
      const texts: string[] = [];
      const perQueue: (string | number)[] = [];
      const indexes: number[][] = [];
      for (const { queueId, events } of chunk) {
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
          this.keys.queuesByPoll(), this.keys.queuesByDeadline(),
          sourceId, now, DEDUPE_WINDOW_MS, this.maxEventsPerQueue, this.keys.prefix, texts.length, ...texts, ...perQueue,
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
    });
    await Promise.all(calls);
    if (announcedQueues.length > 0 || ready.size > 0) await this.redis.publish(this.keys.queueReadyChannel(), announcement(announcedTexts, announcedQueues, ready));
    if (failure) throw failure;
  }

  async read(queueId: string, lastEventId: number, ownerId?: number): Promise<QueuedEvent[] | null> {
    const events = await this.readJson(queueId, lastEventId, ownerId);
    return events === null ? null : events.map((json) => JSON.parse(json) as QueuedEvent);
  }

  readJson(queueId: string, lastEventId: number, ownerId?: number): Promise<string[] | null> {
    return this.redis.busQueueRead(
      this.keys.queue(queueId), this.keys.queueEvents(queueId), this.keys.queuesByPoll(), this.keys.queuesByDeadline(),
      lastEventId, Date.now(), queueId, ownerId ?? "",
    );
  }

  async lastEventId(queueId: string): Promise<number | null> {
    const nextId = await this.redis.hget(this.keys.queue(queueId), "nextId");
    return nextId === null ? null : Number(nextId) - 1;
  }

  async delete(queueId: string): Promise<boolean> {
    return (await this.deleteCommand(this.redis, queueId, "", "")) === 1;
  }

  async invalidateRealm(realmId: number, through: StreamPosition): Promise<number> {
    // Rare (a tier down long enough for its backlog to pass the cap): a scan, rather than a
    // per-realm index every queue's creation and deletion would keep.
    const invalid: string[] = [];
    const match = `${escapeGlob(`${this.keys.prefix}uq:${realmId}:`)}*`;
    for await (const setKeys of this.redis.scanStream({ match, count: 1000 })) {
      for (const setKey of setKeys as string[]) {
        for (const queueId of await this.redis.smembers(setKey)) {
          const since = await this.redis.hget(this.keys.queue(queueId), "since");
          if (isAfterPosition(through, since ?? STREAM_START)) invalid.push(queueId);
        }
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
    // Queues without a timeout of their own last polled before the cutoff, and those whose own deadline passed.
    for (const [key, max] of [[this.keys.queuesByPoll(), now - idleMs], [this.keys.queuesByDeadline(), now]] as const) {
      for (;;) {
        const ids = await this.redis.zrangebyscore(key, "-inf", max, "LIMIT", 0, IDLE_SCAN_BATCH);
        if (ids.length === 0) break;
        const pipeline = this.redis.pipeline();
        // The script checks the idle time again: a queue polled since the scan survives.
        for (const id of ids) this.deleteCommand(pipeline, id, now, idleMs);
        for (const [error, result] of (await pipeline.exec()) ?? []) {
          if (error) throw error;
          deleted += Number(result);
        }
        if (ids.length < IDLE_SCAN_BATCH) break;
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
    // Every queue is in exactly one of the two indexes: by last poll, or by its own deadline.
    const [byPoll, byDeadline] = await Promise.all([this.redis.zcard(this.keys.queuesByPoll()), this.redis.zcard(this.keys.queuesByDeadline())]);
    return byPoll + byDeadline;
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
    this.subscriber ??= connectRedis(this.url, "queue-ready subscription", this.log);
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

  private deleteCommand(client: Redis | ReturnType<Redis["pipeline"]>, queueId: string, nowMs: number | "", defaultIdleMs: number | "") {
    return client.busQueueDelete(
      this.keys.queue(queueId), this.keys.queueEvents(queueId), this.keys.queueSources(queueId), this.keys.queuesByPoll(), this.keys.queuesByDeadline(),
      this.keys.prefix, queueId, nowMs, defaultIdleMs,
    );
  }
}

/** Values per queue in the collect scripts' answer: its id, then QUEUE_FIELDS' (queue-scripts.ts). */
const COLLECTED_VALUES = 8;

/**
 * The collect scripts' answer as QueueInfo. Queues with the same settings text get one settings
 * object: parsed once, and the fan-out shapes an event once per settings object.
 */
function queueInfos([settingsTexts, flat]: [string[], (string | number)[]]): QueueInfo[] {
  const settings = settingsTexts.map((text) => JSON.parse(text) as Record<string, unknown>);
  const queues: QueueInfo[] = [];
  for (let i = 0; i + COLLECTED_VALUES <= flat.length; i += COLLECTED_VALUES) {
    const idleTimeoutMs = flat[i + 7];
    queues.push({
      id: String(flat[i]),
      settings: settings[Number(flat[i + 1]) - 1],
      userId: Number(flat[i + 2]),
      realmId: Number(flat[i + 3]),
      allPublicStreams: flat[i + 4] === "1",
      // Queues created before positions were recorded take every batch, as they did.
      since: flat[i + 5] === "" ? STREAM_START : String(flat[i + 5]),
      lastPollMs: Number(flat[i + 6]),
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

/** `text` matched literally by a SCAN pattern. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/** `id` is assigned by the script; one the caller left in the payload would be a duplicate key. */
function eventJsonWithoutId(event: EventPayload): string {
  return JSON.stringify({ ...event, id: undefined });
}

function toQueueInfo(id: string, fields: Record<string, string>): QueueInfo {
  return {
    id,
    userId: Number(fields.userId),
    realmId: Number(fields.realmId),
    allPublicStreams: fields.allPublicStreams === "1",
    settings: JSON.parse(fields.settings) as Record<string, unknown>,
    // Queues created before positions were recorded take every batch, as they did.
    since: fields.since ?? STREAM_START,
    lastPollMs: Number(fields.lastPollMs),
    ...(fields.idleTimeoutMs !== undefined ? { idleTimeoutMs: Number(fields.idleTimeoutMs) } : {}),
  };
}
