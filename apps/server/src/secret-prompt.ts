// Reads a secret (a new password) from the operator: typed at a terminal without echo, and asked
// twice; or one line from standard input (--password-stdin, or when input is not a terminal),
// so that scripts can set one without putting it on a command line that `ps` shows.
import { UsageError } from "./cli-commands.ts";

export interface SecretOptions {
  prompt: string;
  confirm: string;
  fromStdin: boolean;
}

/** The first line of standard input, without its line ending. */
async function readLine(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    const newline = text.indexOf("\n");
    if (newline !== -1) {
      text = text.slice(0, newline);
      break;
    }
  }
  process.stdin.pause();
  return text.replace(/\r$/, "");
}

/** One line typed at the terminal with echo off. */
function askHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let typed = "";
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    const finish = (error: Error | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n") return finish(null);
        if (char === "\u0003") return finish(new UsageError("cancelled"));
        if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1);
        else if (char >= " ") typed += char;
      }
    };
    stdin.on("data", onData);
  });
}

export async function readSecret(options: SecretOptions): Promise<string> {
  if (options.fromStdin || !process.stdin.isTTY) {
    const line = await readLine();
    if (line === "") throw new UsageError("no password on standard input");
    return line;
  }
  const first = await askHidden(options.prompt);
  const second = await askHidden(options.confirm);
  if (first !== second) throw new UsageError("the two passwords differ");
  if (first === "") throw new UsageError("no password given");
  return first;
}
