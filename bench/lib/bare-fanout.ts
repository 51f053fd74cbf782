// The fan-out ceiling: a bare Node HTTP server in its own process that holds every GET it gets
// (a long poll) and answers all of them, with a fixed body (and any headers given), when a POST
// arrives (a POST to /held answers how many it holds). What waking N held polls costs Node itself,
// with no queue, no authentication, no Redis.
import { spawnBareServer, type BareServer } from "./bare-server.ts";

const SCRIPT = `
const body = require("node:fs").readFileSync(process.env.BARE_BODY_FILE);
require("node:fs").unlinkSync(process.env.BARE_BODY_FILE);
const headers = { "Content-Type": "application/json", ...JSON.parse(process.env.BARE_HEADERS), "Content-Length": body.length };
let held = [];
const server = require("node:http").createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    if (req.method === "GET") {
      held.push(res);
      return;
    }
    if (req.url === "/held") {
      const count = String(held.length);
      res.writeHead(200, { "Content-Length": count.length });
      res.end(count);
      return;
    }
    const waiting = held;
    held = [];
    for (const poll of waiting) {
      poll.writeHead(200, headers);
      poll.end(body);
    }
    res.writeHead(200, { "Content-Length": 2 });
    res.end("{}");
  });
});
server.keepAliveTimeout = 65000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

export function startBareFanout(body: string, nodeArgs: string[] = [], headers: Record<string, string> = {}): Promise<BareServer> {
  return spawnBareServer(SCRIPT, body, nodeArgs, { BARE_HEADERS: JSON.stringify(headers) });
}
