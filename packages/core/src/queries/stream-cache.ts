// This node's copy of each realm's active streams, for the hot paths that look one up on every
// call (sending, fetching a stream narrow). A copy is valid while its realm's stream_generation is
// unchanged: a trigger bumps that number on any change to a stream row (migration 0005), and every
// request reads it with its realm while authenticating, so a request never sees streams older
// than its own authentication, on any node, with no invalidation messages.
import { leanSql, Prisma, type PrismaClient, type StreamModel } from "@chat/db";
import type { Realm } from "../models.ts";

interface RealmStreams {
  generation: number;
  byId: Map<number, StreamModel>;
  /** By name lowercased in JavaScript; a name Postgres lowercases differently just misses. */
  byName: Map<string, StreamModel>;
}

/** Realms whose streams are kept; past this, the copies are dropped and reloaded on use. */
const MAX_REALMS = 1000;

interface Cache {
  copies: Map<number, RealmStreams>;
  /** Loads in progress, by realm and generation: concurrent requests of a realm share one. */
  loading: Map<string, Promise<RealmStreams>>;
}

// One cache per database client: realm ids and generations mean nothing across databases (tests
// run several servers in one process).
const caches = new WeakMap<PrismaClient, Cache>();

function cacheOf(db: PrismaClient): Cache {
  let cache = caches.get(db);
  if (!cache) {
    cache = { copies: new Map(), loading: new Map() };
    caches.set(db, cache);
  }
  return cache;
}

async function load(db: PrismaClient, { copies }: Cache, realmId: number, generation: number): Promise<RealmStreams> {
  // Read after the generation was: the rows are at least as new as the number they are kept under.
  const rows = await leanSql(db).query<StreamModel>(Prisma.sql`SELECT * FROM stream WHERE realm_id = ${realmId} AND NOT deactivated`, { prepare: true });
  const copy: RealmStreams = { generation, byId: new Map(), byName: new Map() };
  for (const row of rows) {
    // Shared by every request of the realm until the next change: nobody may write to it.
    Object.freeze(row);
    copy.byId.set(row.id, row);
    copy.byName.set(row.name.toLowerCase(), row);
  }
  if (copies.size >= MAX_REALMS) copies.clear();
  copies.set(realmId, copy);
  return copy;
}

function realmStreams(db: PrismaClient, realm: Pick<Realm, "id" | "stream_generation">): Promise<RealmStreams> | RealmStreams {
  const cache = cacheOf(db);
  const copy = cache.copies.get(realm.id);
  if (copy && copy.generation === realm.stream_generation) return copy;
  const key = `${realm.id}:${realm.stream_generation}`;
  let pending = cache.loading.get(key);
  if (!pending) {
    pending = load(db, cache, realm.id, realm.stream_generation).finally(() => cache.loading.delete(key));
    cache.loading.set(key, pending);
  }
  return pending;
}

/**
 * The realm's active streams by id from this node's copy, as of `stream_generation` or later: the
 * caller reads that number when the copy must be at least that new. Shared and frozen.
 */
export async function cachedStreams(db: PrismaClient, realm: Pick<Realm, "id" | "stream_generation">): Promise<ReadonlyMap<number, StreamModel>> {
  return (await realmStreams(db, realm)).byId;
}

/**
 * An active stream of the realm by id or (case-insensitive) name from this node's copy, or null
 * when the copy has no such stream (the caller then asks the database, which decides). Not for
 * use inside a transaction: it may have changed streams the copy does not show.
 */
export async function cachedStream(db: PrismaClient, realm: Pick<Realm, "id" | "stream_generation">, indicator: string | number): Promise<StreamModel | null> {
  const streams = await realmStreams(db, realm);
  return (typeof indicator === "number" ? streams.byId.get(indicator) : streams.byName.get(indicator.trim().toLowerCase())) ?? null;
}
