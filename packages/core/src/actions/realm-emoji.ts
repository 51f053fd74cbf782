// A realm's custom emoji (Zulip's zerver/actions/realm_emoji.py). Adding one needs file storage;
// removing one deactivates it, so messages and reactions that use it keep rendering.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin } from "../lib/roles.ts";
import { getRealmEmojiDicts } from "../queries/realm-emoji.ts";
import { activeUserIds } from "../queries/users.ts";

/** The realm's emoji, sent whole to everyone on any change (Zulip's notify_realm_emoji). */
export async function notifyRealmEmoji(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  events.send({ type: "realm_emoji", op: "update", realm_emoji: await getRealmEmojiDicts(tx, realmId) }, await activeUserIds(tx, realmId));
}

/** DELETE /realm/emoji/{name}: an administrator, or the member who added it, deactivates it. */
export async function removeRealmEmoji(tx: Tx, events: EventRecorder, actor: Actor, name: string): Promise<void> {
  // A name Postgres cannot hold (NUL) names no emoji.
  const emoji = name.includes("\0") ? null : await tx.realmEmoji.findFirst({ where: { realm_id: actor.realm_id, name, deactivated: false } });
  if (!emoji) throw new JsonableError(`Emoji '${name}' does not exist`, { status: 404 });
  if (!isAdmin(actor) && emoji.author_id !== actor.id) throw badRequest("Must be an organization administrator or emoji author");
  await tx.realmEmoji.update({ where: { id: emoji.id }, data: { deactivated: true } });
  await notifyRealmEmoji(tx, events, actor.realm_id);
}
