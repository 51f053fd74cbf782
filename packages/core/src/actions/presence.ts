// Presence updates (Zulip's do_update_user_presence). A hot path: one statement reads and upserts
// the client's row; the organization hears of it only when the user appears (first report from a
// client) or comes back online (active after idle, or after more than 70 s without a report).
// Other updates only move the timestamp, which clients learn from their own periodic requests.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";
import { userIdsWhoCanAccess } from "../queries/user-access.ts";
import { formatClientPresence, PRESENCE_ACTIVE, PRESENCE_IDLE } from "../queries/presence.ts";

/** A report this much newer than the last one counts as the user coming back. */
export const PRESENCE_STALE_SECONDS = 70;

const STATUSES: Record<string, number> = { active: PRESENCE_ACTIVE, idle: PRESENCE_IDLE };

interface UpsertResult {
  old_status: number | null;
  new_status: number | null;
  new_timestamp: Date | null;
  stale: boolean | null;
}

/** POST /users/me/presence: records this client's status unless the user turned presence off. */
export async function updatePresence(tx: Tx, events: EventRecorder, actor: Actor, clientName: string, statusName: string): Promise<void> {
  checkHumanUser(actor);
  const status = STATUSES[statusName];
  if (status === undefined) throw badRequest(`Invalid status: ${statusName}`);
  if (!actor.presence_enabled) return;

  // The update is skipped when an active client would be marked idle before the last report went
  // stale, so a user with one active and one idle client does not flicker between the two.
  const [row] = await tx.$queryRaw<UpsertResult[]>`
    WITH old AS (
      SELECT status, timestamp FROM user_presence WHERE user_id = ${actor.id} AND client_name = ${clientName}
    ), upsert AS (
      INSERT INTO user_presence (realm_id, user_id, client_name, status, timestamp, last_update_id)
      VALUES (${actor.realm_id}, ${actor.id}, ${clientName}, ${status}, now(), nextval('presence_update_id_seq'))
      ON CONFLICT (user_id, client_name) DO UPDATE SET status = EXCLUDED.status, timestamp = EXCLUDED.timestamp, last_update_id = EXCLUDED.last_update_id
      WHERE EXCLUDED.timestamp - user_presence.timestamp > make_interval(secs => ${PRESENCE_STALE_SECONDS})
         OR user_presence.status = ${PRESENCE_IDLE} OR user_presence.status = EXCLUDED.status
      RETURNING status, timestamp
    )
    SELECT (SELECT status FROM old) AS old_status,
           (SELECT now() - timestamp > make_interval(secs => ${PRESENCE_STALE_SECONDS}) FROM old) AS stale,
           (SELECT status FROM upsert) AS new_status, (SELECT timestamp FROM upsert) AS new_timestamp`;

  const created = row.old_status === null;
  const becameOnline = status === PRESENCE_ACTIVE && (row.stale === true || row.old_status === PRESENCE_IDLE);
  if ((created || becameOnline) && row.new_status !== null && row.new_timestamp !== null) {
    const info = formatClientPresence({ client_name: clientName, status: row.new_status, timestamp: row.new_timestamp });
    events.send(
      { type: "presence", user_id: actor.id, email: actor.email, server_timestamp: Date.now() / 1000, presence: { [clientName]: info } },
      // Only to those who may know of the user, as /register leaves the others' presence out.
      await userIdsWhoCanAccess(tx, actor.realm_id, actor.id),
    );
  }
}
