// Service bot calls in one worker process, shared fairly between organizations. A bot's service
// chosen by one organization may hang for the whole timeout; without a share of its own, its calls
// took every slot and another organization's call waited for them (128 bots on a URL that never
// answered kept another organization's call 19 s from a 0.2 s service). Here an organization has
// at most `perRealm` calls under way of the process's `total`, and holds at most `perRealm` jobs:
// a job beyond that is put off (back to the queue, JobDeferral), so it holds no slot of the job
// queue's while it waits and the queue reaches the next organization's jobs. Calls that wait for a
// slot start in turn, one organization after another.

/** A job put off comes back no sooner than this (a busy organization's jobs would otherwise cycle). */
const MIN_DEFER_MS = 100;
/** ... and no later than this: its organization's calls under way may end sooner than they seemed to. */
const MAX_DEFER_MS = 30_000;
/** Weight of the newest call in an organization's running average of call durations. */
const DURATION_WEIGHT = 0.2;

interface RealmState {
  running: number;
  /** Calls of held jobs waiting for a slot, in order. */
  waiting: Array<() => void>;
  /** Jobs this process runs for the organization. */
  held: number;
  /** When each running call started (performance.now()). */
  started: Set<{ at: number }>;
  /** Running average of its calls' durations here, ms; null before the first ends. */
  averageMs: number | null;
}

export class RealmCallLimiter {
  private running = 0;
  private readonly realms = new Map<number, RealmState>();
  /** Organizations with calls waiting, in the order they get the next slot. */
  private readonly turns: number[] = [];

  /**
   * @param total calls under way at once in this process
   * @param perRealm calls under way, and jobs held, for one organization (at most `total`)
   */
  constructor(
    readonly total: number,
    readonly perRealm: number,
  ) {
    this.perRealm = Math.max(1, Math.min(perRealm, total));
  }

  /** Takes one of the organization's job places; false if it holds its share (put the job off). */
  hold(realmId: number): boolean {
    const realm = this.realm(realmId);
    if (realm.held >= this.perRealm) return false;
    realm.held++;
    return true;
  }

  /** Gives back a place `hold` took, once the job's calls are done. */
  release(realmId: number): void {
    const realm = this.realms.get(realmId);
    if (!realm) return;
    realm.held--;
    this.forgetIfIdle(realmId, realm);
  }

  /** Runs `call` once the organization and the process each have a free slot. */
  async run<T>(realmId: number, call: () => Promise<T>): Promise<T> {
    const realm = this.realm(realmId);
    if (realm.waiting.length === 0 && realm.running < this.perRealm && this.running < this.total) this.take(realm);
    else {
      // Its turn comes in dispatch, which counts the slot as taken before it resolves.
      await new Promise<void>((resolve) => {
        if (realm.waiting.push(resolve) === 1) this.turns.push(realmId);
        this.dispatch();
      });
    }
    const started = { at: performance.now() };
    realm.started.add(started);
    try {
      return await call();
    } finally {
      realm.started.delete(started);
      const took = performance.now() - started.at;
      realm.averageMs = realm.averageMs === null ? took : realm.averageMs + DURATION_WEIGHT * (took - realm.averageMs);
      realm.running--;
      this.running--;
      this.forgetIfIdle(realmId, realm);
      this.dispatch();
    }
  }

  /**
   * How long to put off a job of an organization that holds its share: about until the first of
   * its jobs here ends (its calls start in order, so that is its share of the calls in hand),
   * judged by how long its calls took here or the oldest running one has taken so far (a service
   * that never answers shows in the latter at once). Sooner, the job would only be put off again;
   * later, a busy organization whose services answer at once would leave the worker idle.
   */
  deferMs(realmId: number): number {
    const realm = this.realms.get(realmId);
    if (!realm) return MIN_DEFER_MS;
    const now = performance.now();
    let perCall = realm.averageMs ?? 0;
    for (const { at } of realm.started) perCall = Math.max(perCall, now - at);
    const firstJobCalls = (realm.running + realm.waiting.length) / Math.max(1, realm.held);
    return Math.round(Math.min(MAX_DEFER_MS, Math.max(MIN_DEFER_MS, (firstJobCalls * perCall) / this.perRealm)));
  }

  /** Calls under way in this process, in all and for one organization (tests, metrics). */
  inFlight(realmId?: number): number {
    return realmId === undefined ? this.running : (this.realms.get(realmId)?.running ?? 0);
  }

  private realm(realmId: number): RealmState {
    let realm = this.realms.get(realmId);
    if (!realm) this.realms.set(realmId, (realm = { running: 0, waiting: [], held: 0, started: new Set(), averageMs: null }));
    return realm;
  }

  private take(realm: RealmState): void {
    realm.running++;
    this.running++;
  }

  /** Starts waiting calls while slots are free, taking organizations in turn. */
  private dispatch(): void {
    while (this.running < this.total && this.turns.length > 0) {
      const index = this.turns.findIndex((id) => this.realms.get(id)!.running < this.perRealm);
      if (index === -1) return;
      const [realmId] = this.turns.splice(index, 1);
      const realm = this.realms.get(realmId)!;
      this.take(realm);
      realm.waiting.shift()!();
      if (realm.waiting.length > 0) this.turns.push(realmId);
    }
  }

  private forgetIfIdle(realmId: number, realm: RealmState): void {
    if (realm.running === 0 && realm.held === 0 && realm.waiting.length === 0) this.realms.delete(realmId);
  }
}
