import { DEDUPE_WINDOW_MS, DEFAULT_CLAIM_IDLE_MS } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import { CHANGE_GROUPS, type ChangeBatchesHandler, type DroppedChanges, type ChangeBatch, type ChangeGroup, type ChangeHandler, type ChangeReadHandler, type ChangeStream, type ConsumeOptions, type Stoppable, type StreamPosition } from "../types";
import { changeBatchJson } from "../batch-json";

export interface MemoryChangeStreamOptions {
  claimIdleMs?: number;
  /** Batches kept that some group has not read; past it the oldest are dropped (onDropped), as in Redis. */
  maxEntries?: number;
  /** How long a handled batch id is remembered, to drop republished copies. */
  dedupeWindowMs?: number;
  log?: BusLog;
}

/** Redis's id form, from 0-1 (0-0 is the position before any entry, STREAM_START). */
function positionOf(seq: number): StreamPosition {
  return `0-${seq + 1}`;
}

/** As many entries as one XREADGROUP COUNT returns, so consumers share work the same way. */
const READ_COUNT = 100;

interface Entry {
  seq: number;
  /** Stored serialized, so every delivery is a fresh copy, as from Redis. */
  json: string;
}

interface Pending {
  entry: Entry;
  consumer: string;
  deliveredAt: number;
}

/** One consumer group's state: its cursor, what it has read and not acknowledged, what it handled. */
class GroupState {
  /** The seq of the next entry `>` reads. */
  next = 0;
  /** Insertion order is delivery order, which is stream order. */
  readonly pending = new Map<number, Pending>();
  /** Handled batch ids and when they may be forgotten. */
  readonly handled = new Map<string, number>();
  /** Consumers that handle batch by batch in order (consume, not consumeReads). */
  readonly ordered = new Set<string>();
}

/**
 * The change stream of one process, with consumer groups' semantics: each batch goes to one
 * consumer of each group, stays pending until its handler resolves, and is claimable after
 * claimIdleMs.
 */
export class MemoryChangeStream implements ChangeStream {
  readonly claimIdleMs: number;
  readonly log: BusLog;
  private readonly maxEntries: number;
  private readonly droppedListeners: ((dropped: DroppedChanges) => Promise<void> | void)[] = [];
  /** Entries from seq `firstSeq` on: those some group has not read, and perhaps some all have. */
  private entries: Entry[] = [];
  private firstSeq = 0;
  private nextSeq = 0;
  private readonly groups = new Map<ChangeGroup, GroupState>(CHANGE_GROUPS.map((group) => [group, new GroupState()]));
  private readonly consumers = new Set<MemoryConsumer>();
  private readonly dedupeWindowMs: number;

  constructor(options: MemoryChangeStreamOptions = {}) {
    this.claimIdleMs = options.claimIdleMs ?? DEFAULT_CLAIM_IDLE_MS;
    this.dedupeWindowMs = options.dedupeWindowMs ?? DEDUPE_WINDOW_MS;
    this.maxEntries = options.maxEntries ?? 200_000;
    this.log = options.log ?? stderrLog;
  }

  async publish(batches: ChangeBatch[]): Promise<void> {
    for (const batch of batches) this.entries.push({ seq: this.nextSeq++, json: changeBatchJson(batch) });
    if (this.entries.length > this.maxEntries) await this.trim();
    for (const consumer of this.consumers) consumer.wake();
  }

  async position(): Promise<StreamPosition> {
    return positionOf(this.nextSeq - 1);
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
    const consumer = new MemoryConsumer(this, options.group ?? "events", consumerName, handler, options.containing ?? null);
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
  }

  /**
   * XREADGROUP `>`: the group's next entries become pending for this consumer. An ordered
   * consumer reads nothing while another ordered one holds entries: as the Redis consumers lease
   * shards, so that a realm's batches are handled one at a time, in order.
   */
  readNew(group: ChangeGroup, consumer: string): Entry[] {
    const state = this.groups.get(group)!;
    if (state.ordered.has(consumer)) {
      for (const pending of state.pending.values()) if (pending.consumer !== consumer && state.ordered.has(pending.consumer)) return [];
    }
    const from = Math.max(state.next, this.firstSeq) - this.firstSeq;
    const entries = this.entries.slice(from, from + READ_COUNT);
    if (entries.length > 0) state.next = entries[entries.length - 1].seq + 1;
    const now = Date.now();
    for (const entry of entries) state.pending.set(entry.seq, { entry, consumer, deliveredAt: now });
    this.compact();
    return entries;
  }

