// Recording and publishing events. An action records events inside its transaction, into the
// outbox row that commits with it; after commit the runner publishes the row to the change stream
// and forgets it. If this node dies in between, the worker's sweeper publishes the row later, so a
// committed change never loses its event and a rolled-back one never produces one.
import type { ChangeBatch, ChangeStream, EventPayload, EventRecipient, RoutedEvent } from "@chat/bus";
import type { PrismaClient, Tx } from "@chat/db";
import { logger } from "@chat/logger";
import { isOutageError } from "./outage.ts";
import { GroupCommit } from "./lib/group-commit.ts";

/**
 * An event no client receives: the fan-out ends the queues of its recipients (every queue, or with
 * `all_public_streams_only` those registered with all_public_streams) before anything later
 * reaches them. Their clients get BAD_EVENT_QUEUE_ID and register again, with a state the change
 * allows. For a change that takes from a user what their queue's state holds or what it was
 * registered to receive, which no event of the API can take back (a queue's options are checked
 * at /register only).
 */
export const END_QUEUES_EVENT = "end_queues";

export class EventRecorder {
  readonly events: RoutedEvent[] = [];

  /** Ends these users' queues (END_QUEUES_EVENT), after the events recorded before this. */
  endQueues(userIds: Iterable<number>, options: { allPublicStreamsOnly?: boolean } = {}): void {
    this.send(options.allPublicStreamsOnly ? { type: END_QUEUES_EVENT, all_public_streams_only: true } : { type: END_QUEUES_EVENT }, userIds);
  }

  send(event: EventPayload, users: Iterable<EventRecipient>, options: { allPublicStreams?: boolean } = {}): void {
    const list = [...users];
    if (list.length > 0 || options.allPublicStreams) {
      this.events.push(options.allPublicStreams ? { event, users: list, allPublicStreams: true } : { event, users: list });
    }
  }

  /** Events already routed (built by the statement that made the change). */
  record(events: RoutedEvent[]): void {
    this.events.push(...events);
  }
}

/**
 * A kind of change that is one statement on its own (sending a message), so concurrent changes of
 * the kind can share a statement: `write` writes every item, and the outbox rows of the batches
 * it returns, in one statement.
 */
export interface GroupedWrite<I, O> {
  /**
   * Throws only when nothing was written (the statement failed): the items are then written again
   * one by one, so a throw after the commit would write them twice.
   */
  write(db: PrismaClient, items: I[]): Promise<{ results: O[]; batches: ChangeBatch[] }>;
  /** The rows an item is expected to write: statements of many rows may run side by side. */
  weight?(item: I): number;
}

/**
 * Most items per statement; a second statement may run beside one that writes at least
 * `heavyWeight` rows. Measured here: small messages are sent fastest one statement at a time
 * (1,000/s against 750/s with two), messages to a stream of 1,000 with two (57/s against 36/s).
 */
const GROUPING = { maxBatch: 32, maxConcurrent: 2, heavyWeight: 500 };

export type ActionBody<T> = (tx: Tx, events: EventRecorder) => Promise<T>;

/**
 * Where a change comes from: its organization and, for a change a request makes, the request's id
 * (X-Request-Id), which travels with its batch so the tiers that handle it can log it.
 */
export interface ChangeOrigin {
  realmId: number;
  requestId?: string;
}

const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 60_000 };

/**
 * After a publish fails (Redis down), how long later commits leave their events to the outbox
 * sweeper rather than each waiting out Redis's command timeout again.
 */
const PUBLISH_BACKOFF_MS = 1000;

