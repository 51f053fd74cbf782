import type { StreamModel, Tx } from "@chat/db";
import { newUserSettingColumns } from "./realm-user-defaults.ts";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest, JsonableError, OwnerRequiredError } from "../errors.ts";
import { syncSystemGroupMemberships } from "./system-groups.ts";
import type { Actor, Realm, UserProfile } from "../models.ts";
import { RECIPIENT_PERSONAL } from "../lib/recipients.ts";
import { isAdmin, isOwner, ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_MEMBER, ROLE_OWNER, ROLES } from "../lib/roles.ts";
import { generateApiKey, hashPassword } from "../lib/secrets.ts";
import { formatUser, type ProfileData } from "../lib/user-format.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { userIdsWhoCanAccess } from "../queries/user-access.ts";
import { INACCESSIBLE_USER_KEY, inaccessibleUserDict } from "../state/restricted-users.ts";
import { sendUserGroupEventsForUserActivity } from "./user-groups.ts";
import { checkEmailAllowedForRealm } from "../lib/email-domains.ts";
import { checkFullName, isValidEmail, NAME_IN_USE_MESSAGE } from "../lib/validation.ts";
import { BOT_TYPE_GENERIC } from "../lib/bots.ts";
import { canCreateBotOfType } from "../lib/group-permissions.ts";
import { sendRealmSettingEventsForUserActivity } from "./realm-group-settings.ts";
import { activeBotsControlledBy, ownedBotDict } from "../queries/bots.ts";
import { isDummyEmailForm, shownEmail } from "../lib/email-visibility.ts";
import { activeAdminIds, activeUserIds, deliveryEmailAudience, getProfileData, getUserByDeliveryEmail } from "../queries/users.ts";
import { bulkAddSubscriptions, subscriberIds } from "./subscriptions.ts";
import { listedStreamsFor } from "../queries/streams.ts";
import { formatStreams } from "../lib/stream-format.ts";
import { checkProfileFieldValue } from "./profile-fields.ts";
import { botDomain, isSystemBot } from "./system-bots.ts";
import { botAdministratorIds, changeFullName } from "./user-changes.ts";
import { checkBotLimits, lockRealmBots, type BotLimits } from "./bot-limits.ts";
import { lockEmailAddressVisibility } from "./email-visibility.ts";
import { deleteUserBrowserSessions } from "./browser-sessions.ts";

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
  /** A password already checked and hashed (hashNewPassword), instead of `password` (then null). */
  passwordHash?: string;
  /** The streams to subscribe the user to instead of the realm's default streams (an invitation's). */
  streams?: StreamModel[];
}

export async function checkNewUser(tx: Tx, realm: Realm, user: NewUser, emailDomain: string): Promise<{ email: string; fullName: string }> {
  const email = user.email.trim();
  if (!isValidEmail(email) || isDummyEmailForm(email, emailDomain)) throw badRequest(`Invalid email '${email}'`);
  await checkEmailAllowedForRealm(tx, realm, email);
  if (await getUserByDeliveryEmail(tx, realm.id, email)) throw badRequest(`Email '${email}' already in use`);
  if (user.password !== null && user.password.length < MIN_PASSWORD_LENGTH) throw badRequest("The password is too weak.");
  if (user.role !== undefined && !(ROLES as readonly number[]).includes(user.role)) throw badRequest("Invalid role");
  const fullName = checkFullName(user.fullName);
  await checkNameUnique(tx, realm, fullName, null);
  return { email, fullName };
}

/**
 * Zulip's check_full_name with require_unique_names (feature level 246): no two active users of an
 * organization share a name, compared without case. Locks the realm's row so that two users
 * taking one name at once cannot both succeed.
 */
