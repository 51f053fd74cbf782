// Changes that take from a user what their queues were registered to receive. A queue's options
// are checked at /register only, so such a change ends the queues it makes wrong: the fan-out
// reaches it in the realm's stream order and invalidates them (deleted and announced: the
// client's poll answers BAD_EVENT_QUEUE_ID and it registers again, as its role now allows)
// before it appends any later batch.
import type { EventPayload } from "@chat/bus";
import { ROLE_GUEST } from "@chat/core";

export interface QueueRevocation {
  userId: number;
  /** Only the user's queues registered with all_public_streams; otherwise every queue of theirs. */
  allPublicStreamsOnly: boolean;
}

/**
 * What an event revokes: a deactivation (`realm_user remove`) every queue of the user, whose
 * polls fail from then on and whose queues would otherwise outlive the events they miss, to be
 * read after a reactivation; a demotion to guest (`realm_user update` with the guest role) the
 * all_public_streams queues, which guests may not have (Zulip's events_register_backend).
 */
export function queueRevocationOf(event: EventPayload): QueueRevocation | null {
  if (event.type !== "realm_user") return null;
  const person = event.person as { user_id?: unknown; role?: unknown } | undefined;
  if (typeof person?.user_id !== "number") return null;
  if (event.op === "remove") return { userId: person.user_id, allPublicStreamsOnly: false };
  if (event.op === "update" && person.role === ROLE_GUEST) return { userId: person.user_id, allPublicStreamsOnly: true };
  return null;
}
