import { DEDUPE_WINDOW_MS, DEFAULT_MAX_EVENTS_PER_QUEUE, DEFAULT_MAX_QUEUES_PER_USER, newQueueId } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import { ReadyEvents } from "../announced-events";
import { isAfterPosition, STREAM_START, type StreamPosition, type QueueLimits, type QueueAck, type QueueAppend, type AnnouncedEvents, type QueueReadyListener, type QueuedEvent, type QueueInfo, type QueueOptions, type QueueStore, type QueueTarget } from "../types";

export interface MemoryQueueStoreOptions extends QueueLimits {
  log?: BusLog;
}

interface MemoryQueue {
  info: QueueInfo;
  /** Serialized with their id, so readers get copies with the same JSON semantics as Redis. */
  events: { id: number; json: string }[];
  nextId: number;
  /** Applied source ids and when; insertion order is time order, so pruning stops early. */
  sources: Map<string, number>;
}

/** The event queues of one process. */
export class MemoryQueueStore implements QueueStore {
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly byUser = new Map<string, Set<string>>();
  private readonly allPublic = new Map<number, Set<string>>();
  private readonly listeners: QueueReadyListener[] = [];
  private readonly log: BusLog;
  private readonly maxEventsPerQueue: number;
  private readonly maxQueuesPerUser: number;

  constructor(options: MemoryQueueStoreOptions = {}) {
    this.log = options.log ?? stderrLog;
    this.maxEventsPerQueue = options.maxEventsPerQueue ?? DEFAULT_MAX_EVENTS_PER_QUEUE;
    this.maxQueuesPerUser = options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER;
  }

  async create(options: QueueOptions): Promise<QueueInfo> {
    const info: QueueInfo = {
      id: newQueueId(options.realmId, options.userId),
      userId: options.userId,
      realmId: options.realmId,
      allPublicStreams: options.allPublicStreams,
      settings: jsonCopy(options.settings),
      since: options.since ?? STREAM_START,
      lastPollMs: Date.now(),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    };
    this.queues.set(info.id, { info, events: [], nextId: 0, sources: new Map() });
    addTo(this.byUser, userKey(info.realmId, info.userId), info.id);
    if (info.allPublicStreams) addTo(this.allPublic, info.realmId, info.id);
    this.evictPastLimit(info);
    return copyInfo(info);
  }

  async get(queueId: string): Promise<QueueInfo | null> {
    const queue = this.queues.get(queueId);
    return queue ? copyInfo(queue.info) : null;
  }

  async queuesOfUsers(realmId: number, userIds: number[]): Promise<QueueTarget[]> {
    return [...new Set(userIds)].flatMap((userId) => this.targets(this.byUser.get(userKey(realmId, userId))));
  }

  async allPublicStreamsQueues(realmId: number): Promise<QueueTarget[]> {
    return this.targets(this.allPublic.get(realmId));
  }

  async *allQueues(): AsyncIterable<QueueTarget[]> {
    yield this.targets(new Set(this.queues.keys()));
  }

  async append(sourceId: string, appends: QueueAppend[]): Promise<void> {
    const now = Date.now();
    const ready = new Map<string, AnnouncedEvents | undefined>();
    for (const { queueId, events } of appends) {
      const queue = this.queues.get(queueId);
      if (!queue || events.length === 0) continue;
      for (const [source, at] of queue.sources) {
        if (at > now - DEDUPE_WINDOW_MS) break;
        queue.sources.delete(source);
      }
      // Announced even when already applied, as the Redis store does: see there.
      ready.set(queueId, undefined);
      if (queue.sources.has(sourceId)) continue;
      if (this.maxEventsPerQueue > 0 && queue.events.length + events.length > this.maxEventsPerQueue) {
        await this.delete(queueId);
        continue;
      }
      queue.sources.set(sourceId, now);
      const firstId = queue.nextId;
      const texts: string[] = [];
      for (const { id: _callersId, ...event } of events) {
        const id = queue.nextId++;
        const json = JSON.stringify({ ...event, id });
        queue.events.push({ id, json });
        texts.push(json);
      }
      ready.set(queueId, new ReadyEvents(firstId, texts));
    }
    // Listeners run later, as they would on a pub/sub message, never inside the caller's append.
    if (ready.size > 0) setImmediate(() => this.announce(ready));
  }

  async read(queueId: string, lastEventId: number, ownerId?: number): Promise<QueuedEvent[] | null> {
    const events = await this.readJson(queueId, lastEventId, ownerId);
    return events === null ? null : events.map((json) => JSON.parse(json) as QueuedEvent);
  }

