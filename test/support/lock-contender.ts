// One process trying to take a data folder's lock (test/e2e/data-dir-owner.test.ts runs several
// at once): prints "won" or "busy", and holds a won lock for a moment so the others see it.
import { acquireDataDirLock, DataDirBusyError } from "../../apps/server/src/data-dir-lock.ts";

const dataDir = process.argv[2];
try {
  const lock = acquireDataDirLock(dataDir, { kind: "cli" });
  process.stdout.write("won\n");
  setTimeout(() => lock.release(), 5000);
} catch (error) {
  if (!(error instanceof DataDirBusyError)) throw error;
  process.stdout.write("busy\n");
}
