// Invitations (Zulip's zerver/actions/invites.py and the confirmation flow of zerver/views/registration.py):
// email invitations (POST /invites), each to one address and used once, and reusable links
// (POST /invites/multiuse) that anyone with an address the organization takes may use. Both open
// `<realm URL>/join/<key>/`; accepting creates the account (createUser) with the invited role and
// streams. Who may send them: realm.invite_to_realm_policy for email invitations, the realm's
// create_multiuse_invite_group for links. Every change sends `invites_changed` to the
// administrators and to the invitation's sender (feature level 209).
import { createHash, randomBytes } from "node:crypto";
import type { StreamModel, Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError, OwnerRequiredError } from "../errors.ts";
import type { Actor, Realm, UserProfile } from "../models.ts";
import { invitationEmail, type OutgoingEmail } from "../lib/emails.ts";
import { realmEmailValidator } from "../lib/email-domains.ts";
import { canAddSubscribers, canCreateMultiuseInviteByGroup, canInviteUsersByEmail, GROUP_PERMISSION_GROUP_SETTINGS, hasGroupSettingPermission, hasRealmGroupPermission, realmGroupId } from "../lib/group-permissions.ts";
import { realmUri } from "../lib/realm-hosts.ts";
import { isAdmin, isGuest, isOwner, ROLE_GUEST, ROLE_MEMBER, ROLE_OWNER, ROLES } from "../lib/roles.ts";
import { isValidEmail } from "../lib/validation.ts";
import { accessStreamById } from "../queries/streams.ts";
import { activeAdminIds, activeUserIds } from "../queries/users.ts";
import { sendNotification } from "./notification-bot.ts";
import { createUser } from "./users.ts";

/** How long an invitation works unless the request says (Zulip's INVITATION_LINK_VALIDITY_DAYS: 10). */
export const INVITATION_LINK_VALIDITY_MINUTES = 10 * 24 * 60;
/** The longest validity taken (10 years; null is "never"). */
export const MAX_INVITE_EXPIRES_IN_MINUTES = 10 * 365 * 24 * 60;
/** Email invitations an organization may send in a day unless realm.max_invites says (Zulip's INVITES_DEFAULT_REALM_DAILY_MAX). */
export const DEFAULT_MAX_INVITES_PER_DAY = 3000;
/** In an organization anyone may join, a member this new may not invite (Zulip's INVITES_MIN_USER_AGE_DAYS). */
export const INVITES_MIN_USER_AGE_DAYS = 3;
/** The addresses one request may name (the daily limit is the real bound; this bounds the work of one request). */
export const MAX_INVITEES_PER_REQUEST = 1000;

export const INVITE_STATUS = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

/** A key as it appears in a link: 15 random bytes in lowercase base32 (Zulip's confirmation keys). */
const KEY = /^[a-z2-7]{24}$/;
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

function newKey(): string {
  const bytes = randomBytes(15);
  let out = "";
  for (let i = 0; i < 15; i += 5) {
    // 5 bytes = 40 bits = 8 characters.
    let bits = 0n;
    for (let j = 0; j < 5; j++) bits = (bits << 8n) | BigInt(bytes[i + j]);
    for (let k = 7; k >= 0; k--) out += BASE32[Number((bits >> BigInt(k * 5)) & 31n)];
  }
  return out;
}

