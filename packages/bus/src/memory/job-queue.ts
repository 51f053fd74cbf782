import { backoffDelay, chunked, DEFAULT_BACKOFF_MS, KEEP_COMPLETED_JOBS_S, KEEP_FAILED_JOBS_S } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import type { AddEachOptions, JobHandler, JobItem, JobOptions, JobQueue, Stoppable } from "../types";

export interface MemoryJobQueueOptions {
  log?: BusLog;
}

type JobData = Record<string, unknown>;

interface Job {
  name: string;
  /** Handlers get a fresh copy per attempt, as BullMQ workers do. */
  json: string;
  jobId: string | undefined;
  attempts: number;
  backoffMs: number;
  attemptsMade: number;
  keepCompletedMs: number;
}

interface Worker {
  name: string;
  handler: JobHandler;
  concurrency: number;
  active: number;
  stopped: Promise<void> | null;
  idle: (() => void) | null;
}

/** Ids kept for a time, each with a value, and when each may be forgotten (one retention per use). */
class FinishedIds<V = true> {
  private readonly ids = new Map<string, { value: V; expiresAt: number }>();
  add(id: string, keepMs: number, value: V = true as V): void {
    this.ids.delete(id);
    this.ids.set(id, { value, expiresAt: Date.now() + keepMs });
    // Ids arrive roughly in expiry order; prune the expired ones at the front.
    const now = Date.now();
    for (const [old, { expiresAt }] of this.ids) {
      if (expiresAt > now) break;
      this.ids.delete(old);
    }
  }
  get(id: string): V | undefined {
    const found = this.ids.get(id);
    return found !== undefined && found.expiresAt > Date.now() ? found.value : undefined;
  }
  has(id: string): boolean {
    return this.get(id) !== undefined;
  }
}

