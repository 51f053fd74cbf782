// A bot author's service on loopback: a plain Node HTTP server that records every request and
// answers as the test tells it (a reply, a status, slowly, never, bad JSON, too much).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, or as a form; null if neither. */
  json: Record<string, any> | null;
  form: Record<string, string> | null;
  at: number;
  /** The caller's port: which process made the call (`ss`). */
  remotePort: number;
}

export type Answer =
  | { status?: number; json?: unknown; body?: string; delayMs?: number; contentType?: string }
  | { hang: true }
  | { bytes: number; chunked?: boolean };

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** How to answer the next requests: a function of the request, by default `{"response_not_required": true}`. */
  answer: (request: ReceivedRequest) => Answer;
  /** Resolves when `count` requests in all have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const sockets = new Set<import("node:net").Socket>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const receiver: WebhookReceiver = {
    url: "",
    port: 0,
    received: [],
    answer: () => ({ json: { response_not_required: true } }),
    waitForRequests: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (receiver.received.length >= count) return resolve(receiver.received.slice(0, count));
        const timer = setTimeout(() => reject(new Error(`only ${receiver.received.length} of ${count} webhook requests within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received.slice(0, count));
          },
        });
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const request: ReceivedRequest = { path: req.url ?? "/", headers: req.headers, body, json: parseJson(body), form: parseForm(req.headers["content-type"], body), at: Date.now(), remotePort: req.socket.remotePort ?? 0 };
      receiver.received.push(request);
      for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      respond(res, receiver.answer(request));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

function respond(res: http.ServerResponse, answer: Answer): void {
  if ("hang" in answer) return;
  if ("bytes" in answer) {
    const chunk = Buffer.alloc(64 * 1024, "a");
    if (!answer.chunked) res.setHeader("Content-Length", answer.bytes);
    res.writeHead(200, { "Content-Type": "application/json" });
    let left = answer.bytes;
    const write = () => {
      while (left > 0) {
        const part = chunk.subarray(0, Math.min(chunk.length, left));
        left -= part.length;
        if (!res.write(part)) return void res.once("drain", write);
      }
      res.end();
    };
    res.on("error", () => undefined);
    write();
    return;
  }
  const send = () => {
    if (res.destroyed) return;
    const body = answer.body ?? JSON.stringify(answer.json ?? {});
    res.writeHead(answer.status ?? 200, { "Content-Type": answer.contentType ?? "application/json" });
    res.end(body);
  };
  if (answer.delayMs) setTimeout(send, answer.delayMs);
  else send();
}

function parseJson(body: string): Record<string, any> | null {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null ? (value as Record<string, any>) : null;
  } catch {
    return null;
  }
}

function parseForm(contentType: string | undefined, body: string): Record<string, string> | null {
  if (!contentType?.startsWith("application/x-www-form-urlencoded")) return null;
  return Object.fromEntries(new URLSearchParams(body));
}
