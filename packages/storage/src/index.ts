export * from "./types.ts";
export { LocalFileStorage, type LocalFileStorageOptions } from "./local.ts";
export { S3FileStorage, type S3FileStorageOptions, type S3StorageConfig } from "./s3.ts";
export { openStorage } from "./open.ts";
