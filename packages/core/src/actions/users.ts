import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest, JsonableError, OwnerRequiredError } from "../errors.ts";
import type { Actor, Realm, UserProfile } from "../models.ts";
import { RECIPIENT_PERSONAL } from "../lib/recipients.ts";
import { isAdmin, isOwner, ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_MEMBER, ROLE_OWNER, ROLES } from "../lib/roles.ts";
import { generateApiKey, hashPassword } from "../lib/secrets.ts";
import { formatUser } from "../lib/user-format.ts";
import { checkFullName, isValidEmail } from "../lib/validation.ts";
import { activeAdminIds, activeUserIds, getUserByDeliveryEmail } from "../queries/users.ts";
import { bulkAddSubscriptions } from "./subscriptions.ts";
import { checkProfileFieldValue } from "./profile-fields.ts";
import { botAdministratorIds } from "./user-changes.ts";

export const MIN_PASSWORD_LENGTH = 6;

export interface NewUser {
  email: string;
  fullName: string;
  shortName?: string;
  password: string | null;
  role?: number;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  timezone?: string;
}

export async function checkNewUser(tx: Tx, realm: Realm, user: NewUser): Promise<{ email: string; fullName: string }> {
  const email = user.email.trim();
  if (!isValidEmail(email)) throw badRequest(`Invalid email '${email}'`);
  if (await getUserByDeliveryEmail(tx, realm.id, email)) throw badRequest(`Email '${email}' already in use`);
  if (user.password !== null && user.password.length < MIN_PASSWORD_LENGTH) throw badRequest("The password is too weak.");
  if (user.role !== undefined && !(ROLES as readonly number[]).includes(user.role)) throw badRequest("Invalid role");
  return { email, fullName: checkFullName(user.fullName) };
}

/**
 * Creates a user (Zulip's do_create_user): the account with its personal recipient, subscriptions
 * to the realm's default streams, and `realm_user add` to everyone in the realm.
 */
export async function createUser(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, user: NewUser): Promise<UserProfile> {
  const { email, fullName } = await checkNewUser(tx, realm, user);
  const created = await tx.userProfile.create({
    data: {
      realm_id: realm.id,
      email,
      delivery_email: email,
      full_name: fullName,
      short_name: user.shortName?.trim() ?? "",
      password_hash: user.password === null ? null : await hashPassword(user.password),
      api_key: generateApiKey(),
      role: user.role ?? ROLE_MEMBER,
      is_bot: user.isBot ?? false,
      bot_type: user.isBot ? (user.botType ?? 1) : null,
      bot_owner_id: user.isBot ? (user.botOwnerId ?? null) : null,
      timezone: user.timezone ?? "",
      default_language: realm.default_language,
      twenty_four_hour_time: realm.default_twenty_four_hour_time,
    },
  });
  const recipient = await tx.recipient.create({ data: { type: RECIPIENT_PERSONAL, type_id: created.id } });
  const profile = await tx.userProfile.update({ where: { id: created.id }, data: { recipient_id: recipient.id } });

  const everyone = await activeUserIds(tx, realm.id);
  const admins = new Set(await activeAdminIds(tx, realm.id));
  for (const forAdmin of [true, false]) {
    const person = formatUser(profile, { clientGravatar: false, forAdmin, profileData: {} });
    events.send({ type: "realm_user", op: "add", person }, everyone.filter((id) => admins.has(id) === forAdmin));
  }

  const defaults = await tx.defaultStream.findMany({ where: { realm_id: realm.id }, include: { stream: true } });
  const streams = defaults.map((d) => d.stream).filter((s) => !s.deactivated && !(profile.role === ROLE_GUEST && s.invite_only));
  await bulkAddSubscriptions(tx, events, ctx, streams, [profile.id]);
  return profile;
}

export interface UserChanges {
  fullName?: string;
  role?: number;
  isAdmin?: boolean;
  isGuest?: boolean;
}

/** Resolves is_admin/is_guest (the contract's parameters) and role into one new role. */
function newRole(target: UserProfile, changes: UserChanges): number | undefined {
  if (changes.isAdmin && changes.isGuest) throw badRequest("Guests cannot be organization administrators");
  if (changes.role !== undefined) {
    if (!(ROLES as readonly number[]).includes(changes.role)) throw badRequest("Invalid role");
    return changes.role;
  }
  if (changes.isAdmin === true) return target.role === ROLE_OWNER ? ROLE_OWNER : ROLE_ADMINISTRATOR;
  if (changes.isGuest === true) return ROLE_GUEST;
  if (changes.isAdmin === false && isAdmin(target)) return ROLE_MEMBER;
  if (changes.isGuest === false && target.role === ROLE_GUEST) return ROLE_MEMBER;
  return undefined;
}

