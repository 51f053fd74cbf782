// Each node's copy of the users it has recently authenticated, for GET /messages: instead of a
// round trip of its own to authenticate (measured: about 0.3 ms of CPU of the 2.2 ms a fetch of
// 100 messages costs), the request acts as the copy and its page query checks, in the same
// statement, that neither the user's row nor the realm's has changed since (their xmin, the id of
// the transaction that wrote the row version, as EF Core's PostgreSQL concurrency token does).
// A deactivation, a new API key, a role, a realm setting, a stream (the realm's
// stream_generation) or a linkifier change all write one of those rows. If the check fails, the
// request is answered again with a fresh authentication, so nobody is ever answered as a user
// who no longer matches the database at the time of the read.
//
// Long polls keep copies here too (apps/events/src/poll-auth.ts), but check them less often: a copy
// once found current is trusted, with no statement, until Postgres notifies that its user or realm
// row changed (actor-validity.ts), which leaves only the milliseconds between a commit and its
// notification's arrival.
import { LRUCache } from "lru-cache";
import { leanSql, Prisma, type PrismaClient } from "@chat/db";
import type { Actor } from "./models.ts";

/** The versions of the rows an actor was read from. */
export interface ActorVersion {
  userId: number;
  /** The realm row's id: a notification naming it untrusts every copy of its users. */
  realmId: number;
  userXmin: string;
  realmXmin: string;
}

/** The copy of an actor was stale; authenticate again and retry. */
export class StaleActorError extends Error {
  constructor() {
    super("the cached actor is stale");
  }
}

interface Entry {
  actor: Actor;
  version: ActorVersion;
  email: string;
}

export class ActorCache {
  // An entry lives minutes at most, so a transaction id cannot come round again (it takes four
  // billion transactions) while a copy is kept.
  private readonly entries = new LRUCache<string, Entry>({ max: 10_000, ttl: 5 * 60_000 });

  get(subdomain: string, email: string, apiKey: string): { actor: Actor; version: ActorVersion } | undefined {
    const entry = this.entries.get(`${subdomain}\n${apiKey}`);
    if (entry === undefined || entry.email !== email.trim().toLowerCase()) return undefined;
    return entry;
  }

  set(subdomain: string, email: string, apiKey: string, actor: Actor, version: ActorVersion): void {
    // Shared by concurrent requests: nobody may write to it.
    Object.freeze(actor.realm);
    if (actor.realmLinkifiers) Object.freeze(actor.realmLinkifiers);
    this.entries.set(`${subdomain}\n${apiKey}`, { actor: Object.freeze(actor), version, email: email.trim().toLowerCase() });
  }
}

/** A boolean column `actor_valid`: are the actor's user and realm rows the versions it was read from? */
export function actorValidColumn(version: ActorVersion): Prisma.Sql {
  return Prisma.sql`(SELECT EXISTS (SELECT 1 FROM user_profile u JOIN realm r ON r.id = u.realm_id
    WHERE u.id = ${version.userId} AND u.xmin = ${version.userXmin}::xid AND r.xmin = ${version.realmXmin}::xid)) AS actor_valid`;
}

/** The same check on its own, for a request whose queries returned no row to carry it. */
export async function checkActorVersion(db: PrismaClient, version: ActorVersion): Promise<void> {
  const [row] = await leanSql(db).query<{ actor_valid: boolean }>(Prisma.sql`SELECT ${actorValidColumn(version)}`, { prepare: true });
  if (!row?.actor_valid) throw new StaleActorError();
}

/**
 * The same check for many actors in one statement, in order: long polls arrive a thousand at once
 * when a message reaches a big stream, and a round trip each cost more than the rest of a poll.
 */
export async function checkActorVersions(db: PrismaClient, versions: ActorVersion[]): Promise<boolean[]> {
  if (versions.length === 0) return [];
  const rows = await leanSql(db).query<{ valid: boolean }>(
    Prisma.sql`SELECT EXISTS (SELECT 1 FROM user_profile u JOIN realm r ON r.id = u.realm_id
                 WHERE u.id = v.user_id AND u.xmin = v.user_xmin::xid AND r.xmin = v.realm_xmin::xid) AS valid
               FROM unnest(${versions.map((v) => v.userId)}::int[], ${versions.map((v) => v.userXmin)}::text[], ${versions.map((v) => v.realmXmin)}::text[])
                 WITH ORDINALITY AS v(user_id, user_xmin, realm_xmin, n)
               ORDER BY v.n`,
    { prepare: true },
  );
  return rows.map((row) => row.valid);
}
