// A bare Node HTTP server in its own process (as our server runs in its own), answering every
// request with a fixed JSON body after reading the request: the HTTP ceiling for a figure.
import { spawn } from "node:child_process";
import { bodyFile } from "./body-file.ts";

export interface BareServer {
  url: string;
  /** Its process, for reading its CPU time. */
  pid: number;
  close(): Promise<void>;
}

const SCRIPT = `
const body = require("node:fs").readFileSync(process.env.BARE_BODY_FILE);
require("node:fs").unlinkSync(process.env.BARE_BODY_FILE);
const server = require("node:http").createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

export function startBareServer(body: string): Promise<BareServer> {
  return spawnBareServer(SCRIPT, body);
}

/** Runs `script` (a server that prints its port once it listens) with `body` in a file of its own. */
export function spawnBareServer(script: string, body: string, nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<BareServer> {
  const child = spawn(process.execPath, [...nodeArgs, "-e", script], { env: { ...env, BARE_BODY_FILE: bodyFile(body) }, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`bare server exited with ${code}`)));
    child.stdout.once("data", (chunk: Buffer) => {
      resolve({
        url: `http://127.0.0.1:${chunk.toString().trim()}`,
        pid: child.pid!,
        async close() {
          child.kill();
          await exited;
        },
      });
    });
  });
}
