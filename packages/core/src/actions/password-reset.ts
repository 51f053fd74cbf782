// Password reset links: `<realm URL>/accounts/password/reset/<token>/`, where the token is 32
// random bytes and only its SHA-256 is stored, so a copy of the database opens no account. A link
// is valid for PASSWORD_RESET_VALID_HOURS and works once; setting the password by any way uses up
// every link of the user still outstanding (passwords.ts).
import { createHash, randomBytes } from "node:crypto";
import { Prisma, type PrismaClient, type Tx } from "@chat/db";
import { JsonableError } from "../errors.ts";
import type { Realm, UserProfile } from "../models.ts";
import { passwordResetEmail, passwordResetNoAccountEmail, type OutgoingEmail } from "../lib/emails.ts";
import { realmUri } from "../lib/realm-hosts.ts";
import { getUserByDeliveryEmail } from "../queries/users.ts";
import { setUserPassword, type HashedPassword } from "./passwords.ts";

/** How long a link works (Zulip: a day). */
export const PASSWORD_RESET_VALID_HOURS = 24;
/** Expired links are kept this long, so a late click says "expired" rather than "unknown", then swept. */
const KEEP_EXPIRED_MS = 24 * 3600 * 1000;
/** A token as it appears in a link: 32 bytes, base64url without padding. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Where links point: the organization's URL as clients reach it (realm_uri). */
export interface ResetLinkOptions {
  externalHost: string;
  protocol: "http" | "https";
}

function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The path of a link, from the root of the organization's URL. */
export function passwordResetPath(token: string): string {
  return `/accounts/password/reset/${token}/`;
}

/**
 * A new reset link for a person's account (the email flow, and the CLI for a server without
 * email): stores its token's hash and returns the URL, which is nowhere else. Refuses bots and
 * deactivated users, who could not use it.
 */
export async function createPasswordResetLink(tx: Tx, options: ResetLinkOptions, realm: Realm, user: UserProfile): Promise<{ url: string; expiresAt: Date }> {
  if (user.realm_id !== realm.id) throw new JsonableError("No such user");
  if (user.is_bot) throw new JsonableError("Bots cannot have a password.");
  if (!user.is_active) throw new JsonableError("This account is deactivated.");
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + PASSWORD_RESET_VALID_HOURS * 3600 * 1000);
  await tx.passwordResetToken.create({ data: { user_id: user.id, token_hash: tokenHash(token), expires_at: expiresAt } });
  return { url: `${realmUri(realm.string_id, options.externalHost, options.protocol)}${passwordResetPath(token)}`, expiresAt };
}

/**
 * POST /accounts/password/reset/ (Zulip's ZulipPasswordResetForm): the email to send for `email`
 * in `realm`, a link if it names an active person's account and otherwise a note that it does not,
 * so the page answers the same whatever the address. Null when nothing is sent: a deactivated
 * organization, or a bot's address (the server's own).
 */
export async function requestPasswordReset(tx: Tx, options: ResetLinkOptions, realm: Realm, email: string): Promise<OutgoingEmail | null> {
  if (realm.deactivated) return null;
  const user = await getUserByDeliveryEmail(tx, realm.id, email);
  if (user?.is_bot) return null;
  const context = { realmName: realm.name, realmUri: realmUri(realm.string_id, options.externalHost, options.protocol) };
  if (user && user.is_active) {
    const { url } = await createPasswordResetLink(tx, options, realm, user);
    return passwordResetEmail({ ...context, email: user.delivery_email, resetUrl: url, validHours: PASSWORD_RESET_VALID_HOURS });
  }
  return passwordResetNoAccountEmail({ ...context, email, deactivated: user !== null });
}

/** What a link's token opens: its account, or why it opens nothing. */
export type PasswordResetTokenState =
  | { status: "valid"; user: UserProfile }
  | { status: "unknown" }
  | { status: "expired" }
  | { status: "used" }
  | { status: "deactivated" };

type TokenReader = Pick<Tx, "passwordResetToken">;

/** The state of a link's token in this organization (a token of another organization is unknown here). */
export async function checkPasswordResetToken(db: TokenReader, realm: Realm, token: string): Promise<PasswordResetTokenState> {
  if (!TOKEN.test(token)) return { status: "unknown" };
  const row = await db.passwordResetToken.findUnique({ where: { token_hash: tokenHash(token) }, include: { user: true } });
  if (!row || row.user.realm_id !== realm.id || row.user.is_bot) return { status: "unknown" };
  if (row.used_at !== null) return { status: "used" };
  if (row.expires_at.getTime() <= Date.now()) return { status: "expired" };
  if (!row.user.is_active || realm.deactivated) return { status: "deactivated" };
  return { status: "valid", user: row.user };
}

/**
 * Sets the password a link was sent for and uses the link up (with every other of the user's).
 * Checked with the token's row locked, so two submissions of one link cannot both succeed; a
 * password too weak throws before anything is written, and the link still works.
 */
export async function resetPasswordWithToken(tx: Tx, realm: Realm, token: string, password: HashedPassword): Promise<PasswordResetTokenState> {
  if (!TOKEN.test(token)) return { status: "unknown" };
  await tx.$queryRaw`SELECT id FROM password_reset_token WHERE token_hash = ${tokenHash(token)} FOR UPDATE`;
  const state = await checkPasswordResetToken(tx, realm, token);
  if (state.status === "valid") await setUserPassword(tx, state.user, password);
  return state;
}

/** Deletes links expired over a day ago (the worker, periodically); how many. */
export async function sweepPasswordResetTokens(prisma: PrismaClient): Promise<number> {
  const before = new Date(Date.now() - KEEP_EXPIRED_MS);
  return prisma.$executeRaw(Prisma.sql`DELETE FROM password_reset_token WHERE expires_at < ${before}`);
}
