// A user's password: set (by the user through PATCH /settings, a reset link, or an operator's
// CLI) as an argon2id hash. Setting one ends every reset link of the user still outstanding.
// Zulip sends no event for a password change, and neither does this: no client state shows it.
import type { Tx } from "@chat/db";
import { JsonableError } from "../errors.ts";
import type { UserProfile } from "../models.ts";
import { PASSWORD_MAX_LENGTH, passwordWeakness, passwordWeaknessMessage } from "../lib/passwords.ts";
import { hashPassword, verifyPassword } from "../lib/secrets.ts";

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

/** Writes a password hash and uses up the user's outstanding reset links. */
async function writePasswordHash(tx: Tx, userId: number, passwordHash: string): Promise<void> {
  await tx.userProfile.update({ where: { id: userId }, data: { password_hash: passwordHash } });
  await tx.passwordResetToken.updateMany({ where: { user_id: userId, used_at: null }, data: { used_at: new Date() } });
}

/**
 * Sets a user's password, checked for strength (at least 6 and at most 100 characters, not a
 * common password or pattern): for a reset link and the CLI's set-password. Any user but a bot,
 * deactivated or not (an operator may set one before reactivating). No event.
 */
export async function setUserPassword(tx: Tx, user: Pick<UserProfile, "id" | "is_bot">, password: string): Promise<void> {
  checkMayHavePassword(user);
  const weakness = passwordWeakness(password);
  if (weakness !== null) throw new JsonableError(passwordWeaknessMessage(weakness));
  await lockUserRow(tx, user.id);
  await writePasswordHash(tx, user.id, await hashPassword(password));
}

/**
 * A user's own password change (PATCH /settings, Zulip's json_change_settings): the old password
 * must match ("Wrong password!"), the new one be strong enough ("New password is too weak!").
 * The caller has checked the actor is a person and not past its failed logins.
 */
export async function changeOwnPassword(tx: Tx, userId: number, oldPassword: string, newPassword: string): Promise<void> {
  const user = await lockUserRow(tx, userId);
  checkMayHavePassword(user);
  // An empty password never matches (Zulip's EmailAuthBackend refuses it before looking).
  if (oldPassword === "" || !(await verifyPassword(user.password_hash, oldPassword))) throw new WrongPasswordError();
  const weakness = passwordWeakness(newPassword);
  if (weakness === "too_long") throw new JsonableError(`new_password is too long (limit: ${PASSWORD_MAX_LENGTH} characters)`, { extra: { var_name: "new_password" } });
  if (weakness !== null) throw new JsonableError("New password is too weak!");
  await writePasswordHash(tx, user.id, await hashPassword(newPassword));
}
