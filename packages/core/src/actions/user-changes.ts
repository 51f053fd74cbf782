// Changes to a user's name, avatar, address and (for a bot) owner, with the `realm_user update`
// and `realm_bot` events Zulip sends for them (do_change_full_name, do_change_avatar_fields,
// do_change_user_delivery_email, do_change_bot_owner).
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { avatarChangePerson } from "../lib/avatars.ts";
import { isDummyEmailForm, shownEmail } from "../lib/email-visibility.ts";
import { isAdmin } from "../lib/roles.ts";
import { generateApiKey } from "../lib/secrets.ts";
import { isValidEmail } from "../lib/validation.ts";
import { ownedBotDict } from "../queries/bots.ts";
import { activeAdminIds, activeUserIds, deliveryEmailViewers, getUserByDeliveryEmail } from "../queries/users.ts";
import { botDomain } from "./system-bots.ts";
import { checkBotLimits, lockBotOwner, lockRealmBots, type BotLimits } from "./bot-limits.ts";
import { lockUserForEmailVisibility } from "./email-visibility.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { userIdsWhoCanAccess } from "../queries/user-access.ts";

/** Who keeps a bot in `realm_bots`: its owner and the realm's administrators (Zulip's bot_owner_user_ids). */
export async function botAdministratorIds(tx: Tx, bot: UserProfile): Promise<number[]> {
  const admins = await activeAdminIds(tx, bot.realm_id);
  return [...new Set(bot.bot_owner_id === null ? admins : [...admins, bot.bot_owner_id])];
}

/**
 * Sets a user's full name, already checked (Zulip's do_change_full_name): everyone gets
 * `realm_user update`, and a bot's administrators `realm_bot update`.
 */
export async function changeFullName(tx: Tx, events: EventRecorder, user: UserProfile, fullName: string): Promise<UserProfile> {
  const updated = await tx.userProfile.update({ where: { id: user.id }, data: { full_name: fullName } });
  events.send({ type: "realm_user", op: "update", person: { user_id: user.id, full_name: fullName } }, await userIdsWhoCanAccess(tx, user.realm_id, user.id));
  if (user.is_bot) {
    events.send({ type: "realm_bot", op: "update", bot: { email: user.email, user_id: user.id, full_name: fullName } }, await botAdministratorIds(tx, updated));
  }
  return updated;
}

async function notifyAvatarChange(tx: Tx, events: EventRecorder, user: UserProfile): Promise<void> {
  const person = avatarChangePerson(user);
  events.send({ type: "realm_user", op: "update", person }, await userIdsWhoCanAccess(tx, user.realm_id, user.id));
  if (user.is_bot) {
    events.send({ type: "realm_bot", op: "update", bot: { email: user.email, user_id: user.id, avatar_url: person.avatar_url } }, await botAdministratorIds(tx, user));
  }
}

/** Zulip's avatar_changes_disabled rule: administrators may change avatars regardless. */
export function checkAvatarChangesAllowed(actor: Actor): void {
  if (actor.realm.avatar_changes_disabled && !isAdmin(actor)) throw badRequest("Avatar changes are disabled in this organization.");
}

/**
 * Sets where a user's avatar comes from (`G` gravatar, `U` uploaded) and bumps its version, so
 * every client fetches the new image. DELETE /users/me/avatar sets `G`. avatar_changes_disabled
 * covers one's own avatar; a bot's is its administrators' to change (Zulip's patch_bot_backend).
 */
export async function changeAvatarSource(tx: Tx, events: EventRecorder, actor: Actor, user: UserProfile, source: "G" | "U"): Promise<UserProfile> {
  if (user.id === actor.id) checkAvatarChangesAllowed(actor);
  const updated = await tx.userProfile.update({ where: { id: user.id }, data: { avatar_source: source, avatar_version: { increment: 1 } } });
  await notifyAvatarChange(tx, events, updated);
  return updated;
}

/**
 * Changes a user's email address (the operator's change-user-email; Zulip's
 * do_change_user_delivery_email). The user and those the user's email_address_visibility lets see
 * their address get `delivery_email`; while it is shown to everyone (and for a bot) the shown
 * `email` changes with it: everyone gets `new_email`, and a gravatar, derived from it, changes too.
 */