  /** XAUTOCLAIM: entries pending longer than claimIdleMs move to this consumer. */
  claimIdle(group: ChangeGroup, consumer: string): Entry[] {
    const now = Date.now();
    const claimed: Entry[] = [];
    for (const pending of this.groups.get(group)!.pending.values()) {
      if (now - pending.deliveredAt < this.claimIdleMs) continue;
      pending.consumer = consumer;
      pending.deliveredAt = now;
      claimed.push(pending.entry);
    }
    return claimed;
  }

  ack(group: ChangeGroup, seq: number): void {
    this.groups.get(group)!.pending.delete(seq);
    // A consumer waiting for another's entries to be handled (readNew) may read now.
    for (const consumer of this.consumers) consumer.wake();
  }

  joinOrdered(group: ChangeGroup, consumer: string): void {
    this.groups.get(group)!.ordered.add(consumer);
  }

  /** A stopping ordered consumer: what it holds (failed ones too) is claimable at once, in order. */
  leaveOrdered(group: ChangeGroup, consumer: string): void {
    const state = this.groups.get(group)!;
    state.ordered.delete(consumer);
    for (const pending of state.pending.values()) if (pending.consumer === consumer) pending.deliveredAt = Date.now() - this.claimIdleMs;
    for (const other of this.consumers) other.wake();
  }

  wasHandled(group: ChangeGroup, batchId: string): boolean {
    const until = this.groups.get(group)!.handled.get(batchId);
    return until !== undefined && until > Date.now();
  }

  markHandled(group: ChangeGroup, batchId: string): void {
    const handled = this.groups.get(group)!.handled;
    const now = Date.now();
    // Forget expired ids as new ones arrive; Map keeps insertion order, oldest first.
    for (const [id, until] of handled) {
      if (until > now) break;
      handled.delete(id);
    }
    handled.set(batchId, now + this.dedupeWindowMs);
  }

  /** XCLAIM … IDLE: entries read but not handled before stop become claimable at once. */
  release(group: ChangeGroup, entries: Entry[]): void {
    const pending = this.groups.get(group)!.pending;
    for (const entry of entries) {
      const found = pending.get(entry.seq);
      if (found) found.deliveredAt = Date.now() - this.claimIdleMs;
    }
    for (const consumer of this.consumers) consumer.wake();
  }

  onDropped(listener: (dropped: DroppedChanges) => Promise<void> | void): void {
    this.droppedListeners.push(listener);
  }

  /**
   * Drops what every group has read (pending entries keep their own reference), then the oldest
   * past maxEntries, telling onDropped listeners what each group had not read.
   */
  async trim(): Promise<void> {
    this.compact(0);
    const excess = this.entries.length - this.maxEntries;
    if (excess <= 0) return;
    const dropped = this.entries.slice(0, excess);
    this.entries = this.entries.slice(excess);
    this.firstSeq += excess;
    for (const [group, state] of this.groups) {
      const unread = dropped.filter((entry) => entry.seq >= state.next);
      if (unread.length === 0) continue;
      const realms = new Map<number, StreamPosition>();
      for (const entry of unread) realms.set((JSON.parse(entry.json) as ChangeBatch).realmId, positionOf(entry.seq));
      this.log(`change stream: dropped ${unread.length} batches group ${group} had not read (past ${this.maxEntries} kept)`);
      for (const listener of this.droppedListeners) await listener({ group, count: unread.length, realms });
    }
  }

  /** Drops entries every group has read (pending ones keep their own reference), once there are `atLeast`. */
  private compact(atLeast = 1024): void {
    let read = Infinity;
    for (const state of this.groups.values()) read = Math.min(read, state.next);
    const drop = read - this.firstSeq;
    if (drop > 0 && drop >= atLeast && (atLeast === 0 || drop * 2 > this.entries.length)) {
      this.entries = this.entries.slice(drop);
      this.firstSeq = read;
    }
  }
}

/** One batch at a time, in order, with handled marks; or each read at once (consumeReads). */
type ConsumerHandler = { batch: ChangeHandler } | { read: ChangeReadHandler } | { ordered: ChangeBatchesHandler };

class MemoryConsumer {
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly done: Promise<void>;

  constructor(
    private readonly stream: MemoryChangeStream,
    private readonly group: ChangeGroup,
    private readonly name: string,
    private readonly handler: ConsumerHandler,
    private readonly containing: string | null,
  ) {
    if (!("read" in handler)) stream.joinOrdered(group, name);
    this.done = this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.done;
    if (!("read" in this.handler)) this.stream.leaveOrdered(this.group, this.name);
  }

