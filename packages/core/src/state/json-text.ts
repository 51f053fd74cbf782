// A /register section kept as JSON text: the realm's users are most of the answer's bytes, the same
// for every member of the realm, so event nodes keep them serialized (realm-state-cache.ts) and
// splice the text into the answer instead of building and serializing a thousand objects each time.
import type { State } from "./initial-state.ts";

export class JsonText {
  constructor(readonly text: string) {}
}

/** Turns these sections back into objects if they are JSON text: an event is about to change them. */
export function materializeSections(state: State, keys: readonly string[]): void {
  for (const key of keys) {
    const value = state[key];
    if (value instanceof JsonText) state[key] = JSON.parse(value.text) as unknown;
  }
}

/** Takes the sections that are JSON text out of the state, as text by name. */
export function takeJsonTextSections(state: State): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const [key, value] of Object.entries(state)) {
    if (!(value instanceof JsonText)) continue;
    texts[key] = value.text;
    delete state[key];
  }
  return texts;
}
