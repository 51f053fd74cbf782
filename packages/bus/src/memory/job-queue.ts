import { backoffDelay, DEFAULT_BACKOFF_MS, KEEP_COMPLETED_JOBS_S, KEEP_FAILED_JOBS_S } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import type { JobOptions, JobQueue, Stoppable } from "../types";

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
}

interface Worker {
  name: string;
  handler: (data: JobData) => Promise<void>;
  concurrency: number;
  active: number;
  stopped: Promise<void> | null;
  idle: (() => void) | null;
}

/** Finished job ids in finishing order; with one retention per list, expiry order is the same. */
class FinishedIds {
  private readonly ids = new Map<string, number>();
  constructor(private readonly keepMs: number) {}
  add(id: string): void {
    this.ids.delete(id);
    this.ids.set(id, Date.now() + this.keepMs);
  }
  has(id: string): boolean {
    this.prune();
    return this.ids.has(id);
  }
  private prune(): void {
    const now = Date.now();
    for (const [id, expiresAt] of this.ids) {
      if (expiresAt > now) break;
      this.ids.delete(id);
    }
  }
}

/** Background jobs of one process, with BullMQ's retry, backoff and jobId semantics. */
export class MemoryJobQueue implements JobQueue {
  private readonly waiting = new Map<string, Job[]>();
  private readonly workers = new Set<Worker>();
  /** Waiting, active or backing off; keyed by name too, as BullMQ ids are per queue. */
  private readonly liveIds = new Set<string>();
  private readonly completedIds = new FinishedIds(KEEP_COMPLETED_JOBS_S * 1000);
  private readonly failedIds = new FinishedIds(KEEP_FAILED_JOBS_S * 1000);
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private readonly log: BusLog;
  private closed = false;

  constructor(options: MemoryJobQueueOptions = {}) {
    this.log = options.log ?? stderrLog;
  }

  async add(name: string, data: JobData, options: JobOptions = {}): Promise<void> {
    if (this.closed) throw new Error("job queue is closed");
    const jobId = options.jobId === undefined ? undefined : `${name}\0${options.jobId}`;
    if (jobId !== undefined) {
      if (this.liveIds.has(jobId) || this.completedIds.has(jobId) || this.failedIds.has(jobId)) return;
      this.liveIds.add(jobId);
    }
    this.enqueue({
      name,
      json: JSON.stringify(data),
      jobId,
      attempts: options.attempts ?? 1,
      backoffMs: options.backoffMs ?? DEFAULT_BACKOFF_MS,
      attemptsMade: 0,
    });
  }

  process(name: string, handler: (data: JobData) => Promise<void>, concurrency = 1): Stoppable {
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
      await worker.handler(JSON.parse(job.json) as JobData);
      this.finish(job, this.completedIds);
    } catch (error) {
      this.log(`job ${job.name} failed (attempt ${job.attemptsMade} of ${job.attempts})`, error);
      if (job.attemptsMade < job.attempts && !this.closed) this.retryLater(job);
      else this.finish(job, this.failedIds);
    } finally {
      worker.active--;
      if (worker.active === 0) worker.idle?.();
      // A freed slot, or another worker of this name, may take what is waiting.
      if (!this.closed) this.dispatch(job.name);
    }
  }

  private retryLater(job: Job): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.enqueue(job);
    }, backoffDelay(job.backoffMs, job.attemptsMade));
    // unref: the embedded bus alone must not keep the process alive.
    timer.unref();
    this.retryTimers.add(timer);
  }

  private finish(job: Job, list: FinishedIds): void {
    if (job.jobId === undefined) return;
    this.liveIds.delete(job.jobId);
    list.add(job.jobId);
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