  async readJson(queueId: string, lastEventId: number, ownerId?: number): Promise<string[] | null> {
    const queue = this.queues.get(queueId);
    if (!queue || (ownerId !== undefined && queue.info.userId !== ownerId)) return null;
    const firstKept = queue.events.findIndex((event) => event.id > lastEventId);
    queue.events.splice(0, firstKept === -1 ? queue.events.length : firstKept);
    queue.info.lastPollMs = Date.now();
    return queue.events.map((event) => event.json);
  }

  async acknowledge(acks: QueueAck[]): Promise<string[]> {
    const missing: string[] = [];
    for (const { queueId, lastEventId, ownerId } of acks) if ((await this.readJson(queueId, lastEventId, ownerId)) === null) missing.push(queueId);
    return missing;
  }

  async lastEventId(queueId: string): Promise<number | null> {
    const queue = this.queues.get(queueId);
    return queue ? queue.nextId - 1 : null;
  }

  async delete(queueId: string): Promise<boolean> {
    const queue = this.queues.get(queueId);
    if (!queue) return false;
    const { realmId, userId } = queue.info;
    this.queues.delete(queueId);
    removeFrom(this.byUser, userKey(realmId, userId), queueId);
    removeFrom(this.allPublic, realmId, queueId);
    return true;
  }

  async invalidate(queueIds: string[]): Promise<number> {
    const deleted = new Set<string>();
    for (const queueId of queueIds) if (await this.delete(queueId)) deleted.add(queueId);
    if (deleted.size > 0) setImmediate(() => this.announce(deleted));
    return deleted.size;
  }

  async invalidateRealm(realmId: number, through: StreamPosition): Promise<number> {
    const invalid = [...this.queues.values()].filter(({ info }) => info.realmId === realmId && isAfterPosition(through, info.since)).map(({ info }) => info.id);
    for (const queueId of invalid) await this.delete(queueId);
    if (invalid.length > 0) setImmediate(() => this.announce(new Set(invalid)));
    return invalid.length;
  }

  async deleteIdle(idleMs: number): Promise<number> {
    const now = Date.now();
    let deleted = 0;
    for (const [queueId, queue] of this.queues) {
      const { lastPollMs, idleTimeoutMs } = queue.info;
      if (lastPollMs + (idleTimeoutMs ?? idleMs) <= now && (await this.delete(queueId))) deleted++;
    }
    return deleted;
  }

  async count(): Promise<number> {
    return this.queues.size;
  }

  async onReady(listener: QueueReadyListener): Promise<void> {
    this.listeners.push(listener);
  }

  onAnnouncementsMissed(): void {
    // Announced in this process: never missed.
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
  }

  /** Deletes the user's least recently polled queues past the limit (never the new one), announcing them. */
  private evictPastLimit(created: QueueInfo): void {
    const others = [...(this.byUser.get(userKey(created.realmId, created.userId)) ?? [])]
      .flatMap((queueId) => (queueId === created.id ? [] : (this.queues.get(queueId)?.info ?? [])));
    const excess = others.length + 1 - this.maxQueuesPerUser;
    if (excess <= 0) return;
    const evicted = others.sort((a, b) => a.lastPollMs - b.lastPollMs).slice(0, excess).map((info) => info.id);
    for (const queueId of evicted) void this.delete(queueId);
    setImmediate(() => this.announce(new Set(evicted)));
  }

  private announce(queueIds: Set<string> | Map<string, AnnouncedEvents | undefined>): void {
    const announced = queueIds instanceof Map ? queueIds : new Map([...queueIds].map((queueId) => [queueId, undefined]));
    for (const [queueId, events] of announced) {
      for (const listener of this.listeners) {
        try {
          listener(queueId, events);
        } catch (error) {
          this.log("queue-ready listener failed", error);
        }
      }
    }
  }

  private targets(queueIds: Set<string> | undefined): QueueTarget[] {
    return [...(queueIds ?? [])].flatMap((queueId) => {
      const queue = this.queues.get(queueId);
      if (!queue) return [];
      const { lastPollMs: _lastPollMs, ...target } = copyInfo(queue.info);
      return [target];
    });
  }
}

function userKey(realmId: number, userId: number): string {
  return `${realmId}:${userId}`;
}

function addTo<K>(index: Map<K, Set<string>>, key: K, queueId: string): void {
  let ids = index.get(key);
  if (!ids) index.set(key, (ids = new Set()));
  ids.add(queueId);
}

function removeFrom<K>(index: Map<K, Set<string>>, key: K, queueId: string): void {
  const ids = index.get(key);
  if (!ids) return;
  ids.delete(queueId);
  if (ids.size === 0) index.delete(key);
}

function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function copyInfo(info: QueueInfo): QueueInfo {
  return { ...info, settings: jsonCopy(info.settings) };
}
