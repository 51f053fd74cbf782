/**
 * Runs `total` calls of `fn` with `concurrency` in flight; returns each call's duration (ms) and the
 * wall time. `warmup` calls run first and are not measured: a server (or a connection pool) is
 * measured in its steady state, after the JIT has compiled its hot paths and caches are filled.
 */
export async function runConcurrent(
  total: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
  { warmup = 0 }: { warmup?: number } = {},
): Promise<{ samples: number[]; wallMs: number }> {
  if (warmup > 0) await runConcurrent(warmup, concurrency, (i) => fn(total + i));
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
