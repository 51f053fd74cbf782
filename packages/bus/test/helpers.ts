import type { BusLog } from "../src/log";
import type { ChangeBatch } from "../src/types";

/** Polls until `check` returns a truthy value; fails with `what` after the timeout. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise to hold a handler in flight until the test lets it go. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Collects what the adapters would print, so tests stay quiet and can assert on it. */
export function collectingLog(): BusLog & { messages: string[] } {
  const messages: string[] = [];
  const log = (message: string) => {
    messages.push(message);
  };
  return Object.assign(log, { messages });
}

export function batch(id: string, realmId: number): ChangeBatch {
  return { id, realmId, events: [{ event: { type: "test", batch: id }, users: [1, { id: 2, flags: ["read"] }] }] };
}