export async function changeDeliveryEmail(tx: Tx, events: EventRecorder, ctx: ServerContext, user: UserProfile, newEmail: string): Promise<UserProfile> {
  const email = newEmail.trim();
  const domain = botDomain(ctx);
  if (!isValidEmail(email) || isDummyEmailForm(email, domain)) throw badRequest(`Invalid email '${email}'`);
  const holder = await getUserByDeliveryEmail(tx, user.realm_id, email);
  if (holder && holder.id !== user.id) throw badRequest(`Email '${email}' already in use`);
  if (email === user.delivery_email) return user;
  // The user's row locked: their email_address_visibility as committed decides the shown address.
  const locked = await lockUserForEmailVisibility(tx, user.id);
  const shown = shownEmail({ ...locked, delivery_email: email }, locked.email_address_visibility, domain);
  const updated = await tx.userProfile.update({ where: { id: user.id }, data: { email: shown, delivery_email: email } });
  // 3.x clients get it where 3.x sent it (seesDeliveryEmails); those who may see it only in
  // today's terms (the address shown to everyone, where 3.x gave it to administrators only) get
  // instead the shown email, which is then this address.
  const { legacy, modernOnly } = await deliveryEmailViewers(tx, locked);
  // Only to those who may know of the user (a guest restricted by can_access_all_users_group may not).
  const accessing = await userIdsWhoCanAccess(tx, user.realm_id, user.id);
  const mayAccess = new Set(accessing);
  const person = { user_id: user.id, delivery_email: email };
  events.send({ type: "realm_user", op: "update", person }, [...new Set([user.id, ...legacy.filter((id) => mayAccess.has(id))])]);
  events.send(withLegacyShape({ type: "realm_user", op: "update", person }, { person: { user_id: user.id, new_email: shown } }), modernOnly.filter((id) => id !== user.id && mayAccess.has(id)));
  if (shown !== user.email) {
    events.send({ type: "realm_user", op: "update", person: { user_id: user.id, new_email: shown } }, accessing);
    if (updated.avatar_source === "G") await notifyAvatarChange(tx, events, updated);
  }
  return updated;
}

/**
 * Gives a bot a new owner (its owner or an administrator may), within the new owner's cap on
 * active bots. The old owner, unless an administrator, loses it from `realm_bots`; the new one
 * gains it; everyone learns `bot_owner_id`. The bot gets a new API key, so that the old owner, who
 * could read the old one, can no longer act as the bot (Zulip keeps the key): the new owner has it
 * in `realm_bot add`, the administrators in `realm_bot update`.
 */
export async function changeBotOwner(tx: Tx, events: EventRecorder, actor: Actor, bot: UserProfile, newOwnerId: number, limits: BotLimits): Promise<void> {
  if (!bot.is_bot || bot.realm_id !== actor.realm_id) throw badRequest("No such bot");
  if (bot.bot_owner_id !== actor.id && !isAdmin(actor)) throw badRequest("Insufficient permission");
  await lockRealmBots(tx, bot.realm_id);
  // Locked, so the new owner cannot be deactivated before this commits and leave the bot running.
  const owner = await lockBotOwner(tx, bot.realm_id, newOwnerId);
  if (!owner) throw badRequest("Failed to change owner, no such user");
  if (!owner.is_active) throw badRequest("Failed to change owner, user is deactivated");
  if (owner.is_bot) throw badRequest("Failed to change owner, bots can't own other bots");
  if (owner.id === bot.bot_owner_id) return;
  if (bot.is_active) await checkBotLimits(tx, limits, bot.realm_id, owner.id, "new owner");

  const previous = bot.bot_owner_id === null ? null : await tx.userProfile.findUnique({ where: { id: bot.bot_owner_id } });
  const updated = await tx.userProfile.update({ where: { id: bot.id }, data: { bot_owner_id: owner.id, api_key: generateApiKey() } });
  const updateUsers = new Set(await botAdministratorIds(tx, updated));
  // Administrators keep every bot, so they get an update rather than a delete and an add.
  if (previous && !isAdmin(previous)) {
    events.send({ type: "realm_bot", op: "delete", bot: { email: bot.email, user_id: bot.id } }, [previous.id]);
    updateUsers.delete(previous.id);
  }
  if (!isAdmin(owner)) {
    events.send({ type: "realm_bot", op: "add", bot: await ownedBotDict(tx, updated) }, [owner.id]);
    updateUsers.delete(owner.id);
  }
  events.send({ type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, owner_id: owner.id } }, [...updateUsers]);
  events.send({ type: "realm_bot", op: "update", bot: { email: bot.email, user_id: bot.id, api_key: updated.api_key } }, [...updateUsers]);
  events.send({ type: "realm_user", op: "update", person: { user_id: bot.id, bot_owner_id: owner.id } }, await activeUserIds(tx, bot.realm_id));
}
