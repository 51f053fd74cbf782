// The server's own version (the root package.json's), as the CLI, the ready line, /health and
// backups report it. Read from the file at run time: the same code runs from sources and bundled.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

let version: string | null = null;

export function serverVersion(): string {
  if (version !== null) return version;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === "teamchat" && parsed.version) return (version = parsed.version);
    }
    if (path.dirname(dir) === dir) return (version = "unknown");
  }
}
