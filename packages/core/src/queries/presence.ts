// Presence as clients read it (Zulip's zerver/lib/presence.py, legacy format): per user, one entry
// per client plus `aggregated`, the most recent client's.
import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export const PRESENCE_ACTIVE = 1;
export const PRESENCE_IDLE = 2;
/** Presence older than this is not reported for the organization (Zulip: two weeks). */
export const PRESENCE_HISTORY_DAYS = 14;

export interface ClientPresence {
  client: string;
  status: "active" | "idle";
  timestamp: number;
  pushable: boolean;
}

export type UserPresenceInfo = Record<string, ClientPresence | Omit<ClientPresence, "pushable">>;

interface PresenceRow {
  user_id: number;
  email: string;
  client_name: string;
  status: number;
  timestamp: Date;
}

export function presenceStatusName(status: number): "active" | "idle" {
  return status === PRESENCE_ACTIVE ? "active" : "idle";
}

export function formatClientPresence(row: { client_name: string; status: number; timestamp: Date }): ClientPresence {
  // pushable: offline push enabled and a registered mobile device; this server has no push devices.
  return { client: row.client_name, status: presenceStatusName(row.status), timestamp: Math.floor(row.timestamp.getTime() / 1000), pushable: false };
}

/** Rows sorted by user, then time, grouped into presence objects keyed by email or (slim) user id. */
function formatPresenceRows(rows: PresenceRow[], slim: boolean): Record<string, UserPresenceInfo> {
  const sorted = [...rows].sort((a, b) => a.user_id - b.user_id || a.timestamp.getTime() - b.timestamp.getTime());
  const result: Record<string, UserPresenceInfo> = {};
  for (const row of sorted) {
    const key = slim ? String(row.user_id) : row.email;
    const info = formatClientPresence(row);
    const entry = (result[key] ??= {});
    entry[info.client] = info;
    entry.aggregated = { client: info.client, status: info.status, timestamp: info.timestamp };
  }
  return result;
}

/** The organization's presence (Zulip's get_presences_for_realm): active human users, last two weeks. */
export async function getRealmPresences(db: Reader, realmId: number, slim: boolean): Promise<Record<string, UserPresenceInfo>> {
  const rows = await db.$queryRaw<PresenceRow[]>`
    SELECT p.user_id, u.email, p.client_name, p.status, p.timestamp
    FROM user_presence p JOIN user_profile u ON u.id = p.user_id
    WHERE p.realm_id = ${realmId} AND p.timestamp >= now() - make_interval(days => ${PRESENCE_HISTORY_DAYS})
      AND u.is_active AND NOT u.is_bot`;
  return formatPresenceRows(rows, slim);
}

/** One user's presence object, or null when the user never reported any. */
export async function getUserPresence(db: Reader, userId: number): Promise<UserPresenceInfo | null> {
  const rows = await db.$queryRaw<PresenceRow[]>`
    SELECT p.user_id, u.email, p.client_name, p.status, p.timestamp
    FROM user_presence p JOIN user_profile u ON u.id = p.user_id WHERE p.user_id = ${userId}`;
  return rows.length === 0 ? null : Object.values(formatPresenceRows(rows, true))[0];
}
