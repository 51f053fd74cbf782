// Preloaded (node --require) into a server process by test/e2e/startup-modules.test.ts: on SIGUSR2
// it writes the files of every CommonJS module loaded so far, one a line, to LOADED_MODULES_FILE.
"use strict";
const fs = require("node:fs");

process.on("SIGUSR2", () => {
  fs.writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join("\n"));
});
