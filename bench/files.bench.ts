// Files through the API (issue 14): a 100 MiB upload (from a file) and download (read to its end),
// on each storage backend, beside the same copies made with the storage backend directly in this
// process (the ceilings; target: at least half their throughput), and the API process's RSS while
// 4 such files stream through at once (target: grows < 30 MiB).
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { LocalFileStorage, type FileStorage } from "@chat/storage";
import { S3FileStorage } from "../packages/storage/src/s3.ts";
import { startS3Server, type S3Server } from "../test/support/s3-server.ts";
import { basicAuth, startBenchEnvironment, type BenchEnvironment } from "./lib/environment.ts";
import { report } from "./lib/stats.ts";

const MIB = 1024 * 1024;
const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 100);
const FILE_BYTES = FILE_MIB * MIB;
const CONCURRENT = 4;
const RUNS = 3;

/** Discards what it is given, counting it. */
function sink(): Writable & { bytes: number } {
  const writable = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writable.bytes += chunk.length;
      callback();
    },
  }) as Writable & { bytes: number };
  writable.bytes = 0;
  return writable;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Best of `RUNS`: the figure least disturbed by the machine's other work. */
async function best(fn: () => Promise<unknown>): Promise<number> {
  let fastest = Infinity;
  for (let i = 0; i < RUNS; i++) fastest = Math.min(fastest, await timed(fn));
  return fastest;
}

const BOUNDARY = "----teamchat-bench-boundary";
const HEAD = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
const TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** POST /user_uploads streaming the file from disk, as a client would; resolves to the uri. */
function uploadFile(baseUrl: string, auth: string, file: string): Promise<string> {
  const url = new URL(`${baseUrl}/api/v1/user_uploads`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { Authorization: auth, "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`, "Content-Length": HEAD.length + FILE_BYTES + TAIL.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as { result: string; uri?: string; msg?: string };
          if (body.result !== "success" || !body.uri) reject(new Error(`upload failed: ${res.statusCode} ${body.msg}`));
          else resolve(body.uri);
        });
      },
    );
    req.on("error", reject);
    req.write(HEAD);
    const body = createReadStream(file);
    body.on("error", reject);
    body.on("end", () => req.end(TAIL));
    body.pipe(req, { end: false });
  });
}

/** GET a file, saved to `saveTo` as a client saves a download (or discarded); resolves to its size. */
function downloadFile(baseUrl: string, auth: string, uri: string, saveTo?: string): Promise<number> {
  const url = new URL(`${baseUrl}${uri}`);
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path: url.pathname, headers: { Authorization: auth } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`download failed: ${res.statusCode}`));
        let bytes = 0;
        res.on("data", (chunk: Buffer) => (bytes += chunk.length));
        pipeline(res, saveTo ? createWriteStream(saveTo) : sink()).then(() => resolve(bytes), reject);
      })
      .on("error", reject);
  });
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** The most the process's RSS rose above `baseline` while `work` ran, sampled every 20 ms. */
async function peakRssGrowth(pid: number, work: () => Promise<unknown>): Promise<number> {
  const baseline = await rssOf(pid);
  let peak = baseline;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssOf(pid));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    await work();
  } finally {
    running = false;
    await sampler;
  }
  return peak - baseline;
}