export class ActionRunner {
  private readonly published: bigint[] = [];
  /** One group commit per kind of grouped write (its key). */
  private readonly groups = new Map<object, unknown>();
  private forgetTimer: NodeJS.Timeout | null = null;
  private publishPausedUntil = 0;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly changes: ChangeStream,
  ) {}

  /**
   * Runs an action in one transaction; its events are published once the transaction commits.
   * `origin` is the organization's id, or the organization and the request making the change.
   */
  async run<T>(origin: number | ChangeOrigin, body: ActionBody<T>): Promise<T> {
    const { realmId, requestId } = typeof origin === "number" ? { realmId: origin, requestId: undefined } : origin;
    const requestIds = requestId === undefined ? [] : [requestId];
    const recorder = new EventRecorder();
    let outboxId: bigint | null = null;
    const result = await this.prisma.$transaction(async (tx) => {
      const value = await body(tx, recorder);
      if (recorder.events.length > 0) outboxId = await insertOutboxRow(tx, realmId, recorder.events, requestIds);
      return value;
    }, TRANSACTION_OPTIONS);
    if (outboxId !== null) await this.publish([changeBatch(String(outboxId), realmId, recorder.events, requestIds)]);
    return result;
  }

  /**
   * Runs a change that is one statement on its own, atomic without a transaction: `prepare` reads
   * and validates, then the item joins whatever statement of its kind goes next (group commit),
   * and the batches that statement wrote are published as `run` publishes.
   */
  async runGrouped<I, O>(kind: GroupedWrite<I, O>, prepare: (db: PrismaClient) => Promise<I>): Promise<O> {
    const item = await prepare(this.prisma);
    return this.groupOf(kind).submit(item);
  }

  private groupOf<I, O>(kind: GroupedWrite<I, O>): GroupCommit<I, O> {
    let group = this.groups.get(kind) as GroupCommit<I, O> | undefined;
    if (!group) {
      group = new GroupCommit<I, O>(
        async (items) => {
          const { results, batches } = await kind.write(this.prisma, items);
          await this.publish(batches);
          return results;
        },
        { ...GROUPING, weight: kind.weight?.bind(kind) },
      );
      this.groups.set(kind, group);
    }
    return group;
  }

  private async publish(batches: ChangeBatch[]): Promise<void> {
    if (batches.length === 0) return;
    // Committed but not published: the sweeper publishes the outbox rows in a few seconds. The
    // request still succeeds, since its change is committed and its event will follow: an error
    // would make the client send it again, a duplicate.
    if (Date.now() < this.publishPausedUntil) return;
    try {
      await this.changes.publish(batches);
    } catch (error) {
      // Only an unreachable Redis is worth not asking for a while; any other failure is this batch's.
      if (isOutageError(error)) this.publishPausedUntil = Date.now() + PUBLISH_BACKOFF_MS;
      logger.warn("event publish failed; leaving it to the outbox sweeper", { batches: batches.map((b) => b.id), error: String(error) });
      return;
    }
    for (const batch of batches) this.published.push(BigInt(batch.id));
    this.forgetTimer ??= setTimeout(() => void this.forgetPublished(), 50);
  }

  /** Deletes published outbox rows in one statement every few milliseconds, off the request path. */
  private async forgetPublished(): Promise<void> {
    this.forgetTimer = null;
    const ids = this.published.splice(0);
    if (ids.length === 0) return;
    try {
      await this.prisma.$executeRaw`DELETE FROM event_outbox WHERE id = ANY(${ids}::bigint[])`;
    } catch (error) {
      logger.warn("could not delete published outbox rows; the sweeper will republish them", { error: String(error) });
    }
  }

  /** Waits for pending outbox deletions (on shutdown). */
  async flush(): Promise<void> {
    if (this.forgetTimer) clearTimeout(this.forgetTimer);
    await this.forgetPublished();
  }
}

/** A batch; `requestIds` only when there are some (most batches of the worker's have none). */
function changeBatch(id: string, realmId: number, events: RoutedEvent[], requestIds: string[] | null): ChangeBatch {
  return requestIds !== null && requestIds.length > 0 ? { id, realmId, events, requestIds } : { id, realmId, events };
}

async function insertOutboxRow(tx: Tx, realmId: number, events: RoutedEvent[], requestIds: string[]): Promise<bigint> {
  const rows = await tx.$queryRaw<{ id: bigint }[]>`
    INSERT INTO event_outbox (realm_id, events, request_ids)
    VALUES (${realmId}, ${JSON.stringify(events)}::json, ${requestIds.length > 0 ? requestIds : null}::text[]) RETURNING id`;
  return rows[0].id;
}

/** Seconds since the oldest change still in the outbox was committed; 0 when it is empty (metrics). */
export async function oldestOutboxAgeSeconds(prisma: PrismaClient): Promise<number> {
  const [row] = await prisma.$queryRaw<{ age: number | null }[]>`SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM event_outbox`;
  return Math.max(0, row?.age ?? 0);
}

/**
 * Publishes outbox rows older than `olderThanSeconds` (their publisher died or failed) and deletes
 * them. Rows are locked with SKIP LOCKED so several workers never publish the same row at once.
 * Returns how many batches were published.
 */
export async function sweepOutbox(prisma: PrismaClient, changes: ChangeStream, olderThanSeconds: number, limit = 500): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: bigint; realm_id: number; events: RoutedEvent[]; request_ids: string[] | null }[]>`
      SELECT id, realm_id, events, request_ids FROM event_outbox
      WHERE created_at < now() - make_interval(secs => ${olderThanSeconds})
      ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
    if (rows.length === 0) return 0;
    await changes.publish(rows.map((row) => changeBatch(String(row.id), row.realm_id, row.events, row.request_ids)));
    await tx.$executeRaw`DELETE FROM event_outbox WHERE id = ANY(${rows.map((row) => row.id)}::bigint[])`;
    return rows.length;
  }, TRANSACTION_OPTIONS);
}
