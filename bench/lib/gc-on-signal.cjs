// Preloaded (with --expose-gc) into a process whose memory a benchmark measures: SIGUSR2 runs a
// full collection, so each reading of RSS follows one and does not depend on when V8 collected.
"use strict";
if (typeof global.gc === "function") {
  process.on("SIGUSR2", () => {
    global.gc();
  });
}
