// The operators' channel: a Unix socket through which `npm run cli` has a running server carry out
// its command, so that the command's writes go through the one process that owns the embedded
// database, and reach connected clients as events. Whoever can connect is the operator: the socket
// sits in a folder only the server's user may enter (mode 0700), as the data itself does.
//
// Protocol: the client writes one JSON line {argv, input}; the server answers with JSON lines
// {out: text}... and a last one {exit: code, error?, usage?}.
import { chmodSync, mkdirSync, statSync, unlinkSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { logger } from "@chat/logger";
import { OFFLINE_COMMANDS, parseCommand, UsageError, type CliInput } from "./cli-commands.ts";

/** A command line is small; anything larger is not a client of ours. */
const MAX_REQUEST_BYTES = 64 * 1024;
/** Unix socket paths are cut at 108 bytes (sun_path); a deep DATA_DIR puts its socket elsewhere. */
const MAX_SOCKET_PATH = 100;

export interface ChannelRequest {
  argv: string[];
  input: CliInput;
}

export type ChannelReply = { out: string } | { exit: number; error?: string; usage?: boolean };

/** Where a server on `dataDir` listens: inside it, or (a long path) in a private folder under the temp dir. */
export function operatorSocketPath(dataDir: string): string {
  const inside = path.join(dataDir, "run", "operator.sock");
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside;
  const hash = createHash("sha256").update(dataDir).digest("hex").slice(0, 16);
  return path.join(os.tmpdir(), `teamchat-${process.getuid?.() ?? "user"}`, `${hash}.sock`);
}

export interface OperatorChannel {
  socket: string;
  close(): Promise<void>;
}

export type CommandRunner = (argv: string[], io: { out: (text: string) => void; input: CliInput }) => Promise<void>;

/**
 * Listens on `socketPath` and runs each command it is sent. The caller owns the data folder
 * (data-dir-lock.ts), so a socket file already there was left by a dead owner and is removed.
 */
export async function openOperatorChannel(socketPath: string, run: CommandRunner): Promise<OperatorChannel> {
  const folder = path.dirname(socketPath);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // A folder someone else made (the shared temp dir's fallback) could let them replace our socket.
  const uid = process.getuid?.();
  if (uid !== undefined && statSync(folder).uid !== uid) {
    throw new Error(`${folder} belongs to another user, so the operators' channel cannot live there safely: remove it, or give DATA_DIR a shorter path`);
  }
  // mkdir leaves an existing folder's mode as it was.
  chmodSync(folder, 0o700);
  try {
    unlinkSync(socketPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const connections = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
    socket.on("error", () => {});
    serve(socket, run);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  return {
    socket: socketPath,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.end();
      });
    },
  };
}

function serve(socket: net.Socket, run: CommandRunner): void {
  let buffered = "";
  let started = false;
  const reply = (message: ChannelReply) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  };
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    if (started) return;
    buffered += chunk;
    if (buffered.length > MAX_REQUEST_BYTES) {
      reply({ exit: 2, error: "request too large" });
      socket.end();
      started = true;
      return;
    }
    const newline = buffered.indexOf("\n");
    if (newline === -1) return;
    started = true;
    let request: ChannelRequest;
    try {
      request = JSON.parse(buffered.slice(0, newline)) as ChannelRequest;
      if (!Array.isArray(request.argv) || !request.argv.every((a) => typeof a === "string") || typeof request.input !== "object" || request.input === null) throw new Error("bad request");
    } catch {
      reply({ exit: 2, error: "not a command request" });
      socket.end();
      return;
    }
    void execute(request, run, reply).finally(() => socket.end());
  });
}

async function execute(request: ChannelRequest, run: CommandRunner, reply: (message: ChannelReply) => void): Promise<void> {
  try {
    const { command } = parseCommand(request.argv);
    if (OFFLINE_COMMANDS.has(command)) {
      reply({ exit: 1, error: `${command} replaces the data a running server is using: stop the server first, then run it again` });
      return;
    }
    // Secrets stay out of the log line.
    logger.info("operator command", { command });
    await run(request.argv, { out: (text) => reply({ out: text }), input: request.input });
    reply({ exit: 0 });
  } catch (error) {
    if (error instanceof UsageError) reply({ exit: 2, error: error.message, usage: true });
    else reply({ exit: 1, error: (error as Error)?.message ?? String(error) });
  }
}

export class ChannelUnavailableError extends Error {}

/**
 * Sends a command to the server listening on `socketPath`, writing its output as it comes; returns
 * the server's exit code and error. Throws ChannelUnavailableError when nobody listens there.
 */
export async function sendOperatorCommand(socketPath: string, request: ChannelRequest, out: (text: string) => void): Promise<{ exit: number; error?: string; usage?: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffered = "";
    let finished = false;
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, newline)) as ChannelReply;
        buffered = buffered.slice(newline + 1);
        if ("out" in message) out(message.out);
        else {
          finished = true;
          resolve(message);
        }
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (finished) return;
      finished = true;
      if (["ENOENT", "ECONNREFUSED"].includes(error.code ?? "")) reject(new ChannelUnavailableError(error.message));
      else reject(error);
    });
    socket.on("close", () => {
      if (!finished) reject(new Error("the server closed the operators' channel before the command finished (did it stop?)"));
    });
  });
}
