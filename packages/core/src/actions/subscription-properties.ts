// POST /users/me/subscriptions/properties: a user's own settings for the streams they are in.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isHexColor } from "../lib/validation.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { accessStreamById } from "../queries/streams.ts";

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

type Column = "color" | "is_muted" | "pin_to_top" | "desktop_notifications" | "audible_notifications" | "push_notifications" | "email_notifications" | "wildcard_mentions_notify";

const BOOLEAN_PROPERTIES: Record<string, Column> = {
  is_muted: "is_muted",
  pin_to_top: "pin_to_top",
  desktop_notifications: "desktop_notifications",
  audible_notifications: "audible_notifications",
  push_notifications: "push_notifications",
  email_notifications: "email_notifications",
  wildcard_mentions_notify: "wildcard_mentions_notify",
};


/** The column a property sets and the value stored; `in_home_view` is the inverse of `is_muted`. */
function toColumn(change: PropertyChange): { column: Column; value: string | boolean } {
  const { property, value } = change;
  if (property === "color") {
    if (!isHexColor(value)) throw badRequest("color is not a valid hex color code");
    return { column: "color", value };
  }
  if (property === "in_home_view") {
    if (typeof value !== "boolean") throw badRequest(`${property} is not a boolean`);
    return { column: "is_muted", value: !value };
  }
  const column = BOOLEAN_PROPERTIES[property];
  if (!column) throw badRequest(`Unknown subscription property: ${property}`);
  if (typeof value !== "boolean") throw badRequest(`${property} is not a boolean`);
  return { column, value };
}

export async function setSubscriptionProperties(tx: Tx, events: EventRecorder, actor: Actor, changes: PropertyChange[]): Promise<void> {
  for (const change of changes) {
    const stream = await accessStreamById(tx, actor, change.stream_id);
    const subscription = await tx.subscription.findFirst({ where: { user_id: actor.id, recipient_id: stream.recipient_id!, active: true } });
    if (!subscription) throw badRequest(`Not subscribed to stream id ${change.stream_id}`);
    const { column, value } = toColumn(change);
    await tx.subscription.update({ where: { id: subscription.id }, data: { [column]: value } });
    // Without `email` and `name` since feature levels 40 and 41; 3.x clients keep them.
    const legacy = { name: stream.name, email: actor.email };
    events.send(withLegacyShape({ type: "subscription", op: "update", stream_id: stream.id, property: change.property, value: change.value }, legacy), [actor.id]);
    // Clients that know only one of the two names for muting learn of the change either way.
    if (change.property === "in_home_view" || change.property === "is_muted") {
      const other = change.property === "in_home_view" ? { property: "is_muted", value: !change.value } : { property: "in_home_view", value: !change.value };
      events.send(withLegacyShape({ type: "subscription", op: "update", stream_id: stream.id, ...other }, legacy), [actor.id]);
    }
  }
}
