/** Resolves once `done()` holds, checking every `everyMs`; fails after `timeoutMs`, naming `what`. */
export async function waitUntil(what: string, done: () => boolean, timeoutMs: number, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
