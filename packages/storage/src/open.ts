// The storage the configuration names, ready to use.
import type { StorageConfig } from "@chat/config";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { LocalFileStorage } from "./local.ts";
import type { FileStorage } from "./types.ts";

export async function openStorage(config: StorageConfig): Promise<FileStorage> {
  if (config.backend === "s3") {
    // The AWS SDK is loaded only where a bucket is used: about 21 MB a process on local files does without.
    const { S3FileStorage } = await import("./s3.ts");
    return new S3FileStorage(config);
  }
  if (config.directory !== null) return new LocalFileStorage(config.directory);
  // DATA_DIR=memory://: files live as long as the process, like the database.
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), "teamchat-uploads-"));
  return new LocalFileStorage(directory, { removeOnClose: true });
}
