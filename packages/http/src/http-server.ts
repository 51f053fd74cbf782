// The http.Server a tier listens with. Node answers some requests itself, before any listener sees
// them, with an empty body; a Zulip client reads every error as JSON, so here each of those gets
// the same `{result: "error", msg, code}` as any other refusal, and the API document can say so.
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { sendJsonBody } from "./hot-routes.ts";

function errorJson(msg: string): string {
  return JSON.stringify({ result: "error", msg, code: "BAD_REQUEST" });
}

/** What Node's HTTP parser refuses before Express sees a request: its status and our words. */
function parserRefusal(code: string | undefined): { status: number; reason: string; msg: string } {
  if (code === "HPE_HEADER_OVERFLOW") return { status: 431, reason: "Request Header Fields Too Large", msg: "Request line or headers too large" };
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, reason: "Request Timeout", msg: "Request timed out" };
  return { status: 400, reason: "Bad Request", msg: "Malformed request" };
}

/**
 * The `clientError` listener: a request Node's parser cannot read (a URL past its 16 KiB header
 * limit, bad bytes in the request line) or that timed out. No response object exists yet, so the
 * answer is written to the socket.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A response already under way (or a socket gone) cannot take another.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, reason, msg } = parserRefusal(error.code);
  const body = errorJson(msg);
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** The `checkExpectation` listener: an Expect header other than 100-continue (Node's own 417 is empty). */
export function answerUnmetExpectation(_req: IncomingMessage, res: ServerResponse): void {
  sendJsonBody(res, 417, errorJson("Expectation failed: only 100-continue is supported"));
}

/**
 * HTTP/1.1 requires Host (RFC 9112 3.2) and Node refuses a request without one (requireHostHeader),
 * with an empty 400; with that check off, this one gives the same refusal as JSON. True if it answered.
 */
function refusedWithoutHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.headers.host !== undefined || req.httpVersion !== "1.1") return false;
  res.setHeader("Connection", "close");
  sendJsonBody(res, 400, errorJson("Missing Host header"));
  return true;
}

/** An HTTP server answering with `listener`, whose every refusal, Node's own included, is JSON. */
export function createJsonHttpServer(listener: RequestListener): http.Server {
  const server = http.createServer({ requireHostHeader: false }, (req, res) => {
    if (!refusedWithoutHost(req, res)) listener(req, res);
  });
  server.on("clientError", answerClientError);
  server.on("checkExpectation", answerUnmetExpectation);
  return server;
}
