import { brotliCompress, constants, gzip } from "node:zlib";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { defineConfig, type Plugin } from "vite";

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Text the server sends compressed; images and fonts are compressed already. */
const COMPRESSIBLE = /\.(js|css|svg|txt)$/;

/**
 * Writes `<file>.br` (Brotli, quality 11) and `<file>.gz` (gzip -9) beside every script, style and
 * other text the build emits, so the server sends the smallest encoding a browser takes without
 * compressing anything per request (apps/api/src/web-client.ts). A copy no smaller than the file
 * is not written.
 */
function precompress(): Plugin {
  let outDir = "dist";
  return {
    name: "teamchat:precompress",
    apply: "build",
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async writeBundle(_options, bundle) {
      const writes = Object.values(bundle)
        .filter((output) => COMPRESSIBLE.test(output.fileName))
        .map(async (output) => {
          const source = output.type === "chunk" ? output.code : output.source;
          const bytes = typeof source === "string" ? Buffer.from(source) : Buffer.from(source);
          const file = path.join(outDir, output.fileName);
          const [br, gz] = await Promise.all([
            brotli(bytes, {
              params: {
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
                [constants.BROTLI_PARAM_QUALITY]: 11,
                [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
              },
            }),
            gzipAsync(bytes, { level: 9 }),
          ]);
          await Promise.all([br.length < bytes.length && writeFile(`${file}.br`, br), gz.length < bytes.length && writeFile(`${file}.gz`, gz)]);
        });
      await Promise.all(writes);
    },
  };
}

/**
 * src/boot/boot.js, the page's head start (it sends the first /register and message list before
 * the bundle runs), as a plain parser-blocking script first in <head>: emitted as it is under
 * assets/ with a hash of its content in its name, so it is cached and served as every asset.
 */
function bootScript(): Plugin {
  const source = readFileSync(new URL("./src/boot/boot.js", import.meta.url));
  const fileName = `assets/boot-${createHash("sha256").update(source).digest("base64url").slice(0, 10)}.js`;
  let base = "/";
  return {
    name: "teamchat:boot-script",
    apply: "build",
    configResolved(config) {
      base = config.base;
    },
    generateBundle() {
      this.emitFile({ type: "asset", fileName, source });
    },
    transformIndexHtml() {
      return [{ tag: "script", attrs: { src: `${base}${fileName}` }, injectTo: "head-prepend" }];
    },
  };
}

// The web client is built into apps/web/dist and served by every API node: index.html at `/`,
// the hashed assets under /static/web/ with immutable caching (apps/api/src/web-client.ts).
export default defineConfig({
  base: "/static/web/",
  plugins: [bootScript(), precompress()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // No inline scripts or modulepreload polyfill: the CSP has no 'unsafe-inline'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
    // Brotli at quality 11 is most of the build's time (about 2 s), by design: no warning about it.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  resolve: {
    alias: { react: "preact/compat", "react-dom": "preact/compat" },
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
