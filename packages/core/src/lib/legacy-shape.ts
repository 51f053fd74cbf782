// Events whose shape today's Zulip changed without a capability of its own (realm_user
// deactivation as an `update`, propagate_mode only on moves): an action records the modern event
// and, under LEGACY_SHAPE_KEY, what differs for Zulip 3.x clients. The event tier strips the key
// for queues of modern clients and lays its fields over the event for the others; it never
// reaches a client.
import type { EventPayload } from "@chat/bus";

export const LEGACY_SHAPE_KEY = "__legacy_shape";

/** `event` as recorded, with the top-level fields a 3.x client gets instead (a shallow overlay). */
export function withLegacyShape<E extends EventPayload>(event: E, legacy: Record<string, unknown>): E {
  return { ...event, [LEGACY_SHAPE_KEY]: legacy };
}

/** The event for one kind of queue: modern clients get it as recorded, 3.x clients with the overlay. */
export function resolveLegacyShape(event: EventPayload, modernClient: boolean): EventPayload {
  if (!(LEGACY_SHAPE_KEY in event)) return event;
  const { [LEGACY_SHAPE_KEY]: legacy, ...modern } = event;
  return modernClient ? (modern as EventPayload) : ({ ...modern, ...(legacy as Record<string, unknown>) } as EventPayload);
}
