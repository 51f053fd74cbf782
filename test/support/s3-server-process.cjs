// An s3rver in a process of its own (test/support/s3-server.ts starts it), so the test process's
// memory and event loop measure only the client. Usage: node s3-server-process.cjs <directory> <bucket>
// It prints {"port": N} on one stdout line once it listens on 127.0.0.1. S3RVER_VERBOSE=1 logs requests.
"use strict";
const fs = require("node:fs/promises");
const path = require("node:path");
const S3rver = require("s3rver");
const S3Error = require("s3rver/lib/models/error");

const [directory, bucket] = process.argv.slice(2);
if (!directory || !bucket) {
  process.stderr.write("usage: s3-server-process.cjs <directory> <bucket>\n");
  process.exit(2);
}

/**
 * s3rver 3.7 keeps multipart uploads (one folder each) but has no AbortMultipartUpload (a DELETE
 * with uploadId is "MethodNotAllowed") and no ListMultipartUploads ("NotImplemented"), which both
 * the client under test and its tests need. These two answer from the same folders s3rver writes.
 */
function multipartUploads(server) {
  const uploadsDir = (bucketName) => server.store.getResourcePath(bucketName, undefined, "uploads");
  return async (ctx, next) => {
    const [bucketName, ...keyParts] = ctx.path.slice(1).split("/");
    if (!bucketName || !(await server.store.getBucket(bucketName))) return next();
    const key = keyParts.map(decodeURIComponent).join("/");
    if (ctx.method === "DELETE" && key !== "" && typeof ctx.query.uploadId === "string") {
      const uploadId = ctx.query.uploadId;
      const dir = path.join(uploadsDir(bucketName), path.basename(uploadId));
      const storedKey = await fs.readFile(path.join(dir, "key"), "utf8").catch(() => null);
      if (uploadId !== path.basename(uploadId) || storedKey !== key) {
        throw new S3Error("NoSuchUpload", "The specified upload does not exist.", { UploadId: uploadId });
      }
      await fs.rm(dir, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === "GET" && key === "" && "uploads" in ctx.query) {
      const prefix = typeof ctx.query.prefix === "string" ? ctx.query.prefix : "";
      const ids = await fs.readdir(uploadsDir(bucketName)).catch(() => []);
      const uploads = [];
      for (const id of ids.sort()) {
        const uploadKey = await fs.readFile(path.join(uploadsDir(bucketName), id, "key"), "utf8").catch(() => null);
        if (uploadKey !== null && uploadKey.startsWith(prefix)) uploads.push({ Key: uploadKey, UploadId: id });
      }
      ctx.body = {
        ListMultipartUploadsResult: {
          "@": { xmlns: "http://s3.amazonaws.com/doc/2006-03-01/" },
          Bucket: bucketName,
          Prefix: prefix,
          IsTruncated: false,
          ...(uploads.length > 0 ? { Upload: uploads } : {}),
        },
      };
      return;
    }
    return next();
  };
}

/**
 * Two more s3rver 3.7 quirks, made to behave as S3 does:
 * - a Range on an empty object is answered 206 with Content-Length 1 and no body, so the client
 *   waits for a byte that never comes; S3 answers 416 InvalidRange.
 * - DeleteObjects deletes its keys in parallel, each then removing its folder if empty, and two
 *   doing that at once fail the request with a 500; here they take turns.
 */
function s3Conformance(server) {
  const deleteObject = server.store.deleteObject.bind(server.store);
  let deleting = Promise.resolve();
  server.store.deleteObject = (...args) => {
    const turn = deleting.then(() => deleteObject(...args));
    deleting = turn.catch(() => {});
    return turn;
  };
  return async (ctx, next) => {
    const [bucketName, ...keyParts] = ctx.path.slice(1).split("/");
    if (ctx.method === "GET" && keyParts.length > 0 && /^bytes=/.test(ctx.get("range"))) {
      const key = keyParts.map(decodeURIComponent).join("/");
      const metadata = await server.store.getMetadata(bucketName, key).catch(() => null);
      if (metadata && Number(metadata["content-length"]) === 0) {
        throw new S3Error("InvalidRange", "The requested range is not satisfiable", { RangeRequested: ctx.get("range"), ActualObjectSize: 0 });
      }
    }
    return next();
  };
}

async function main() {
  await fs.mkdir(directory, { recursive: true });
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    directory,
    silent: process.env.S3RVER_VERBOSE !== "1",
    configureBuckets: [{ name: bucket }],
  });
  // Koa composes its middleware when it starts listening: put ours just before s3rver's router.
  server.middleware.splice(server.middleware.length - 1, 0, multipartUploads(server), s3Conformance(server));
  const { port } = await server.run();
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
