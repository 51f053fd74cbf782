import type { Queue, Worker } from "bullmq";
import type { Result } from "ioredis";
import { chunked, DEFAULT_BACKOFF_MS, ITEM_CLAIM_GRACE_MS, KEEP_COMPLETED_JOBS_S, KEEP_FAILED_JOBS_S } from "../defaults";
import { stderrLog, type BusLog } from "../log";
import type { AddEachOptions, JobHandler, JobItem, JobOptions, JobQueue, Stoppable } from "../types";
import { createRedisClient, logOutages, type RedisClient, type RedisTarget } from "./connection";
import { BusKeys } from "./keys";

/** BullMQ, loaded with the first queue or worker: a process on the in-process bus never needs it. */
function bullmq(): typeof import("bullmq") {
  return require("bullmq") as typeof import("bullmq");
}

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** [the job id, ...the 1-based indexes of the items it takes]; [] if none is free. */
    busJobClaimItems(numKeys: number, ...keysAndArgs: (string | number)[]): Result<(string | number)[], Context>;
  }
}

/**
 * JobQueue.addEach's claims, one string key per item: "<job id> <ms>", kept as long as a finished
 * job is. An item is free if it has no claim, or its claim names a job that does not exist (its
 * queuer died between claim and add) and is older than the grace, and no job is named after it;
 * one claimed for an existing job is left out; one claimed within the grace for a job not there yet is being queued by someone else
 * right now, and the whole call fails (its caller tries again later). The job takes the id of its
 * first free item. Time is Redis's, so the nodes' clocks need not agree.
 * KEYS: the items' claim keys, then the hashes of the jobs named after them, in the same order.
 * ARGV: the job key prefix, the claim lifetime in seconds, the grace in ms, then the items' job
 * ids. The one key it builds is the hash of a claim's owner, known only from the claim: like
 * BullMQ's own scripts, which build job keys from the queue's prefix, it relies on every key under
 * the prefix sharing its hash tag (keys.ts), so on a cluster it is in the slot of the keys declared.
 */
