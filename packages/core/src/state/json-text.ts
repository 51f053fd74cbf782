// A /register section kept as JSON text: the realm's users are most of the answer's bytes, the same
// for every member of the realm, so event nodes keep them serialized (realm-state-cache.ts) and
// splice the bytes into the answer instead of building and serializing a thousand objects each
// time. Kept as UTF-8 bytes, so an answer is copied together, not encoded again per registration.
import type { State } from "./initial-state.ts";

export class JsonText {
  readonly bytes: Buffer;

  constructor(json: string | Buffer) {
    this.bytes = typeof json === "string" ? Buffer.from(json) : json;
  }

  get text(): string {
    return this.bytes.toString();
  }
}

/** Turns these sections back into objects if they are JSON text: an event is about to change them. */
export function materializeSections(state: State, keys: readonly string[]): void {
  for (const key of keys) {
    const value = state[key];
    if (value instanceof JsonText) state[key] = JSON.parse(value.text) as unknown;
  }
}

/** Takes the sections that are JSON text out of the state, as UTF-8 bytes by name. */
export function takeJsonTextSections(state: State): Record<string, Buffer> {
  const texts: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(state)) {
    if (!(value instanceof JsonText)) continue;
    texts[key] = value.bytes;
    delete state[key];
  }
  return texts;
}
