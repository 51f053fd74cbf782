// Every Redis key the bus uses, in one place. Keys that a script, a transaction or a pipeline uses
// together carry the same hash tag (the text between `{` and `}`), so that on a Redis Cluster
// they live in one slot, as a cluster requires; on one server the tags are just part of the name.
//
// - An organization's event queues: `{<prefix>r<realm id>}`. Its queues' keys, its per-user sets,
//   the log of its queues' creations and deletions, its sorted sets by last poll and by deadline, and the hash of its
//   queues' settings: a fan-out to any number of its queues is one script call, and a realm's
//   queues are on one master (different realms spread over the masters).
// - The change stream: `{<prefix>changes}`. Its shards' streams, leases, handled marks and
//   consumer sets: a consumer reads all the shards it holds in one blocking XREADGROUP. A stream
//   entry is per transaction, not per delivery, so one master carries it.
// - BullMQ: `{<prefix>bull}`, as BullMQ requires on a cluster (its scripts touch a queue's keys
//   together).
// Every key starts with the prefix or with `{` and the prefix.

/** The organization and user a queue id names (queue ids carry both: see newQueueId). */
export interface QueueOwner {
  realmId: number;
  userId: number;
}

/** `<realm id>:<user id>:<seconds>:<random hex>`, as newQueueId makes them. */
const QUEUE_ID = /^(\d{1,15}):(\d{1,15}):\d+:[0-9a-f]+$/;

/** The owner a queue id names; null for text that is no queue id of this store (the queue does not exist). */
export function queueOwner(queueId: string): QueueOwner | null {
  const realmId = queueRealmId(queueId);
  if (realmId === null) return null;
  let at = queueId.indexOf(":") + 1;
  let userId = 0;
  for (let c = queueId.charCodeAt(at); c !== 58; c = queueId.charCodeAt(++at)) userId = userId * 10 + (c - 48);
  return { realmId, userId };
}

/** The organization a queue id names (queueOwner's realmId), with no object made: every queue of every fan-out asks. */
export function queueRealmId(queueId: string): number | null {
  // Read digit by digit once the id is known good: every delivery's append and acknowledgment
  // asks, and a match's array and strings each time were garbage.
  if (!QUEUE_ID.test(queueId)) return null;
  let realmId = 0;
  for (let at = 0, c = queueId.charCodeAt(0); c !== 58; c = queueId.charCodeAt(++at)) realmId = realmId * 10 + (c - 48);
  return realmId;
}

export class BusKeys {
  constructor(readonly prefix: string) {
    if (/[{}]/.test(prefix)) throw new Error(`the Redis prefix must not contain { or }, got ${JSON.stringify(prefix)}`);
  }

  /** The hash tag of one organization's queue keys. */
  realmTag(realmId: number): string {
    return `{${this.prefix}r${realmId}}`;
  }
  /** A queue's hash: userId, realmId, nextId, lastPollMs and idleTimeoutMs. */
  queue(realmId: number, queueId: string): string {
    return `${this.realmTag(realmId)}q:${queueId}`;
  }
  /** A queue's events, scored by id. */
  queueEvents(realmId: number, queueId: string): string {
    return `${this.realmTag(realmId)}qe:${queueId}`;
  }
  /** The source ids applied to a queue, scored by time. */
  queueSources(realmId: number, queueId: string): string {
    return `${this.realmTag(realmId)}qs:${queueId}`;
  }
  /**
   * The realm's queues by id: what the fan-out needs of each besides its id (queue-scripts.ts,
   * packQueueInfo). A script that finds a queue in a set reads it here, from a key it declared,
   * rather than from the queue's own hash, whose name it would have to build.
   */
  queueInfo(realmId: number): string {
    return `${this.realmTag(realmId)}qinfo`;
  }
  userQueues(realmId: number, userId: number): string {
    return `${this.realmTag(realmId)}uq:${userId}`;
  }
  /** The creations and deletions of the realm's queues, a capped stream (realm-queues.ts). */
  queueLog(realmId: number): string {
    return `${this.realmTag(realmId)}qlog`;
  }
  /** The realm's queues without an idle timeout of their own, by last poll time. */
  queuesByPoll(realmId: number): string {
    return `${this.realmTag(realmId)}qpoll`;
  }
  /** The realm's queues with their own idle timeout (queue_lifespan_secs), by the time they expire. */
  queuesByDeadline(realmId: number): string {
    return `${this.realmTag(realmId)}qdeadline`;
  }
  /** The realms that have had queues: what the idle sweep and the count walk. */
  realmsWithQueues(): string {
    return `${this.prefix}qrealms`;
  }
  queueReadyChannel(): string {
    return `${this.prefix}queue-ready`;
  }

  /** The hash tag of every change stream key. */
  changesTag(): string {
    return `{${this.prefix}changes}`;
  }
  changeStream(shard: number): string {
    return `${this.changesTag()}:${shard}`;
  }
  /** A consumer group's live consumers, scored by their last lease renewal (shard-leases.ts). */
  changeConsumers(group: string): string {
    return `${this.changesTag()}consumers:${group}`;
  }
  /** Marks a change batch id as handled by a group, so a republished copy is dropped. */
  handledBatch(group: string, batchId: string): string {
    return `${this.changesTag()}handled:${group}:${batchId}`;
  }

  /** BullMQ's prefix; it appends `:<queue name>:...` itself. */
  jobs(): string {
    return `{${this.prefix}bull}`;
  }
}
