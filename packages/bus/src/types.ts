// The three infrastructure interfaces between the tiers. Each has a Redis implementation
// (production, any number of nodes) and an in-process one (the embedded single-process mode);
// one contract test suite runs against both, so the embedded mode cannot drift.

/** A client-facing event as Zulip defines it, before the queue assigns its `id`. */
export type EventPayload = { type: string } & Record<string, unknown>;

/**
 * Who receives an event: plain user ids, or (for `message` events, as in Zulip) objects carrying
 * that user's flags for the message, or users who share the same flags. The message write uses
 * the last: most of a stream's recipients share `[]`, and a list of 1,000 user objects was most of
 * what a send to a big stream wrote to the outbox and the change stream.
 */
export type EventRecipient = number | { id: number; flags: string[] } | { ids: number[]; flags: string[] };

/**
 * Calls `each` with every user an event reaches, and their flags if the event carries them. A
 * callback rather than a generator of pairs: a message to a big stream reaches a thousand users,
 * and an object per user per pass was garbage the fan-out made on every send.
 */
export function forEachEventRecipient(users: Iterable<EventRecipient>, each: (id: number, flags: string[] | null) => void): void {
  for (const recipient of users) {
    if (typeof recipient === "number") each(recipient, null);
    else if ("ids" in recipient) for (const id of recipient.ids) each(id, recipient.flags);
    else each(recipient.id, recipient.flags);
  }
}

export interface RoutedEvent {
  event: EventPayload;
  users: EventRecipient[];
  /** Also deliver to the realm's queues registered with all_public_streams (public stream messages). */
  allPublicStreams?: boolean;
  /**
   * Service bots (outgoing webhook, embedded) a `message` event triggers: the worker tier queues
   * a call for each, from the committed change, never from the request. In the order the worker
   * takes them when there are more than one message may call: in a stream, those mentioned by
   * name, then those mentioned through a group, each by id; in a private conversation, by id.
   */
  services?: ServiceTrigger[];
}

/** A service bot a message calls upon, and why (Zulip's trigger). */
export interface ServiceTrigger {
  botId: number;
  // "direct_message" since feature level 201 (it was "private_message").
  trigger: "mention" | "direct_message";
}

/** All events one committed transaction recorded, in order. Published as one stream entry. */
export interface ChangeBatch {
  /** The outbox row id: unique per batch, so consumers can drop a batch delivered twice. */
  id: string;
  realmId: number;
  events: RoutedEvent[];
  /**
   * The X-Request-Id of the requests whose changes these are (several when concurrent sends
   * share a statement): the tiers that handle the batch name them in their log lines.
   */
  requestIds?: string[];
}

/**
 * Where a batch sits in the change stream: `ms-seq` (Redis stream ids; the embedded stream uses
 * `0-seq`). Positions of one realm's batches grow in publishing order.
 */
export type StreamPosition = string;

/** The position before any batch. */
export const STREAM_START: StreamPosition = "0-0";

/**
 * Orders two runs of decimal digits without leading zeros (as stream ids write them): the longer
 * is larger, else the first differing digit decides.
 */
