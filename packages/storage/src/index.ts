export * from "./types.ts";
export { LocalFileStorage, type LocalFileStorageOptions } from "./local.ts";
// S3FileStorage is imported from "./s3.ts" itself (openStorage does, when a bucket is configured):
// exported here, it would load the AWS SDK into every process.
export type { S3FileStorage, S3FileStorageOptions, S3StorageConfig } from "./s3.ts";
export { openStorage } from "./open.ts";
