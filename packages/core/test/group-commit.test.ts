import { GroupCommit } from "../src/lib/group-commit.ts";

/** A writer whose statements finish only when the test says so, recording what each carried. */
function controlledWriter(fail: (item: number) => boolean = () => false) {
  const statements: number[][] = [];
  const finish: Array<() => void> = [];
  const writeAll = (items: number[]) => {
    statements.push(items);
    return new Promise<string[]>((resolve, reject) => {
      finish.push(() => {
        const bad = items.find(fail);
        if (bad !== undefined) reject(new Error(`item ${bad} is bad`));
        else resolve(items.map((item) => `wrote ${item}`));
      });
    });
  };
  return { statements, finish, writeAll };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("GroupCommit", () => {
  test("a write with nothing in flight runs at once, alone", async () => {
    const writer = controlledWriter();
    const group = new GroupCommit(writer.writeAll, { maxBatch: 10, maxConcurrent: 1 });
    const result = group.submit(1);
    expect(writer.statements).toEqual([[1]]);
    writer.finish[0]();
    await expect(result).resolves.toBe("wrote 1");
  });

  test("writes arriving while a statement runs go together in the next one, each getting its own result", async () => {
    const writer = controlledWriter();
    const group = new GroupCommit(writer.writeAll, { maxBatch: 10, maxConcurrent: 1 });
    const results = [1, 2, 3, 4].map((item) => group.submit(item));
    expect(writer.statements).toEqual([[1]]);
    writer.finish[0]();
    await settle();
    expect(writer.statements).toEqual([[1], [2, 3, 4]]);
    writer.finish[1]();
    await expect(Promise.all(results)).resolves.toEqual(["wrote 1", "wrote 2", "wrote 3", "wrote 4"]);
  });

  test("statements carry at most maxBatch writes, and at most maxConcurrent run at once", async () => {
    const writer = controlledWriter();
    // Every statement counts as heavy: the second may always start beside the first.
    const group = new GroupCommit(writer.writeAll, { maxBatch: 2, maxConcurrent: 2, heavyWeight: 0 });
    const results = [1, 2, 3, 4, 5, 6, 7].map((item) => group.submit(item));
    expect(writer.statements).toEqual([[1], [2]]);
    writer.finish[0]();
    await settle();
    expect(writer.statements).toEqual([[1], [2], [3, 4]]);
    writer.finish[1]();
    await settle();
    expect(writer.statements).toEqual([[1], [2], [3, 4], [5, 6]]);
    writer.finish[2]();
    writer.finish[3]();
    await settle();
    expect(writer.statements).toEqual([[1], [2], [3, 4], [5, 6], [7]]);
    writer.finish[4]();
    await expect(Promise.all(results)).resolves.toHaveLength(7);
  });

  test("a second statement starts only beside a heavy one (by the writes' expected rows)", async () => {
    const writer = controlledWriter();
    // Items are their own weight: 1000 is a message to a big stream, 10 to a small one.
    const group = new GroupCommit(writer.writeAll, { maxBatch: 10, maxConcurrent: 2, weight: (item: number) => item, heavyWeight: 500 });
    const light = [10, 11].map((item) => group.submit(item));
    expect(writer.statements).toEqual([[10]]); // 11 waits: the statement in flight is light
    writer.finish[0]();
    await settle();
    expect(writer.statements).toEqual([[10], [11]]);
    const heavy = [1000, 12].map((item) => group.submit(item));
    expect(writer.statements).toEqual([[10], [11]]);
    writer.finish[1]();
    await settle();
    // [1000, 12] weighs 1012: the next write may start beside it.
    expect(writer.statements).toEqual([[10], [11], [1000, 12]]);
    const beside = group.submit(13);
    expect(writer.statements).toEqual([[10], [11], [1000, 12], [13]]);
    writer.finish.slice(2).forEach((finish) => finish());
    await expect(Promise.all([...light, ...heavy, beside])).resolves.toEqual(["wrote 10", "wrote 11", "wrote 1000", "wrote 12", "wrote 13"]);
  });

  test("a failing write fails only its own caller: the others in its statement are written again alone", async () => {
    const writer = controlledWriter((item) => item === 3);
    const group = new GroupCommit(writer.writeAll, { maxBatch: 10, maxConcurrent: 1 });
    const results = [1, 2, 3, 4].map((item) => group.submit(item).then((value) => value, (error: Error) => error.message));
    writer.finish[0]();
    await settle();
    writer.finish[1](); // [2, 3, 4] fails
    await settle();
    expect(writer.statements.slice(2)).toEqual([[2], [3], [4]]);
    writer.finish.slice(2).forEach((finish) => finish());
    await expect(Promise.all(results)).resolves.toEqual(["wrote 1", "wrote 2", "item 3 is bad", "wrote 4"]);
  });
});
