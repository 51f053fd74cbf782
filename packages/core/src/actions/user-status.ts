// A user's away flag, status text and status emoji (Zulip's do_update_user_status; the emoji is
// feature level 86). Only what the client sent changes, and only that is in the `user_status`
// event the whole organization receives.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";
import { userIdsWhoCanAccess } from "../queries/user-access.ts";
import { checkEmojiRequest, emojiDataByName } from "./reactions.ts";
import { setAwayAsPresence } from "./settings.ts";

export const MAX_STATUS_TEXT_LENGTH = 60;
export const USER_STATUS_NORMAL = 0;
export const USER_STATUS_AWAY = 1;

export interface UserStatusChange {
  away?: boolean;
  statusText?: string;
  /** "" clears the emoji; a code and type not sent are looked up by the name (Zulip's get_emoji_data). */
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

/** POST /users/me/status. */
export async function updateUserStatus(tx: Tx, events: EventRecorder, actor: Actor, change: UserStatusChange): Promise<void> {
  checkHumanUser(actor);
  if (change.statusText !== undefined && [...change.statusText].length > MAX_STATUS_TEXT_LENGTH) {
    throw badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  const statusText = change.statusText?.trim();
  if (change.away === undefined && statusText === undefined && change.emojiName === undefined) throw badRequest("Client did not pass any new values.");

  let emoji: { name: string; code: string; type: string } | null = null;
  if (change.emojiName === "") emoji = { name: "", code: "", type: "unicode_emoji" };
  else if (change.emojiName !== undefined) {
    let code = change.emojiCode;
    let type = change.reactionType;
    if (code === undefined || type === undefined) {
      const data = await emojiDataByName(tx, actor.realm_id, change.emojiName);
      code = data.emoji_code;
      type = data.reaction_type;
    }
    await checkEmojiRequest(tx, actor.realm_id, change.emojiName, code, type);
    emoji = { name: change.emojiName, code, type };
  }

  // `away` is presence_enabled turned over (feature level 148): the setting changes, and says so.
  if (change.away !== undefined) await setAwayAsPresence(tx, events, actor, change.away);
  const status = change.away === undefined ? null : change.away ? USER_STATUS_AWAY : USER_STATUS_NORMAL;
  await tx.$executeRaw`
    INSERT INTO user_status (user_id, realm_id, status, status_text, emoji_name, emoji_code, reaction_type, timestamp)
    VALUES (${actor.id}, ${actor.realm_id}, ${status ?? USER_STATUS_NORMAL}, ${statusText ?? ""}, ${emoji?.name ?? ""}, ${emoji?.code ?? ""}, ${emoji?.type ?? "unicode_emoji"}, now())
    ON CONFLICT (user_id) DO UPDATE SET
      status = COALESCE(${status}::int, user_status.status),
      status_text = COALESCE(${statusText ?? null}::text, user_status.status_text),
      emoji_name = COALESCE(${emoji?.name ?? null}::text, user_status.emoji_name),
      emoji_code = COALESCE(${emoji?.code ?? null}::text, user_status.emoji_code),
      reaction_type = COALESCE(${emoji?.type ?? null}::text, user_status.reaction_type),
      timestamp = now()`;

  const event: { type: string } & Record<string, unknown> = { type: "user_status", user_id: actor.id };
  if (change.away !== undefined) event.away = change.away;
  if (statusText !== undefined) event.status_text = statusText;
  if (emoji !== null) Object.assign(event, { emoji_name: emoji.name, emoji_code: emoji.code, reaction_type: emoji.type });
  // Only to those who may know of the user (Zulip's get_user_ids_who_can_access_user).
  events.send(event, await userIdsWhoCanAccess(tx, actor.realm_id, actor.id));
}
