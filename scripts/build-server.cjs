// `npm run build`: bundles the server's entry points (npm start, the CLI, the migrator) with our
// workspace packages into apps/server/dist, leaving npm dependencies external, so production runs
// plain `node apps/server/dist/main.cjs` with no TypeScript loader.
const path = require("node:path");
const esbuild = require("esbuild");

const root = path.resolve(__dirname, "..");
const { dependencies = {}, devDependencies = {} } = require(path.join(root, "package.json"));
const external = [...Object.keys(dependencies), ...Object.keys(devDependencies)].flatMap((name) => [name, `${name}/*`]);

esbuild
  .build({
    entryPoints: ["main", "cli", "migrate"].map((name) => path.join(root, "apps/server/src", `${name}.ts`)),
    outdir: path.join(root, "apps/server/dist"),
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
