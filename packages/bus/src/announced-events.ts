// Events sent along with a queue's announcement, so that a poll held on that queue can answer
// without reading it back (a message to a stream of 1,000 was a thousand reads, two more per poll).
import type { AnnouncedEvents } from "./types";

/** Announced texts past this many bytes in one append call go unannounced (polls read them). */
export const MAX_ANNOUNCED_TEXT_BYTES = 64 * 1024;

/** An event's JSON without `id`, given its id: spliced in as the last member, as the append script does. */
export function withEventId(jsonWithoutId: string, id: number): string {
  return `${jsonWithoutId.slice(0, -1)},"id":${id}}`;
}

/** One queue's events of one append: indexes into the batch's distinct texts, ids from firstId on. */
export class SplicedEvents implements AnnouncedEvents {
  constructor(
    readonly firstId: number,
    private readonly texts: readonly string[],
    private readonly indexes: readonly number[],
  ) {}

  json(): string[] {
    return this.indexes.map((index, j) => withEventId(this.texts[index], this.firstId + j));
  }
}

/** Events whose JSON (ids included) is at hand already. */
export class ReadyEvents implements AnnouncedEvents {
  constructor(
    readonly firstId: number,
    private readonly texts: readonly string[],
  ) {}

  json(): string[] {
    return [...this.texts];
  }
}
