// Group commit: concurrent callers' writes of one kind share one statement, and with it one
// plan, one commit and one WAL flush. Under load the statement, not its rows, is what Postgres
// spends on: measured here, a 10-recipient message costs about 0.73 ms of Postgres CPU written
// alone, 0.37 ms four to a statement and 0.24 ms sixteen to one. A write that finds no other in
// flight runs at once, so at low load nothing waits.
//
// Statements run one at a time, so that writes gather while one runs; but one statement is one
// Postgres backend on one core, so while a heavy statement runs (many rows: a message to a stream
// of a thousand) the next may start beside it.

export interface GroupCommitOptions<I> {
  /** Most writes one statement carries. */
  maxBatch: number;
  /** Statements in flight at once, when those in flight are heavy. */
  maxConcurrent: number;
  /** A write's expected rows; a statement is heavy when its writes' sum reaches `heavyWeight`. */
  weight?: (item: I) => number;
  heavyWeight?: number;
}

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(reason: unknown): void;
}

export class GroupCommit<I, O> {
  private readonly waiting: Pending<I, O>[] = [];
  /** The weight of each statement in flight. */
  private readonly running = new Set<{ weight: number }>();
  private readonly weightOf: (item: I) => number;

  constructor(
    /** Writes the items in one statement; returns one result per item, in order. */
    private readonly writeAll: (items: I[]) => Promise<O[]>,
    private readonly options: GroupCommitOptions<I>,
  ) {
    this.weightOf = options.weight ?? (() => 1);
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private mayStart(): boolean {
    if (this.running.size === 0) return true;
    if (this.running.size >= this.options.maxConcurrent) return false;
    const heavy = this.options.heavyWeight ?? Infinity;
    for (const statement of this.running) if (statement.weight < heavy) return false;
    return true;
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.mayStart()) {
      const group = this.waiting.splice(0, this.options.maxBatch);
      const statement = { weight: group.reduce((sum, pending) => sum + this.weightOf(pending.item), 0) };
      this.running.add(statement);
      void this.runGroup(group).finally(() => {
        this.running.delete(statement);
        this.pump();
      });
    }
  }

  private async runGroup(group: Pending<I, O>[]): Promise<void> {
    try {
      const results = await this.writeAll(group.map((pending) => pending.item));
      group.forEach((pending, i) => pending.resolve(results[i]));
    } catch (error) {
      if (group.length === 1) {
        group[0].reject(error);
        return;
      }
      // One bad write must not fail its neighbours: each is written again on its own.
      await Promise.all(
        group.map(async (pending) => {
          try {
            const [result] = await this.writeAll([pending.item]);
            pending.resolve(result);
          } catch (own) {
            pending.reject(own);
          }
        }),
      );
    }
  }
}
