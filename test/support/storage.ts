// Servers on each storage backend, and a look behind the API at what storage holds: a test of "a
// refusal leaves nothing" must read the disk or the bucket itself.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { startS3Server, type S3Server } from "./s3-server.ts";
import { MODES, startTestServer, type Mode, type TestServer } from "./server.ts";

export type Backend = "local" | "s3";

/** Every mode on the local disk, and every mode on S3 (a server on a real S3-protocol peer). */
export const STORAGE_SETUPS: Array<{ mode: Mode; backend: Backend }> = MODES.flatMap((mode) => [
  { mode, backend: "local" as const },
  { mode, backend: "s3" as const },
]);

export interface StorageTestServer extends TestServer {
  backend: Backend;
  /** Keys stored under `prefix`; on the local disk, partial files being written count too. */
  storedKeys(prefix: string): Promise<string[]>;
}

async function walk(root: string, dir = root): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(root, full)));
    else files.push(path.relative(root, full).split(path.sep).join("/"));
  }
  return files;
}

export async function startStorageTestServer(mode: Mode, backend: Backend, env: Record<string, string> = {}): Promise<StorageTestServer> {
  let s3: S3Server | null = null;
  let directory: string | null = null;
  let storageEnv: Record<string, string>;
  if (backend === "s3") {
    s3 = await startS3Server();
    storageEnv = {
      STORAGE_BACKEND: "s3",
      S3_BUCKET: s3.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
  } else {
    directory = await mkdtemp(path.join(os.tmpdir(), "teamchat-uploads-test-"));
    storageEnv = { STORAGE_BACKEND: "local", LOCAL_UPLOADS_DIR: directory };
  }
  const server = await startTestServer(mode, { ...storageEnv, ...env });
  const client = s3
    ? new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } })
    : null;
  return {
    ...server,
    backend,
    async storedKeys(prefix) {
      if (client && s3) {
        const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
        return (listed.Contents ?? []).map((object) => object.Key!).sort();
      }
      // LocalFileStorage keeps objects/<key>, meta/<key> and .tmp/<partial>.
      const objects = (await walk(path.join(directory!, "objects"))).filter((key) => key.startsWith(prefix));
      const partial = (await walk(path.join(directory!, ".tmp"))).map((name) => `.tmp/${name}`);
      return [...objects, ...partial].sort();
    },
    async stop() {
      await server.stop();
      client?.destroy();
      await s3?.stop();
      if (directory) await rm(directory, { recursive: true, force: true });
    },
  };
}
