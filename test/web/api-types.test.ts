// The web client's API types (apps/web/src/api/schema.d.ts) are generated from the server's API
// document; a contract changed without regenerating them fails here, before the client's
// typecheck or a browser could notice.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const ROOT = path.resolve(__dirname, "../..");
const SCHEMA = path.join(ROOT, "apps/web/src/api/schema.d.ts");

/**
 * What `npm run web:api-types` would write. Generated in a Node process of its own, as that script
 * runs: openapi-typescript loads ES modules that jest's module system cannot require.
 */
async function generatedTypes(): Promise<string> {
  const program = `const m = await import("./scripts/web/api-types.ts"); const { generateApiTypes } = m.generateApiTypes ? m : m.default; process.stdout.write(await generateApiTypes());`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "./scripts/typescript.mjs", "--input-type=module", "-e", program], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

test("apps/web/src/api/schema.d.ts is what the server's API document generates", async () => {
  const expected = await generatedTypes();
  expect(expected).toContain("export interface paths");
  const actual = readFileSync(SCHEMA, "utf8");
  if (actual === expected) return;
  const ours = actual.split("\n");
  const theirs = expected.split("\n");
  const line = ours.findIndex((text, i) => text !== theirs[i]);
  const at = line === -1 ? ours.length : line;
  throw new Error(
    `apps/web/src/api/schema.d.ts is out of date with the API document: line ${at + 1} is ${JSON.stringify(ours[at] ?? "<end of file>")}, the document gives ${JSON.stringify(theirs[at] ?? "<end of file>")}.\n` +
      "Regenerate it with `npm run web:api-types` and commit it; then `cd apps/web && npx tsc -p .` shows what in the client the change breaks.",
  );
}, 180_000);