  private async run(): Promise<void> {
    const claimEveryMs = Math.max(1, Math.floor(this.stream.claimIdleMs / 2));
    let nextClaimAt = 0;
    while (!this.stopping) {
      if (Date.now() >= nextClaimAt) {
        await this.deliverAll(this.stream.claimIdle(this.group, this.name));
        nextClaimAt = Date.now() + claimEveryMs;
        continue;
      }
      const entries = this.stream.readNew(this.group, this.name);
      if (entries.length > 0) await this.deliverAll(entries);
      else await this.sleepUntil(nextClaimAt);
    }
  }

  private sleepUntil(time: number): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        this.wakeUp = null;
        resolve();
      };
      // unref: the embedded bus alone must not keep the process alive.
      this.timer = setTimeout(this.wakeUp, Math.max(1, time - Date.now())).unref();
    });
  }

  private async deliverAll(entries: Entry[]): Promise<void> {
    const handler = this.handler;
    if ("read" in handler) {
      await this.deliverRead(handler.read, entries);
      return;
    }
    if ("ordered" in handler) {
      await this.deliverReadInOrder(handler.ordered, entries);
      return;
    }
    for (let i = 0; i < entries.length; i++) {
      // As the Redis consumer: stopping, the entries read are still handled, until one fails.
      if (!(await this.deliver(handler.batch, entries[i])) && this.stopping) {
        this.stream.release(this.group, entries.slice(i + 1));
        return;
      }
    }
  }

  /** A read's new batches at once, in order (ChangeStream.consumeInOrder): acknowledged together. */
  private async deliverReadInOrder(handler: ChangeBatchesHandler, entries: Entry[]): Promise<void> {
    const fresh: Array<{ entry: Entry; batch: ChangeBatch }> = [];
    const seen = new Set<string>();
    for (const entry of entries) {
      if (this.skipped(entry)) continue;
      const batch = JSON.parse(entry.json) as ChangeBatch;
      if (!this.stream.wasHandled(this.group, batch.id) && !seen.has(batch.id)) fresh.push({ entry, batch });
      seen.add(batch.id);
    }
    if (fresh.length > 0) {
      try {
        await handler(fresh.map(({ entry, batch }) => ({ batch, position: positionOf(entry.seq) })));
      } catch (error) {
        this.stream.log(`a read of ${fresh.length} change batches failed in ${this.name}, redelivered after ${this.stream.claimIdleMs}ms`, error);
        return;
      }
    }
    for (const { batch } of fresh) this.stream.markHandled(this.group, batch.id);
    for (const entry of entries) this.stream.ack(this.group, entry.seq);
  }

  /** A read at once (ChangeStream.consumeReads): acknowledged together, or delivered again whole. */
  private async deliverRead(handler: ChangeReadHandler, entries: Entry[]): Promise<void> {
    if (entries.length === 0) return;
    const batches = entries.filter((entry) => !this.skipped(entry)).map((entry) => JSON.parse(entry.json) as ChangeBatch);
    if (batches.length > 0) {
      try {
        await handler(batches);
      } catch (error) {
        this.stream.log(`a read of ${batches.length} change batches failed in ${this.name}, redelivered after ${this.stream.claimIdleMs}ms`, error);
        return;
      }
    }
    for (const entry of entries) this.stream.ack(this.group, entry.seq);
  }

  /** A batch without the `containing` text: acknowledged unread. */
  private skipped(entry: Entry): boolean {
    if (this.containing === null || entry.json.includes(this.containing)) return false;
    this.stream.ack(this.group, entry.seq);
    return true;
  }

  /** Handles and acknowledges one entry; false if its handler failed (it stays pending). */
  private async deliver(handler: ChangeHandler, entry: Entry): Promise<boolean> {
    if (this.skipped(entry)) return true;
    const batch = JSON.parse(entry.json) as ChangeBatch;
    if (!this.stream.wasHandled(this.group, batch.id)) {
      if (!(await this.handle(handler, batch, entry))) return false;
      this.stream.markHandled(this.group, batch.id);
    }
    this.stream.ack(this.group, entry.seq);
    return true;
  }

  /** Runs the handler; false if it threw (the entry stays pending and is claimed again later). */
  private async handle(handler: ChangeHandler, batch: ChangeBatch, entry: Entry): Promise<boolean> {
    try {
      await handler(batch, positionOf(entry.seq));
      return true;
    } catch (error) {
      this.stream.log(`change batch ${batch.id} failed in ${this.name}, redelivered after ${this.stream.claimIdleMs}ms`, error);
      return false;
    }
  }
}