function compareDigits(a: string, aFrom: number, aTo: number, b: string, bFrom: number, bTo: number): number {
  if (aTo - aFrom !== bTo - bFrom) return aTo - aFrom - (bTo - bFrom);
  for (let i = 0; i < aTo - aFrom; i++) {
    const difference = a.charCodeAt(aFrom + i) - b.charCodeAt(bFrom + i);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * Whether `position` comes after `since` (both of the same realm's shard). The fan-out asks this
 * for every queue a batch reaches: compared in place, since splitting both ids cost 0.45 ms per
 * 1,000 queues.
 */
export function isAfterPosition(position: StreamPosition, since: StreamPosition): boolean {
  const dash = position.indexOf("-");
  const sinceDash = since.indexOf("-");
  const ms = compareDigits(position, 0, dash, since, 0, sinceDash);
  return ms > 0 || (ms === 0 && compareDigits(position, dash + 1, position.length, since, sinceDash + 1, since.length) > 0);
}

export interface Stoppable {
  stop(): Promise<void>;
}

export type ChangeHandler = (batch: ChangeBatch, position: StreamPosition) => Promise<void>;

/**
 * The consumer groups of the change stream: the event tier fills queues, the worker tier enqueues
 * the jobs a change asks for (outgoing webhooks). Each group reads every batch once, on its own
 * cursor; both exist from a stream's first entry, so neither misses one.
 */
export const CHANGE_GROUPS = ["events", "workers"] as const;
export type ChangeGroup = (typeof CHANGE_GROUPS)[number];

export interface ConsumeOptions {
  /** Default: "events". */
  group?: ChangeGroup;
  /**
   * Only batches whose JSON text contains this are parsed and handled; the others are
   * acknowledged unread. The worker tier reads every change of every realm for the few that call
   * a service bot: parsing a send to a big stream (30 KiB of recipients) only to skip it would cost
   * more than all the rest of its work.
   */
  containing?: string;
}

/** A read's new batches at once, in stream order, with their positions (ChangeStream.consumeInOrder). */
export type ChangeBatchesHandler = (batches: Array<{ batch: ChangeBatch; position: StreamPosition }>) => Promise<void>;

/** A read's batches at once, in stream order (ChangeStream.consumeReads). */
export type ChangeReadHandler = (batches: ChangeBatch[]) => Promise<void>;

/** Batches a consumer group will never read: dropped past the stream's cap before it read them. */
export interface DroppedChanges {
  group: ChangeGroup;
  count: number;
  /** Each realm that lost batches, with the position of the last it lost. */
  realms: Map<number, StreamPosition>;
}

/**
 * The change log: API nodes publish after commit, the event tier consumes as one group. Entries
 * stay until every group has acknowledged them; only past `maxEntries` unread ones (a tier down
 * for a long time) are the oldest dropped, and then `onDropped` listeners hear which realms lost
 * what, so that no event queue is left silently missing events.
 */
export interface ChangeStream {
  publish(batches: ChangeBatch[]): Promise<void>;
  /** The position of the last batch published for this realm so far (STREAM_START if none). */
  position(realmId: number): Promise<StreamPosition>;
  /**
   * Join a consumer group (by default the one shared by every event node). The handler is called once per batch,
   * in stream order for this consumer, with the batch's position; a batch is acknowledged only
   * after the handler resolves.
   * A batch whose handler threw, or that a dead consumer held, is delivered again (possibly to
   * another consumer) after `claimIdleMs`. A batch whose id was already handled (published twice,
   * as the outbox sweeper may after a crash) is acknowledged without calling the handler again,
   * for `dedupeWindowMs` after the group handled it.
   */
  consume(consumerName: string, handler: ChangeHandler, options?: ConsumeOptions): Stoppable;
  /**
   * Join a consumer group with a handler that depends on no order and dedupes by itself (it queues
   * jobs once per item: JobQueue.addEach). It gets the batches of each read (up to 100) at once,
   * and they are acknowledged together when it resolves; if it throws, the whole read is delivered
   * again after `claimIdleMs` (possibly to another consumer, and cut into reads differently). No
   * handled-batch marks are kept: a republished batch is handed over again. Round trips per batch
   * drop from five to a share of one.
   */
  consumeReads(consumerName: string, handler: ChangeReadHandler, options?: ConsumeOptions): Stoppable;
  /**
   * As `consume` (in order, one consumer of the group per shard at a time, handled batch ids
   * dropped), but the handler gets each read's batches at once (up to 100, those not handled
   * before), so that it can share its round trips among them; they are acknowledged together when
   * it resolves. If it throws, the read stays pending and is delivered again, whole, after
   * `claimIdleMs` or to the shard's next owner.
   */
  consumeInOrder(consumerName: string, handler: ChangeBatchesHandler, options?: ConsumeOptions): Stoppable;
  /**
   * Removes what every group has acknowledged, then drops the oldest entries past the cap and
   * tells `onDropped` listeners. Publishing runs it by itself (at most once a second per node).
   */
  trim(): Promise<void>;
  onDropped(listener: (dropped: DroppedChanges) => Promise<void> | void): void;
  close(): Promise<void>;
}

/** What a queue remembers about its client; opaque to the store except for the fields below. */
export interface QueueOptions {
  userId: number;
  realmId: number;
  /** Queues registered with all_public_streams also receive public stream messages. */
  allPublicStreams: boolean;
  /** Everything else the event tier needs to filter and shape events (event_types, narrow …). */
  settings: Record<string, unknown>;
  /**
   * The change stream's position for the realm when the queue was created (read before creating
   * it); the fan-out appends only later batches. An earlier batch was published before the queue
   * existed, so its change is in the state /register reads after creating the queue. Default:
   * STREAM_START (every batch).
   */
  since?: StreamPosition;
  /** How long the queue may go unpolled before expiry deletes it; unset: the idle time deleteIdle is given. */
  idleTimeoutMs?: number;
}

/** What the fan-out needs of a queue: what it was made with, not how it is polled. */
export interface QueueTarget extends QueueOptions {
  id: string;
  since: StreamPosition;
}

export interface QueueInfo extends QueueTarget {
  /** Milliseconds since the epoch of the last poll (or of creation). */
  lastPollMs: number;
}

export interface QueuedEvent extends EventPayload {
  id: number;
}

/**
 * Events just appended to one queue, as announced: `json()` is what a read after `firstId - 1`
 * would return at that moment (JSON text with ids), built only when a held poll takes it.
 */
export interface AnnouncedEvents {
  readonly firstId: number;
  /** How many events: json().length. */
  readonly count: number;
  json(): string[];
  /** The UTF-8 length of json()'s texts joined by commas (a JSON array's members). */
  jsonByteLength(): number;
  /** Writes json()'s texts joined by commas into `target` at `offset` as UTF-8 (jsonByteLength() bytes); their length. */
  writeJson(target: Buffer, offset: number): number;
}

export type QueueReadyListener = (queueId: string, events?: AnnouncedEvents) => void;

/** A poll's acknowledgment of its queue's events through `lastEventId`. */
export interface QueueAck {
  queueId: string;
  lastEventId: number;
  ownerId: number;
}

export interface QueueAppend {
  queueId: string;
  events: EventPayload[];
}

/** Bounds on what clients make the queue store hold (defaults.ts). */
export interface QueueLimits {
  /** Events one queue holds; an append past it drops the queue (its next poll: BAD_EVENT_QUEUE_ID). 0: no limit. */
  maxEventsPerQueue?: number;
  /** Queues one user holds; creating one more deletes the least recently polled. */
  maxQueuesPerUser?: number;
}

/**
 * The per-client event queues. Ids within a queue start at 0 and increase by one. A queue is
 * bounded (QueueLimits): one that overflows, or is evicted by its user's newer queues, is deleted
 * and announced, so its next or waiting poll finds it gone.
 */
export interface QueueStore {
  create(options: QueueOptions): Promise<QueueInfo>;
  get(queueId: string): Promise<QueueInfo | null>;
  /** Every live queue of these users (in one round trip for Redis). */
  queuesOfUsers(realmId: number, userIds: number[]): Promise<QueueTarget[]>;
  /** Every live queue of a realm registered with all_public_streams. */
  allPublicStreamsQueues(realmId: number): Promise<QueueTarget[]>;
  /**
   * Every live queue of every realm, a page at a time (a page may repeat a queue an earlier one
   * gave): rare walks (an event node starting up tells old queues to restart), which should hold
   * one page, not every queue, in memory.
   */
  allQueues(): AsyncIterable<QueueTarget[]>;
  /**
   * Appends events to queues, each queue at most once per `sourceId` (a batch redelivered after a
   * crash adds nothing twice). Appending to a queue that no longer exists is a no-op. Announces
   * every queue that received events to every `onReady` listener, on every node. Appends called
   * one after another, without waiting for the first, apply in the order they were called.
   */
  append(sourceId: string, appends: QueueAppend[]): Promise<void>;
  /**
   * Drops the events with id <= lastEventId (the client acknowledged them), records the poll time,
   * and returns the remaining events in order; null if the queue does not exist, or, given
   * `ownerId`, is another user's (then it is left as it was). One round trip: a poll checks whose
   * queue it reads in the same step.
   */
  read(queueId: string, lastEventId: number, ownerId?: number): Promise<QueuedEvent[] | null>;
  /** The same, each event as its JSON text: what a poll answers with, never parsed. */
  readJson(queueId: string, lastEventId: number, ownerId?: number): Promise<string[] | null>;
  /**
   * What `read` records, for many queues at once, answering no events: for polls that know their
   * queue holds nothing after their last event. Returns the ids of the queues that do not exist or
   * are not their owner's (left as they were).
   */
  acknowledge(acks: QueueAck[]): Promise<string[]>;
  /** Highest id assigned so far in the queue, -1 if none; null if the queue does not exist. */
  lastEventId(queueId: string): Promise<number | null>;
  delete(queueId: string): Promise<boolean>;
  /**
   * Deletes these queues and announces them, so a poll waiting on one answers BAD_EVENT_QUEUE_ID
   * at once and its client registers again: for queues a change has made wrong (their user lost
   * what they were registered to receive). Ids of queues that do not exist are ignored. Returns
   * how many were deleted.
   */
  invalidate(queueIds: string[]): Promise<number>;
  /**
   * Deletes (and announces) the realm's queues created before `through`: the change stream dropped
   * a batch of the realm at that position before the fan-out read it, so they may lack its events.
   * Returns how many.
   */
  invalidateRealm(realmId: number, through: StreamPosition): Promise<number>;
  /** How many queues the store holds (metrics). */
  count(): Promise<number>;
  /** Deletes queues not polled for their own idle timeout, or for `idleMs` if they have none; returns how many. */
  deleteIdle(idleMs: number): Promise<number>;
  /**
   * Called with the id of each queue that received events, on every node. One subscription per
   * node. With the events themselves when the store sends them along (small batches): a poll held
   * at the event before them answers from these without reading its queue.
   */
  onReady(listener: QueueReadyListener): Promise<void>;
  /**
   * Called when announcements may have been missed: this node's subscription was lost (Redis went
   * away) or is back after a loss. Waiting polls should read their queues again, and so learn of
   * events announced meanwhile, or of the outage itself. The in-process store never misses one.
   */
  onAnnouncementsMissed(listener: () => void): void;
  close(): Promise<void>;
}

export interface JobOptions {
  /** A job added twice with the same id runs once (while the finished job is kept). */
  jobId?: string;
  attempts?: number;
  /** Base of the exponential backoff between attempts. */
  backoffMs?: number;
  /** How long a completed job is kept, and so its jobId still dedupes (default a day). */
  keepCompletedSeconds?: number;
  /** Run no sooner than this long after it is added. */
  delayMs?: number;
}

/** Which attempt of a job a handler runs: 1-based, of `attempts`. */
export interface JobAttempt {
  attempt: number;
  attempts: number;
}

/**
 * A handler's answer that puts its job off: it leaves its worker's slot and runs again after
 * `delayMs` (behind the jobs then waiting), and the run is not counted as an attempt. For a
 * worker that has no room for the job just now (service bot calls: its organization's share is
 * taken) and must not hold a slot while it waits.
 */
export interface JobDeferral {
  deferMs: number;
}

export type JobHandler = (data: Record<string, unknown>, attempt: JobAttempt) => Promise<void | JobDeferral>;

/** One piece of work that JobQueue.addEach queues once, whichever job carries it. */
export interface JobItem {
  /** Names the item for good (a service bot call: `<message id>:<bot id>`). */
  key: string;
  data: Record<string, unknown>;
}

export interface AddEachOptions extends Omit<JobOptions, "jobId"> {
  /** The most items one job carries. */
  perJob: number;
}

/** Background jobs (outgoing webhooks, sweeps), retried with backoff, never run in the request path. */
export interface JobQueue {
  add(name: string, data: Record<string, unknown>, options?: JobOptions): Promise<void>;
  /**
   * Queues each item once: in jobs of at most `perJob` items, with data `{ items: [data, ...] }`
   * and the id of their first item's key. An item a job already carries (a job that still exists:
   * waiting, running, or finished and kept for `keepCompletedSeconds`) is left out, so the same
   * items offered again, however they are grouped, queue nothing twice. Rejects, queueing nothing
   * of that job, if another caller is queueing one of its items at this moment (the caller tries
   * again later); an item whose job was never queued (its queuer died) is taken over once that
   * queuer has had its time. Resolves to how many items were queued.
   */
  addEach(name: string, items: JobItem[], options: AddEachOptions): Promise<number>;
  /** Run jobs of this name on this node; a handler that throws is retried until attempts run out. */
  process(name: string, handler: JobHandler, concurrency?: number): Stoppable;
  close(): Promise<void>;
}

export interface Bus {
  changes: ChangeStream;
  queues: QueueStore;
  jobs: JobQueue;
  /** Resolves once the bus's server answers (readiness checks); the in-process bus always does. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
