// `npm run bench [name…]`: runs the benchmarks (all by default) and prints each figure beside the
// ceilings measured in the same run. The machines are shared and noisy: compare ratios, not times.
import { benchEvents } from "./events.bench.ts";
import { benchFiles } from "./files.bench.ts";
import { benchMemory } from "./memory.bench.ts";
import { benchMessages } from "./messages.bench.ts";
import { benchSubscriptions } from "./subscriptions.bench.ts";
import { benchWeb } from "./web.bench.ts";
import { benchWebhooks } from "./webhooks.bench.ts";

const BENCHMARKS: Record<string, () => Promise<boolean>> = {
  subscriptions: benchSubscriptions,
  messages: benchMessages,
  files: benchFiles,
  webhooks: benchWebhooks,
  events: benchEvents,
  memory: benchMemory,
  web: benchWeb,
};

async function main(): Promise<number> {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(BENCHMARKS);
  let allMet = true;
  for (const name of names) {
    const bench = BENCHMARKS[name];
    if (!bench) {
      process.stderr.write(`unknown benchmark ${name}; known: ${Object.keys(BENCHMARKS).join(", ")}\n`);
      return 2;
    }
    process.stdout.write(`\n== ${name}\n`);
    allMet = (await bench()) && allMet;
  }
  return allMet ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
