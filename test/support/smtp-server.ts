// A real SMTP server on a spare loopback port (the smtp-server package), for the tests of outgoing
// email: it records every message it accepts, parsed enough to read (headers, the text body
// decoded), and answers each MAIL FROM as the test tells it: accept, refuse for now (4xx), or
// never answer (a hung server, while the test kills the worker that waits on it).
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerSession } from "smtp-server";

export interface ReceivedEmail {
  /** The envelope. */
  mailFrom: string;
  rcptTo: string[];
  /** Header names lowercased, folded lines joined. */
  headers: Record<string, string>;
  /** The body, its transfer encoding undone. */
  text: string;
  /** The login the client gave (AUTH), if any. */
  user: string | null;
  at: number;
}

/** What to do with a MAIL FROM: go on, refuse with this 4xx/5xx, or hold the session without an answer. */
export type MailFromAnswer = "accept" | { code: number; message: string } | "hang";

export interface TestSmtpServer {
  host: string;
  port: number;
  received: ReceivedEmail[];
  /** MAIL FROM commands seen, accepted or not (each is a send attempt). */
  attempts: number;
  /** Connections made, and AUTH commands seen (a login sent in clear where TLS was required would show here). */
  connections: number;
  logins: number;
  /** Decides each MAIL FROM, given its 1-based number; accept by default. */
  answer: (attempt: number) => MailFromAnswer;
  /** Resolves once `count` emails in all were accepted. */
  waitForEmails(count: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  /** Resolves once `count` MAIL FROM commands in all arrived. */
  waitForAttempts(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface SmtpServerOptions {
  /** Require AUTH PLAIN/LOGIN with this user and password. */
  login?: { user: string; password: string };
}

function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = [];
  const soft = body.replace(/=\r?\n/g, "");
  for (let i = 0; i < soft.length; i++) {
    const hex = soft[i] === "=" ? soft.slice(i + 1, i + 3) : "";
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Headers and the decoded body of a single-part message (what the server sends). */
export function parseEmail(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ");
  const body = raw.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const encoding = (headers["content-transfer-encoding"] ?? "7bit").toLowerCase();
  const text = encoding === "quoted-printable" ? decodeQuotedPrintable(body) : encoding === "base64" ? Buffer.from(body, "base64").toString("utf8") : body;
  return { headers, text: text.replace(/\r\n/g, "\n") };
}

function waitUntil(condition: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (condition()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`));
      setTimeout(check, 20);
    };
    check();
  });
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const held: Array<(error?: Error | null) => void> = [];
  const smtp: TestSmtpServer = {
    host: "127.0.0.1",
    port: 0,
    received: [],
    attempts: 0,
    connections: 0,
    logins: 0,
    answer: () => "accept",
    waitForEmails: (count, timeoutMs = 15_000) =>
      waitUntil(() => smtp.received.length >= count, timeoutMs, () => `${count} emails (got ${smtp.received.length}, ${smtp.attempts} attempts)`).then(() => smtp.received),
    waitForAttempts: (count, timeoutMs = 15_000) => waitUntil(() => smtp.attempts >= count, timeoutMs, () => `${count} send attempts (got ${smtp.attempts})`),
    close: async () => {
      // Hung sessions are let go, so close() does not wait for them.
      for (const release of held) {
        try {
          release(Object.assign(new Error("closing"), { responseCode: 421 }));
        } catch {
          // Its client is gone already (a killed worker).
        }
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = new SMTPServer({
    // No TLS: EMAIL_USE_TLS=false must send in clear, and never try STARTTLS.
    disabledCommands: options.login ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !options.login,
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 1000,
    onConnect(_session, callback) {
      smtp.connections += 1;
      callback();
    },
    onAuth(auth, _session, callback) {
      smtp.logins += 1;
      if (options.login && auth.username === options.login.user && auth.password === options.login.password) return callback(null, { user: auth.username });
      callback(new Error("Invalid username or password"));
    },
    onMailFrom(_address, _session, callback) {
      smtp.attempts += 1;
      const answer = smtp.answer(smtp.attempts);
      if (answer === "accept") return callback();
      if (answer === "hang") {
        held.push(callback);
        return;
      }
      const error = Object.assign(new Error(answer.message), { responseCode: answer.code });
      callback(error);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const { headers, text } = parseEmail(Buffer.concat(chunks).toString("utf8"));
        const mailFrom = session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address;
        smtp.received.push({ mailFrom, rcptTo: session.envelope.rcptTo.map((r) => r.address), headers, text, user: typeof session.user === "string" ? session.user : null, at: Date.now() });
        callback();
      });
    },
  });
  server.on("error", () => {
    // A client that vanished mid-session (a killed worker) is no failure of the test's server.
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  smtp.port = (server.server.address() as AddressInfo).port;
  return smtp;
}

/** The password reset link in an email's text. */
export function resetLinkIn(email: ReceivedEmail): string {
  const match = /https?:\/\/\S+\/accounts\/password\/reset\/[A-Za-z0-9_-]+\//.exec(email.text);
  if (!match) throw new Error(`no reset link in: ${email.text}`);
  return match[0];
}
