// PATCH /settings as Zulip 3.x (json_change_settings): the user's own password, full name and
// email address, checked in Zulip's order. The password's argon2 work is done before the
// transaction (prepareOwnPasswordChange); its write and the rest run in the caller's transaction,
// so a refusal after the password check (an email change) leaves the password as it was.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";
import { isAdmin } from "../lib/roles.ts";
import { checkFullName } from "../lib/validation.ts";
import { changeFullName } from "./user-changes.ts";
import { checkNameUnique } from "./users.ts";
import { changeOwnPassword, lockUserRow, type OwnPasswordChange } from "./passwords.ts";

export interface AccountSettingsRequest {
  fullName: string;
  email: string;
  newPassword: string;
  /** The checked and hashed change when newPassword is set (prepareOwnPasswordChange, before the transaction). */
  passwordChange: OwnPasswordChange | null;
}

/**
 * Zulip 3.x's reading: each parameter defaults to "", and "" asks for no change (an empty
 * new_password changes nothing); with none of full_name, email and new_password given, "Please
 * fill out all fields.". Returns `full_name` when the request changes it (Zulip's answer).
 */
export async function updateAccountSettings(tx: Tx, events: EventRecorder, actor: Actor, request: AccountSettingsRequest): Promise<{ full_name?: string }> {
  checkHumanUser(actor);
  if (request.fullName === "" && request.email === "" && request.newPassword === "") throw new JsonableError("Please fill out all fields.");
  if (request.passwordChange) await changeOwnPassword(tx, actor.id, request.passwordChange);

  const user = await lockUserRow(tx, actor.id);
  const newEmail = request.email.trim();
  if (newEmail !== "" && newEmail !== user.delivery_email) {
    // Zulip starts a confirmation by email here; this server has no email change flow yet.
    throw new JsonableError("Email address changes are not available on this server: the server's operator can change an address.");
  }

  const result: { full_name?: string } = {};
  // Zulip ignores a name change the organization does not allow (its settings page hides the field).
  if (request.fullName.trim() !== "" && request.fullName !== user.full_name && (!actor.realm.name_changes_disabled || isAdmin(user))) {
    const fullName = checkFullName(request.fullName);
    if (fullName.toLowerCase() !== user.full_name.toLowerCase()) await checkNameUnique(tx, actor.realm, fullName, user.id);
    if (fullName !== user.full_name) await changeFullName(tx, events, user, fullName);
    result.full_name = fullName;
  }
  return result;
}
