// Sends the emails the API tier queues (core/lib/emails.ts): over SMTP with nodemailer when
// EMAIL_HOST is set, else written to the log, as Zulip's development server does. A failed send
// throws and the job queue tries again with backoff; a job whose worker dies mid-send runs again
// on another worker (BullMQ's stalled jobs), so an email may be sent twice but is never lost
// before its attempts run out. An SMTP server's permanent refusal of the email (5xx to its
// envelope or message: no such mailbox) is not retried.
import type { Transporter } from "nodemailer";
import type { JobQueue, Stoppable } from "@chat/bus";
import type { MailConfig } from "@chat/config";
import { EMAIL_JOB, readEmailJob, type OutgoingEmail } from "@chat/core";
import { logger } from "@chat/logger";
import { jobRuns } from "@chat/metrics";

/** Emails one worker process sends at once. */
const CONCURRENCY = 4;
/** An SMTP server that does not answer in time fails the attempt (nodemailer waits minutes by default). */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export interface MailSender {
  /** Where emails go, for the start-up line: `smtp://host:port` or `log`. */
  readonly destination: string;
  send(email: OutgoingEmail): Promise<void>;
  close(): void;
}

export function createMailSender(config: MailConfig): MailSender {
  if (config.host === null) {
    return {
      destination: "log",
      async send(email) {
        logger.info("email not sent (EMAIL_HOST is not set); it would have been:", {
          to: email.to,
          from: `${email.fromName} <${config.noreplyAddress}>`,
          subject: email.subject,
          body: email.text,
        });
      },
      close() {},
    };
  }
  const host = config.host;
  // nodemailer is loaded at the first email, not at start: a trial server never sends one.
  let transport: Promise<Transporter> | null = null;
  const connect = async (): Promise<Transporter> => {
    const nodemailer = await import("nodemailer");
    return nodemailer.createTransport({
      host,
      port: config.port,
      // EMAIL_USE_SSL: TLS from the first byte. EMAIL_USE_TLS: STARTTLS or fail. Neither: never TLS,
      // as Django means it (nodemailer would otherwise upgrade whenever the server offers it).
      secure: config.useSsl,
      requireTLS: config.useTls,
      ignoreTLS: !config.useTls && !config.useSsl,
      auth: config.user === null ? undefined : { user: config.user, pass: config.password ?? "" },
      ...TIMEOUTS,
    });
  };
  return {
    destination: `smtp://${host.includes(":") ? `[${host}]` : host}:${config.port}`,
    async send(email) {
      transport ??= connect().catch((error: unknown) => {
        transport = null;
        throw error;
      });
      await (await transport).sendMail({
        from: { name: email.fromName, address: config.noreplyAddress },
        to: email.to,
        subject: email.subject,
        text: email.text,
        // RFC 3834: no vacation replies to a machine's email.
        headers: { "Auto-Submitted": "auto-generated" },
      });
    },
    close() {
      transport?.then((opened) => opened.close(), () => undefined);
    },
  };
}

/**
 * An SMTP 5xx to the envelope or the message (no such mailbox, a message refused): the server will
 * not take this email however often it is sent. A 5xx to the connection (STARTTLS, AUTH) is a
 * setting to correct, and the email waits for it through its retries.
 */
function isPermanentRefusal(error: unknown): boolean {
  const { responseCode, code } = (error ?? {}) as { responseCode?: unknown; code?: unknown };
  return typeof responseCode === "number" && responseCode >= 500 && responseCode < 600 && (code === "EENVELOPE" || code === "EMESSAGE");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs the email jobs on this worker. */
export function processEmailJobs(jobs: JobQueue, sender: MailSender): Stoppable {
  return jobs.process(
    EMAIL_JOB,
    async (data, { attempt, attempts }) => {
      const email = readEmailJob(data);
      if (!email) {
        logger.error("dropped an email job that holds no email", { fields: Object.keys(data) });
        jobRuns.inc({ kind: "email", outcome: "failed" });
        return;
      }
      try {
        await sender.send(email);
      } catch (error) {
        const about = { kind: email.kind, to: email.to, attempt, attempts, error: describe(error) };
        if (isPermanentRefusal(error) || attempt >= attempts) {
          logger.error("gave up sending an email", about);
          jobRuns.inc({ kind: "email", outcome: "gave_up" });
          return;
        }
        logger.warn("sending an email failed; it will be tried again", about);
        jobRuns.inc({ kind: "email", outcome: "retry" });
        throw error;
      }
      if (sender.destination !== "log") logger.info("email sent", { kind: email.kind, to: email.to, attempt });
      jobRuns.inc({ kind: "email", outcome: "ok" });
    },
    CONCURRENCY,
  );
}
