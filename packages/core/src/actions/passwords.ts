// A user's password: set (by the user through PATCH /settings, a reset link, or an operator's
// CLI) as an argon2id hash. Setting one ends every reset link of the user still outstanding.
// Zulip sends no event for a password change, and neither does this: no client state shows it.
import type { PrismaClient, Tx } from "@chat/db";
import { JsonableError } from "../errors.ts";
import type { UserProfile } from "../models.ts";
import { PASSWORD_MAX_LENGTH, passwordWeakness, passwordWeaknessMessage } from "../lib/passwords.ts";
import { hashPassword, verifyPassword } from "../lib/secrets.ts";
import { deleteUserBrowserSessions } from "./browser-sessions.ts";

/** PATCH /settings's old_password did not match (Zulip's words); the route counts it as a failed login. */
export class WrongPasswordError extends JsonableError {
  constructor() {
    super("Wrong password!");
  }
}

/** The user's row, locked until the transaction ends: concurrent changes of one password go in turn. */
export async function lockUserRow(tx: Tx, userId: number): Promise<UserProfile> {
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${userId} FOR UPDATE`;
  return tx.userProfile.findUniqueOrThrow({ where: { id: userId } });
}

/** Bots log in with their API key only (Zulip gives them no password). */
function checkMayHavePassword(user: Pick<UserProfile, "is_bot">): void {
  if (user.is_bot) throw new JsonableError("Bots cannot have a password.");
}

/**
 * Writes a password hash, uses up the user's outstanding reset links and ends every browser
 * session of the user (whoever knew the old password may be signed in somewhere).
 */
async function writePasswordHash(tx: Tx, userId: number, passwordHash: string): Promise<void> {
  await tx.userProfile.update({ where: { id: userId }, data: { password_hash: passwordHash } });
  await tx.passwordResetToken.updateMany({ where: { user_id: userId, used_at: null }, data: { used_at: new Date() } });
  await deleteUserBrowserSessions(tx, [userId]);
}

/** A new password checked for strength and hashed: made before the transaction that stores it. */
export interface HashedPassword {
  readonly hash: string;
}

/**
 * Checks a new password's strength (at least 6 and at most 100 characters, not a common password
 * or pattern) and hashes it. Outside any transaction: argon2 takes tens of milliseconds, for which
 * a transaction would hold the user's row, a pool connection, and on the embedded database (one
 * session) every other request.
 */
export async function hashNewPassword(password: string): Promise<HashedPassword> {
  const weakness = passwordWeakness(password);
  if (weakness !== null) throw new JsonableError(passwordWeaknessMessage(weakness));
  return { hash: await hashPassword(password) };
}

/**
 * Stores a user's new password: for a reset link and the CLI's set-password. Any user but a bot,
 * deactivated or not (an operator may set one before reactivating). No event.
 */
export async function setUserPassword(tx: Tx, user: Pick<UserProfile, "id" | "is_bot">, password: HashedPassword): Promise<void> {
  checkMayHavePassword(user);
  await lockUserRow(tx, user.id);
  await writePasswordHash(tx, user.id, password.hash);
}

/** A user's own password change, its argon2 work done: the hash the old password matched, and the new one. */
export interface OwnPasswordChange {
  verifiedHash: string;
  newPassword: HashedPassword;
}

/**
 * PATCH /settings's password change (Zulip's json_change_settings), checked before the
 * transaction (argon2, see hashNewPassword): the old password must match ("Wrong password!"), the
 * new one be strong enough ("New password is too weak!"). The caller has checked the actor is a
 * person and not past its failed logins.
 */
export async function prepareOwnPasswordChange(prisma: PrismaClient, userId: number, oldPassword: string, newPassword: string): Promise<OwnPasswordChange> {
  const user = await prisma.userProfile.findUniqueOrThrow({ where: { id: userId }, select: { is_bot: true, password_hash: true } });
  checkMayHavePassword(user);
  // An empty password never matches (Zulip's EmailAuthBackend refuses it before looking).
  if (oldPassword === "" || user.password_hash === null || !(await verifyPassword(user.password_hash, oldPassword))) throw new WrongPasswordError();
  const weakness = passwordWeakness(newPassword);
  if (weakness === "too_long") throw new JsonableError(`new_password is too long (limit: ${PASSWORD_MAX_LENGTH} characters)`, { extra: { var_name: "new_password" } });
  if (weakness !== null) throw new JsonableError("New password is too weak!");
  return { verifiedHash: user.password_hash, newPassword: { hash: await hashPassword(newPassword) } };
}

/** Stores a prepared change, unless the password changed since the old one was checked (then it no longer matches). */
export async function changeOwnPassword(tx: Tx, userId: number, change: OwnPasswordChange): Promise<void> {
  const user = await lockUserRow(tx, userId);
  if (user.password_hash !== change.verifiedHash) throw new WrongPasswordError();
  await writePasswordHash(tx, user.id, change.newPassword.hash);
}
