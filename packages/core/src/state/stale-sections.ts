// Some events leave a /register section that cannot be brought up to date from the event alone
// (the newest message after the newest one is deleted). Appliers mark such a section stale, and
// /register reads it again after applying (Zulip's apply_event queries the database in place).
// The mark is a symbol key: it never reaches JSON, and a client-side copy of the state drops it.
import type { State } from "./initial-state.ts";

const STALE = Symbol("stale sections");

type Marked = State & { [STALE]?: Set<string> };

export function markStale(state: State, section: string): void {
  ((state as Marked)[STALE] ??= new Set()).add(section);
}

/** The sections marked stale, clearing the mark. */
export function takeStaleSections(state: State): string[] {
  const marked = state as Marked;
  const sections = [...(marked[STALE] ?? [])];
  delete marked[STALE];
  return sections;
}
