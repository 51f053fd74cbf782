import { defineConfig } from "vite";

// The web client is built into apps/web/dist and served by every API node: index.html at `/`,
// the hashed assets under /static/web/ with immutable caching (apps/api/src/web-client.ts).
export default defineConfig({
  base: "/static/web/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // No inline scripts or modulepreload polyfill: the CSP has no 'unsafe-inline'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  resolve: {
    alias: { react: "preact/compat", "react-dom": "preact/compat" },
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
