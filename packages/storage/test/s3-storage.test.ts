import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { crc32 } from "node:zlib";
import { startS3Server, type S3Server } from "../../../test/support/s3-server.ts";
import { openStorage } from "../src/index.ts";
import { S3FileStorage, type S3StorageConfig } from "../src/s3.ts";
import { countBytes } from "../src/byte-counter.ts";
import { PART_SIZE, uploadStream } from "../src/multipart-upload.ts";
import { endlessStream, failingStream, MIB, pattern, readAll, sha256, streamOf, streamWithGate, waitFor } from "./bodies.ts";
import { describeStorageContract } from "./storage-contract.ts";

let server: S3Server;
let client: S3Client;
let tests = 0;
/** Each storage spools its parts in a directory of its own under this one. */
let spoolRoot: string;

beforeAll(async () => {
  spoolRoot = await mkdtemp(path.join(os.tmpdir(), "teamchat-s3-spool-test-"));
  server = await startS3Server();
  client = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
  if (spoolRoot) await rm(spoolRoot, { recursive: true, force: true });
});

function configOf(s3: S3Server): S3StorageConfig {
  return {
    backend: "s3",
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
  };
}

/** Objects and multipart uploads under `prefix`, as "object:<key>" and "upload:<key>". */
async function bucketInventory(prefix: string): Promise<string[]> {
  const things: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) things.push(`object:${object.Key}`);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: server.bucket, Prefix: prefix }));
  for (const upload of uploads.Uploads ?? []) things.push(`upload:${upload.Key}`);
  return things.sort();
}

/** Part files in `directory`, as "spool:<name>". */
async function spoolInventory(directory: string): Promise<string[]> {
  const names = await readdir(directory).catch(() => []);
  return names.map((name) => `spool:${name}`).sort();
}

/** A spool directory of its own, made. */
async function newSpool(name: string): Promise<string> {
  const directory = path.join(spoolRoot, name);
  await mkdir(directory, { recursive: true });
  return directory;
}

// Each test has a prefix of its own in the one bucket, and a spool directory of its own, so what
// one leaves cannot pass for another's. A part file left behind fails the contract's "leaves nothing".
describeStorageContract("s3", async () => {
  const prefix = `t${++tests}/`;
  const spoolDirectory = path.join(spoolRoot, `t${tests}`);
  const storage = new S3FileStorage(configOf(server), { prefix, spoolDirectory });
  return {
    storage,
    inventory: async () => [...(await bucketInventory(prefix)), ...(await spoolInventory(spoolDirectory))],
    close: () => storage.close(),
  };
});

