// Default channels as ids (feature level 330): today's Zulip sends `realm_default_streams` and the
// `default_streams` event as channel ids, and each default channel group's `streams` as ids. The
// 3.x-era clients this server also serves read whole stream objects there, so only clients that
// declared a capability of today's API (RegisterOptions.modernClient) get the ids; the others keep
// the objects. The state sections and events are recorded with objects; these turn them to ids.

type StreamLike = { stream_id?: unknown; id?: unknown };

function idOf(stream: unknown): number {
  const s = stream as StreamLike;
  return (typeof s === "number" ? s : (s.stream_id ?? s.id)) as number;
}

/** realm_default_streams / the default_streams event's list, as ids. */
export function defaultStreamIdsOf(streams: unknown): number[] {
  return Array.isArray(streams) ? streams.map(idOf) : [];
}

/** realm_default_stream_groups / the default_stream_groups event's list, each group's streams as ids. */
export function defaultStreamGroupsWithIds(groups: unknown): unknown[] {
  if (!Array.isArray(groups)) return [];
  return groups.map((group: Record<string, unknown>) => ({ ...group, streams: defaultStreamIdsOf(group.streams) }));
}