/** PATCH /users/{id}: an administrator changes a user's name or role. */
export async function updateUser(tx: Tx, events: EventRecorder, actor: Actor, target: UserProfile, changes: UserChanges): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const role = newRole(target, changes);
  const everyone = await activeUserIds(tx, target.realm_id);

  if (changes.fullName !== undefined) {
    const fullName = checkFullName(changes.fullName);
    if (fullName !== target.full_name) {
      await tx.userProfile.update({ where: { id: target.id }, data: { full_name: fullName } });
      events.send({ type: "realm_user", op: "update", person: { user_id: target.id, full_name: fullName } }, everyone);
      if (target.is_bot) {
        events.send({ type: "realm_bot", op: "update", bot: { email: target.email, user_id: target.id, full_name: fullName } }, await botAdministratorIds(tx, target));
      }
    }
  }

  if (role !== undefined && role !== target.role) {
    if ((role === ROLE_OWNER || isOwner(target)) && !isOwner(actor)) throw new OwnerRequiredError();
    if (isOwner(target) && role !== ROLE_OWNER) {
      const owners = await tx.userProfile.count({ where: { realm_id: target.realm_id, role: ROLE_OWNER, is_active: true, is_bot: false } });
      if (owners <= 1) throw badRequest("The owner permission cannot be removed from the only organization owner.");
    }
    if (isAdmin(target) && role > ROLE_ADMINISTRATOR && (await activeAdminIds(tx, target.realm_id)).length <= 1) {
      throw badRequest("Cannot remove the only organization administrator");
    }
    await tx.userProfile.update({ where: { id: target.id }, data: { role } });
    events.send({ type: "realm_user", op: "update", person: { user_id: target.id, role } }, everyone);
  }
}

/**
 * Deactivates a user (Zulip's do_deactivate_user), and the bots they own. Administrators may
 * deactivate others; anyone may deactivate themselves; the realm keeps at least one administrator.
 */
export async function deactivateUser(tx: Tx, events: EventRecorder, actor: Actor, target: UserProfile): Promise<void> {
  if (actor.id !== target.id && !isAdmin(actor)) throw new AdministratorRequiredError();
  if (isOwner(target) && !isOwner(actor)) throw new OwnerRequiredError();
  if (isAdmin(target) && !target.is_bot) {
    const admins = await activeAdminIds(tx, target.realm_id);
    if (admins.length <= 1 && admins.includes(target.id)) {
      throw new JsonableError("Cannot deactivate the only organization administrator");
    }
  }
  const everyone = await activeUserIds(tx, target.realm_id);
  const bots = await tx.userProfile.findMany({ where: { bot_owner_id: target.id, is_active: true } });
  for (const user of [target, ...bots]) {
    await tx.userProfile.update({ where: { id: user.id }, data: { is_active: false } });
    await tx.subscription.updateMany({ where: { user_id: user.id }, data: { is_user_active: false } });
    events.send({ type: "realm_user", op: "remove", person: { user_id: user.id, full_name: user.full_name } }, everyone);
    if (user.is_bot) {
      events.send({ type: "realm_bot", op: "remove", bot: { email: user.email, user_id: user.id, full_name: user.full_name } }, await botAdministratorIds(tx, user));
    }
  }
}

export async function regenerateApiKey(tx: Tx, userId: number): Promise<string> {
  const apiKey = generateApiKey();
  await tx.userProfile.update({ where: { id: userId }, data: { api_key: apiKey } });
  return apiKey;
}

export interface ProfileDataChange {
  id: number;
  value: string | number[] | null;
}

/** Sets custom profile field values (PATCH /users/{id} `profile_data`); null or "" clears one. */
export async function updateProfileData(tx: Tx, events: EventRecorder, actor: Actor, target: UserProfile, changes: ProfileDataChange[]): Promise<void> {
  if (actor.id !== target.id && !isAdmin(actor)) throw new AdministratorRequiredError();
  const fields = await tx.customProfileField.findMany({ where: { realm_id: target.realm_id } });
  const byId = new Map(fields.map((field) => [field.id, field]));
  const everyone = await activeUserIds(tx, target.realm_id);
  for (const change of changes) {
    const field = byId.get(change.id);
    if (!field) throw badRequest(`Field id ${change.id} not found.`);
    const raw = typeof change.value === "string" ? change.value.trim() : change.value;
    const cleared = raw === null || raw === "" || (Array.isArray(raw) && raw.length === 0);
    const checked = cleared ? null : await checkProfileFieldValue(tx, field, raw);
    if (checked === null) {
      await tx.customProfileFieldValue.deleteMany({ where: { user_id: target.id, field_id: field.id } });
    } else {
      const data = { value: checked.value, rendered_value: checked.renderedValue };
      await tx.customProfileFieldValue.upsert({
        where: { user_id_field_id: { user_id: target.id, field_id: field.id } },
        create: { user_id: target.id, field_id: field.id, ...data },
        update: data,
      });
    }
    const update: Record<string, unknown> = { id: field.id, value: checked?.value ?? null };
    if (checked?.renderedValue) update.rendered_value = checked.renderedValue;
    events.send(
      { type: "realm_user", op: "update", person: { user_id: target.id, custom_profile_field: update } },
      everyone,
    );
  }
}
