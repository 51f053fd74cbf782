// Queues this node answered from the announcement that brought their events, while nothing more
// has been announced of them. When a message reaches a big stream, every poll is answered from the
// announcement and comes straight back with the last event it got; its queue holds nothing newer
// (anything appended since would have been announced, after the announcement answered, on the same
// subscription), so the poll waits without reading its queue back. What that read also did (drop
// the acknowledged events, record the poll for idle expiry) is sent for many queues at once. The
// read was a Redis script call and its reply, per delivery, a good part of what one cost.
import type { QueueAck, QueueStore } from "@chat/bus";
import { logger } from "@chat/logger";

/**
 * Acknowledgments wait this long to go with others: after a fan-out's burst of answers and polls
 * rather than in it (where Redis and this process are busy delivering), and a busy queue's several
 * as one. Nothing waits on them: they only drop events the client already has, and record the poll.
 */
const ACK_DELAY_MS = 1000;
/** Past this many queues waiting, they go at once. */
const MAX_PENDING_ACKS = 10_000;
/**
 * Answered queues remembered at most: a client that never polls again leaves its entry, and past
 * this many all are forgotten (their next polls read, as always).
 */
const MAX_ANSWERED = 100_000;

interface Answered {
  userId: number;
  lastEventId: number;
}

export class AnsweredQueues {
  private readonly answered = new Map<string, Answered>();
  /** By queue: a queue acknowledged again before they go sends only its latest. */
  private pending = new Map<string, QueueAck>();
  private timer: NodeJS.Timeout | undefined = undefined;

  /** `recheck` makes the polls of these queues read them (gone, another's, or the acknowledgment failed). */
  constructor(
    private readonly queues: QueueStore,
    private readonly recheck: (queueIds: string[]) => void,
    private readonly ackDelayMs = ACK_DELAY_MS,
  ) {}

  /** A poll of `userId` was answered with the queue's events through `lastEventId`, all from their announcement. */
  answeredFromAnnouncement(queueId: string, userId: number, lastEventId: number): void {
    if (this.answered.size >= MAX_ANSWERED) this.answered.clear();
    this.answered.set(queueId, { userId, lastEventId });
  }

  /** The queue was announced: it may hold events after those answered. */
  announced(queueId: string): void {
    this.answered.delete(queueId);
  }

  /** Announcements may have been missed: nothing is known of any queue. */
  forgetAll(): void {
    this.answered.clear();
  }

  /**
   * Whether a poll of the queue by `userId` after `lastEventId` may wait without reading it: this
   * node answered that user exactly through that event, and nothing was announced since. If so,
   * the poll's acknowledgment is sent (with others) and the queue is forgotten until answered again.
   */
  takeQuiet(queueId: string, userId: number, lastEventId: number): boolean {
    const answered = this.answered.get(queueId);
    if (answered === undefined) return false;
    this.answered.delete(queueId);
    if (answered.userId !== userId || answered.lastEventId !== lastEventId) return false;
    const waiting = this.pending.get(queueId);
    if (waiting === undefined || waiting.lastEventId < lastEventId) this.pending.set(queueId, { queueId, lastEventId, ownerId: userId });
    if (this.pending.size >= MAX_PENDING_ACKS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.ackDelayMs).unref();
    return true;
  }

  /** Sends the waiting acknowledgments now. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const acks = [...this.pending.values()];
    this.pending.clear();
    this.queues.acknowledge(acks).then(
      (missing) => {
        if (missing.length > 0) this.recheck(missing);
      },
      (error: unknown) => {
        logger.warn("acknowledging polled queues failed: their polls read them", { queues: acks.length, error: error instanceof Error ? error.message : String(error) });
        this.recheck(acks.map((ack) => ack.queueId));
      },
    );
  }
}
