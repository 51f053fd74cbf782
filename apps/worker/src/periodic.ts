import { logger } from "@chat/logger";
import { jobRuns } from "@chat/metrics";

/**
 * Runs `task` every `intervalMs`, never two runs at once, until stopped. A failing task (Postgres
 * or Redis down) is simply tried again next time: it is logged when it starts failing and when it
 * works again, not on every run of an outage.
 */
export function every(name: string, intervalMs: number, task: () => Promise<unknown>): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  let failing = false;
  const timer = setInterval(() => {
    if (running) return;
    running = task()
      .then(
        () => {
          jobRuns.inc({ kind: name, outcome: "ok" });
          if (failing) logger.info(`${name} works again`);
          failing = false;
        },
        (error) => {
          jobRuns.inc({ kind: name, outcome: "failed" });
          if (!failing) logger.warn(`${name} failed; retrying every ${intervalMs} ms`, { error: String(error) });
          failing = true;
        },
      )
      .finally(() => {
        running = null;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
