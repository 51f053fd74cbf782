// Who a request acts as. One indexed query per request (api_key is unique), so a deactivation or
// key change takes effect on every node at once. The same query brings the realm's linkifiers,
// which sending and fetching both need. (The hot fetch path may instead use a node's copy of the
// actor, checked inside its own query: actor-cache.ts.)
import { leanSql, Prisma, type PrismaClient } from "@chat/db";
import { AuthenticationFailedError, InvalidApiKeyError, NonexistentSubdomainError, RealmDeactivatedError, UserDeactivatedError } from "./errors.ts";
import type { Actor, Realm, UserProfile } from "./models.ts";
import type { ActorVersion } from "./actor-cache.ts";
import type { Linkifier } from "./lib/linkifiers.ts";
import { verifyPassword } from "./lib/secrets.ts";
import { getUserByDeliveryEmail } from "./queries/users.ts";

export async function getRealmForSubdomain(prisma: PrismaClient, subdomain: string): Promise<Realm> {
  const realm = await prisma.realm.findUnique({ where: { string_id: subdomain } });
  if (!realm) throw new NonexistentSubdomainError();
  return realm;
}

/**
 * HTTP Basic credentials (email, API key) to the acting user. One query finds the key and its
 * realm; only on a mismatch do we look further, to say which error applies.
 */
export async function authenticateApiKey(prisma: PrismaClient, subdomain: string, email: string | null, apiKey: string): Promise<Actor> {
  return (await authenticateApiKeyVersioned(prisma, subdomain, email, apiKey)).actor;
}

/**
 * The same, with the versions (xmin) of the user and realm rows it was read from: any later change
 * to either row, or to the realm's linkifiers (a trigger touches the realm), changes them.
 */
export async function authenticateApiKeyVersioned(prisma: PrismaClient, subdomain: string, email: string | null, apiKey: string): Promise<{ actor: Actor; version: ActorVersion }> {
  // One round trip on every request: the user, its realm and the realm's linkifiers, which the hot paths need.
  const rows =
    apiKey === ""
      ? []
      : await leanSql(prisma).query<ActorRow>(Prisma.sql`
          SELECT ${ACTOR_COLUMNS} FROM user_profile u JOIN realm r ON r.id = u.realm_id WHERE u.api_key = ${apiKey}`, { prepare: true });
  const row = rows[0];
  if (!row || row.realm_json.string_id !== subdomain) {
    await getRealmForSubdomain(prisma, subdomain);
    throw new InvalidApiKeyError();
  }
  const actor = actorFromRow(row);
  // A null email is the api_key URL parameter of file downloads (Zulip's override_api_url_scheme): the key alone names the user.
  if (email !== null && actor.delivery_email.toLowerCase() !== email.trim().toLowerCase()) throw new InvalidApiKeyError();
  if (actor.realm.deactivated) throw new RealmDeactivatedError();
  if (!actor.is_active) throw new UserDeactivatedError();
  return { actor, version: { userId: actor.id, realmId: actor.realm.id, userXmin: row.user_xmin, realmXmin: row.realm_xmin } };
}

/**
 * What an actor is read from, for a query on `user_profile u JOIN realm r`: the user and realm as
 * JSON (one column each parses far faster than the user's forty; json, not jsonb, which Postgres
 * builds a quarter faster), the realm's linkifiers, and the rows' versions.
 */
export const ACTOR_COLUMNS = Prisma.sql`row_to_json(u) AS user_json, row_to_json(r) AS realm_json,
  (SELECT coalesce(json_agg(json_build_object('id', f.id, 'pattern', f.pattern, 'url_format_string', f.url_format_string, 'url_template', f.url_template) ORDER BY f."order", f.id), '[]')
   FROM realm_filter f WHERE f.realm_id = u.realm_id) AS linkifiers,
  u.xmin::text AS user_xmin, r.xmin::text AS realm_xmin`;

export interface ActorRow {
  user_json: UserJson;
  realm_json: RealmJson;
  linkifiers: Linkifier[];
  user_xmin: string;
  realm_xmin: string;
}

/** The actor an ACTOR_COLUMNS row holds. */
export function actorFromRow(row: ActorRow): Actor {
  return Object.assign(userFromJson(row.user_json), { realm: realmFromJson(row.realm_json), realmLinkifiers: row.linkifiers });
}

type UserJson = Omit<UserProfile, "date_joined" | "last_login"> & { date_joined: string; last_login: string | null };

/** A user_profile row read as JSON back to the types Prisma gives it. */
function userFromJson(json: UserJson): UserProfile {
  return Object.assign(json, { date_joined: new Date(json.date_joined), last_login: json.last_login === null ? null : new Date(json.last_login) });
}

type RealmJson = Omit<Realm, "date_created" | "upload_quota_bytes"> & { date_created: string; upload_quota_bytes: number | null };

/** A realm row read as JSON back to the types Prisma gives it. */
function realmFromJson(json: RealmJson): Realm {
  return {
    ...json,
    date_created: new Date(json.date_created),
    upload_quota_bytes: json.upload_quota_bytes === null ? null : BigInt(json.upload_quota_bytes),
  };
}

/** POST /fetch_api_key: email and password to the user's API key. */
export async function authenticatePassword(prisma: PrismaClient, realm: Realm, username: string, password: string): Promise<Actor> {
  const user = await getUserByDeliveryEmail(prisma, realm.id, username);
  // Verify even when the user is missing, so timing does not reveal which emails exist.
  const valid = await verifyPassword(user?.password_hash ?? DUMMY_HASH, password);
  if (!user || !valid) throw new AuthenticationFailedError();
  if (realm.deactivated) throw new RealmDeactivatedError();
  if (!user.is_active) throw new UserDeactivatedError();
  return { ...user, realm };
}

/** For dev_fetch_api_key: the user by email alone (only on development servers). */
export async function getActiveUserByEmail(prisma: PrismaClient, realm: Realm, username: string): Promise<Actor> {
  const user = await getUserByDeliveryEmail(prisma, realm.id, username);
  if (!user) throw new AuthenticationFailedError();
  if (realm.deactivated) throw new RealmDeactivatedError();
  if (!user.is_active) throw new UserDeactivatedError();
  return { ...user, realm };
}

// argon2id hash of a random string nobody knows.
const DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$Xu5ZnE3dWnWX8Y8e7C6QJ6m5d6xwQd7nJ8m3dD6Qz0Y";
