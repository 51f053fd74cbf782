// A user's away flag and status text (Zulip's do_update_user_status). Only what the client sent
// changes, and only that is in the `user_status` event the whole organization receives.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";
import { activeUserIds } from "../queries/users.ts";

export const MAX_STATUS_TEXT_LENGTH = 60;
export const USER_STATUS_NORMAL = 0;
export const USER_STATUS_AWAY = 1;

export interface UserStatusChange {
  away?: boolean;
  statusText?: string;
}

/** POST /users/me/status. */
export async function updateUserStatus(tx: Tx, events: EventRecorder, actor: Actor, change: UserStatusChange): Promise<void> {
  checkHumanUser(actor);
  if (change.statusText !== undefined && [...change.statusText].length > MAX_STATUS_TEXT_LENGTH) {
    throw badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  const statusText = change.statusText?.trim();
  if (change.away === undefined && statusText === undefined) throw badRequest("Client did not pass any new values.");

  const status = change.away === undefined ? null : change.away ? USER_STATUS_AWAY : USER_STATUS_NORMAL;
  await tx.$executeRaw`
    INSERT INTO user_status (user_id, realm_id, status, status_text, timestamp)
    VALUES (${actor.id}, ${actor.realm_id}, ${status ?? USER_STATUS_NORMAL}, ${statusText ?? ""}, now())
    ON CONFLICT (user_id) DO UPDATE SET
      status = COALESCE(${status}::int, user_status.status),
      status_text = COALESCE(${statusText ?? null}::text, user_status.status_text),
      timestamp = now()`;

  const event: { type: string } & Record<string, unknown> = { type: "user_status", user_id: actor.id };
  if (change.away !== undefined) event.away = change.away;
  if (statusText !== undefined) event.status_text = statusText;
  events.send(event, await activeUserIds(tx, actor.realm_id));
}
