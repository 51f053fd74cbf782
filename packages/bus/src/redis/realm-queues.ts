// A node's copy of each organization's queues, for the fan-out. Finding the queues of a message's
// thousand recipients in Redis was a script walking a thousand sets on every send, in Redis's
// one thread, before any queue could be written. Instead each realm keeps a log of its queues'
// creations and deletions (a capped stream, written in the same transaction or script as the
// change), and a node brings its copy up to date with what the log holds after the last entry it
// applied: on most sends, nothing. A node whose copy is older than the log reaches back (a new
// node, or one idle through ten thousand changes) reads the realm's queues afresh.
import { isAfterPosition, type QueueTarget } from "../types";
import { unpackQueueInfo, type QueueLogAnswer, type QueueLogEntry } from "./queue-scripts";

/** One realm's queues as of a log entry. */
export class RealmQueues {
  /** The last log entry applied ('0-0' before any). */
  private lastId = "0-0";
  /** Each queue, with its settings text (to find its shared settings when it goes). */
  private readonly byId = new Map<string, { queue: QueueTarget; settingsText: string }>();
  private readonly byUser = new Map<number, QueueTarget[]>();
  private readonly allPublicStreams = new Set<QueueTarget>();
  /**
   * One settings object per distinct settings text, with the number of queues using it: the
   * fan-out shapes an event once per settings object, and most queues of a realm share one.
   */
  private readonly settings = new Map<string, { settings: Record<string, unknown>; queues: number }>();
  /** When a fan-out last used this copy (the store drops copies unused for long). */
  usedAt = Date.now();

  constructor(private readonly realmId: number) {}

  /** Whether this copy has applied any answer yet: one that has not asks for the realm afresh. */
  get loaded(): boolean {
    return this.lastId !== "0-0" || this.byId.size > 0;
  }

  /** The id to ask the log for what follows. */
  get since(): string {
    return this.lastId;
  }

  /**
   * Applies an answer of busQueueLogSince. Answers to concurrent lookups can arrive in either
   * order: entries this copy has applied already, and a fresh read older than the copy, change
   * nothing.
   */
  apply(answer: QueueLogAnswer): void {
    if (answer[0] === 0) {
      for (const entry of answer[1]) this.applyEntry(entry);
      return;
    }
    const [, lastId, flat] = answer;
    if (this.loaded && !isAfterPosition(lastId, this.lastId)) return;
    this.byId.clear();
    this.byUser.clear();
    this.allPublicStreams.clear();
    this.settings.clear();
    for (let i = 0; i + 1 < flat.length; i += 2) this.add(flat[i], flat[i + 1]);
    this.lastId = lastId;
  }

  /** Every queue of these users. */
  queuesOfUsers(userIds: Iterable<number>): QueueTarget[] {
    const found: QueueTarget[] = [];
    for (const userId of new Set(userIds)) {
      const queues = this.byUser.get(userId);
      if (queues !== undefined) found.push(...queues);
    }
    return found;
  }

  allPublicStreamsQueues(): QueueTarget[] {
    return [...this.allPublicStreams];
  }

  private applyEntry([id, fields]: QueueLogEntry): void {
    if (!isAfterPosition(id, this.lastId)) return;
    this.lastId = id;
    if (fields[0] === "c") this.add(fields[1], fields[3]);
    else if (fields[0] === "d") this.remove(fields[1]);
  }

  private add(queueId: string, info: string): void {
    if (this.byId.has(queueId)) return;
    const [allPublicStreams, since, idleTimeoutMs, settingsText] = unpackQueueInfo(info);
    let shared = this.settings.get(settingsText);
    if (shared === undefined) this.settings.set(settingsText, (shared = { settings: JSON.parse(settingsText) as Record<string, unknown>, queues: 0 }));
    shared.queues++;
    const queue: QueueTarget = {
      id: queueId,
      // The id's second part (keys.ts, queueOwner), without a regular expression per queue.
      userId: Number(queueId.slice(queueId.indexOf(":") + 1, queueId.indexOf(":", queueId.indexOf(":") + 1))),
      realmId: this.realmId,
      allPublicStreams: allPublicStreams === "1",
      settings: shared.settings,
      since,
      ...(idleTimeoutMs !== "" ? { idleTimeoutMs: Number(idleTimeoutMs) } : {}),
    };
    this.byId.set(queueId, { queue, settingsText });
    const ofUser = this.byUser.get(queue.userId);
    if (ofUser === undefined) this.byUser.set(queue.userId, [queue]);
    else ofUser.push(queue);
    if (queue.allPublicStreams) this.allPublicStreams.add(queue);
  }

  private remove(queueId: string): void {
    const known = this.byId.get(queueId);
    if (known === undefined) return;
    const { queue, settingsText } = known;
    this.byId.delete(queueId);
    const ofUser = this.byUser.get(queue.userId)!.filter((other) => other !== queue);
    if (ofUser.length === 0) this.byUser.delete(queue.userId);
    else this.byUser.set(queue.userId, ofUser);
    this.allPublicStreams.delete(queue);
    const shared = this.settings.get(settingsText)!;
    if (--shared.queues === 0) this.settings.delete(settingsText);
  }
}
