// Organization exports in tests: waiting for one, downloading its tarball, reading its files.
import { gunzipSync } from "node:zlib";
import request from "supertest";
import { tarEntries } from "../../apps/server/src/backup-archive.ts";
import type { ApiClient } from "./client.ts";

/** The files of a gzip tar, by path without its top folder. */
export async function readExportTarball(data: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  async function* chunks() {
    yield gunzipSync(data);
  }
  for await (const { entry, body } of tarEntries(chunks())) {
    const parts: Buffer[] = [];
    for await (const chunk of body) parts.push(chunk);
    files.set(entry.path.slice(entry.path.indexOf("/") + 1), Buffer.concat(parts));
  }
  return files;
}

function binary(res: request.Response, callback: (error: Error | null, body: Buffer) => void): void {
  const parts: Buffer[] = [];
  res.on("data", (chunk: Buffer) => parts.push(chunk));
  // Errors are JSON, as every error of the API.
  res.on("end", () => {
    const body = Buffer.concat(parts);
    callback(null, String(res.headers["content-type"]).startsWith("application/json") ? JSON.parse(body.toString()) : body);
  });
}

/** GET an export_url's path with HTTP Basic (or none). */
export function download(baseUrl: string, exportUrl: string, credentials: { email: string; apiKey: string } | null, host?: string): request.Test {
  const target = new URL(exportUrl).pathname;
  let test = request(baseUrl).get(target).buffer(true).parse(binary);
  if (host) test = test.set("Host", host);
  return credentials ? test.auth(credentials.email, credentials.apiKey) : test;
}

/** Waits until the export is no longer pending, and returns it. */
export async function waitForExport(client: ApiClient, id: number, timeoutMs = 60_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await client.get("/export/realm")).body.exports.find((e: { id: number }) => e.id === id);
    if (found && !found.pending) return found;
    if (Date.now() > deadline) throw new Error(`export ${id} still pending: ${JSON.stringify(found)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

