// Jest's globalSetup: the test servers serve the web client from apps/web/dist, read when each
// starts, so it is built once per run when missing or older than its sources (quiet when fresh;
// CI's `npm run build` has built it). A failed build (a source saved mid-edit) does not stop the
// run: the web client's own tests then fail, saying what they miss.
const path = require("node:path");
const { spawnSync } = require("node:child_process");

module.exports = async function buildWebClient() {
  const script = path.join(__dirname, "..", "..", "scripts", "build-web.cjs");
  const result = spawnSync(process.execPath, [script, "--if-stale"], { stdio: "inherit" });
  if (result.status !== 0) process.stderr.write("warning: the web client could not be built; tests of it will fail (see above)\n");
};
