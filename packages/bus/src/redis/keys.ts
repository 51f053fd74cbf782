// Every Redis key the bus uses, in one place. The queue scripts rebuild the `uq:`/`apq:` keys
// from the prefix (they only learn userId/realmId from the hash), so keep those in step.

export class BusKeys {
  constructor(readonly prefix: string) {}

  changeStream(shard: number): string {
    return `${this.prefix}changes:${shard}`;
  }
  /** A consumer group's live consumers, scored by their last lease renewal (shard-leases.ts). */
  changeConsumers(group: string): string {
    return `${this.prefix}changes-consumers:${group}`;
  }
  /** Marks a change batch id as handled by a group, so a republished copy is dropped. */
  handledBatch(group: string, batchId: string): string {
    // The event tier's keys keep their old form, so a rolling upgrade still drops its copies.
    return group === "events" ? `${this.prefix}handled:${batchId}` : `${this.prefix}handled:${group}:${batchId}`;
  }
  queue(queueId: string): string {
    return `${this.prefix}q:${queueId}`;
  }
  queueEvents(queueId: string): string {
    return `${this.prefix}qe:${queueId}`;
  }
  queueSources(queueId: string): string {
    return `${this.prefix}qs:${queueId}`;
  }
  userQueues(realmId: number, userId: number): string {
    return `${this.prefix}uq:${realmId}:${userId}`;
  }
  allPublicStreamsQueues(realmId: number): string {
    return `${this.prefix}apq:${realmId}`;
  }
  /** Queues without an idle timeout of their own, by last poll time. */
  queuesByPoll(): string {
    return `${this.prefix}qpoll`;
  }
  /** Queues with their own idle timeout (queue_lifespan_secs), by the time they expire. */
  queuesByDeadline(): string {
    return `${this.prefix}qdeadline`;
  }
  queueReadyChannel(): string {
    return `${this.prefix}queue-ready`;
  }
  /** BullMQ appends `:<queue name>:...` itself. */
  jobs(): string {
    return `${this.prefix}bull`;
  }
}
