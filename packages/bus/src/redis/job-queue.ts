import { Queue, Worker } from "bullmq";
import Redis from "ioredis";
import { DEFAULT_BACKOFF_MS, KEEP_COMPLETED_JOBS_S, KEEP_FAILED_JOBS_S } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import type { JobOptions, JobQueue, Stoppable } from "../types";
import { logOutages } from "./connection";
import { BusKeys } from "./keys";

export interface RedisJobQueueOptions {
  url: string;
  prefix: string;
  log?: BusLog;
}

type JobData = Record<string, unknown>;

/** Background jobs on BullMQ: one BullMQ queue per job name. */
export class RedisJobQueue implements JobQueue {
  /** Shared by every Queue and Worker; BullMQ duplicates it for the workers' blocking reads. */
  private readonly connection: Redis;
  private readonly prefix: string;
  private readonly log: BusLog;
  private readonly queues = new Map<string, Queue<JobData>>();
  private readonly workers = new Set<Worker<JobData>>();

  constructor(options: RedisJobQueueOptions) {
    this.prefix = new BusKeys(options.prefix).jobs();
    this.log = options.log ?? stderrLog;
    // BullMQ requires this: its commands must wait out a reconnect rather than fail. Not the bus's
    // outage limits, then: nothing in a request waits on a job queue.
    this.connection = new Redis(options.url, { maxRetriesPerRequest: null });
    logOutages(this.connection, "job queue", this.log);
  }

  async add(name: string, data: JobData, options: JobOptions = {}): Promise<void> {
    await this.queue(name).add(name, data, {
      jobId: options.jobId === undefined ? undefined : bullJobId(options.jobId),
      attempts: options.attempts ?? 1,
      backoff: { type: "exponential", delay: options.backoffMs ?? DEFAULT_BACKOFF_MS },
      // Finished jobs stay a while so that adding the same jobId again is still a no-op.
      removeOnComplete: { age: KEEP_COMPLETED_JOBS_S },
      removeOnFail: { age: KEEP_FAILED_JOBS_S },
    });
  }

  process(name: string, handler: (data: JobData) => Promise<void>, concurrency = 1): Stoppable {
    const worker = new Worker<JobData>(name, async (job) => handler(job.data), {
      connection: this.connection,
      prefix: this.prefix,
      concurrency,
    });
    worker.on("failed", (job, error) => {
      const attempt = job ? ` (attempt ${job.attemptsMade} of ${job.opts.attempts ?? 1})` : "";
      this.log(`job ${name} ${job?.id ?? ""} failed${attempt}`, error);
    });
    worker.on("error", (error) => this.log(`job worker ${name} error`, error));
    this.workers.add(worker);
    return {
      stop: async () => {
        this.workers.delete(worker);
        await worker.close();
      },
    };
  }

  async close(): Promise<void> {
    const workers = [...this.workers];
    this.workers.clear();
    await Promise.all(workers.map((worker) => worker.close()));
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
    await this.connection.quit().catch(() => undefined);
  }

  private queue(name: string): Queue<JobData> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue<JobData>(name, { connection: this.connection, prefix: this.prefix });
      queue.on("error", (error) => this.log(`job queue ${name} error`, error));
      this.queues.set(name, queue);
    }
    return queue;
  }
}

/** BullMQ rejects custom ids that contain ':' or look like integers; escape both, injectively. */
function bullJobId(jobId: string): string {
  return `j-${jobId.replaceAll("%", "%25").replaceAll(":", "%3A")}`;
}
