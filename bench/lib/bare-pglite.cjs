// The memory benchmark's ceiling for the embedded trial: PGlite alone, in plain Node (no TypeScript
// loader, none of the server's code), on a data directory of its own.
//   node [flags] bare-pglite.cjs DIR START_PARAMS_JSON init        creates DIR and exits (the
//        server makes a new data directory in a child process the same way, pglite-instance.ts)
//   node [flags] bare-pglite.cjs DIR START_PARAMS_JSON MIGRATIONS  opens DIR, applies every
//        migration.sql under MIGRATIONS, prints "ready" and idles until killed
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { PGlite } = require("@electric-sql/pglite");

async function main() {
  const [dataDir, startParams, migrations] = process.argv.slice(2);
  const db = await PGlite.create(dataDir, { startParams: JSON.parse(startParams) });
  if (migrations === "init") {
    await db.close();
    return;
  }
  for (const name of fs.readdirSync(migrations).sort()) {
    const file = path.join(migrations, name, "migration.sql");
    if (fs.existsSync(file)) await db.exec(fs.readFileSync(file, "utf8"));
  }
  process.stdout.write("ready\n");
  setInterval(() => undefined, 1 << 30);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