describe("s3 storage", () => {
  test("keys are stored under the prefix, and only there", async () => {
    const storage = new S3FileStorage(configOf(server), { prefix: "prefixed/" });
    try {
      await storage.put("uploads/1/a.txt", Buffer.from("hello"), { contentType: "text/plain" });
      const listed = await client.send(new ListObjectsV2Command({ Bucket: server.bucket }));
      expect((listed.Contents ?? []).map((object) => object.Key)).toContain("prefixed/uploads/1/a.txt");
      expect((listed.Contents ?? []).map((object) => object.Key)).not.toContain("uploads/1/a.txt");
      await storage.delete(["uploads/1/a.txt"]);
      expect(await bucketInventory("prefixed/")).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  test("the test server lists multipart uploads in progress and aborts them (s3rver lacks both)", async () => {
    const Key = "shim-check/object";
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: server.bucket, Key }));
    await client.send(new UploadPartCommand({ Bucket: server.bucket, Key, UploadId, PartNumber: 1, Body: pattern(MIB) }));
    expect(await bucketInventory("shim-check/")).toEqual([`upload:${Key}`]);
    await client.send(new AbortMultipartUploadCommand({ Bucket: server.bucket, Key, UploadId }));
    expect(await bucketInventory("shim-check/")).toEqual([]);
  });

  test("with the SDK's default checksums (AWS itself), a multipart upload declares and sends them", async () => {
    const sent: { command: string; headers: Record<string, string> }[] = [];
    const aws = new S3Client({
      endpoint: server.endpoint,
      region: server.region,
      forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    aws.middlewareStack.add(
      (next, context) => async (args) => {
        const { headers } = args.request as { headers: Record<string, string> };
        sent.push({ command: context.commandName ?? "", headers: { ...headers } });
        return next(args);
      },
      { step: "finalizeRequest", name: "recordRequests" },
    );
    try {
      expect(await aws.config.requestChecksumCalculation()).toBe("WHEN_SUPPORTED");
      const bytes = pattern(12 * MIB, 77);
      const target = { Bucket: server.bucket, Key: "checksums/object", ContentType: "video/mp4" };
      const spoolDirectory = await newSpool("checksums");
      expect(await uploadStream(aws, target, countBytes(streamOf(bytes), undefined), { spoolDirectory: async () => spoolDirectory })).toBe(12 * MIB);
      const create = sent.filter((request) => request.command === "CreateMultipartUploadCommand");
      expect(create).toHaveLength(1);
      expect(create[0].headers["x-amz-checksum-algorithm"]).toBe("CRC32");
      const parts = sent.filter((request) => request.command === "UploadPartCommand");
      expect(parts).toHaveLength(3);
      // Each part's own CRC32 (big-endian, base64), in a header: not aws-chunked with a trailer.
      const crcOf = (bytes: Buffer) => {
        const digest = Buffer.alloc(4);
        digest.writeUInt32BE(crc32(bytes));
        return digest.toString("base64");
      };
      for (const [i, part] of parts.entries()) {
        expect(part.headers["x-amz-checksum-crc32"]).toBe(crcOf(bytes.subarray(i * PART_SIZE, (i + 1) * PART_SIZE)));
        expect(part.headers["content-length"]).toBe(String(Math.min(PART_SIZE, bytes.length - i * PART_SIZE)));
        expect(part.headers["content-encoding"]).toBeUndefined();
      }
      // A body of one part, more than 1 MiB, goes from its part file in one PutObject, with its checksum.
      const single = pattern(3 * MIB, 78);
      expect(await uploadStream(aws, { ...target, Key: "checksums/single" }, streamOf(single), { spoolDirectory: async () => spoolDirectory })).toBe(3 * MIB);
      const put = sent.filter((request) => request.command === "PutObjectCommand");
      expect(put).toHaveLength(1);
      expect(put[0].headers["x-amz-checksum-crc32"]).toBe(crcOf(single));
      expect(await readdir(spoolDirectory)).toEqual([]);
      const storage = new S3FileStorage(configOf(server), { prefix: "checksums/" });
      try {
        const object = await storage.get("object");
        expect(object && (await readAll(object.body)).equals(bytes)).toBe(true);
        const one = await storage.get("single");
        expect(one && (await readAll(one.body)).equals(single)).toBe(true);
        await storage.delete(["object", "single"]);
      } finally {
        await storage.close();
      }
    } finally {
      aws.destroy();
    }
  });

  test("on AWS itself, requests keep the SDK's checksums, and GetObject responses go unvalidated (get() streams them on)", async () => {
    const storage = new S3FileStorage({ ...configOf(server), endpoint: null, forcePathStyle: false });
    try {
      const { config } = (storage as unknown as { client: S3Client }).client;
      expect(await config.requestChecksumCalculation()).toBe("WHEN_SUPPORTED");
      expect(await config.responseChecksumValidation()).toBe("WHEN_REQUIRED");
    } finally {
      await storage.close();
    }
  });

  describe("S3 failing midway", () => {
    interface Fault {
      /** "initialize": before the request is made; "deserialize": after S3 took it, as a dropped answer. */
      step?: "initialize" | "deserialize";
      error?: () => Error;
      /** How many times it fails (then the requests go through); every time by default. */
      times?: number;
    }

    /** A client whose `commandName` request fails when `when` holds for its input. */
    function faultyClient(commandName: string, when: (input: Record<string, unknown>) => boolean, fault: Fault = {}): S3Client & { faults: number } {
      const { step = "initialize", error = () => new Error(`${commandName} failed`), times = Infinity } = fault;
      const faulty = new S3Client({
        endpoint: server.endpoint,
        region: server.region,
        forcePathStyle: true,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      }) as S3Client & { faults: number };
      faulty.faults = 0;
      const fails = (commandName_: string | undefined, input: unknown) =>
        commandName_ === commandName && when(input as Record<string, unknown>) && faulty.faults < times && ++faulty.faults > 0;
      if (step === "initialize") {
        faulty.middlewareStack.add(
          (next, context) => async (args) => {
            if (fails(context.commandName, args.input)) throw error();
            return next(args);
          },
          { step: "initialize", name: "injectFault" },
        );
      } else {
        faulty.middlewareStack.add(
          (next, context) => async (args) => {
            const result = await next(args);
            if (fails(context.commandName, args.input)) throw error();
            return result;
          },
          { step: "deserialize", name: "injectFault" },
        );
      }
      return faulty;
    }

    test.each([
      // The second part fails with the source half read: it stays the caller's, unpiped, not destroyed.
      ["UploadPartCommand", (input: Record<string, unknown>) => input.PartNumber === 2, { sourceEnded: false }],
      ["CompleteMultipartUploadCommand", () => true, { sourceEnded: true }],
    ])("%s: the upload is aborted before the put rejects", async (commandName, when, { sourceEnded }) => {
      const faulty = faultyClient(commandName, when);
      const body = streamOf(pattern(12 * MIB));
      try {
        const target = { Bucket: server.bucket, Key: "faulty/object", ContentType: "video/mp4" };
        const spoolDirectory = await newSpool(`faulty-${commandName}`);
        // As put() does: the caller's stream through a counter, which is what the upload reads and stops.
        const counter = countBytes(body, undefined);
        await expect(uploadStream(faulty, target, counter, { spoolDirectory: async () => spoolDirectory })).rejects.toThrow(`${commandName} failed`);
        expect(faulty.faults).toBe(1); // not a failure the SDK would retry: not retried either
        expect(await bucketInventory("faulty/")).toEqual([]);
        expect(await spoolInventory(spoolDirectory)).toEqual([]);
        expect(counter.destroyed).toBe(true);
        expect(body.readableEnded).toBe(sourceEnded);
        expect(body.destroyed).toBe(sourceEnded); // a stream read to its end destroys itself
      } finally {
        body.destroy();
        faulty.destroy();
      }
    });

    test.each([
      ["CreateMultipartUploadCommand", 12 * MIB, () => true],
      ["UploadPartCommand", 12 * MIB, (input: Record<string, unknown>) => input.PartNumber === 1],
      ["UploadPartCommand", 12 * MIB, (input: Record<string, unknown>) => input.PartNumber === 3],
      // One part, more than 1 MiB: a PutObject from its part file.
      ["PutObjectCommand", 3 * MIB, () => true],
    ])("%s failing (a %p-byte body) leaves no part file and nothing in the bucket", async (commandName, size, when) => {
      const faulty = faultyClient(commandName, when);
      try {
        const target = { Bucket: server.bucket, Key: "faulty-spool/object", ContentType: "video/mp4" };
        const spoolDirectory = await newSpool(`faulty-spool-${commandName}`);
        await expect(uploadStream(faulty, target, streamOf(pattern(size)), { spoolDirectory: async () => spoolDirectory })).rejects.toThrow(`${commandName} failed`);
        expect(await bucketInventory("faulty-spool/")).toEqual([]);
        expect(await spoolInventory(spoolDirectory)).toEqual([]);
      } finally {
        faulty.destroy();
      }
    });

    test.each([
      ["UploadPartCommand", 12 * MIB, (input: Record<string, unknown>) => input.PartNumber === 2],
      ["PutObjectCommand", 3 * MIB, () => true],
    ])("%s failing after S3 took the body, as a dropped connection, is sent again from its file, quietly", async (commandName, size, when) => {
      const reset = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      const faulty = faultyClient(commandName, when, { step: "deserialize", error: reset, times: 2 });
      const warn = jest.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const target = { Bucket: server.bucket, Key: "retried/object", ContentType: "video/mp4" };
        const spoolDirectory = await newSpool(`retried-${commandName}`);
        const bytes = pattern(size, 31);
        expect(await uploadStream(faulty, target, streamOf(bytes), { spoolDirectory: async () => spoolDirectory })).toBe(size);
        expect(faulty.faults).toBe(2); // the SDK's default: 3 attempts
        expect(warn).not.toHaveBeenCalled();
        expect(await spoolInventory(spoolDirectory)).toEqual([]);
        const storage = new S3FileStorage(configOf(server), { prefix: "retried/" });
        try {
          const object = await storage.get("object");
          expect(object && sha256(await readAll(object.body))).toBe(sha256(bytes));
          await storage.delete(["object"]);
        } finally {
          await storage.close();
        }
      } finally {
        warn.mockRestore();
        faulty.destroy();
      }
    });

    test("a failed put leaves an object it would have replaced", async () => {
      const storage = new S3FileStorage(configOf(server), { prefix: "faulty-replace/" });
      try {
        await storage.put("k", pattern(100), { contentType: "text/plain" });
        const faulty = faultyClient("UploadPartCommand", (input) => input.PartNumber === 2);
        try {
          const target = { Bucket: server.bucket, Key: "faulty-replace/k", ContentType: "video/mp4" };
          const spoolDirectory = await newSpool("faulty-replace");
          await expect(uploadStream(faulty, target, streamOf(pattern(12 * MIB)), { spoolDirectory: async () => spoolDirectory })).rejects.toThrow("failed");
        } finally {
          faulty.destroy();
        }
        expect(await storage.stat("k")).toEqual({ size: 100, contentType: "text/plain" });
        expect(await bucketInventory("faulty-replace/")).toEqual(["object:faulty-replace/k"]);
      } finally {
        await storage.close();
      }
    });
  });

  describe("part files", () => {
    test("a body of 1 MiB or less is sent from memory; a larger one holds one part file at a time, removed once sent", async () => {
      const spoolDirectory = path.join(spoolRoot, "one-at-a-time");
      const storage = new S3FileStorage(configOf(server), { prefix: "one-at-a-time/", spoolDirectory });
      try {
        await storage.put("small", streamOf(pattern(MIB)), { contentType: "text/plain" });
        await expect(readdir(spoolDirectory)).rejects.toThrow(/ENOENT/); // not even made
        const bytes = pattern(12 * MIB, 8);
        const { body, gate } = streamWithGate(bytes.subarray(0, 7 * MIB), bytes.subarray(7 * MIB));
        const put = storage.put("big", body, { contentType: "video/mp4" });
        put.catch(() => {});
        await gate.reached;
        // Part 1 sent and its file gone; part 2's 2 MiB so far in the one file there is.
        await waitFor(async () => {
          const names = await readdir(spoolDirectory);
          return names.length === 1 && (await stat(path.join(spoolDirectory, names[0])).catch(() => null))?.size === 2 * MIB;
        });
        gate.open();
        expect(await put).toEqual({ size: 12 * MIB, contentType: "video/mp4" });
        expect(await readdir(spoolDirectory)).toEqual([]);
        const object = await storage.get("big");
        expect(object && sha256(await readAll(object.body))).toBe(sha256(bytes));
      } finally {
        await storage.close();
      }
      // A given directory is the operator's: left, empty.
      expect(await readdir(spoolDirectory)).toEqual([]);
    });

    test.each([
      ["passing maxBytes within the first part", () => streamOf(pattern(12 * MIB)), 3 * MIB],
      ["passing maxBytes in a later part", () => streamOf(pattern(12 * MIB)), 7 * MIB],
      ["an endless body passing maxBytes", () => endlessStream(), 11 * MIB],
      ["a source failing within the first part", () => failingStream(pattern(2 * MIB), new Error("client went away")), undefined],
      ["a source failing in a later part", () => failingStream(pattern(7 * MIB), new Error("client went away")), undefined],
    ])("%s leaves no part file", async (_name, makeBody, maxBytes) => {
      const spoolDirectory = await newSpool(`failing-${++tests}`);
      const storage = new S3FileStorage(configOf(server), { prefix: `failing-${tests}/`, spoolDirectory });
      const body: Readable = makeBody();
      try {
        await expect(storage.put("k", body, { contentType: "video/mp4", maxBytes })).rejects.toThrow();
        expect(await spoolInventory(spoolDirectory)).toEqual([]);
        expect(await bucketInventory(`failing-${tests}/`)).toEqual([]);
      } finally {
        body.destroy();
        await storage.close();
      }
    });

    test("a storage's own spool directory, under the system's temporary directory, goes with close()", async () => {
      // A temporary directory no other process makes part directories in.
      const tmpdir = await newSpool("tmpdir");
      const spy = jest.spyOn(os, "tmpdir").mockReturnValue(tmpdir);
      const storage = new S3FileStorage(configOf(server), { prefix: "own-spool/" });
      let closed = false;
      try {
        await storage.put("k", streamOf(pattern(6 * MIB)), { contentType: "video/mp4" });
        const made = await readdir(tmpdir);
        expect(made).toEqual([expect.stringMatching(/^teamchat-s3-parts-/)]);
        expect(await readdir(path.join(tmpdir, made[0]))).toEqual([]);
        await storage.delete(["k"]);
        closed = true;
        await storage.close();
        expect(await readdir(tmpdir)).toEqual([]);
      } finally {
        spy.mockRestore();
        if (!closed) await storage.close();
      }
    });
  });

  test("openStorage opens the configured bucket", async () => {
    const storage = await openStorage(configOf(server));
    try {
      expect(storage).toBeInstanceOf(S3FileStorage);
      expect(storage.kind).toBe("s3");
      await storage.put("opened/k", pattern(100), { contentType: "text/plain" });
      const object = await storage.get("opened/k");
      expect(object && (await readAll(object.body)).equals(pattern(100))).toBe(true);
      await storage.delete(["opened/k"]);
    } finally {
      await storage.close();
    }
  });

  test("no NodeVersionSupportWarning reaches the output", async () => {
    // In a fresh process, as the server runs: the SDK warns once per process, at its first client.
    const run = (script: string) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", "-e", `(async () => { ${script} })()`], {
          cwd: path.resolve(__dirname, "../../.."),
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("error", reject);
        child.once("exit", () => resolve(output));
      });
    const config = JSON.stringify(configOf(server));
    const withStorage = await run(
      `const { S3FileStorage } = require("./packages/storage/src/s3.ts");
       const storage = new S3FileStorage(${config});
       console.log("stat", JSON.stringify(await storage.stat("absent")));
       await storage.close();`,
    );
    expect(withStorage.trim()).toBe("stat null");
    // Not vacuous: on Node before 22 a bare client does print it.
    if (Number(process.versions.node.split(".")[0]) < 22) {
      const bare = await run(`const { S3Client } = require("@aws-sdk/client-s3"); new S3Client({ region: "us-east-1" }).destroy();`);
      expect(bare).toContain("NodeVersionSupportWarning");
    }
  });
});
