// The client's state: what /register returned, kept current by the events (state/events.ts),
// held in Preact signals so that each component re-renders only for what it reads.
import { computed, signal } from "@preact/signals";
import type { Schemas } from "../api/client";

export type User = Schemas["User"];
export type Stream = Schemas["Stream"];
export type Subscription = Schemas["Subscription"];
export type Message = Schemas["Message"];
export type RegisterState = Schemas["RegisterResponse"];
export type ServerEvent = Schemas["Event"];

/** The whole /register answer, as it came (settings and realm fields are read from here). */
export const registered = signal<RegisterState | null>(null);
/** The signed-in user's id. */
export const myUserId = signal<number>(0);
/** Every user the client may see, active or not, by id. */
export const usersById = signal<ReadonlyMap<number, User>>(new Map());
/** Streams the user is subscribed to, by stream id. */
export const subscriptionsById = signal<ReadonlyMap<number, Subscription>>(new Map());
/** Every stream the user may see (never_subscribed and subscribed), by id. */
export const streamsById = signal<ReadonlyMap<number, Stream>>(new Map());

export const me = computed(() => usersById.value.get(myUserId.value) ?? null);
/** Administrators (and owners) see the organization settings. */
export const isAdmin = computed(() => {
  const role = me.value?.role ?? 400;
  return role <= 200;
});

export type UserSettings = NonNullable<RegisterState["user_settings"]>;
export type RealmState = Partial<Pick<RegisterState, Extract<keyof RegisterState, `realm_${string}` | `max_${string}` | `server_${string}`>>> &
  Record<string, unknown>;

/** The organization's settings (realm_* fields of /register), kept current by `realm` events. */
export const realm = signal<RealmState>({});
/** The user's own settings (user_settings of /register), kept current by `user_settings` events. */
export const userSettings = signal<Partial<UserSettings>>({});
export const realmName = computed(() => (typeof realm.value.realm_name === "string" ? realm.value.realm_name : "Team chat"));

/** Every user by email (lower-cased), for search operators and legacy narrows. */
export const userIdsByEmail = computed(() => {
  const map = new Map<string, number>();
  for (const user of usersById.value.values()) map.set(user.email.toLowerCase(), user.user_id);
  return map;
});

export const streamIdsByName = computed(() => {
  const map = new Map<string, number>();
  for (const stream of streamsById.value.values()) map.set(stream.name.toLowerCase(), stream.stream_id);
  for (const sub of subscriptionsById.value.values()) map.set(sub.name.toLowerCase(), sub.stream_id);
  return map;
});

/** A copy of the map with one entry set (or removed when value is undefined): signals need a new object to notify. */
export function withEntry<K, V>(map: ReadonlyMap<K, V>, key: K, value: V | undefined): Map<K, V> {
  const next = new Map(map);
  if (value === undefined) next.delete(key);
  else next.set(key, value);
  return next;
}

export function streamName(streamId: number): string | undefined {
  return subscriptionsById.value.get(streamId)?.name ?? streamsById.value.get(streamId)?.name;
}

export function userName(userId: number): string {
  return usersById.value.get(userId)?.full_name ?? "Unknown user";
}

export type RealmEmoji = Schemas["RealmEmoji"];
/** Custom emoji by id (realm_emoji of /register, then realm_emoji events). */
export const realmEmoji = signal<Readonly<Record<string, RealmEmoji>>>({});
