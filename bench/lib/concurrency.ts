/** Runs `total` calls of `fn` with `concurrency` in flight; returns each call's duration (ms) and the wall time. */
export async function runConcurrent(total: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<{ samples: number[]; wallMs: number }> {
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const start = performance.now();
        await fn(i);
        samples.push(performance.now() - start);
      }
    }),
  );
  return { samples, wallMs: performance.now() - started };
}
