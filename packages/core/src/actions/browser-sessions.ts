// Browser sessions (the web client's `sessionid` cookie, migration 0026): a token of 32 random
// bytes, of which only the SHA-256 is stored, as the row's primary key. Each request reads the
// session, its user and its realm in one statement by that key, as the API key's requests read
// theirs (auth.ts), so a logout, a deactivation or a password change takes effect on every node
// at once: there is no copy anywhere to invalidate.
import { createHash, randomBytes } from "node:crypto";
import { leanSql, Prisma, type PrismaClient, type Tx } from "@chat/db";
import type { Actor } from "../models.ts";
import { ACTOR_COLUMNS, actorFromRow, type ActorRow } from "../auth.ts";

/** A session lasts this long after its last use (Zulip's SESSION_COOKIE_AGE is two weeks). */
export const BROWSER_SESSION_DAYS = 14;
const SESSION_MS = BROWSER_SESSION_DAYS * 24 * 3600 * 1000;
/** Its expiry moves forward at most this often: one write an hour per session, not one per request. */
const RENEW_EVERY_MS = 3600 * 1000;
/** The User-Agent kept for a list of one's sessions, cut short (a header may be kilobytes). */
const USER_AGENT_MAX = 256;
/** A token as the cookie holds it: 32 bytes, base64url without padding. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function sessionId(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function isBrowserSessionToken(value: string): boolean {
  return TOKEN.test(value);
}

/** A new session for a user who has just proved who they are; the token goes to the cookie only. */
export async function createBrowserSession(prisma: PrismaClient, actor: Pick<Actor, "id" | "realm_id">, userAgent: string | undefined): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const now = new Date();
  const expiresAt = new Date(now.getTime() + SESSION_MS);
  // Postgres text holds no NUL; a header cannot carry one, but a cut may split a surrogate pair.
  const agent = (userAgent ?? "").replaceAll("\u0000", "").slice(0, USER_AGENT_MAX).replace(/[\uD800-\uDBFF]$/, "");
  await prisma.browserSession.create({ data: { id: sessionId(token), user_id: actor.id, realm_id: actor.realm_id, created_at: now, last_used_at: now, expires_at: expiresAt, user_agent: agent } });
  return { token, expiresAt };
}

interface SessionRow extends ActorRow {
  expires_at: Date;
  last_used_at: Date;
}

/**
 * The active user a session token names in the organization of `subdomain`, or null: an unknown or
 * expired token, another organization's, a deactivated user or organization. `renewedUntil` is
 * set when this request moved the session's expiry (so the cookie's may move too).
 */
export async function authenticateBrowserSession(prisma: PrismaClient, subdomain: string, token: string): Promise<{ actor: Actor; renewedUntil: Date | null } | null> {
  if (!isBrowserSessionToken(token)) return null;
  const id = sessionId(token);
  const [row] = await leanSql(prisma).query<SessionRow>(
    Prisma.sql`SELECT ${ACTOR_COLUMNS}, s.expires_at, s.last_used_at
      FROM browser_session s JOIN user_profile u ON u.id = s.user_id JOIN realm r ON r.id = u.realm_id
      WHERE s.id = ${id}`,
    { prepare: true },
  );
  if (!row) return null;
  const now = Date.now();
  const expiresAt = new Date(row.expires_at).getTime();
  if (expiresAt <= now) return null;
  const actor = actorFromRow(row);
  if (actor.realm.string_id !== subdomain || actor.realm.deactivated || !actor.is_active) return null;
  let renewedUntil: Date | null = null;
  if (now - new Date(row.last_used_at).getTime() >= RENEW_EVERY_MS) {
    renewedUntil = new Date(now + SESSION_MS);
    // Conditional, so concurrent requests of one session write it once (times are written from
    // JavaScript, to the millisecond, so the comparison is exact).
    const updated = await prisma.browserSession.updateMany({
      where: { id, last_used_at: new Date(row.last_used_at) },
      data: { last_used_at: new Date(now), expires_at: renewedUntil },
    });
    if (updated.count === 0) renewedUntil = null;
  }
  return { actor, renewedUntil };
}

/** Logging out: the session's row goes, so the cookie opens nothing on any node. */
export async function deleteBrowserSession(prisma: PrismaClient, token: string): Promise<void> {
  if (!isBrowserSessionToken(token)) return;
  await prisma.browserSession.deleteMany({ where: { id: sessionId(token) } });
}

/** Every session of a user: a password set or reset, a deactivation. */
export async function deleteUserBrowserSessions(tx: Pick<Tx, "browserSession">, userIds: number[]): Promise<void> {
  await tx.browserSession.deleteMany({ where: { user_id: { in: userIds } } });
}

/** The worker's sweep of expired sessions (they open nothing already; this only frees the rows). */
export async function sweepBrowserSessions(prisma: PrismaClient): Promise<number> {
  return prisma.$executeRaw(Prisma.sql`DELETE FROM browser_session WHERE expires_at < now()`);
}