function keyHash(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Where links point: the organization's URL as clients reach it. */
export interface InviteLinkOptions {
  externalHost: string;
  protocol: "http" | "https";
}

/** A link's path from the root of the organization's URL. */
export function joinPath(key: string): string {
  return `/join/${key}/`;
}

function joinUrl(options: InviteLinkOptions, realm: Realm, key: string): string {
  return `${realmUri(realm.string_id, options.externalHost, options.protocol)}${joinPath(key)}`;
}

/** Zulip's InvitationError: code INVITATION_FAILED with what was refused and whether anything was sent. */
export class InvitationError extends JsonableError {
  constructor(msg: string, errors: Array<[string, string, boolean]>, options: { sentInvitations: boolean; dailyLimitReached?: boolean }) {
    super(msg, {
      code: "INVITATION_FAILED",
      extra: { errors, sent_invitations: options.sentInvitations, license_limit_reached: false, daily_limit_reached: options.dailyLimitReached ?? false },
    });
  }
}

/** `invites_changed` (no payload) to the administrators and, if not one, the invitation's sender (feature level 209). */
async function notifyInvitesChanged(tx: Tx, events: EventRecorder, realmId: number, referrer: UserProfile | null): Promise<void> {
  const ids = await activeAdminIds(tx, realmId);
  if (referrer !== null && referrer.is_active && !referrer.is_bot && !ids.includes(referrer.id)) ids.push(referrer.id);
  events.send({ type: "invites_changed" }, ids);
}

function checkMemberOrAdmin(actor: Actor): void {
  if (isGuest(actor)) throw badRequest("Not allowed for guest users");
}

/** Zulip's check_role_based_permissions: owners alone invite owners; administrators alone invite administrators and moderators. */
function checkRoleBasedPermissions(actor: Actor, invitedAs: number, requireAdmin: boolean): void {
  if (invitedAs === ROLE_OWNER && !isOwner(actor)) throw new OwnerRequiredError();
  if (requireAdmin && !isAdmin(actor)) throw badRequest("Must be an organization administrator");
}

function checkInviteAs(actor: Actor, invitedAs: number): void {
  if (!(ROLES as readonly number[]).includes(invitedAs)) throw badRequest("Invalid invite_as");
  // Owners, administrators and moderators (300, where the server has them).
  checkRoleBasedPermissions(actor, invitedAs, invitedAs < ROLE_MEMBER);
}

function expiryOf(minutes: number | null): Date | null {
  if (minutes === null) return null;
  if (!Number.isInteger(minutes) || minutes <= 0 || minutes > MAX_INVITE_EXPIRES_IN_MINUTES) throw badRequest("Invalid invite_expires_in_minutes");
  return new Date(Date.now() + minutes * 60_000);
}

/** The user groups one invitation may name (a bound on the request; groups are few). */
export const MAX_INVITE_GROUPS = 100;

/**
 * The user groups an invited user joins (feature level 322), checked as Zulip's
 * access_user_groups_for_invite: each a named, active group of the organization that is no system
 * group, and the inviter may add members to it (the organization's can_manage_all_groups, or the
 * group's can_manage_group or can_add_members_group).
 */
async function checkInviteGroups(tx: Tx, actor: Actor, groupIds: number[]): Promise<number[]> {
  const unique = [...new Set(groupIds)];
  if (unique.length > MAX_INVITE_GROUPS) throw badRequest(`You can add the new user to at most ${MAX_INVITE_GROUPS} groups.`);
  if (unique.length === 0) return [];
  const rows = await tx.$queryRawUnsafe<Array<{ id: number; is_system_group: boolean; deactivated: boolean; can_manage_group_id: number | null; can_add_members_group_id: number | null }>>(
    "SELECT id, is_system_group, deactivated, can_manage_group_id, can_add_members_group_id FROM user_group WHERE id = ANY($1::int[]) AND realm_id = $2 AND name IS NOT NULL FOR SHARE",
    unique,
    actor.realm_id,
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const managesAll = await hasRealmGroupPermission(tx, actor, "can_manage_all_groups");
  for (const id of unique) {
    const group = byId.get(id);
    if (!group) throw badRequest("Invalid user group");
    if (group.deactivated) throw badRequest("User group is deactivated.");
    if (group.is_system_group) throw badRequest("Insufficient permission");
    if (managesAll) continue;
    if (await hasGroupSettingPermission(tx, actor, group.can_manage_group_id, GROUP_PERMISSION_GROUP_SETTINGS.can_manage_group)) continue;
    if (await hasGroupSettingPermission(tx, actor, group.can_add_members_group_id, GROUP_PERMISSION_GROUP_SETTINGS.can_add_members_group)) continue;
    throw badRequest("Insufficient permission");
  }
  return unique.sort((a, b) => a - b);
}

async function checkInviteStreams(tx: Tx, actor: Actor, streamIds: number[]): Promise<StreamModel[]> {
  const streams: StreamModel[] = [];
  for (const id of new Set(streamIds)) {
    try {
      streams.push(await accessStreamById(tx, actor, id));
    } catch (error) {
      if (error instanceof JsonableError) throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
      throw error;
    }
  }
  // The organization's default channels may always be named (feature level 342): a new user joins
  // them anyway. Others take can_add_subscribers_group, the realm's or the channel's (341, 342).
  if (streams.length > 0) {
    const defaults = new Set((await tx.defaultStream.findMany({ where: { realm_id: actor.realm_id }, select: { stream_id: true } })).map((d) => d.stream_id));
    for (const stream of streams) {
      if (!defaults.has(stream.id) && !(await canAddSubscribers(tx, actor, stream.can_add_subscribers_group_id))) {
        throw badRequest("You do not have permission to subscribe other users to channels.");
      }
    }
  }
  return streams;
}

/** Zulip's get_invitee_emails_set: split on commas and newlines, `Name <address>` as its address, trimmed, each once. */
export function parseInviteeEmails(raw: string): string[] {
  const seen = new Map<string, string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    const email = (named ? named[1] : part).trim();
    if (!seen.has(email.toLowerCase())) seen.set(email.toLowerCase(), email);
  }
  return [...seen.values()];
}

/** Locks the realm's row and refuses `count` more email invitations past the day's limit (Zulip's check_invite_limit). */
async function checkInviteLimit(tx: Tx, realmId: number, count: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${realmId} FOR UPDATE`;
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId }, select: { max_invites: true } });
  const limit = realm.max_invites ?? DEFAULT_MAX_INVITES_PER_DAY;
  const since = new Date(Date.now() - 24 * 3600 * 1000);
  const sent = await tx.invite.count({ where: { realm_id: realmId, is_multiuse: false, invited_at: { gte: since } } });
  if (sent + count > limit) {
    throw new InvitationError(
      "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      [],
      { sentInvitations: false, dailyLimitReached: true },
    );
  }
}

export interface InviteUsersRequest {
  inviteeEmails: string;
  inviteExpiresInMinutes: number | null;
  inviteAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  notifyReferrerOnJoin: boolean;
  /** User groups the new user joins (feature level 322). */
  groupIds?: number[];
}

/**
 * POST /invites (Zulip's invite_users_backend and do_invite_users): an invitation to each address,
 * whose emails the caller queues after the commit. Nothing is written unless every address is a
 * valid one the organization takes; addresses that already have an account are skipped, and then
 * the request fails after the others were invited (`sent_invitations`), as Zulip's does.
 */
export async function inviteUsers(tx: Tx, events: EventRecorder, options: InviteLinkOptions, actor: Actor, request: InviteUsersRequest): Promise<{ emails: OutgoingEmail[]; skipped: Array<[string, string, boolean]> }> {
  checkMemberOrAdmin(actor);
  // The realm's can_invite_users_group (feature level 321).
  if (!(await canInviteUsersByEmail(tx, actor))) throw badRequest("Insufficient permission");
  checkInviteAs(actor, request.inviteAs);
  if (request.inviteeEmails.trim() === "") throw badRequest("You must specify at least one email address.");
  const invitees = parseInviteeEmails(request.inviteeEmails).filter((email) => email !== "");
  if (invitees.length === 0) throw badRequest("You must specify at least one email address.");
  if (invitees.length > MAX_INVITEES_PER_REQUEST) throw badRequest(`You can invite at most ${MAX_INVITEES_PER_REQUEST} addresses at once.`);
  const streams = await checkInviteStreams(tx, actor, request.streamIds);
  const groupIds = await checkInviteGroups(tx, actor, request.groupIds ?? []);
  const expiresAt = expiryOf(request.inviteExpiresInMinutes);

  await checkInviteLimit(tx, actor.realm_id, invitees.length);
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
  if (!realm.invite_required && !isAdmin(actor) && actor.date_joined.getTime() > Date.now() - INVITES_MIN_USER_AGE_DAYS * 86_400_000) {
    throw new InvitationError("Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.", [], { sentInvitations: false });
  }

  const errors: Array<[string, string, boolean]> = [];
  const good: string[] = [];
  // Zulip's validate_email_is_valid, with the organization's domains read once.
  const refusalOf = await realmEmailValidator(tx, realm);
  const REFUSALS: Record<string, string | undefined> = { domain: "Outside your domain.", disposable: "Please use your real email address.", plus: "Email addresses containing + are not allowed." };
  for (const email of invitees) {
    const refusal = !isValidEmail(email) || email.length > 254 ? "Invalid address." : REFUSALS[refusalOf(email) ?? "none"];
    if (refusal !== undefined) errors.push([email, refusal, false]);
    else good.push(email);
  }
  const existing = good.length === 0 ? [] : await tx.$queryRaw<Array<{ delivery_email: string; is_active: boolean }>>`
    SELECT delivery_email, is_active FROM user_profile WHERE realm_id = ${realm.id} AND lower(delivery_email) = ANY(${good.map((e) => e.toLowerCase())}::text[])`;
  const taken = new Map(existing.map((row) => [row.delivery_email.toLowerCase(), row.is_active]));
  const skipped: Array<[string, string, boolean]> = [];
  const validated: string[] = [];
  for (const email of good) {
    const active = taken.get(email.toLowerCase());
    if (active === undefined) validated.push(email);
    else skipped.push(active ? [email, "Already has an account.", false] : [email, "Account has been deactivated.", true]);
  }
  if (errors.length > 0) throw new InvitationError("Some emails did not validate, so we didn't send any invitations.", [...errors, ...skipped], { sentInvitations: false });
  if (validated.length === 0) throw new InvitationError("We weren't able to invite anyone.", skipped, { sentInvitations: false });

  const emails: OutgoingEmail[] = [];
  for (const email of validated) {
    const key = newKey();
    await tx.invite.create({
      data: {
        realm_id: realm.id,
        referred_by_id: actor.id,
        email,
        key_hash: keyHash(key),
        invited_as: request.inviteAs,
        stream_ids: streams.map((s) => s.id),
        group_ids: groupIds,
        include_realm_default_subscriptions: request.includeRealmDefaultSubscriptions,
        notify_referrer_on_join: request.notifyReferrerOnJoin,
        expires_at: expiresAt,
      },
    });
    emails.push(inviteEmail(options, realm, actor, email, key, expiresAt));
  }
  await notifyInvitesChanged(tx, events, realm.id, actor);
  return { emails, skipped };
}

function inviteEmail(options: InviteLinkOptions, realm: Realm, referrer: UserProfile, email: string, key: string, expiresAt: Date | null): OutgoingEmail {
  return invitationEmail({
    email,
    realmName: realm.name,
    realmUri: realmUri(realm.string_id, options.externalHost, options.protocol),
    referrerName: referrer.full_name,
    joinUrl: joinUrl(options, realm, key),
    expiresAt,
  });
}

/** The SQL condition of a pending invitation still good: not used or revoked, not expired, its sender active. */
type InviteRow = Awaited<ReturnType<Tx["invite"]["findFirstOrThrow"]>>;

async function pendingInvites(tx: Pick<Tx, "$queryRaw">, realmId: number, referrerId: number | null): Promise<InviteRow[]> {
  return tx.$queryRaw<InviteRow[]>`
    SELECT i.* FROM invite i JOIN user_profile u ON u.id = i.referred_by_id
    WHERE i.realm_id = ${realmId} AND i.status = 0 AND u.is_active AND (i.expires_at IS NULL OR i.expires_at > now())
      AND (${referrerId}::integer IS NULL OR i.referred_by_id = ${referrerId}::integer)
    ORDER BY i.id`;
}

/** GET /invites (Zulip's do_get_invites_controlled_by_user): administrators see all pending ones, others their own (feature level 209). */
export async function listInvites(tx: Pick<Tx, "$queryRaw">, options: InviteLinkOptions, actor: Actor): Promise<Array<Record<string, unknown>>> {
  checkMemberOrAdmin(actor);
  const rows = await pendingInvites(tx, actor.realm_id, isAdmin(actor) ? null : actor.id);
  return rows.map((row) => {
    const common = {
      id: row.id,
      invited_by_user_id: row.referred_by_id,
      invited: Math.floor(row.invited_at.getTime() / 1000),
      expiry_date: row.expires_at === null ? null : Math.floor(row.expires_at.getTime() / 1000),
      invited_as: row.invited_as,
      is_multiuse: row.is_multiuse,
    };
    return row.is_multiuse
      ? { ...common, link_url: joinUrl(options, actor.realm, row.link_key ?? "") }
      : { ...common, email: row.email ?? "", notify_referrer_on_join: row.notify_referrer_on_join };
  });
}

/** An invitation of the actor's realm by id, locked, of the kind the endpoint takes; `No such invitation` otherwise. */
async function lockInvite(tx: Tx, actor: Actor, inviteId: number, multiuse: boolean): Promise<InviteRow> {
  const rows = await tx.$queryRaw<InviteRow[]>`SELECT * FROM invite WHERE id = ${inviteId} AND realm_id = ${actor.realm_id} FOR UPDATE`;
  const row = rows[0];
  if (!row || row.is_multiuse !== multiuse) throw badRequest("No such invitation");
  return row;
}

async function referrerOf(tx: Tx, row: InviteRow): Promise<UserProfile | null> {
  return tx.userProfile.findUnique({ where: { id: row.referred_by_id } });
}

/** DELETE /invites/{invite_id}: its sender, or an administrator (an owner for an owner's invitation). */
export async function revokeUserInvite(tx: Tx, events: EventRecorder, actor: Actor, inviteId: number): Promise<void> {
  checkMemberOrAdmin(actor);
  const row = await lockInvite(tx, actor, inviteId, false);
  if (row.status !== INVITE_STATUS.PENDING) throw badRequest("No such invitation");
  if (row.referred_by_id !== actor.id) checkRoleBasedPermissions(actor, row.invited_as, true);
  await tx.invite.update({ where: { id: row.id }, data: { status: INVITE_STATUS.REVOKED } });
  await notifyInvitesChanged(tx, events, actor.realm_id, await referrerOf(tx, row));
}

/** DELETE /invites/multiuse/{invite_id}: as an email invitation's, and a link revoked once. */
export async function revokeMultiuseInvite(tx: Tx, events: EventRecorder, actor: Actor, inviteId: number): Promise<void> {
  checkMemberOrAdmin(actor);
  const row = await lockInvite(tx, actor, inviteId, true);
  if (row.referred_by_id !== actor.id) checkRoleBasedPermissions(actor, row.invited_as, true);
  if (row.status === INVITE_STATUS.REVOKED) throw badRequest("Invitation has already been revoked");
  await tx.invite.update({ where: { id: row.id }, data: { status: INVITE_STATUS.REVOKED, link_key: null } });
  await notifyInvitesChanged(tx, events, actor.realm_id, await referrerOf(tx, row));
}

/**
 * POST /invites/{invite_id}/resend: the email again, with a new key (only a key's hash is kept, so
 * the old link stops working), counted against the day's limit. The expiry stays as it was.
 */
export async function resendUserInvite(tx: Tx, events: EventRecorder, options: InviteLinkOptions, actor: Actor, inviteId: number): Promise<OutgoingEmail> {
  checkMemberOrAdmin(actor);
  const row = await lockInvite(tx, actor, inviteId, false);
  const referrer = await referrerOf(tx, row);
  if (row.status !== INVITE_STATUS.PENDING || referrer === null || !referrer.is_active) throw badRequest("No such invitation");
  if (row.referred_by_id !== actor.id) checkRoleBasedPermissions(actor, row.invited_as, true);
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now()) throw badRequest("The invitation has expired.");
  await checkInviteLimit(tx, actor.realm_id, 1);
  const key = newKey();
  await tx.invite.update({ where: { id: row.id }, data: { key_hash: keyHash(key), invited_at: new Date() } });
  await notifyInvitesChanged(tx, events, actor.realm_id, referrer);
  const realm = await tx.realm.findUniqueOrThrow({ where: { id: actor.realm_id } });
  return inviteEmail(options, realm, referrer, row.email ?? "", key, row.expires_at);
}

export interface MultiuseInviteRequest {
  inviteExpiresInMinutes: number | null;
  inviteAs: number;
  streamIds: number[];
  includeRealmDefaultSubscriptions: boolean;
  /** User groups each new user joins (feature level 322). */
  groupIds?: number[];
}

/**
 * Whether the actor may make reusable links (Zulip's can_create_multiuse_invite_to_realm: the
 * realm's create_multiuse_invite_group, by default its administrators); administrators where the
 * realm names no group.
 */
export async function canCreateMultiuseInvite(tx: Tx, actor: Actor): Promise<boolean> {
  if (realmGroupId(actor.realm, "create_multiuse_invite_group") === null) return isAdmin(actor);
  return canCreateMultiuseInviteByGroup(tx, actor);
}

/** POST /invites/multiuse: a reusable link, returned (Zulip's do_create_multiuse_invite_link). */
export async function createMultiuseInvite(tx: Tx, events: EventRecorder, options: InviteLinkOptions, actor: Actor, request: MultiuseInviteRequest): Promise<string> {
  checkMemberOrAdmin(actor);
  if (!(await canCreateMultiuseInvite(tx, actor))) throw badRequest("Insufficient permission");
  checkInviteAs(actor, request.inviteAs);
  const streams = await checkInviteStreams(tx, actor, request.streamIds);
  const groupIds = await checkInviteGroups(tx, actor, request.groupIds ?? []);
  const expiresAt = expiryOf(request.inviteExpiresInMinutes);
  const key = newKey();
  await tx.invite.create({
    data: {
      realm_id: actor.realm_id,
      referred_by_id: actor.id,
      is_multiuse: true,
      key_hash: keyHash(key),
      link_key: key,
      invited_as: request.inviteAs,
      stream_ids: streams.map((s) => s.id),
      group_ids: groupIds,
      include_realm_default_subscriptions: request.includeRealmDefaultSubscriptions,
      notify_referrer_on_join: false,
      expires_at: expiresAt,
    },
  });
  await notifyInvitesChanged(tx, events, actor.realm_id, actor);
  return joinUrl(options, actor.realm, key);
}

/** What a link's key opens: its invitation, or why it opens nothing. */
export type InviteKeyState =
  | { status: "valid"; invite: InviteRow; referrer: UserProfile }
  | { status: "unknown" }
  | { status: "expired" }
  | { status: "used" }
  | { status: "revoked" };

type KeyReader = Pick<Tx, "invite" | "userProfile">;

/** The state of a link's key in this organization (a key of another organization is unknown here). */
export async function checkInviteKey(db: KeyReader, realm: Realm, key: string): Promise<InviteKeyState> {
  if (!KEY.test(key)) return { status: "unknown" };
  const invite = await db.invite.findUnique({ where: { key_hash: keyHash(key) } });
  if (!invite || invite.realm_id !== realm.id) return { status: "unknown" };
  if (invite.status === INVITE_STATUS.USED) return { status: "used" };
  const referrer = await db.userProfile.findUnique({ where: { id: invite.referred_by_id } });
  // A deactivated sender's invitations end with them (Zulip revokes them at deactivation).
  if (invite.status === INVITE_STATUS.REVOKED || referrer === null || !referrer.is_active) return { status: "revoked" };
  if (invite.expires_at !== null && invite.expires_at.getTime() <= Date.now()) return { status: "expired" };
  return { status: "valid", invite, referrer };
}

/** The messages of a key that opens nothing, in Zulip's confirmation words. */
export function inviteKeyError(state: Exclude<InviteKeyState, { status: "valid" }>): JsonableError {
  switch (state.status) {
    case "unknown":
      return new JsonableError("Invalid invitation link.", { status: 404 });
    case "expired":
      return badRequest("The invitation link has expired.");
    case "used":
      return badRequest("The invitation link has already been used.");
    case "revoked":
      return badRequest("The invitation link has been revoked.");
  }
}

export interface AcceptInvite {
  /** A reusable link's new address (an email invitation's is its own). */
  email: string | null;
  fullName: string;
  /** Checked and hashed beforehand (hashNewPassword). */
  passwordHash: string;
  timezone?: string;
}

/**
 * Creates the account an invitation's link opens (Zulip's do_create_user from a confirmation):
 * the invited role, the invitation's streams (with the realm's default streams if it asked), an
 * email invitation used up and every other one of the same address revoked, a Direct message
 * from the Notification Bot to the sender if they asked, and `invites_changed`. The invitation's
 * row is locked, so one email invitation makes one account however often it is submitted.
 */
export async function acceptInvite(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, key: string, accept: AcceptInvite): Promise<UserProfile> {
  if (!KEY.test(key)) throw inviteKeyError({ status: "unknown" });
  await tx.$queryRaw`SELECT id FROM invite WHERE key_hash = ${keyHash(key)} FOR UPDATE`;
  const state = await checkInviteKey(tx, realm, key);
  if (state.status !== "valid") throw inviteKeyError(state);
  const { invite, referrer } = state;
  let email: string;
  if (invite.is_multiuse) {
    email = (accept.email ?? "").trim();
    if (email === "" || !isValidEmail(email) || email.length > 254) throw badRequest("Please enter a valid email address.");
  } else {
    email = invite.email ?? "";
  }
  if (await tx.userProfile.findFirst({ where: { realm_id: realm.id, delivery_email: { equals: email, mode: "insensitive" } } })) {
    throw badRequest("This email address is already in use in this organization.");
  }

  const invited = invite.stream_ids ?? [];
  const byId = new Map<number, StreamModel>();
  if (invited.length > 0) {
    for (const stream of await tx.stream.findMany({ where: { id: { in: invited }, realm_id: realm.id, deactivated: false } })) byId.set(stream.id, stream);
  }
  if (invite.include_realm_default_subscriptions) {
    const defaults = await tx.defaultStream.findMany({ where: { realm_id: realm.id }, include: { stream: true } });
    for (const { stream } of defaults) {
      if (!stream.deactivated && !(invite.invited_as === ROLE_GUEST && stream.invite_only)) byId.set(stream.id, stream);
    }
  }
  const streams = [...byId.values()].sort((a, b) => a.id - b.id);

  const user = await createUser(tx, events, ctx, realm, {
    email,
    fullName: accept.fullName,
    password: null,
    passwordHash: accept.passwordHash,
    role: invite.invited_as,
    timezone: accept.timezone,
    streams,
  });

  await joinInvitedGroups(tx, events, realm.id, user.id, invite.group_ids ?? []);

  if (!invite.is_multiuse) await tx.invite.update({ where: { id: invite.id }, data: { status: INVITE_STATUS.USED, created_user_id: user.id } });
  // Any other pending email invitation of the address ends (Zulip revokes them at sign-up).
  await tx.$executeRaw`
    UPDATE invite SET status = ${INVITE_STATUS.REVOKED}
    WHERE realm_id = ${realm.id} AND NOT is_multiuse AND status = 0 AND id <> ${invite.id} AND lower(email) = ${email.toLowerCase()}`;
  if (!invite.is_multiuse && invite.notify_referrer_on_join) {
    await sendNotification(tx, events, ctx, realm, { type: "private", to: [referrer.id] }, `@_**${user.full_name}|${user.id}** accepted your invitation to join Zulip!`);
  }
  await notifyInvitesChanged(tx, events, realm.id, referrer);
  return user;
}

/**
 * The new user joins the invitation's user groups (feature level 322): those still named, active
 * and no system group; each announced to the organization as any new membership is.
 */
async function joinInvitedGroups(tx: Tx, events: EventRecorder, realmId: number, userId: number, groupIds: number[]): Promise<void> {
  if (groupIds.length === 0) return;
  const groups = await tx.$queryRawUnsafe<{ id: number }[]>(
    "SELECT id FROM user_group WHERE id = ANY($1::int[]) AND realm_id = $2 AND name IS NOT NULL AND NOT deactivated AND NOT is_system_group ORDER BY id FOR UPDATE",
    groupIds,
    realmId,
  );
  if (groups.length === 0) return;
  await tx.userGroupMembership.createMany({ data: groups.map((group) => ({ user_group_id: group.id, user_id: userId })), skipDuplicates: true });
  const everyone = await activeUserIds(tx, realmId);
  for (const group of groups) events.send({ type: "user_group", op: "add_members", group_id: group.id, user_ids: [userId] }, everyone);
}
