// Ranking for every typeahead: case-insensitive; the whole name starting with the query first,
// then a word of it, then a secondary field (email), then anywhere. Bounded to the top few.
import { signal } from "@preact/signals";
import { api } from "../../api/client";
import { myUserId, registered, streamsById, subscriptionsById, usersById, type User } from "../../state/store";

export const MAX_SUGGESTIONS = 8;

/** 0 best … 3 worst, or -1 for no match. */
export function matchLevel(query: string, primary: string, secondary?: string): number {
  const q = query.trim().toLowerCase();
  if (q === "") return 0;
  const name = primary.toLowerCase();
  if (name.startsWith(q)) return 0;
  if (name.split(/[\s_\-./]+/).some((word) => word.startsWith(q))) return 1;
  const other = secondary?.toLowerCase();
  if (other?.startsWith(q)) return 2;
  if (q.length >= 2 && (name.includes(q) || other?.includes(q))) return 3;
  return -1;
}

/** The `limit` best of `items` for `query`, ties by name. */
export function rank<T>(items: Iterable<T>, query: string, fields: (item: T) => [string, string?], limit = MAX_SUGGESTIONS): T[] {
  const scored: { item: T; level: number; name: string }[] = [];
  for (const item of items) {
    const [primary, secondary] = fields(item);
    const level = matchLevel(query, primary, secondary);
    if (level >= 0) scored.push({ item, level, name: primary });
  }
  scored.sort((a, b) => a.level - b.level || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((s) => s.item);
}

/** An image URL the page may load (the CSP allows only this origin), else undefined. */
export function sameOriginImage(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url, location.href).origin === location.origin ? url : undefined;
  } catch {
    return undefined;
  }
}

export function activeUsers(): User[] {
  return [...usersById.value.values()].filter((u) => u.is_active);
}

/** `@**Name**`, or `@**Name|id**` when another active user has the same name. */
export function mentionSyntax(user: User, silent: boolean): string {
  const lower = user.full_name.toLowerCase();
  const collides = activeUsers().some((u) => u.user_id !== user.user_id && u.full_name.toLowerCase() === lower);
  return `@${silent ? "_" : ""}**${user.full_name}${collides ? `|${user.user_id}` : ""}**`;
}

export function userGroups() {
  return (registered.value?.realm_user_groups ?? []).filter((g) => !g.is_system_group && !g.deactivated);
}

/** Users for the DM recipient picker: active, not already chosen, not me unless searched for. */
export function recipientCandidates(query: string, exclude: readonly number[]): User[] {
  const skip = new Set(exclude);
  return rank(
    activeUsers().filter((u) => !skip.has(u.user_id)),
    query,
    (u) => [u.full_name, u.delivery_email ?? u.email],
  ).sort((a, b) => Number(a.user_id === myUserId.value) - Number(b.user_id === myUserId.value));
}

export function subscribedStreams() {
  return [...subscriptionsById.value.values()];
}

/** Streams for `#` links: every stream the user can see. */
export function visibleStreams(): { stream_id: number; name: string }[] {
  const byId = new Map<number, { stream_id: number; name: string }>();
  for (const s of streamsById.value.values()) byId.set(s.stream_id, s);
  for (const s of subscriptionsById.value.values()) byId.set(s.stream_id, s);
  return [...byId.values()];
}

export function streamIdByName(name: string): number | undefined {
  const lower = name.toLowerCase();
  return visibleStreams().find((s) => s.name.toLowerCase() === lower)?.stream_id;
}

// Recent topics by stream, fetched on first need and kept a minute.
const TOPICS_TTL_MS = 60_000;
export const topicsByStream = signal<ReadonlyMap<number, readonly string[]>>(new Map());
const fetchedAt = new Map<number, number>();

export function ensureTopics(streamId: number): void {
  const at = fetchedAt.get(streamId);
  if (at !== undefined && Date.now() - at < TOPICS_TTL_MS) return;
  fetchedAt.set(streamId, Date.now());
  api
    .get("/users/me/{stream_id}/topics", { stream_id: streamId })
    .then((answer) => {
      const next = new Map(topicsByStream.value);
      next.set(
        streamId,
        answer.topics.map((t) => t.name),
      );
      topicsByStream.value = next;
    })
    .catch(() => fetchedAt.delete(streamId));
}

export function topicSuggestions(streamId: number, query: string): string[] {
  ensureTopics(streamId);
  const topics = topicsByStream.value.get(streamId) ?? [];
  const q = query.trim().toLowerCase();
  if (q === "") return topics.slice(0, MAX_SUGGESTIONS) as string[];
  // The list comes newest first: keep that order within a match level.
  const levels: string[][] = [[], [], [], []];
  for (const topic of topics) {
    const level = matchLevel(q, topic);
    if (level >= 0) levels[level].push(topic);
  }
  return levels.flat().slice(0, MAX_SUGGESTIONS);
}
