// Runs `prisma generate` on machines that cannot download Prisma's native schema engine.
// The generator needs PRISMA_SCHEMA_ENGINE_BINARY to name an executable but never runs it for
// the `prisma-client` generator, so any executable will do (see ARCHITECTURE.md).
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;

const result = spawnSync(
  process.execPath,
  [require.resolve("prisma/build/index.js", { paths: [root] }), "generate", "--schema", "prisma/schema.prisma"],
  { cwd: root, env, stdio: "inherit" },
);
process.exit(result.status ?? 1);
