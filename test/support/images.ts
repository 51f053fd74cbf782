// Real images made with sharp, multipart uploads as clients send them, and public file fetches,
// for the avatar and custom emoji tests.
import http from "node:http";
import sharp from "sharp";
import type { ApiClient } from "./client.ts";
import { checkResponse } from "./openapi.ts";

export const makePng = (width: number, height: number, colour = "#3366cc") =>
  sharp({ create: { width, height, channels: 4, background: colour } }).png().toBuffer();

export const makeJpeg = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: "#cc6633" } }).jpeg().toBuffer();

export async function makeAnimatedGif(frames: number, width: number, height: number): Promise<Buffer> {
  const colours = ["#ff0000", "#00aa00", "#0000ff", "#ffcc00"];
  const pngs = await Promise.all(Array.from({ length: frames }, (_, i) => makePng(width, height, colours[i % colours.length])));
  return sharp(pngs, { join: { animated: true } }).gif({ delay: Array(frames).fill(100), loop: 0 }).toBuffer();
}

/** Bytes that no image decoder takes. */
export const notAnImage = () => Buffer.from("%PDF-1.4 certainly not an image\n".repeat(20));

/** Noise compresses badly: a PNG of about `bytes` bytes or more. */
export async function largePng(bytes: number): Promise<Buffer> {
  const side = Math.ceil(Math.sqrt(bytes / 3)) + 16;
  const raw = Buffer.alloc(side * side * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

export interface FilePart {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body as JSON, when it is. */
  json: Record<string, any>;
}

const BOUNDARY = "test-image-boundary-5d1c";

export function multipart(files: FilePart[], fields: Record<string, string> = {}): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const file of files) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`));
    parts.push(file.data, Buffer.from("\r\n"));
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

function answer(status: number, headers: http.IncomingHttpHeaders, body: Buffer): RawAnswer {
  let json: Record<string, any> = {};
  if (String(headers["content-type"] ?? "").startsWith("application/json")) json = JSON.parse(body.toString("utf8"));
  return { status, headers, body, json };
}

/**
 * A raw HTTP request: the server may answer a refused upload before reading its body and close
 * the connection, which a client library would report as an error rather than the answer.
 */
export function rawRequest(baseUrl: string, method: string, target: string, headers: Record<string, string>, body?: Buffer): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers: body ? { ...headers, "content-length": String(body.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        answered = true;
        try {
          const reply = answer(res.statusCode ?? 0, res.headers, Buffer.concat(chunks));
          checkResponse(method, target, reply.status, reply.json, String(reply.headers["content-type"] ?? ""));
          resolve(reply);
        } catch (error) {
          reject(error);
        }
      });
      res.on("error", reject);
    });
    // Writing the rest of a body the server refused fails (EPIPE, ECONNRESET): its answer counts.
    req.on("error", (error) => setTimeout(() => (answered ? undefined : reject(error)), 200));
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${target} timed out`)));
    req.end(body);
  });
}

function basicAuth(client: ApiClient): Record<string, string> {
  const { email, apiKey } = client.credentials!;
  return { authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}` };
}

/** POSTs these file parts (and fields) as multipart/form-data to /api/v1`path`. */
export function uploadFiles(client: ApiClient, path: string, files: FilePart[], fields: Record<string, string> = {}): Promise<RawAnswer> {
  const headers = { ...basicAuth(client), "content-type": `multipart/form-data; boundary=${BOUNDARY}` };
  return rawRequest(client.baseUrl, "POST", `/api/v1${path}`, headers, multipart(files, fields));
}

/** One image file, as the web app and zulip-js send an avatar or emoji. */
export function imagePart(data: Buffer, filename = "image.png", contentType = "image/png"): FilePart {
  return { field: "file", filename, contentType, data };
}

/** GETs a path outside /api/v1 without credentials, as a browser fetches an <img>. */
export function fetchPublic(baseUrl: string, target: string, method = "GET"): Promise<RawAnswer> {
  return rawRequest(baseUrl, method, target, {});
}