export async function checkNameUnique(tx: Tx, realm: { id: number; require_unique_names: boolean }, fullName: string, exceptUserId: number | null): Promise<void> {
  if (!realm.require_unique_names) return;
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${realm.id} FOR UPDATE`;
  const taken = await tx.$queryRaw<Array<{ id: number }>>`
    SELECT id FROM user_profile WHERE realm_id = ${realm.id} AND is_active AND lower(full_name) = lower(${fullName}) AND id <> ${exceptUserId ?? 0} LIMIT 1`;
  if (taken.length > 0) throw badRequest(NAME_IN_USE_MESSAGE);
}

/** The columns a new user's row takes besides the realm's defaults (bots set the bot ones). */
export interface UserRow {
  /** A user id drawn beforehand (nextUserId), when files named after it were written first. */
  id?: number;
  email: string;
  fullName: string;
  shortName: string;
  passwordHash: string | null;
  role: number;
  timezone: string;
  bot?: {
    botType: number;
    ownerId: number | null;
    avatarSource: "G" | "U";
    defaultSendingStreamId: number | null;
    defaultEventsRegisterStreamId: number | null;
    defaultAllPublicStreams: boolean;
  };
}

/** Writes a new user's row and personal recipient, with no checks and no events; its settings are the realm's defaults. */
export async function insertUser(tx: Tx, realm: Realm, row: UserRow): Promise<UserProfile> {
  // The organization's defaults for new users' personal settings (feature level 95); not for bots, as Zulip.
  const settings = row.bot === undefined ? await newUserSettingColumns(tx, realm) : {};
  const created = await tx.userProfile.create({
    data: {
      ...settings,
      ...(row.id === undefined ? {} : { id: row.id }),
      realm_id: realm.id,
      email: row.email,
      delivery_email: row.email,
      full_name: row.fullName,
      short_name: row.shortName,
      password_hash: row.passwordHash,
      api_key: generateApiKey(),
      role: row.role,
      is_bot: row.bot !== undefined,
      bot_type: row.bot?.botType ?? null,
      bot_owner_id: row.bot?.ownerId ?? null,
      avatar_source: row.bot?.avatarSource ?? "G",
      default_sending_stream_id: row.bot?.defaultSendingStreamId ?? null,
      default_events_register_stream_id: row.bot?.defaultEventsRegisterStreamId ?? null,
      default_all_public_streams: row.bot?.defaultAllPublicStreams ?? false,
      timezone: row.timezone,
      default_language: realm.default_language,
      twenty_four_hour_time: realm.default_twenty_four_hour_time,
    },
  });
  const recipient = await tx.recipient.create({ data: { type: RECIPIENT_PERSONAL, type_id: created.id } });
  return tx.userProfile.update({ where: { id: created.id }, data: { recipient_id: recipient.id } });
}

/**
 * `realm_user add` to everyone in the realm, the user included (Zulip's notify_created_user): at
 * creation, and at reactivation. Its delivery_email is as each recipient's role may see it under
 * the user's email_address_visibility: the address or null, and for 3.x clients the address or
 * nothing (lib/email-visibility.ts). Guests who may not know of a (human) user, where the realm's
 * can_access_all_users_group restricts them, get nothing of theirs: a new user is an "Unknown
 * user" placeholder marked inaccessible_user (given an emailDomain), which the event tier strips,
 * or drops for clients with user_list_incomplete; a reactivated one, whose placeholder they
 * already list as active, nothing. With notifyUserIds, only those of them get the real user (a
 * guest who came to know of them, Zulip's notify_user_ids). Returns the guests given a placeholder.
 */
export async function notifyCreatedUser(
  tx: Tx,
  events: EventRecorder,
  user: UserProfile,
  profileData: ProfileData = {},
  { reactivated = false, emailDomain, notifyUserIds }: { reactivated?: boolean; emailDomain?: string; notifyUserIds?: number[] } = {},
): Promise<number[]> {
  // Everyone may know of a bot: no query for one.
  const mayAccess = notifyUserIds ? new Set(notifyUserIds) : user.is_bot ? null : new Set(await userIdsWhoCanAccess(tx, user.realm_id, user.id));
  const withoutAccess: number[] = [];
  for (const { role, ids: audience } of await deliveryEmailAudience(tx, user.realm_id)) {
    const ids = mayAccess === null ? audience : audience.filter((id) => mayAccess.has(id));
    if (mayAccess !== null && !notifyUserIds) withoutAccess.push(...audience.filter((id) => !mayAccess.has(id)));
    const person = (modern: boolean) => formatUser(user, { clientGravatar: false, withDeliveryEmail: { role, modern }, profileData });
    const added = { op: "add", person: person(true) };
    const legacyAdded = { op: "add", person: person(false) };
    events.send(reactivated ? deactivationEvent(user.id, true, legacyAdded) : withLegacyShape({ type: "realm_user", ...added }, { person: legacyAdded.person }), ids);
  }
  const placeholders = !reactivated && emailDomain !== undefined ? withoutAccess : [];
  if (placeholders.length > 0) {
    events.send({ type: "realm_user", op: "add", person: inaccessibleUserDict(user.id, emailDomain!), [INACCESSIBLE_USER_KEY]: true }, placeholders);
  }
  // The system group of their role (and role:fullmembers), once everyone knows the user.
  if (!notifyUserIds) await syncSystemGroupMemberships(tx, events, user);
  return placeholders;
}

/**
 * A user's (de)activation: `realm_user update` with is_active for clients newer than Zulip 3.x
 * (feature level 222), and `legacy` (3.x's remove or add) for the others.
 */
function deactivationEvent(userId: number, isActive: boolean, legacy: { op: string; person: Record<string, unknown> }) {
  return withLegacyShape({ type: "realm_user", op: "update", person: { user_id: userId, is_active: isActive } }, legacy);
}

/**
 * Creates a user (Zulip's do_create_user): the account with its personal recipient, subscriptions
 * to the realm's default streams, and `realm_user add` to everyone in the realm.
 */
export async function createUser(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, user: NewUser): Promise<UserProfile> {
  const domain = botDomain(ctx);
  const { email, fullName } = await checkNewUser(tx, realm, user, domain);
  const visibility = await lockEmailAddressVisibility(tx, realm.id);
  let profile = await insertUser(tx, realm, {
    email,
    fullName,
    shortName: user.shortName?.trim() ?? "",
    passwordHash: user.passwordHash ?? (user.password === null ? null : await hashPassword(user.password)),
    role: user.role ?? ROLE_MEMBER,
    timezone: user.timezone ?? "",
    bot: user.isBot
      ? { botType: user.botType ?? 1, ownerId: user.botOwnerId ?? null, avatarSource: "G", defaultSendingStreamId: null, defaultEventsRegisterStreamId: null, defaultAllPublicStreams: false }
      : undefined,
  });
  // New users start with the realm's email_address_visibility (realm_user_settings_defaults); its
  // id is in the address they are shown under while theirs is hidden.
  const shown = shownEmail(profile, visibility, domain);
  if (shown !== profile.email || profile.email_address_visibility !== visibility) {
    profile = await tx.userProfile.update({ where: { id: profile.id }, data: { email: shown, email_address_visibility: visibility } });
  }
  await notifyCreatedUser(tx, events, profile, {}, { emailDomain: domain });

  const defaults = user.streams === undefined ? await tx.defaultStream.findMany({ where: { realm_id: realm.id }, include: { stream: true } }) : [];
  const streams = user.streams ?? defaults.map((d) => d.stream).filter((s) => !s.deactivated && !(profile.role === ROLE_GUEST && s.invite_only));
  // Guests sharing one of those streams with the user now know of them: bulkAddSubscriptions
  // sends them the real user, which replaces their placeholder (Zulip's
  // send_user_creation_events_on_adding_subscriptions).
  await bulkAddSubscriptions(tx, events, ctx, streams, [profile.id], { realm });
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

  if (changes.fullName !== undefined) {
    const fullName = checkFullName(changes.fullName);
    if (fullName.toLowerCase() !== target.full_name.toLowerCase()) await checkNameUnique(tx, actor.realm, fullName, target.id);
    if (fullName !== target.full_name) await changeFullName(tx, events, target, fullName);
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
    const listedBefore = await listedStreamsFor(tx, target);
    const changed = await tx.userProfile.update({ where: { id: target.id }, data: { role } });
    events.send({ type: "realm_user", op: "update", person: { user_id: target.id, role } }, await userIdsWhoCanAccess(tx, target.realm_id, target.id));
    await syncSystemGroupMemberships(tx, events, changed);
    await sendStreamEventsForRoleChange(tx, events, changed, listedBefore);
    // Guests may not have all_public_streams queues (Zulip's events_register_backend), and theirs
    // were checked at /register only (Zulip keeps them).
    if (role === ROLE_GUEST) events.endQueues([target.id], { allPublicStreamsOnly: true });
  }
}

/**
 * Zulip's send_stream_events_for_role_update (feature level 205): a user whose new role shows them
 * other streams (guest to member and back) gets `stream create` for those now listed, each followed
 * by `peer_add` with its subscribers, and `stream delete` for those no longer listed. Listed means
 * what /register's `streams` section shows (listedStreamsFor).
 */
async function sendStreamEventsForRoleChange(tx: Tx, events: EventRecorder, user: UserProfile, listedBefore: StreamModel[]): Promise<void> {
  const listedAfter = await listedStreamsFor(tx, user);
  const before = new Set(listedBefore.map((stream) => stream.id));
  const after = new Set(listedAfter.map((stream) => stream.id));
  const gained = listedAfter.filter((stream) => !before.has(stream.id));
  const lost = listedBefore.filter((stream) => !after.has(stream.id));
  if (gained.length > 0) {
    events.send({ type: "stream", op: "create", streams: await formatStreams(tx, gained) }, [user.id]);
    for (const stream of gained) {
      events.send({ type: "subscription", op: "peer_add", stream_ids: [stream.id], user_ids: await subscriberIds(tx, stream) }, [user.id]);
    }
  }
  if (lost.length > 0) events.send({ type: "stream", op: "delete", streams: await formatStreams(tx, lost), stream_ids: lost.map((stream) => stream.id) }, [user.id]);
}

/**
 * Deactivates a user (Zulip's do_deactivate_user), and every active bot they control: the bots
 * they own, and any bots those own (see activeBotsControlledBy), each with the events Zulip sends
 * for a deactivated bot. Administrators may deactivate others; anyone may deactivate themselves;
 * the realm keeps at least one administrator.
 */
export async function deactivateUser(tx: Tx, events: EventRecorder, actor: Actor, target: UserProfile): Promise<void> {
  // A bot's owner may deactivate it too (Zulip's can_admin_user).
  if (actor.id !== target.id && !isAdmin(actor) && !(target.is_bot && target.bot_owner_id === actor.id)) throw new AdministratorRequiredError();
  if (isOwner(target) && !isOwner(actor)) throw new OwnerRequiredError();
  if (isAdmin(target) && !target.is_bot) {
    const admins = await activeAdminIds(tx, target.realm_id);
    if (admins.length <= 1 && admins.includes(target.id)) {
      throw new JsonableError("Cannot deactivate the only organization administrator");
    }
  }
  // Zulip's check_last_owner: an organization always keeps an owner, whoever asks (the contract's
  // check of the last administrator comes first).
  if (isOwner(target) && !target.is_bot) {
    const owners = await tx.userProfile.count({ where: { realm_id: target.realm_id, role: ROLE_OWNER, is_active: true, is_bot: false } });
    if (owners <= 1) throw new JsonableError("Cannot deactivate the only organization owner");
  }
  // The row first: a bot being created for the target or handed to them (bot-limits.ts) either
  // committed before this, and is found below, or waits and then finds the target deactivated.
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${target.id} FOR NO KEY UPDATE`;
  // Those who may know of the user (a restricted guest keeps an "Unknown user", listed as active);
  // everyone may know of a bot.
  const everyone = await userIdsWhoCanAccess(tx, target.realm_id, target.id);
  const bots = await activeBotsControlledBy(tx, target.id);
  let allActive: number[] | null = target.is_bot ? everyone : null;
  for (const user of [target, ...bots]) {
    await tx.userProfile.update({ where: { id: user.id }, data: { is_active: false } });
    await tx.subscription.updateMany({ where: { user_id: user.id }, data: { is_user_active: false } });
    const audience = user.id === target.id ? everyone : (allActive ??= await activeUserIds(tx, target.realm_id));
    events.send(deactivationEvent(user.id, false, { op: "remove", person: { user_id: user.id, full_name: user.full_name } }), audience);
    if (user.is_bot) {
      events.send({ type: "realm_bot", op: "remove", bot: { email: user.email, user_id: user.id, full_name: user.full_name } }, await botAdministratorIds(tx, user));
    }
  }
  // Deactivated users are in no group (feature level 303): the groups they were in lose them.
  await sendUserGroupEventsForUserActivity(tx, events, target.realm_id, [target.id, ...bots.map((bot) => bot.id)], false);
  await sendRealmSettingEventsForUserActivity(tx, events, target.realm_id, [target.id, ...bots.map((bot) => bot.id)]);
  // Their polls fail from now on; a queue kept would answer again after a reactivation, missing
  // everything between. Their browser sessions end too (a reactivation signs in again).
  events.endQueues([target.id, ...bots.map((bot) => bot.id)]);
  await deleteUserBrowserSessions(tx, [target.id, ...bots.map((bot) => bot.id)]);
}

