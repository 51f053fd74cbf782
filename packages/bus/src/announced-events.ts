// Events sent along with a queue's announcement, so that a poll held on that queue can answer
// without reading it back (a message to a stream of 1,000 was a thousand reads, two more per poll).
import type { AnnouncedEvents } from "./types";

/** Announced texts past this many bytes in one append call go unannounced (polls read them). */
export const MAX_ANNOUNCED_TEXT_BYTES = 64 * 1024;

/** An event's JSON without `id`, given its id: spliced in as the last member, as the append script does. */
export function withEventId(jsonWithoutId: string, id: number): string {
  return `${jsonWithoutId.slice(0, -1)},"id":${id}}`;
}

/**
 * The distinct texts of one announcement, shared by every queue it names. Each is encoded once,
 * when a poll first answers with it: a message to a stream of 1,000 is one text answered a
 * thousand times, and encoding the answer each time was much of what the node allocated per poll.
 */
export class AnnouncedTexts {
  private readonly opened: Array<Buffer | undefined> = [];

  constructor(readonly texts: readonly string[]) {}

  /** Text `index` as UTF-8 without its closing brace (its id goes there). */
  openedBytes(index: number): Buffer {
    return (this.opened[index] ??= Buffer.from(this.texts[index].slice(0, -1), "utf8"));
  }
}

/** `,"id":<id>}` as ASCII, written at `offset`; its length. */
function writeIdMember(target: Buffer, offset: number, id: number): number {
  return target.write(`,"id":${id}}`, offset, "latin1");
}

function idMemberLength(id: number): number {
  return 7 + String(id).length;
}

/** One queue's events of one append: indexes into the batch's distinct texts, ids from firstId on. */
export class SplicedEvents implements AnnouncedEvents {
  constructor(
    readonly firstId: number,
    private readonly shared: AnnouncedTexts,
    private readonly indexes: readonly number[],
  ) {}

  get count(): number {
    return this.indexes.length;
  }

  json(): string[] {
    return this.indexes.map((index, j) => withEventId(this.shared.texts[index], this.firstId + j));
  }

  jsonByteLength(): number {
    let length = this.indexes.length - 1;
    for (let j = 0; j < this.indexes.length; j++) length += this.shared.openedBytes(this.indexes[j]).length + idMemberLength(this.firstId + j);
    return length;
  }

  writeJson(target: Buffer, offset: number): number {
    let at = offset;
    for (let j = 0; j < this.indexes.length; j++) {
      if (j > 0) at += target.write(",", at, "latin1");
      at += this.shared.openedBytes(this.indexes[j]).copy(target, at);
      at += writeIdMember(target, at, this.firstId + j);
    }
    return at - offset;
  }
}

/** Events whose JSON (ids included) is at hand already. */
export class ReadyEvents implements AnnouncedEvents {
  private joined: Buffer | undefined = undefined;

  constructor(
    readonly firstId: number,
    private readonly texts: readonly string[],
  ) {}

  /** The texts joined by commas, encoded once for both the length and the write. */
  private joinedBytes(): Buffer {
    return (this.joined ??= Buffer.from(this.texts.join(","), "utf8"));
  }

  get count(): number {
    return this.texts.length;
  }

  json(): string[] {
    return [...this.texts];
  }

  jsonByteLength(): number {
    return this.joinedBytes().length;
  }

  writeJson(target: Buffer, offset: number): number {
    return this.joinedBytes().copy(target, offset);
  }
}