/** Background jobs of one process, with BullMQ's retry, backoff and jobId semantics. */
export class MemoryJobQueue implements JobQueue {
  private readonly waiting = new Map<string, Job[]>();
  private readonly workers = new Set<Worker>();
  /** Waiting, active or backing off; keyed by name too, as BullMQ ids are per queue. */
  private readonly liveIds = new Set<string>();
  private readonly completedIds = new FinishedIds();
  private readonly failedIds = new FinishedIds();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** addEach's claims: an item's key (with its queue's name) to the id of the job carrying it. */
  private readonly itemClaims = new FinishedIds<string>();
  private readonly log: BusLog;
  private closed = false;

  constructor(options: MemoryJobQueueOptions = {}) {
    this.log = options.log ?? stderrLog;
  }

  async add(name: string, data: JobData, options: JobOptions = {}): Promise<void> {
    this.addJob(name, data, options.jobId === undefined ? undefined : `${name}\0${options.jobId}`, options);
  }

  /**
   * As Redis's: each item once, in jobs named after their first free item. Claim and add happen
   * in one step here, so no claim is ever left without its job (nothing to take over).
   */
  async addEach(name: string, items: JobItem[], options: AddEachOptions): Promise<number> {
    if (this.closed) throw new Error("job queue is closed");
    const keepMs = (options.keepCompletedSeconds ?? KEEP_COMPLETED_JOBS_S) * 1000;
    let queued = 0;
    for (const chunk of chunked(items, options.perJob)) {
      const free = chunk.filter((item) => {
        const owner = this.itemClaims.get(`${name}\0${item.key}`);
        return (owner === undefined || !this.exists(owner)) && !this.exists(`${name}\0${item.key}`);
      });
      if (free.length === 0) continue;
      const jobId = `${name}\0${free[0].key}`;
      for (const item of free) this.itemClaims.add(`${name}\0${item.key}`, keepMs, jobId);
      this.addJob(name, { items: free.map((item) => item.data) }, jobId, options);
      queued += free.length;
    }
    return queued;
  }

  /** Whether a job of this id is waiting, running, backing off, or finished and kept. */
  private exists(jobId: string): boolean {
    return this.liveIds.has(jobId) || this.completedIds.has(jobId) || this.failedIds.has(jobId);
  }

  private addJob(name: string, data: JobData, jobId: string | undefined, options: Omit<JobOptions, "jobId">): void {
    if (this.closed) throw new Error("job queue is closed");
    if (jobId !== undefined) {
      if (this.exists(jobId)) return;
      this.liveIds.add(jobId);
    }
    const job: Job = {
      name,
      json: JSON.stringify(data),
      jobId,
      attempts: options.attempts ?? 1,
      backoffMs: options.backoffMs ?? DEFAULT_BACKOFF_MS,
      attemptsMade: 0,
      keepCompletedMs: (options.keepCompletedSeconds ?? KEEP_COMPLETED_JOBS_S) * 1000,
    };
    if (options.delayMs !== undefined && options.delayMs > 0) this.later(job, options.delayMs);
    else this.enqueue(job);
  }

  process(name: string, handler: JobHandler, concurrency = 1): Stoppable {
    const worker: Worker = { name, handler, concurrency: Math.max(1, concurrency), active: 0, stopped: null, idle: null };
    this.workers.add(worker);
    this.dispatch(name);
    return { stop: () => this.stopWorker(worker) };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    await Promise.all([...this.workers].map((worker) => this.stopWorker(worker)));
    this.waiting.clear();
  }

  private enqueue(job: Job): void {
    let jobs = this.waiting.get(job.name);
    if (!jobs) this.waiting.set(job.name, (jobs = []));
    jobs.push(job);
    this.dispatch(job.name);
  }

  private dispatch(name: string): void {
    const jobs = this.waiting.get(name);
    for (const worker of this.workers) {
      if (worker.name !== name) continue;
      while (jobs && jobs.length > 0 && worker.stopped === null && worker.active < worker.concurrency) {
        void this.run(worker, jobs.shift()!);
      }
    }
  }

  private async run(worker: Worker, job: Job): Promise<void> {
    worker.active++;
    job.attemptsMade++;
    try {
      const outcome = await worker.handler(JSON.parse(job.json) as JobData, { attempt: job.attemptsMade, attempts: job.attempts });
      if (outcome && !this.closed) {
        // Put off, as BullMQ's moveToDelayed: the run is not counted as an attempt.
        job.attemptsMade--;
        this.later(job, Math.max(1, outcome.deferMs));
      } else this.finish(job, this.completedIds, job.keepCompletedMs);
    } catch (error) {
      this.log(`job ${job.name} failed (attempt ${job.attemptsMade} of ${job.attempts})`, error);
      if (job.attemptsMade < job.attempts && !this.closed) this.retryLater(job);
      else this.finish(job, this.failedIds, KEEP_FAILED_JOBS_S * 1000);
    } finally {
      worker.active--;
      if (worker.active === 0) worker.idle?.();
      // A freed slot, or another worker of this name, may take what is waiting.
      if (!this.closed) this.dispatch(job.name);
    }
  }

  private retryLater(job: Job): void {
    this.later(job, backoffDelay(job.backoffMs, job.attemptsMade));
  }

  private later(job: Job, delayMs: number): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.enqueue(job);
    }, delayMs);
    // unref: the embedded bus alone must not keep the process alive.
    timer.unref();
    this.retryTimers.add(timer);
  }

  private finish(job: Job, list: FinishedIds, keepMs: number): void {
    if (job.jobId === undefined) return;
    this.liveIds.delete(job.jobId);
    list.add(job.jobId, keepMs);
  }

  /** Like BullMQ's Worker.close: takes no new jobs, waits for the running ones. */
  private stopWorker(worker: Worker): Promise<void> {
    worker.stopped ??= (async () => {
      if (worker.active > 0) await new Promise<void>((resolve) => (worker.idle = resolve));
      this.workers.delete(worker);
    })();
    return worker.stopped;
  }
}
