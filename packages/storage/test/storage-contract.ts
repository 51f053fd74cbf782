// The one behaviour every FileStorage must have. Each backend's test file runs it with a harness.
import { FileTooLargeError, type FileStorage } from "../src/index.ts";
import { endlessStream, failingStream, MIB, pattern, readAll, sha256, streamOf, streamWithGate, waitFor } from "./bodies.ts";

export interface StorageHarness {
  storage: FileStorage;
  /**
   * Everything the backend holds for this storage, one string per thing, naming its key: stored
   * objects and whatever a put in progress keeps (temporary files, multipart uploads).
   */
  inventory(): Promise<string[]>;
  close(): Promise<void>;
}

const BIG = 12 * MIB; // more than two 5 MiB parts
const UNSAFE_KEYS = ["", "../x", "a/../../x", "/abs", "a//b", "a/", "a/./b", "a\\b", "a\0b", "x".repeat(1025)];

export function describeStorageContract(name: string, makeStorage: () => Promise<StorageHarness>): void {
  describe(`${name} (storage contract)`, () => {
    let harness: StorageHarness;
    let storage: FileStorage;
    const big = pattern(BIG, 42);

    beforeEach(async () => {
      harness = await makeStorage();
      storage = harness.storage;
    });
    afterEach(async () => {
      await harness.close();
    });

    async function read(key: string, range?: { start: number; end: number }) {
      const object = await storage.get(key, range);
      if (!object) throw new Error(`${key} not found`);
      return { ...object, bytes: await readAll(object.body) };
    }

    test("a Buffer round-trips with its size and content type", async () => {
      const bytes = pattern(1000, 1);
      expect(await storage.put("uploads/1/abc/file.bin", bytes, { contentType: "application/octet-stream" })).toEqual({
        size: 1000,
        contentType: "application/octet-stream",
      });
      const object = await read("uploads/1/abc/file.bin");
      expect(object).toMatchObject({ size: 1000, contentType: "application/octet-stream", range: null });
      expect(object.bytes.equals(bytes)).toBe(true);
      expect(await harness.inventory()).toEqual(expect.arrayContaining([expect.stringContaining("uploads/1/abc/file.bin")]));
    });

    test("a stream of several MiB round-trips byte for byte", async () => {
      expect(await storage.put("big.bin", streamOf(big), { contentType: "video/mp4" })).toEqual({ size: BIG, contentType: "video/mp4" });
      const object = await read("big.bin");
      expect(object).toMatchObject({ size: BIG, contentType: "video/mp4", range: null });
      expect(object.bytes.length).toBe(BIG);
      expect(sha256(object.bytes)).toBe(sha256(big));
      expect(await storage.stat("big.bin")).toEqual({ size: BIG, contentType: "video/mp4" });
    });

    test("an empty body is an object of 0 bytes", async () => {
      await storage.put("empty", Buffer.alloc(0), { contentType: "text/plain" });
      await storage.put("empty-stream", streamOf(Buffer.alloc(0)), { contentType: "text/plain" });
      for (const key of ["empty", "empty-stream"]) {
        const object = await read(key);
        expect(object).toMatchObject({ size: 0, contentType: "text/plain", range: null });
        expect(object.bytes.length).toBe(0);
      }
    });

    test("content types are kept as given", async () => {
      const types = ["image/png", "text/plain; charset=utf-8", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"];
      for (const [i, contentType] of types.entries()) {
        await storage.put(`typed/${i}`, i % 2 ? streamOf(pattern(10, i)) : pattern(10, i), { contentType });
      }
      for (const [i, contentType] of types.entries()) {
        expect(await storage.stat(`typed/${i}`)).toEqual({ size: 10, contentType });
        expect((await read(`typed/${i}`)).contentType).toBe(contentType);
      }
    });

    describe("ranges", () => {
      const bytes = pattern(1000, 3);
      beforeEach(async () => {
        await storage.put("ranged", bytes, { contentType: "text/plain" });
      });

      test.each([
        ["the first bytes", { start: 0, end: 9 }, { start: 0, end: 9 }],
        ["the middle", { start: 100, end: 199 }, { start: 100, end: 199 }],
        ["the last byte", { start: 999, end: 999 }, { start: 999, end: 999 }],
        ["past the end, clamped", { start: 990, end: 5000 }, { start: 990, end: 999 }],
      ])("%s", async (_name, asked, served) => {
        const object = await read("ranged", asked);
        expect(object).toMatchObject({ size: 1000, contentType: "text/plain", range: served });
        expect(object.bytes.equals(bytes.subarray(served.start, served.end + 1))).toBe(true);
      });

      test.each([
        ["at the end", { start: 1000, end: 1100 }],
        ["far past the end", { start: 5000, end: 6000 }],
      ])("a range starting %s reads as the whole object", async (_name, asked) => {
        const object = await read("ranged", asked);
        expect(object).toMatchObject({ size: 1000, range: null });
        expect(object.bytes.equals(bytes)).toBe(true);
      });

      test("a range across the parts of a streamed object", async () => {
        await storage.put("big-ranged", streamOf(big), { contentType: "video/mp4" });
        const served = { start: 5 * MIB - 100, end: 5 * MIB + 99 };
        const object = await read("big-ranged", served);
        expect(object).toMatchObject({ size: BIG, range: served });
        expect(object.bytes.equals(big.subarray(served.start, served.end + 1))).toBe(true);
      });

      test("a range of an empty object reads as the whole (empty) object", async () => {
        await storage.put("empty", Buffer.alloc(0), { contentType: "text/plain" });
        const object = await read("empty", { start: 0, end: 9 });
        expect(object).toMatchObject({ size: 0, range: null });
        expect(object.bytes.length).toBe(0);
      });

      test("a malformed range is refused", async () => {
        await expect(storage.get("ranged", { start: 10, end: 9 })).rejects.toThrow(RangeError);
        await expect(storage.get("ranged", { start: -1, end: 9 })).rejects.toThrow(RangeError);
        await expect(storage.get("ranged", { start: 0.5, end: 9 })).rejects.toThrow(RangeError);
      });
    });

    test("a missing key is null to get and stat", async () => {
      await storage.put("present", pattern(5), { contentType: "text/plain" });
      expect(await storage.get("absent")).toBeNull();
      expect(await storage.get("absent", { start: 0, end: 9 })).toBeNull();
      expect(await storage.stat("absent")).toBeNull();
      expect(await storage.stat("present/below")).toBeNull();
      expect(await storage.stat("present")).toEqual({ size: 5, contentType: "text/plain" });
    });

    test("a put replaces what the key held, bytes and type", async () => {
      await storage.put("avatar", pattern(3 * MIB, 1), { contentType: "image/png" });
      const replacement = pattern(1234, 2);
      await storage.put("avatar", streamOf(replacement), { contentType: "image/jpeg" });
      expect(await storage.stat("avatar")).toEqual({ size: 1234, contentType: "image/jpeg" });
      expect((await read("avatar")).bytes.equals(replacement)).toBe(true);
    });

    test("keys that look like a backend's own names are plain keys", async () => {
      const keys = ["a", "a.meta", "a.json", ".tmp/a", "meta/a", "objects/a", "uploads"];
      for (const [i, key] of keys.entries()) await storage.put(key, pattern(100 + i, i), { contentType: `x/t${i}` });
      for (const [i, key] of keys.entries()) {
        const object = await read(key);
        expect(object).toMatchObject({ size: 100 + i, contentType: `x/t${i}` });
        expect(object.bytes.equals(pattern(100 + i, i))).toBe(true);
      }
      await storage.delete(keys);
      expect(await harness.inventory()).toEqual([]);
    });

    describe("delete", () => {
      test("removes the objects and ignores keys with none", async () => {
        await storage.put("d/1", pattern(10, 1), { contentType: "text/plain" });
        await storage.put("d/2", streamOf(pattern(10, 2)), { contentType: "text/plain" });
        await storage.put("keep", pattern(10, 3), { contentType: "text/plain" });
        await storage.delete(["d/1", "never-stored", "d/2", "d/2", "d/1/below"]);
        expect(await storage.stat("d/1")).toBeNull();
        expect(await storage.get("d/2")).toBeNull();
        expect((await read("keep")).bytes.equals(pattern(10, 3))).toBe(true);
        await storage.delete([]);
        await storage.delete(["keep"]);
        expect(await harness.inventory()).toEqual([]);
      });

      test("removes more keys than one request takes", async () => {
        const keys = Array.from({ length: 1005 }, (_, i) => `many/${i % 7}/${i}`);
        for (let i = 0; i < keys.length; i += 25) {
          await Promise.all(keys.slice(i, i + 25).map((key) => storage.put(key, Buffer.from(key), { contentType: "text/plain" })));
        }
        expect((await harness.inventory()).filter((thing) => thing.includes("many/")).length).toBeGreaterThanOrEqual(keys.length);
        await storage.delete(keys);
        expect(await harness.inventory()).toEqual([]);
      });
    });

    describe("maxBytes", () => {
      test("a stream past the limit rejects, after storing something in progress, and leaves nothing", async () => {
        const { body, gate } = streamWithGate(big.subarray(0, 7 * MIB), big.subarray(7 * MIB));
        const put = storage.put("too-big", body, { contentType: "video/mp4", maxBytes: 8 * MIB });
        put.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
        await gate.reached;
        // Not vacuous: the backend did hold something of this put (a temporary file, a multipart upload).
        await waitFor(async () => (await harness.inventory()).some((thing) => thing.includes("too-big") || thing.includes(".tmp")));
        gate.open();
        const error = await put.then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(FileTooLargeError);
        expect((error as FileTooLargeError).maxBytes).toBe(8 * MIB);
        expect(await storage.stat("too-big")).toBeNull();
        expect(await harness.inventory()).toEqual([]);
        // The source is the caller's: unpiped, not destroyed.
        expect(body.destroyed).toBe(false);
        body.destroy();
      });

      test("an endless stream rejects promptly", async () => {
        const body = endlessStream();
        await expect(storage.put("endless", body, { contentType: "text/plain", maxBytes: 6 * MIB })).rejects.toThrow(FileTooLargeError);
        expect(body.sent).toBeGreaterThan(6 * MIB);
        body.destroy();
        expect(await storage.stat("endless")).toBeNull();
        expect(await harness.inventory()).toEqual([]);
      });

      test("a Buffer past the limit rejects and stores nothing", async () => {
        await expect(storage.put("too-big", pattern(1001), { contentType: "text/plain", maxBytes: 1000 })).rejects.toThrow(FileTooLargeError);
        expect(await harness.inventory()).toEqual([]);
      });

      test("a body of exactly the limit is stored", async () => {
        const bytes = pattern(6 * MIB, 5);
        expect(await storage.put("exact-stream", streamOf(bytes), { contentType: "text/plain", maxBytes: 6 * MIB })).toEqual({
          size: 6 * MIB,
          contentType: "text/plain",
        });
        expect(await storage.put("exact-buffer", bytes.subarray(0, 1000), { contentType: "text/plain", maxBytes: 1000 })).toEqual({
          size: 1000,
          contentType: "text/plain",
        });
        expect(sha256((await read("exact-stream")).bytes)).toBe(sha256(bytes));
      });

      test("a failed replace leaves the object it would have replaced", async () => {
        const old = pattern(2000, 9);
        await storage.put("kept", old, { contentType: "image/png" });
        await expect(storage.put("kept", streamOf(big), { contentType: "video/mp4", maxBytes: 7 * MIB })).rejects.toThrow(FileTooLargeError);
        expect(await storage.stat("kept")).toEqual({ size: 2000, contentType: "image/png" });
        expect((await read("kept")).bytes.equals(old)).toBe(true);
      });
    });

    describe("a failing source", () => {
      test("an error midway rejects with it and leaves nothing", async () => {
        const { body, gate } = streamWithGate(big.subarray(0, 7 * MIB), Buffer.alloc(0), new Error("client went away"));
        const put = storage.put("broken", body, { contentType: "video/mp4" });
        put.catch(() => {});
        await gate.reached;
        await waitFor(async () => (await harness.inventory()).some((thing) => thing.includes("broken") || thing.includes(".tmp")));
        gate.open();
        await expect(put).rejects.toThrow("client went away");
        expect(await storage.stat("broken")).toBeNull();
        expect(await harness.inventory()).toEqual([]);
      });

      test("an error before the first part rejects and leaves nothing", async () => {
        await expect(storage.put("broken", failingStream(pattern(1000), new Error("early")), { contentType: "text/plain" })).rejects.toThrow("early");
        expect(await harness.inventory()).toEqual([]);
      });

      test("a source destroyed midway without an error rejects and leaves nothing", async () => {
        const { body, gate } = streamWithGate(big.subarray(0, 6 * MIB), big.subarray(6 * MIB));
        const put = storage.put("cut", body, { contentType: "video/mp4" });
        put.catch(() => {});
        await gate.reached;
        body.destroy();
        gate.open(); // lets the generator behind the stream finish, which its destroy() waits for
        await expect(put).rejects.toThrow();
        expect(await storage.stat("cut")).toBeNull();
        expect(await harness.inventory()).toEqual([]);
      });
    });

    test("unsafe keys are refused by every method", async () => {
      for (const key of UNSAFE_KEYS) {
        await expect(storage.put(key, pattern(10), { contentType: "text/plain" })).rejects.toThrow(/unsafe storage key/);
        await expect(storage.put(key, streamOf(pattern(10)), { contentType: "text/plain" })).rejects.toThrow(/unsafe storage key/);
        await expect(storage.get(key)).rejects.toThrow(/unsafe storage key/);
        await expect(storage.stat(key)).rejects.toThrow(/unsafe storage key/);
        await expect(storage.delete(["fine", key])).rejects.toThrow(/unsafe storage key/);
      }
      expect(await harness.inventory()).toEqual([]);
    });

    test("concurrent puts to different keys each keep their own bytes", async () => {
      // Around the sizes where a backend may change its ways: 1 MiB, one 5 MiB part, two parts.
      const sizes = [1 * MIB, 1 * MIB + 1, 3 * MIB, 5 * MIB, 6 * MIB + 1, 10 * MIB, 11 * MIB, 100];
      const bodies = sizes.map((size, i) => pattern(size, 100 + i));
      const stored = await Promise.all(
        bodies.map((bytes, i) => storage.put(`parallel/${i}`, i === sizes.length - 1 ? bytes : streamOf(bytes), { contentType: `x/p${i}` })),
      );
      expect(stored).toEqual(sizes.map((size, i) => ({ size, contentType: `x/p${i}` })));
      for (const [i, bytes] of bodies.entries()) {
        const object = await read(`parallel/${i}`);
        expect(object).toMatchObject({ size: sizes[i], contentType: `x/p${i}` });
        expect(sha256(object.bytes)).toBe(sha256(bytes));
      }
    });
  });
}
