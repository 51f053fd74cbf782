// Writes test/clients/flutter/contract.json (or --out FILE) from a zulip-flutter checkout or bare
// git directory (its HEAD): see contract-generator.ts for what is read, hand-kept.ts for what is
// kept by hand.
//
//   node --import ./scripts/typescript.mjs scripts/flutter-contract/generate.ts <flutter checkout or bare git dir> [--out FILE]
import fs from "node:fs";
import path from "node:path";
import { generate, openTree } from "./contract-generator.ts";

const DEFAULT_OUT = "test/clients/flutter/contract.json";

function main(argv: string[]): void {
  const outAt = argv.indexOf("--out");
  const out = outAt >= 0 ? argv[outAt + 1] : DEFAULT_OUT;
  const location = argv.find((arg, i) => !arg.startsWith("--") && argv[i - 1] !== "--out");
  if (!location) {
    process.stderr.write("usage: generate.ts <zulip-flutter checkout or bare git dir> [--out FILE]\n");
    process.exit(2);
  }
  const contract = generate(openTree(location));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(contract, null, 2)}\n`);
  const hand = Object.values(contract.classes).filter((c) => !c.generated).length;
  process.stdout.write(`${out}: ${Object.keys(contract.classes).length} classes (${hand} hand-kept or dispatch), ` +
    `${Object.keys(contract.enums).length} enums, from zulip-flutter ${contract.flutter.commit}\n`);
}

main(process.argv.slice(2));
