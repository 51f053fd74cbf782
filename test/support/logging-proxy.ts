// A reverse proxy that logs every request a real client sends and what it was answered, one JSON
// object a line: how the recordings in test/clients/recordings were observed. Not used by the tests.
//
//   node --import ./scripts/typescript.mjs test/support/logging-proxy.ts <listen port> <upstream URL> <log file>
//
// Bodies are logged as sent (a form body as its raw text and as its decoded pairs, multipart only by
// its length); responses as parsed JSON when they are JSON. The client's Basic credentials are
// logged as the email alone.
//
// FILL_REGISTER='{"key": value, ...}' adds those keys to a successful /register answer that lacks
// them (logged as `filled`): a way to watch a client get past a key the server does not send yet.
import { appendFileSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage } from "node:http";

interface LogLine {
  at: string;
  ms: number;
  method: string;
  path: string;
  query: Array<[string, string]>;
  user: string | null;
  userAgent: string | null;
  contentType: string | null;
  body?: string;
  form?: Array<[string, string]>;
  bodyBytes?: number;
  status: number;
  response: unknown;
  filled?: string[];
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

function basicUser(headers: IncomingHttpHeaders): string | null {
  const match = /^Basic (.+)$/i.exec(headers.authorization ?? "");
  if (!match) return null;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  return decoded.slice(0, Math.max(0, decoded.indexOf(":")));
}

function parseResponse(body: Buffer, contentType: string | undefined): unknown {
  if (!contentType?.includes("json")) return { nonJson: contentType ?? null, bytes: body.length };
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return { unparsable: body.toString("utf8").slice(0, 2000) };
  }
}

function fillRegister(path: string, response: unknown, fill: Record<string, unknown>): string[] {
  if (!path.endsWith("/register") || response === null || typeof response !== "object") return [];
  const body = response as Record<string, unknown>;
  if (body.result !== "success") return [];
  const added = Object.keys(fill).filter((key) => !(key in body));
  for (const key of added) body[key] = fill[key];
  return added;
}

function main(): void {
  const [portText, upstreamText, logFile] = process.argv.slice(2);
  if (!portText || !upstreamText || !logFile) {
    console.error("usage: logging-proxy.ts <listen port> <upstream URL> <log file>");
    process.exit(2);
  }
  const upstream = new URL(upstreamText);
  const fill = JSON.parse(process.env.FILL_REGISTER ?? "{}") as Record<string, unknown>;
  const server = createServer((req, res) => {
    const started = Date.now();
    void (async () => {
      const body = await readAll(req);
      const url = new URL(req.url ?? "/", "http://proxy.invalid");
      const contentType = req.headers["content-type"] ?? null;
      const line: LogLine = {
        at: new Date(started).toISOString(),
        ms: 0,
        method: req.method ?? "GET",
        path: url.pathname,
        query: [...url.searchParams.entries()],
        user: basicUser(req.headers),
        userAgent: req.headers["user-agent"] ?? null,
        contentType,
        status: 0,
        response: null,
      };
      if (body.length > 0) {
        if (contentType?.startsWith("application/x-www-form-urlencoded")) {
          line.body = body.toString("utf8");
          line.form = [...new URLSearchParams(line.body).entries()];
        } else {
          line.bodyBytes = body.length;
        }
      }
      const upstreamReq = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (upstreamRes) => {
          void readAll(upstreamRes).then((answer) => {
            line.status = upstreamRes.statusCode ?? 0;
            line.ms = Date.now() - started;
            line.response = parseResponse(answer, upstreamRes.headers["content-type"]);
            const filled = fillRegister(line.path, line.response, fill);
            let sent = answer;
            if (filled.length > 0) {
              line.filled = filled;
              sent = Buffer.from(JSON.stringify(line.response));
            }
            appendFileSync(logFile, `${JSON.stringify(line)}\n`);
            // The answer is buffered, so it goes with a length rather than in chunks.
            const headers = { ...upstreamRes.headers, "content-length": String(sent.length) };
            delete headers["transfer-encoding"];
            res.writeHead(line.status, headers);
            res.end(sent);
          });
        },
      );
      upstreamReq.on("error", (error) => {
        line.status = 502;
        line.response = { proxyError: error.message };
        appendFileSync(logFile, `${JSON.stringify(line)}\n`);
        res.writeHead(502).end();
      });
      upstreamReq.end(body);
    })();
  });
  server.listen(Number(portText), "127.0.0.1", () => console.log(`logging ${portText} -> ${upstream.origin} into ${logFile}`));
}

main();
