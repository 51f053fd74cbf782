/** Percentile of a list of durations (milliseconds), nearest-rank. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Times `fn` `count` times, one call at a time, after `warmup` untimed calls. */
export async function timeSequential(count: number, warmup: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  return samples;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  ceilings: Array<{ name: string; value: number }>;
  /** The target, when the issue sets one: `value` must be below (or above, for throughput) it. */
  target?: { limit: number; higherIsBetter?: boolean };
}

export function report(figure: Figure): boolean {
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
  const lines = [`${figure.name}: ${fmt(figure.value)} ${figure.unit}`];
  for (const ceiling of figure.ceilings) {
    const ratio = figure.target?.higherIsBetter ? figure.value / ceiling.value : ceiling.value / figure.value;
    lines.push(`  ceiling ${ceiling.name}: ${fmt(ceiling.value)} ${figure.unit}  (ratio ${ratio.toFixed(2)} of ceiling)`);
  }
  let ok = true;
  if (figure.target) {
    ok = figure.target.higherIsBetter ? figure.value >= figure.target.limit : figure.value < figure.target.limit;
    lines.push(`  target ${figure.target.higherIsBetter ? ">=" : "<"} ${figure.target.limit} ${figure.unit}: ${ok ? "met" : "NOT met"}`);
  }
  process.stdout.write(lines.join("\n") + "\n");
  return ok;
}
