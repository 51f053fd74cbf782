import { DEDUPE_WINDOW_MS, DEFAULT_CLAIM_IDLE_MS } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import type { ChangeBatch, ChangeHandler, ChangeStream, Stoppable, StreamPosition } from "../types";
import { changeBatchJson } from "../batch-json";

export interface MemoryChangeStreamOptions {
  claimIdleMs?: number;
  /** Undelivered batches kept at most; the oldest are dropped, as Redis MAXLEN trims. */
  maxLen?: number;
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

/**
 * The change stream of one process, with a single consumer group's semantics: each batch goes to
 * one consumer, stays pending until its handler resolves, and is claimable after claimIdleMs.
 */
export class MemoryChangeStream implements ChangeStream {
  readonly claimIdleMs: number;
  readonly log: BusLog;
  private readonly maxLen: number;
  private undelivered: Entry[] = [];
  private head = 0;
  private nextSeq = 0;
  /** Insertion order is delivery order, which is stream order. */
  private readonly pending = new Map<number, Pending>();
  private readonly consumers = new Set<MemoryConsumer>();
  /** Handled batch ids and when they may be forgotten. */
  private readonly handled = new Map<string, number>();
  private readonly dedupeWindowMs: number;

  constructor(options: MemoryChangeStreamOptions = {}) {
    this.claimIdleMs = options.claimIdleMs ?? DEFAULT_CLAIM_IDLE_MS;
    this.dedupeWindowMs = options.dedupeWindowMs ?? DEDUPE_WINDOW_MS;
    this.maxLen = options.maxLen ?? 100_000;
    this.log = options.log ?? stderrLog;
  }

  async publish(batches: ChangeBatch[]): Promise<void> {
    for (const batch of batches) this.undelivered.push({ seq: this.nextSeq++, json: changeBatchJson(batch) });
    const excess = this.undelivered.length - this.head - this.maxLen;
    if (excess > 0) this.head += excess;
    for (const consumer of this.consumers) consumer.wake();
  }

  async position(): Promise<StreamPosition> {
    return positionOf(this.nextSeq - 1);
  }

  consume(consumerName: string, handler: ChangeHandler): Stoppable {
    const consumer = new MemoryConsumer(this, consumerName, handler);
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

  /** XREADGROUP `>`: the next undelivered entries become pending for this consumer. */
  readNew(consumer: string): Entry[] {
    const entries = this.undelivered.slice(this.head, this.head + READ_COUNT);
    this.head += entries.length;
    if (this.head > 1024 && this.head * 2 > this.undelivered.length) {
      this.undelivered = this.undelivered.slice(this.head);
      this.head = 0;
    }
    const now = Date.now();
    for (const entry of entries) this.pending.set(entry.seq, { entry, consumer, deliveredAt: now });
    return entries;
  }

  /** XAUTOCLAIM: entries pending longer than claimIdleMs move to this consumer. */
  claimIdle(consumer: string): Entry[] {
    const now = Date.now();
    const claimed: Entry[] = [];
    for (const pending of this.pending.values()) {
      if (now - pending.deliveredAt < this.claimIdleMs) continue;
      pending.consumer = consumer;
      pending.deliveredAt = now;
      claimed.push(pending.entry);
    }
    return claimed;
  }

  ack(seq: number): void {
    this.pending.delete(seq);
  }

  wasHandled(batchId: string): boolean {
    const until = this.handled.get(batchId);
    return until !== undefined && until > Date.now();
  }

  markHandled(batchId: string): void {
    const now = Date.now();
    // Forget expired ids as new ones arrive; Map keeps insertion order, oldest first.
    for (const [id, until] of this.handled) {
      if (until > now) break;
      this.handled.delete(id);
    }
    this.handled.set(batchId, now + this.dedupeWindowMs);
  }

  /** XCLAIM … IDLE: entries read but not handled before stop become claimable at once. */
  release(entries: Entry[]): void {
    for (const entry of entries) {
      const pending = this.pending.get(entry.seq);
      if (pending) pending.deliveredAt = Date.now() - this.claimIdleMs;
    }
    for (const consumer of this.consumers) consumer.wake();
  }
}

class MemoryConsumer {
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly done: Promise<void>;

  constructor(
    private readonly stream: MemoryChangeStream,
    private readonly name: string,
    private readonly handler: ChangeHandler,
  ) {
    this.done = this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    const claimEveryMs = Math.max(1, Math.floor(this.stream.claimIdleMs / 2));
    let nextClaimAt = 0;
    while (!this.stopping) {
      if (Date.now() >= nextClaimAt) {
        await this.deliverAll(this.stream.claimIdle(this.name));
        nextClaimAt = Date.now() + claimEveryMs;
        continue;
      }
      const entries = this.stream.readNew(this.name);
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
    for (let i = 0; i < entries.length; i++) {
      if (this.stopping) {
        this.stream.release(entries.slice(i));
        return;
      }
      await this.deliver(entries[i]);
    }
  }

  private async deliver(entry: Entry): Promise<void> {
    const batch = JSON.parse(entry.json) as ChangeBatch;
    if (this.stream.wasHandled(batch.id)) {
      this.stream.ack(entry.seq);
      return;
    }
    try {
      await this.handler(batch, positionOf(entry.seq));
    } catch (error) {
      this.stream.log(`change batch ${batch.id} failed in ${this.name}, redelivered after ${this.stream.claimIdleMs}ms`, error);
      return;
    }
    this.stream.markHandled(batch.id);
    this.stream.ack(entry.seq);
  }
}
