// The server's outgoing emails: composed here (plain text), queued as a job on the bus's job
// queue, and sent by the worker tier (apps/worker/src/mail.ts) with retries. A request never
// talks to an SMTP server: a slow or down one delays the email, not the answer.
import type { JobQueue } from "@chat/bus";
import { ServiceUnavailableError } from "../errors.ts";
import { OUTAGE_RETRY_AFTER_SECONDS } from "../outage.ts";

/** The job name the worker sends emails under. */
export const EMAIL_JOB = "send-email";
/**
 * Attempts before an email is given up: the waits double from EMAIL_BACKOFF_MS (2 s, 4 s, ...),
 * so the last attempt comes about an hour after the first (4,094 s of waits): an SMTP server down that long, or
 * refusing for that long, loses the email (the worker logs it as given up).
 */
export const EMAIL_ATTEMPTS = 12;
export const EMAIL_BACKOFF_MS = 2000;
/**
 * A sent email's job is kept this briefly: its data holds a reset link, and nothing dedupes by it.
 * A failed one is kept as BullMQ keeps failed jobs (a week) for the operator to look at.
 */
const KEEP_SENT_SECONDS = 60;
/** How long a request waits for the job queue to take an email before answering 503. */
const QUEUE_TIMEOUT_MS = 2000;

/** What kind of email, for logs and metrics. */
export type EmailKind = "password_reset" | "password_reset_no_account" | "invitation" | "deactivation";

export interface OutgoingEmail {
  kind: EmailKind;
  /** One recipient's address. */
  to: string;
  /** The From display name (the address is NOREPLY_EMAIL_ADDRESS). */
  fromName: string;
  subject: string;
  /** The body, plain text. */
  text: string;
}

/**
 * Puts an email on the job queue for the worker tier. Waits at most QUEUE_TIMEOUT_MS: BullMQ holds
 * a command through a Redis outage, and the request answers 503 rather than hang (the email may
 * still be queued when Redis comes back).
 */
export async function queueEmail(jobs: JobQueue, email: OutgoingEmail): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS)), QUEUE_TIMEOUT_MS);
  });
  const added = jobs.add(EMAIL_JOB, { ...email }, { attempts: EMAIL_ATTEMPTS, backoffMs: EMAIL_BACKOFF_MS, keepCompletedSeconds: KEEP_SENT_SECONDS });
  // Settled either way, so a late rejection is not reported as unhandled.
  added.catch(() => undefined);
  try {
    await Promise.race([added, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const KINDS: readonly EmailKind[] = ["password_reset", "password_reset_no_account", "invitation", "deactivation"];

/** A job's data as an email, or null if it is not one (a job queued by other code, or damaged). */
export function readEmailJob(data: Record<string, unknown>): OutgoingEmail | null {
  const { kind, to, fromName, subject, text } = data;
  if (typeof kind !== "string" || !(KINDS as readonly string[]).includes(kind)) return null;
  if (typeof to !== "string" || typeof fromName !== "string" || typeof subject !== "string" || typeof text !== "string") return null;
  return { kind: kind as EmailKind, to, fromName, subject, text };
}

/** Header text on one line: a name or subject never carries a line break into the headers. */
function oneLine(text: string): string {
  return text.replace(/[\x00-\x1f\x7f\u2028\u2029]+/g, " ").trim();
}

export interface PasswordResetEmailContext {
  /** The address asked for (an account's delivery email, or what was typed). */
  email: string;
  realmName: string;
  /** The organization's URL (`realm_uri`). */
  realmUri: string;
}

/** The email with a reset link, to an account's address. */
export function passwordResetEmail(context: PasswordResetEmailContext & { resetUrl: string; validHours: number }): OutgoingEmail {
  const realmName = oneLine(context.realmName);
  return {
    kind: "password_reset",
    to: context.email,
    fromName: `${realmName} account security`,
    subject: oneLine(`Reset your password for ${realmName}`),
    text: [
      `Someone (hopefully you) asked to reset the password of ${context.email} on ${realmName} (${context.realmUri}).`,
      "",
      `To choose a new password, open this link within ${context.validHours} hours:`,
      "",
      context.resetUrl,
      "",
      "The link works once. If you did not ask for this, ignore this email: your password stays as it is.",
      "",
    ].join("\n"),
  };
}

/**
 * The answer to a reset asked for an address with no active account in the organization (Zulip
 * sends one too): the form's answer is the same either way, and only the mailbox learns which.
 */
export function passwordResetNoAccountEmail(context: PasswordResetEmailContext & { deactivated: boolean }): OutgoingEmail {
  const realmName = oneLine(context.realmName);
  const why = context.deactivated
    ? "the account with that address is deactivated. An administrator of the organization can reactivate it."
    : "there is no account with that address there. If you have one under another address, ask for the reset with that one.";
  return {
    kind: "password_reset_no_account",
    to: context.email,
    fromName: `${realmName} account security`,
    subject: oneLine(`Password reset for ${realmName}`),
    text: [
      `Someone (hopefully you) asked to reset the password of ${context.email} on ${realmName} (${context.realmUri}), but ${why}`,
      "",
      "If you did not ask for this, ignore this email.",
      "",
    ].join("\n"),
  };
}

/** An email invitation (POST /invites): who invites, to which organization, and the link to join. */
export function invitationEmail(context: { email: string; realmName: string; realmUri: string; referrerName: string; joinUrl: string; expiresAt: Date | null }): OutgoingEmail {
  const realmName = oneLine(context.realmName);
  const referrer = oneLine(context.referrerName);
  const until = context.expiresAt === null ? "The link does not expire." : `The link works until ${context.expiresAt.toUTCString()}.`;
  return {
    kind: "invitation",
    to: context.email,
    fromName: oneLine(`${referrer} (via ${realmName})`),
    subject: oneLine(`${referrer} invited you to join ${realmName}`),
    text: [
      `${referrer} has invited you (${context.email}) to join ${realmName} (${context.realmUri}), a chat organization.`,
      "",
      "To accept the invitation and create your account, open this link:",
      "",
      context.joinUrl,
      "",
      `${until} If you do not want to join, ignore this email.`,
      "",
    ].join("\n"),
  };
}

/**
 * The notice to a user an administrator deactivated with a comment (Zulip's zerver/emails/deactivate,
 * feature level 135): that their account is closed, and the comment.
 */
export function deactivationEmail(context: PasswordResetEmailContext & { comment: string }): OutgoingEmail {
  const realmName = oneLine(context.realmName);
  const lines = [`Your account on ${realmName} (${context.realmUri}) has been deactivated, and you can no longer log in.`];
  if (context.comment !== "") lines.push("", "The administrators left this comment:", "", context.comment);
  return {
    kind: "deactivation",
    to: context.email,
    fromName: realmName,
    subject: oneLine(`Your account on ${realmName} has been deactivated`),
    text: [...lines, ""].join("\n"),
  };
}
