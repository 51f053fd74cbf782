// Caps on active bots (MAX_BOTS_PER_USER, MAX_BOTS_PER_REALM), and the locks that keep bots with
// a person: every message can trigger each service bot it mentions (a user group names as many as
// it holds), so the number of bots bounds what one message costs the worker and the services it
// calls. Zulip has no such cap. The caps count active bots that someone owns (the server's own
// bots are no one's) and are checked wherever a bot becomes active or changes hands: creation,
// reactivation, a new owner.
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";

export interface BotLimits {
  /** Active bots one user may own. */
  maxPerUser: number;
  /** Active bots one organization's users may own together. */
  maxPerRealm: number;
}

/** Serialises every change that adds an active bot to a realm or an owner (pg_advisory_xact_lock's first key). */
const BOT_CHANGES_LOCK = 72_011_014;

/**
 * Takes the realm's bot lock for the rest of the transaction: creations, reactivations and owner
 * changes of one realm run one at a time, so the counts below cannot both pass for two of them,
 * and two creations cannot take one address.
 */
export async function lockRealmBots(tx: Tx, realmId: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOT_CHANGES_LOCK}::int, ${realmId}::int)`;
}

interface LockedOwner {
  id: number;
  is_active: boolean;
  is_bot: boolean;
  role: number;
}

/**
 * The owner-to-be of a bot, read with a share lock, so a deactivation of that person waits for
 * this transaction (and then deactivates the bot it made) or goes first (and this one sees it).
 * Null if no such user in the realm.
 */
export async function lockBotOwner(tx: Tx, realmId: number, ownerId: number): Promise<LockedOwner | null> {
  const rows = await tx.$queryRaw<LockedOwner[]>`
    SELECT id, is_active, is_bot, role FROM user_profile WHERE id = ${ownerId} AND realm_id = ${realmId} FOR SHARE`;
  return rows[0] ?? null;
}

/**
 * Refuses one more active bot for `ownerId` (null: no one's, the realm's cap only) in the realm.
 * `whose` says whose cap it is in the message: the actor's own, or the bot's owner's.
 */
export async function checkBotLimits(db: Pick<Tx, "$queryRaw">, limits: BotLimits, realmId: number, ownerId: number | null, whose: "yours" | "owner" | "new owner"): Promise<void> {
  const [row] = await db.$queryRaw<Array<{ owned: number; realm: number }>>`
    SELECT count(*) FILTER (WHERE bot_owner_id = ${ownerId})::int AS owned, count(*)::int AS realm
    FROM user_profile WHERE realm_id = ${realmId} AND is_bot AND is_active AND bot_owner_id IS NOT NULL`;
  if (ownerId !== null && row.owned >= limits.maxPerUser) {
    const subject = whose === "yours" ? "You have" : whose === "owner" ? "The bot's owner has" : "Failed to change owner, the new owner has";
    throw badRequest(`${subject} reached the limit of ${limits.maxPerUser} active bots`);
  }
  if (row.realm >= limits.maxPerRealm) {
    throw badRequest(`This organization has reached the limit of ${limits.maxPerRealm} active bots`);
  }
}
