// `npm run build`: bundles the server's entry points (npm start, the CLI, the migrator) with our
// workspace packages into apps/server/dist, leaving npm dependencies external, so production runs
// plain `node apps/server/dist/main.cjs` with no TypeScript loader.
//
// `--if-stale` (the `teamchat` launcher, so `npm start`): builds only when a bundle is missing or
// older than a source it is made of, so that a fresh clone and a `git pull` start what they hold.
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const outdir = path.join(root, "apps/server/dist");
const entries = ["main", "cli", "migrate"];

/** The newest modification time of what the bundles are made of: our sources, the manifests, this script. */
function newestSourceMs() {
  let newest = 0;
  const visit = (file) => {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(file)) if (name !== "node_modules") visit(path.join(file, name));
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const group of ["apps", "packages"]) {
    for (const name of fs.readdirSync(path.join(root, group))) {
      // The web client is built apart (scripts/build-web.cjs); no bundle is made of it.
      if (group === "apps" && name === "web") continue;
      visit(path.join(root, group, name, "src"));
      visit(path.join(root, group, name, "package.json"));
    }
  }
  for (const file of ["package.json", "package-lock.json", "tsconfig.base.json", "scripts/build-server.cjs"]) visit(path.join(root, file));
  return newest;
}

function isStale() {
  const built = entries.map((name) => fs.statSync(path.join(outdir, `${name}.cjs`), { throwIfNoEntry: false }));
  if (built.some((stat) => !stat)) return true;
  return newestSourceMs() > Math.min(...built.map((stat) => stat.mtimeMs));
}

if (process.argv.includes("--if-stale")) {
  if (!isStale()) process.exit(0);
  process.stderr.write("building the server into apps/server/dist (npm run build)...\n");
}

// Loaded only to build: a start with a fresh bundle does not pay for it.
const esbuild = require("esbuild");
const { dependencies = {}, devDependencies = {} } = require(path.join(root, "package.json"));
const external = [...Object.keys(dependencies), ...Object.keys(devDependencies)].flatMap((name) => [name, `${name}/*`]);

esbuild
  .build({
    entryPoints: entries.map((name) => path.join(root, "apps/server/src", `${name}.ts`)),
    outdir,
    outExtension: { ".js": ".cjs" },
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: true,
    external,
    logLevel: "warning",
  })
  .catch(() => process.exit(1));
