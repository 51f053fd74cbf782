import { logger } from "@chat/logger";

/** Runs `task` every `intervalMs`, never two runs at once, until stopped. */
export function every(name: string, intervalMs: number, task: () => Promise<unknown>): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = task()
      .catch((error) => logger.warn(`${name} failed`, { error: String(error) }))
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