async function benchBackend(backend: "local" | "s3", file: string): Promise<boolean> {
  let s3: S3Server | null = null;
  let env: BenchEnvironment | null = null;
  const dirs: string[] = [];
  let direct: FileStorage | null = null;
  try {
    let serverEnv: Record<string, string>;
    if (backend === "s3") {
      s3 = await startS3Server();
      serverEnv = { STORAGE_BACKEND: "s3", S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_REGION: s3.region, S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey };
      direct = new S3FileStorage({ backend: "s3", bucket: s3.bucket, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, forcePathStyle: true });
    } else {
      const serverDir = await mkdtemp(path.join(os.tmpdir(), "bench-uploads-server-"));
      const directDir = await mkdtemp(path.join(os.tmpdir(), "bench-uploads-direct-"));
      dirs.push(serverDir, directDir);
      serverEnv = { STORAGE_BACKEND: "local", LOCAL_UPLOADS_DIR: serverDir };
      direct = new LocalFileStorage(directDir);
    }
    env = await startBenchEnvironment({ ...serverEnv, MAX_FILE_UPLOAD_SIZE_MIB: String(FILE_MIB * 2) });
    const login = await fetch(`${env.baseUrl}/api/v1/fetch_api_key`, { method: "POST", body: new URLSearchParams({ username: "owner@example.com", password: "bench-password" }) });
    const { api_key: apiKey } = (await login.json()) as { api_key: string };
    const auth = basicAuth("owner@example.com", apiKey);
    const storage = direct;

    // Ceilings: the same transfers made with the storage backend alone, from this process: the file
    // into storage, and the stored object read out. A download is measured to its last byte read,
    // not saved: saving costs the client the same on either side.
    let n = 0;
    const ceilingUp = await best(() => storage.put(`bench/direct-${n++}`, createReadStream(file), { contentType: "application/octet-stream" }));
    const ceilingDown = await best(async () => {
      const object = await storage.get("bench/direct-0");
      await pipeline(object!.body, sink());
    });

    // A third ceiling: bare Node HTTP sending the same file from disk, over the same loopback.
    const bare = http.createServer((_req, res) => {
      res.setHeader("Content-Length", FILE_BYTES);
      pipeline(createReadStream(file, { highWaterMark: MIB }), res).catch(() => undefined);
    });
    await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
    const barePort = (bare.address() as { port: number }).port;
    const bareDown = await best(() => downloadFile(`http://127.0.0.1:${barePort}`, auth, "/"));
    await new Promise<void>((resolve) => bare.close(() => resolve()));

    let uri = "";
    const up = await best(async () => (uri = await uploadFile(env!.baseUrl, auth, file)));
    const down = await best(async () => {
      const bytes = await downloadFile(env!.baseUrl, auth, uri);
      if (bytes !== FILE_BYTES) throw new Error(`downloaded ${bytes} bytes of ${FILE_BYTES}`);
    });

    // The median of 3 rounds: a round's peak includes buffers already read and written but not yet
    // collected (V8 collects external memory in steps of tens of MiB), which one round may catch.
    const pid = env.server.child.pid!;
    const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
    const uploadRounds: number[] = [];
    const downloadRounds: number[] = [];
    for (let round = 0; round < RUNS; round++) {
      uploadRounds.push(await peakRssGrowth(pid, () => Promise.all(Array.from({ length: CONCURRENT }, () => uploadFile(env!.baseUrl, auth, file)))));
      downloadRounds.push(await peakRssGrowth(pid, () => Promise.all(Array.from({ length: CONCURRENT }, () => downloadFile(env!.baseUrl, auth, uri)))));
    }
    const uploadGrowth = median(uploadRounds);
    const downloadGrowth = median(downloadRounds);
    const rounds = (samples: number[]) => samples.map((b) => (b / MIB).toFixed(1)).join(", ");

    const mibps = (seconds: number) => FILE_MIB / seconds;
    process.stdout.write(`-- ${backend} storage, ${FILE_MIB} MiB file, best of ${RUNS}\n`);
    let ok = report({ name: "upload (POST /user_uploads)", value: mibps(up), unit: "MiB/s", ceilings: [{ name: "storage put of the file, alone", value: mibps(ceilingUp) }], target: { limit: Math.round(mibps(ceilingUp) / 2), higherIsBetter: true } });
    ok = report({ name: "download (GET /user_uploads/...)", value: mibps(down), unit: "MiB/s", ceilings: [{ name: "storage get alone", value: mibps(ceilingDown) }, { name: "bare Node HTTP sending the file", value: mibps(bareDown) }], target: { limit: Math.round(mibps(ceilingDown) / 2), higherIsBetter: true } }) && ok;
    ok = report({ name: `API process RSS growth, ${CONCURRENT} concurrent uploads, median of rounds (${rounds(uploadRounds)} MiB)`, value: uploadGrowth / MIB, unit: "MiB", ceilings: [], target: { limit: 30 } }) && ok;
    ok = report({ name: `API process RSS growth, ${CONCURRENT} concurrent downloads, median of rounds (${rounds(downloadRounds)} MiB)`, value: downloadGrowth / MIB, unit: "MiB", ceilings: [], target: { limit: 30 } }) && ok;
    process.stdout.write(`  (targets: throughput at least half the ceiling's; RSS growth under 30 MiB)\n`);
    return ok;
  } finally {
    await env?.close();
    await direct?.close();
    await s3?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

export async function benchFiles(): Promise<boolean> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-files-"));
  const file = path.join(dir, "big.bin");
  try {
    // Incompressible bytes, written once.
    const chunk = Buffer.alloc(MIB);
    for (let i = 0; i < chunk.length; i += 4) chunk.writeUInt32LE((i * 2654435761) >>> 0, i);
    await writeFile(file, Buffer.concat(Array.from({ length: FILE_MIB }, (_, i) => Buffer.from(chunk.map((b) => (b + i) & 255)))));
    // BENCH_FILES_BACKENDS=local (or s3) narrows a run, e.g. while profiling.
    const backends = (process.env.BENCH_FILES_BACKENDS ?? "local,s3").split(",") as Array<"local" | "s3">;
    let ok = true;
    for (const backend of backends) ok = (await benchBackend(backend, file)) && ok;
    return ok;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
