// Muting users (Zulip's zerver/actions/muted_users.py and views/muted_users.py, feature levels 48
// and 188). A muted user's messages arrive read for the muter (the send statement sets the flag,
// message-write.ts); muting also marks what is unread from them read. Clients hide the rest
// (their messages, reactions, typing), as Zulip's do: the server sends those events as before.
// Each change sends the user's whole list in a `muted_users` event.
import type { Tx } from "@chat/db";
import { badRequest } from "../errors.ts";
import type { EventRecorder } from "../events.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import type { Actor } from "../models.ts";
import { mutedUsersOf } from "../queries/muted-users.ts";
import { getUserInRealm } from "../queries/users.ts";

/**
 * The user to mute or unmute (Zulip's access_user_by_id_including_cross_realm with allow_bots and
 * allow_deactivated): anyone of the realm, bots (feature level 188) and the system bots included.
 */
async function userToMute(tx: Tx, actor: Actor, userId: number) {
  return getUserInRealm(tx, actor.realm, userId, { allowDeactivated: true, allowBots: true });
}

async function sendMutedUsers(tx: Tx, events: EventRecorder, actor: Actor): Promise<void> {
  events.send({ type: "muted_users", muted_users: await mutedUsersOf(tx, actor.id) }, [actor.id]);
}

/**
 * Marks read every message from `mutedUserId` the user has unread (Zulip's
 * do_mark_muted_user_messages_as_read), with the `update_message_flags` event that says which.
 */
async function markMutedUserMessagesRead(tx: Tx, events: EventRecorder, actor: Actor, mutedUserId: number): Promise<void> {
  const rows = await tx.$queryRaw<{ message_id: number }[]>`
    UPDATE user_message um SET flags = um.flags | ${FLAG_BITS.read}::int
    FROM message m
    WHERE um.user_id = ${actor.id} AND (um.flags & ${FLAG_BITS.read}::int) = 0 AND m.id = um.message_id AND m.sender_id = ${mutedUserId}
    RETURNING um.message_id`;
  if (rows.length === 0) return;
  const messages = rows.map((row) => row.message_id).sort((a, b) => a - b);
  events.send({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages, all: false }, [actor.id]);
}

/** POST /users/me/muted_users/{muted_user_id} (Zulip's mute_user). */
export async function muteUser(tx: Tx, events: EventRecorder, actor: Actor, mutedUserId: number): Promise<void> {
  if (mutedUserId === actor.id) throw badRequest("Cannot mute self");
  const muted = await userToMute(tx, actor, mutedUserId);
  const inserted = await tx.$queryRaw<{ id: number }[]>`
    INSERT INTO muted_user (user_id, muted_user_id, date_muted) VALUES (${actor.id}, ${muted.id}, now())
    ON CONFLICT (user_id, muted_user_id) DO NOTHING RETURNING id`;
  if (inserted.length === 0) throw badRequest("User already muted");
  await markMutedUserMessagesRead(tx, events, actor, muted.id);
  await sendMutedUsers(tx, events, actor);
}

/** DELETE /users/me/muted_users/{muted_user_id} (Zulip's unmute_user). Messages read meanwhile stay read. */
export async function unmuteUser(tx: Tx, events: EventRecorder, actor: Actor, mutedUserId: number): Promise<void> {
  const muted = await userToMute(tx, actor, mutedUserId);
  const deleted = await tx.$executeRaw`DELETE FROM muted_user WHERE user_id = ${actor.id} AND muted_user_id = ${muted.id}`;
  if (deleted === 0) throw badRequest("User is not muted");
  await sendMutedUsers(tx, events, actor);
}