const CLAIM_ITEMS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local grace = tonumber(ARGV[3])
local free = {}
local jobId = nil
local items = #KEYS / 2
for i = 1, items do
  local claim = redis.call('GET', KEYS[i])
  local take = true
  if claim then
    local space = string.find(claim, ' ', 1, true)
    local owner = string.sub(claim, 1, space - 1)
    if redis.call('EXISTS', ARGV[1] .. owner) == 1 then
      take = false
    elseif now - tonumber(string.sub(claim, space + 1)) < grace then
      return redis.error_reply('BUSY item ' .. ARGV[3 + i] .. ' is being queued by job ' .. owner)
    end
  end
  -- A job named after the item carried it first (its claim may have expired before the job).
  if take and redis.call('EXISTS', KEYS[items + i]) == 1 then take = false end
  if take then
    free[#free + 1] = i
    if jobId == nil then jobId = ARGV[3 + i] end
  end
end
if jobId == nil then return {} end
local claim = jobId .. ' ' .. now
for _, i in ipairs(free) do redis.call('SET', KEYS[i], claim, 'EX', ARGV[2]) end
local result = { jobId }
for _, i in ipairs(free) do result[#result + 1] = i end
return result
`;

export type RedisJobQueueOptions = RedisTarget & {
  prefix: string;
  log?: BusLog;
  /** How long an item claimed by JobQueue.addEach for a job not (yet) queued is held for its claimer. */
  itemClaimGraceMs?: number;
  /**
   * How soon a job whose worker died (SIGKILL, lost host) runs again elsewhere: BullMQ's lock
   * duration and stalled-job check interval. A live worker renews its lock at half this.
   */
  stallMs?: number;
};

/** A job that stalled this often (its worker died each time) fails rather than running forever. */
const MAX_STALLED_COUNT = 3;

type JobData = Record<string, unknown>;

/** Background jobs on BullMQ: one BullMQ queue per job name. */
export class RedisJobQueue implements JobQueue {
  /** Shared by every Queue and Worker; BullMQ duplicates it for the workers' blocking reads. */
  private readonly connection: RedisClient;
  private readonly prefix: string;
  private readonly log: BusLog;
  private readonly stallMs: number;
  private readonly itemClaimGraceMs: number;
  private readonly queues = new Map<string, Queue<JobData>>();
  private readonly workers = new Set<Worker<JobData>>();

  constructor(options: RedisJobQueueOptions) {
    this.prefix = new BusKeys(options.prefix).jobs();
    this.log = options.log ?? stderrLog;
    this.stallMs = options.stallMs ?? 30_000;
    this.itemClaimGraceMs = options.itemClaimGraceMs ?? ITEM_CLAIM_GRACE_MS;
    // BullMQ requires this: its commands must wait out a reconnect rather than fail. Not the bus's
    // outage limits, then: nothing in a request waits on a job queue.
    // Auto-pipelining: the commands of a tick (many jobs finishing and starting at once) go in one
    // write; one write per command cost the worker more CPU than its HTTP calls.
    // On a cluster BullMQ takes the Cluster client, and its prefix carries a hash tag (keys.ts).
    const target: RedisTarget = options.clusterNodes === undefined ? { url: options.url } : { clusterNodes: options.clusterNodes };
    this.connection = createRedisClient(target, { maxRetriesPerRequest: null, enableAutoPipelining: true });
    this.connection.defineCommand("busJobClaimItems", { lua: CLAIM_ITEMS });
    logOutages(this.connection, "job queue", this.log);
  }

  async add(name: string, data: JobData, options: JobOptions = {}): Promise<void> {
    await this.addJob(name, data, options.jobId === undefined ? undefined : bullJobId(options.jobId), options);
  }

  async addEach(name: string, items: JobItem[], options: AddEachOptions): Promise<number> {
    const queue = this.queue(name);
    // Under BullMQ's own prefix (and so in its hash slot on a cluster): `once:` is no id of a job's.
    const claimKey = (jobId: string) => queue.toKey(`once:${jobId}`);
    const keepSeconds = options.keepCompletedSeconds ?? KEEP_COMPLETED_JOBS_S;
    const queued = await Promise.all(
      chunked(items, options.perJob).map(async (chunk) => {
        const jobIds = chunk.map((item) => bullJobId(item.key));
        const claimed = await this.connection.busJobClaimItems(
          2 * chunk.length, ...jobIds.map(claimKey), ...jobIds.map((jobId) => queue.toKey(jobId)), queue.toKey(""), keepSeconds, this.itemClaimGraceMs, ...jobIds,
        );
        if (claimed.length === 0) return 0;
        const taken = claimed.slice(1).map((index) => chunk[Number(index) - 1].data);
        await this.addJob(name, { items: taken }, String(claimed[0]), options);
        return taken.length;
      }),
    );
    return queued.reduce((sum, n) => sum + n, 0);
  }

  private async addJob(name: string, data: JobData, bullId: string | undefined, options: Omit<JobOptions, "jobId">): Promise<void> {
    await this.queue(name).add(name, data, {
      jobId: bullId,
      attempts: options.attempts ?? 1,
      delay: options.delayMs,
      backoff: { type: "exponential", delay: options.backoffMs ?? DEFAULT_BACKOFF_MS },
      // Finished jobs stay a while so that adding the same jobId again is still a no-op.
      removeOnComplete: { age: options.keepCompletedSeconds ?? KEEP_COMPLETED_JOBS_S },
      removeOnFail: { age: KEEP_FAILED_JOBS_S },
    });
  }

  process(name: string, handler: JobHandler, concurrency = 1): Stoppable {
    const { DelayedError, Worker } = bullmq();
    const worker = new Worker<JobData>(
      name,
      async (job, token) => {
        const outcome = await handler(job.data, { attempt: job.attemptsMade + 1, attempts: job.opts.attempts ?? 1 });
        if (!outcome) return;
        // Put off: back to the delayed set under this worker's lock, the attempt not counted
        // (moveToDelayed skips it); DelayedError tells the worker the job is no longer its own.
        await job.moveToDelayed(Date.now() + Math.max(1, outcome.deferMs), token);
        throw new DelayedError();
      },
      {
        connection: this.connection,
        prefix: this.prefix,
        concurrency,
        lockDuration: this.stallMs,
        stalledInterval: this.stallMs,
        maxStalledCount: MAX_STALLED_COUNT,
      },
    );
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
      const { Queue } = bullmq();
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
