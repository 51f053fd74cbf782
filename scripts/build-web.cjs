// Builds the web client (apps/web, Vite) into apps/web/dist, which every API node serves
// (apps/api/src/web-client.ts). `npm run build` builds it through turbo; this script is for the
// places that must not start on a missing or outdated client: the `teamchat` launcher (npm start)
// and the tests (test/support/global-setup.ts).
//
// `--if-stale`: builds only when dist is missing or older than a file it is made of, and says
// nothing when it is fresh. The build goes to a folder of its own and replaces dist by rename, so
// a server reading dist (or a second build at the same time) never sees half a build.
const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const root = path.resolve(__dirname, "..");
const web = path.join(root, "apps/web");
const dist = path.join(web, "dist");
const stamp = path.join(dist, "index.html");

/** The newest modification time of what the build is made of. */
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
  for (const name of ["src", "public", "index.html", "vite.config.ts", "package.json", "tsconfig.json"]) visit(path.join(web, name));
  for (const file of ["package-lock.json", "tsconfig.base.json", "scripts/build-web.cjs"]) visit(path.join(root, file));
  return newest;
}

function isStale() {
  const built = fs.statSync(stamp, { throwIfNoEntry: false });
  return !built || newestSourceMs() > built.mtimeMs;
}

/** How long a build's hashed files outlive it. */
const KEEP_ASSETS_MS = 24 * 3600 * 1000;

/**
 * Carries the hashed files of the builds of the last day into the new one (their names never
 * clash): a page loaded from an earlier build, by a server started before this build or a browser
 * tab open across a restart, still finds the chunks it loads later. Their modification time is
 * kept, so they age out.
 */
function keepRecentAssets(from, to) {
  let names;
  try {
    names = fs.readdirSync(from);
  } catch {
    return;
  }
  fs.mkdirSync(to, { recursive: true });
  for (const name of names) {
    const source = path.join(from, name);
    const target = path.join(to, name);
    const stat = fs.statSync(source, { throwIfNoEntry: false });
    if (!stat?.isFile() || Date.now() - stat.mtimeMs > KEEP_ASSETS_MS || fs.existsSync(target)) continue;
    try {
      fs.linkSync(source, target);
    } catch {
      fs.copyFileSync(source, target);
      fs.utimesSync(target, stat.atime, stat.mtime);
    }
  }
}

function build() {
  const started = new Date();
  let vite;
  try {
    vite = path.join(path.dirname(require.resolve("vite/package.json", { paths: [web] })), "bin", "vite.js");
  } catch {
    process.stderr.write("cannot build the web client: vite is not installed (npm ci, with dev dependencies)\n");
    return false;
  }
  const building = path.join(web, `dist.building-${process.pid}`);
  const result = spawnSync(process.execPath, [vite, "build", "--outDir", building, "--emptyOutDir", "--logLevel", "warn"], { cwd: web, stdio: "inherit" });
  if (result.status !== 0 || !fs.existsSync(path.join(building, "index.html"))) {
    fs.rmSync(building, { recursive: true, force: true });
    process.stderr.write("building the web client failed\n");
    return false;
  }
  // Stamped with the time the build began: a source saved during it makes the build stale.
  fs.utimesSync(path.join(building, "index.html"), started, started);
  keepRecentAssets(path.join(dist, "assets"), path.join(building, "assets"));
  const previous = path.join(web, `dist.previous-${process.pid}`);
  try {
    fs.renameSync(dist, previous);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  try {
    fs.renameSync(building, dist);
  } catch (error) {
    // Another build put its dist in place meanwhile: one fresh build is as good as another.
    if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    fs.rmSync(building, { recursive: true, force: true });
  }
  fs.rmSync(previous, { recursive: true, force: true });
  return true;
}

if (process.argv.includes("--if-stale") && !isStale()) process.exit(0);
process.stderr.write("building the web client into apps/web/dist...\n");
process.exit(build() ? 0 : 1);