/**
 * A new API key for a user (Zulip's do_regenerate_api_key); the old one stops working at once on
 * every node, since authentication reads the key from the row on every request (and the actor
 * cache's copy is checked against the row's version). The administrators of a bot get the new
 * key in `realm_bot update`.
 */
export async function regenerateApiKey(tx: Tx, events: EventRecorder, user: UserProfile): Promise<string> {
  const apiKey = generateApiKey();
  const updated = await tx.userProfile.update({ where: { id: user.id }, data: { api_key: apiKey } });
  if (updated.is_bot && !isSystemBot(updated)) {
    events.send({ type: "realm_bot", op: "update", bot: { email: updated.email, user_id: updated.id, api_key: apiKey } }, await botAdministratorIds(tx, updated));
  }
  return apiKey;
}

/**
 * Reactivates a user (Zulip's do_reactivate_user): administrators may, and a bot's owner may
 * reactivate the bot (Zulip's can_admin_user), within the bot creation policy for its type and
 * the caps on active bots (its owner's and the realm's).
 * Everyone gets `realm_user add`; a bot's administrators get it back in realm_bots.
 */
export async function reactivateUser(tx: Tx, events: EventRecorder, actor: Actor, target: UserProfile, limits: BotLimits): Promise<UserProfile> {
  if (!isAdmin(actor) && !(target.is_bot && target.bot_owner_id === actor.id)) throw badRequest("Insufficient permission");
  if (target.is_active) throw badRequest("User is already active");
  if (target.is_bot) await checkBotCreationPolicy(tx, actor, target.bot_type ?? BOT_TYPE_GENERIC);
  if (target.is_bot && target.bot_owner_id !== null) {
    await lockRealmBots(tx, target.realm_id);
    await checkBotLimits(tx, limits, target.realm_id, target.bot_owner_id, target.bot_owner_id === actor.id ? "yours" : "owner");
  }
  const user = await tx.userProfile.update({ where: { id: target.id }, data: { is_active: true } });
  await tx.subscription.updateMany({ where: { user_id: user.id }, data: { is_user_active: true } });
  // A returning user's custom profile fields are as they left them.
  await notifyCreatedUser(tx, events, user, user.is_bot ? {} : (await getProfileData(tx, [user.id])).get(user.id), { reactivated: true });
  if (user.is_bot) events.send({ type: "realm_bot", op: "add", bot: await ownedBotDict(tx, user) }, await botAdministratorIds(tx, user));
  // Back in the groups they were in (feature level 303).
  await sendUserGroupEventsForUserActivity(tx, events, user.realm_id, [user.id], true);
  await sendRealmSettingEventsForUserActivity(tx, events, user.realm_id, [user.id]);
  return user;
}

/**
 * Zulip 10.0's check_bot_creation_policy (feature level 344): the realm's can_create_bots_group
 * may add (or reactivate) any bot, can_create_write_only_bots_group incoming webhooks only.
 */
export async function checkBotCreationPolicy(tx: Pick<Tx, "$queryRaw">, actor: Actor, botType: number): Promise<void> {
  if (!(await canCreateBotOfType(tx, actor, botType))) throw new AdministratorRequiredError();
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
  const everyone = await userIdsWhoCanAccess(tx, target.realm_id, target.id);
  for (const change of changes) {
    const field = byId.get(change.id);
    if (!field) throw badRequest(`Field id ${change.id} not found.`);
    // Feature level 296: a field administrators keep for themselves.
    if (!isAdmin(actor) && !field.editable_by_user) throw badRequest("You are not allowed to change this field. Contact an administrator to update it.");
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
